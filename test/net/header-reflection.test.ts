// A `--net-header` secret reflected back (docs/security.md, "Egress"): a TRACE (or IIS's TRACK)
// answer is the request itself, headers included, so the broker refuses those methods to a host
// that gets injected headers, on the first hop and after a redirect, before anything is sent.
// CONNECT is refused on the plain request path (tunnels are native mode's, tunnel.ts). A GET to
// the same host still works; what such an echo endpoint then answers is the documented remainder.
// The server is a loopback stand-in that echoes every request it gets.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_NET_LIMITS } from "../../dist/core/limits.js";
import { NetBroker } from "../../dist/supervisor/net/broker.js";
import { NetPolicy, parseGrants } from "../../dist/supervisor/net/policy.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const SECRET = "s3cr3t-reflected-value";

/** Echoes the request line and every header in the body, as TRACE does; records the methods. */
function echoServer() {
  const methods: string[] = [];
  const server = http.createServer((req, res) => {
    methods.push(req.method ?? "?");
    const to = /^\/redirect\?to=(.*)$/.exec(req.url ?? "")?.[1];
    if (to) {
      res.writeHead(307, { location: decodeURIComponent(to) });
      res.end();
      return;
    }
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    res.writeHead(200, { "content-type": "message/http" });
    res.end(`${lines.join("\r\n")}\r\n`);
  });
  return {
    server,
    methods,
    get port() {
      return (server.address() as AddressInfo).port;
    },
  };
}

/** Gets the secret header. */
const echo = echoServer();
/** Gets no header; redirects to the echo server. */
const plain = echoServer();

beforeAll(async () => {
  await Promise.all(
    [echo, plain].map((s) => new Promise<void>((r) => s.server.listen(0, "127.0.0.1", r))),
  );
});
afterAll(async () => {
  await Promise.all(
    [echo, plain].map(
      (s) =>
        new Promise<void>((r) => {
          s.server.closeAllConnections();
          s.server.close(() => r());
        }),
    ),
  );
});

describe("the broker", () => {
  const session = () =>
    new NetBroker({
      limits: DEFAULT_NET_LIMITS,
      headers: [{ host: `127.0.0.1:${echo.port}`, name: "X-Api-Key", value: SECRET }],
    }).session(
      new NetPolicy(parseGrants([`127.0.0.1:${echo.port}`, `127.0.0.1:${plain.port}`]), []),
      Date.now() + 10_000,
    );
  const body = (reply: { ok: boolean; body?: Uint8Array }) =>
    reply.ok && reply.body ? new TextDecoder().decode(reply.body) : "";

  it.each(["TRACE", "TRACK"])(
    "refuses %s to a host that gets an injected header, sending nothing",
    async (method) => {
      echo.methods.length = 0;
      const s = session();
      const reply = await s.request({
        method,
        url: `http://127.0.0.1:${echo.port}/`,
        headers: [],
      });
      expect(reply).toMatchObject({
        ok: false,
        kind: "denied",
        message: new RegExp(
          `^method ${method} to 127\\.0\\.0\\.1:${echo.port} is refused: .*--net-header.*reflects`,
        ),
      });
      expect(JSON.stringify(reply)).not.toContain(SECRET);
      expect(JSON.stringify(s.record)).not.toContain(SECRET);
      expect(s.record).toMatchObject([{ method, status: null, denied: /--net-header/ }]);
      expect(echo.methods).toEqual([]);
    },
  );

  it("refuses a TRACE that a redirect (307 keeps the method) carries to that host", async () => {
    echo.methods.length = 0;
    plain.methods.length = 0;
    const to = encodeURIComponent(`http://127.0.0.1:${echo.port}/`);
    const s = session();
    const reply = await s.request({
      method: "TRACE",
      url: `http://127.0.0.1:${plain.port}/redirect?to=${to}`,
      headers: [],
    });
    expect(reply).toMatchObject({
      ok: false,
      kind: "denied",
      message: /^redirect from .* refused: method TRACE .*--net-header/,
    });
    expect(JSON.stringify(reply)).not.toContain(SECRET);
    expect(plain.methods).toEqual(["TRACE"]);
    expect(echo.methods).toEqual([]);
  });

  it("refuses CONNECT on the plain request path, whatever the host", async () => {
    for (const port of [echo.port, plain.port]) {
      const reply = await session().request({
        method: "CONNECT",
        url: `http://127.0.0.1:${port}/`,
        headers: [],
      });
      expect(reply).toMatchObject({ ok: false, kind: "denied", message: /method CONNECT/ });
    }
  });

  it("a TRACE to a host without injected headers is still sent (nothing to reflect)", async () => {
    const reply = await session().request({
      method: "TRACE",
      url: `http://127.0.0.1:${plain.port}/`,
      headers: [],
    });
    expect(reply).toMatchObject({ ok: true, status: 200 });
    expect(body(reply)).toMatch(/^TRACE \/ HTTP\/1\.1/);
    expect(body(reply)).not.toContain(SECRET);
  });

  it("a GET to the header's host still works (an echo endpoint reflects it: see the docs)", async () => {
    const reply = await session().request({
      method: "GET",
      url: `http://127.0.0.1:${echo.port}/`,
      headers: [],
    });
    expect(reply).toMatchObject({ ok: true, status: 200 });
    expect(body(reply)).toMatch(/^GET \/ HTTP\/1\.1/);
    // What remains: a granted host that echoes hands the value back. Grant only hosts that don't.
    expect(body(reply)).toContain(`x-api-key: ${SECRET}`);
  });
});

describe("a guest's TRACE", () => {
  let runtime: Runtime;
  let sb: Sandbox;
  beforeAll(async () => {
    runtime = await testRuntime({
      pool: { python: 1, javascript: 0, bash: 0 },
      permissions: { net: [`127.0.0.1:${echo.port}`] },
      net: { headers: [{ host: `127.0.0.1:${echo.port}`, name: "X-Api-Key", value: SECRET }] },
    });
    sb = await Sandbox.create({ runtime });
  }, 120_000);
  afterAll(async () => {
    await sb?.close();
    await runtime?.close();
  });

  it("is refused with the method and the reason, and the value never reaches the result", async () => {
    echo.methods.length = 0;
    const r = await sb.run(
      "python",
      `import urllib.request
try:
    out = urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:${echo.port}/", method="TRACE")).read().decode()
except Exception as e:
    out = f"refused: {e}"
print(out)`,
    );
    expect(r.stdout).toMatch(/refused: .*method TRACE .*--net-header/);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(echo.methods).toEqual([]);
    const get = await sb.run(
      "python",
      `import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:${echo.port}/").status)`,
    );
    expect(get.stdout).toBe("200\n");
    expect(echo.methods).toEqual(["GET"]);
  }, 60_000);
});

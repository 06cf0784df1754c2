// The guest's network (docs/security.md, "Egress"): requests cross to the trusted side, which
// grants only the hosts `permissions.net` names, lets `denyNet` win, refuses private addresses
// unless named literally (also behind a name or a redirect), adds configured headers the guest
// never sees, bounds each run's use, and records every request. Every server here is started by
// the test on loopback and serves real bytes; HTTPS uses a CA made here with openssl.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Language, type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";

const SECRET = "s3cr3t-boundary-value";
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-net-"));

/** A CA and a server certificate for 127.0.0.1, signed by it. */
function makeCertificates(): { ca: string; key: string; cert: string } {
  const file = (name: string) => path.join(tmp, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  ssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
    "-days",
    "2",
    "-subj",
    "/CN=polybox test CA",
  );
  ssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    file("srv.key"),
    "-out",
    file("srv.csr"),
    "-subj",
    "/CN=127.0.0.1",
  );
  require_ext(file("ext.cnf"));
  ssl(
    "x509",
    "-req",
    "-in",
    file("srv.csr"),
    "-CA",
    file("ca.pem"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-out",
    file("srv.pem"),
    "-days",
    "2",
    "-extfile",
    file("ext.cnf"),
  );
  return {
    ca: readFileSync(file("ca.pem"), "utf8"),
    key: readFileSync(file("srv.key"), "utf8"),
    cert: readFileSync(file("srv.pem"), "utf8"),
  };
}

function require_ext(at: string): void {
  execFileSync("sh", ["-c", `printf 'subjectAltName=IP:127.0.0.1\\n' > '${at}'`]);
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A server that records every request and every connection; its routes are below. */
function recordingServer(secure?: { key: string; cert: string }) {
  const seen: Seen[] = [];
  let connections = 0;
  const handler: http.RequestListener = (req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = req.url ?? "/";
      if (url.startsWith("/redirect?to=")) {
        res.writeHead(302, { location: decodeURIComponent(url.slice("/redirect?to=".length)) });
        res.end();
      } else if (url.startsWith("/bytes/")) {
        res.end("x".repeat(Number(url.slice("/bytes/".length))));
      } else if (url === "/slow") {
        setTimeout(() => res.end("late"), 5_000).unref();
      } else if (url === "/json") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ hello: "world", n: 42 }));
      } else {
        res.setHeader("x-served-by", "polybox-test");
        res.end(`${req.method} ${url} ${body}`);
      }
    });
  };
  const server = secure ? https.createServer(secure, handler) : http.createServer(handler);
  server.on("connection", () => {
    connections++;
  });
  return {
    server,
    seen,
    get connections() {
      return connections;
    },
    get port() {
      return (server.address() as AddressInfo).port;
    },
    listen: (host: string) => new Promise<void>((r) => server.listen(0, host, r)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

const web = recordingServer();
const denied = recordingServer();
const v6 = recordingServer();
const sentinel = recordingServer();
/** Granted by name only (`localhost:port`), never by address. */
const named = recordingServer();
let secure: ReturnType<typeof recordingServer>;
let ca: string;
let granted: Runtime;
let limited: Runtime;
let nothing: Runtime;
let sb: Sandbox;

beforeAll(async () => {
  const certs = makeCertificates();
  ca = certs.ca;
  secure = recordingServer(certs);
  await Promise.all([
    web.listen("127.0.0.1"),
    denied.listen("127.0.0.1"),
    v6.listen("::1"),
    sentinel.listen("127.0.0.1"),
    named.listen("127.0.0.1"),
    secure.listen("127.0.0.1"),
  ]);
  granted = await testRuntime({
    pool: { python: 1, javascript: 1, bash: 1 },
    permissions: {
      net: [
        `127.0.0.1:${web.port}`,
        `127.0.0.1:${secure.port}`,
        `127.0.0.1:${denied.port}`,
        `localhost:${named.port}`,
        `[::1]:${v6.port}`,
      ],
      denyNet: [`127.0.0.1:${denied.port}`],
    },
    net: { ca, headers: [{ host: `127.0.0.1:${web.port}`, name: "X-Api-Key", value: SECRET }] },
  });
  limited = await testRuntime({
    pool: { python: 0, javascript: 1, bash: 0 },
    permissions: { net: ["*", "127.0.0.1"] },
    net: {
      limits: {
        maxRequests: 3,
        maxResponseBytes: 1_000,
        maxBytesOut: 100,
        maxBytesIn: 1_500,
        requestTimeoutMs: 1_000,
      },
    },
  });
  nothing = await testRuntime({ pool: { python: 1, javascript: 1, bash: 1 } });
  sb = await Sandbox.create({ runtime: granted });
});

afterAll(async () => {
  await sb?.close();
  await Promise.all([granted?.close(), limited?.close(), nothing?.close()]);
  await Promise.all([web, denied, v6, sentinel, named, secure].map((s) => s?.close()));
  rmSync(tmp, { recursive: true, force: true });
});

const base = () => `http://127.0.0.1:${web.port}`;

describe("each language's client reaches a granted host", () => {
  it("JavaScript fetch with Request, Response and Headers; the record lists it", async () => {
    const r = await sb.run(
      "javascript",
      `const res = await fetch(new Request("${base()}/echo", { method: "POST", body: "ping", headers: new Headers({ "X-Mine": "1" }) }));
       const j = await (await fetch("${base()}/json")).json();
       [res.status, res.ok, res.headers.get("x-served-by"), await res.text(), j.n]`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("[ 200, true, 'polybox-test', 'POST /echo ping', 42 ]");
    expect(r.network).toEqual([
      { method: "POST", host: `127.0.0.1:${web.port}`, status: 200, bytesOut: 4, bytesIn: 15 },
      { method: "GET", host: `127.0.0.1:${web.port}`, status: 200, bytesOut: 0, bytesIn: 24 },
    ]);
    const echoed = web.seen.find((s) => s.url === "/echo")!;
    expect(echoed.headers["x-mine"]).toBe("1");
  });

  it("TypeScript fetch", async () => {
    const r = await sb.run(
      "typescript",
      `const res: Response = await fetch("${base()}/ts"); await res.text()`,
    );
    expect(r.value).toBe("'GET /ts '");
  });

  it("Python urllib.request.urlopen, also with a Request and a body", async () => {
    const r = await sb.run(
      "python",
      `import urllib.request, json
r = urllib.request.urlopen("${base()}/py")
req = urllib.request.Request("${base()}/pypost", data=b"a=1", method="PUT")
r2 = urllib.request.urlopen(req)
(r.status, r.headers["x-served-by"], r.read().decode(), r2.read().decode())`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("(200, 'polybox-test', 'GET /py ', 'PUT /pypost a=1')");
  });

  it("Python urllib raises HTTPError for a 404 and URLError for a refused host", async () => {
    const r = await sb.run(
      "python",
      `import urllib.request, urllib.error
out = []
try:
    urllib.request.urlopen("http://not-granted.invalid/")
except urllib.error.URLError as e:
    out.append(str(e.reason))
out`,
    );
    expect(r.value).toContain("network access to not-granted.invalid:80 is not granted");
    expect(r.value).toContain("--allow-net=not-granted.invalid");
  });

  it("Python pyodide.http.pyfetch", async () => {
    const r = await sb.run(
      "python",
      `from pyodide.http import pyfetch
res = await pyfetch("${base()}/pyfetch")
(res.status, await res.string())`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("(200, 'GET /pyfetch ')");
  });

  it("Bash curl (GET, POST, -L)", async () => {
    const r = await sb.run(
      "bash",
      `curl -s ${base()}/sh; echo; curl -s -X POST -d 'k=v' ${base()}/shpost; echo; curl -s -L '${base()}/redirect?to=%2Fafter'`,
    );
    expect(r.stdout).toBe("GET /sh \nPOST /shpost k=v\nGET /after ");
  });

  it("HTTPS with the CA given to the runtime", async () => {
    const r = await sb.run(
      "javascript",
      `await (await fetch("https://127.0.0.1:${secure.port}/tls")).text()`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("'GET /tls '");
  });

  it("IPv6 loopback, granted literally as [::1]:port", async () => {
    const r = await sb.run(
      "javascript",
      `await (await fetch("http://[::1]:${v6.port}/six")).text()`,
    );
    expect(r.value).toBe("'GET /six '");
    expect(r.network?.[0]?.host).toBe(`[::1]:${v6.port}`);
  });
});

describe("refusals: each fails inside the guest, names the host and the flag, and sends nothing", () => {
  it("a host that is not granted", async () => {
    const r = await sb.run(
      "javascript",
      `try { await fetch("http://example.invalid/x"); "reached" } catch (e) { e.message }`,
    );
    expect(r.value).toContain("network access to example.invalid:80 is not granted");
    expect(r.value).toContain("--allow-net=example.invalid");
    expect(r.network?.[0]).toMatchObject({ host: "example.invalid:80", status: null });
    expect(r.network?.[0]?.denied).toContain("not granted");
  });

  it("--deny-net wins over a grant of the same host", async () => {
    const r = await sb.run(
      "javascript",
      `try { await fetch("http://127.0.0.1:${denied.port}/"); "reached" } catch (e) { e.message }`,
    );
    expect(r.value).toContain(`127.0.0.1:${denied.port} is denied`);
    expect(denied.connections).toBe(0);
  });

  it("a redirect from a granted host to a denied one is refused at the hop", async () => {
    const before = web.seen.length;
    const target = encodeURIComponent(`http://127.0.0.1:${denied.port}/stolen`);
    const r = await sb.run(
      "python",
      `import urllib.request, urllib.error
try:
    urllib.request.urlopen("${base()}/redirect?to=${target}")
except urllib.error.URLError as e:
    print(e.reason)`,
    );
    expect(r.stdout).toContain(
      `redirect from 127.0.0.1:${web.port} to 127.0.0.1:${denied.port} refused`,
    );
    expect(web.seen.length).toBe(before + 1);
    expect(denied.connections).toBe(0);
    expect(r.network?.[0]).toMatchObject({ status: 302 });
  });

  it("a name granted on its own does not grant the loopback address it resolves to", async () => {
    const r = await sb.run(
      "javascript",
      `try { await fetch("http://localhost:${named.port}/"); "reached" } catch (e) { e.message }`,
    );
    expect(r.value).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a private, loopback/);
    expect(r.value).toContain("granted literally");
    expect(named.connections).toBe(0);
  });

  it("the metadata address 169.254.169.254 is refused even under a grant of every host", async () => {
    const r = await (await Sandbox.create({ runtime: limited })).run(
      "javascript",
      `try { await fetch("http://169.254.169.254/latest/meta-data/"); "reached" } catch (e) { e.message }`,
    );
    expect(r.value).toContain(
      "169.254.169.254 is a private, loopback, link-local or metadata address",
    );
  });

  it("an untrusted certificate fails (the limited runtime has no test CA)", async () => {
    const box = await Sandbox.create({ runtime: limited });
    const r = await box.run(
      "javascript",
      `try { await fetch("https://127.0.0.1:${secure.port}/"); "reached" } catch (e) { e.message }`,
    );
    await box.close();
    expect(r.value).toMatch(/certificate/i);
  });
});

describe("secrets added at the boundary", () => {
  it("the server sees the header; the guest's env, files and realm never hold the value", async () => {
    const r = await sb.run(
      "python",
      `import os, urllib.request, js
urllib.request.urlopen("${base()}/secret").read()
open("seen.txt", "w").write(repr(dict(os.environ)))
leaks = [
    any("${SECRET.slice(0, 6)}" in v for v in os.environ.values()),
    "${SECRET.slice(0, 6)}" in js.JSON.stringify(js.process.env),
]
leaks`,
    );
    expect(r.value).toBe("[False, False]");
    expect(web.seen.find((s) => s.url === "/secret")?.headers["x-api-key"]).toBe(SECRET);
    expect(await sb.files.read("seen.txt", "utf8")).not.toContain(SECRET);
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it("the header goes only to its host, not to another host after a redirect", async () => {
    const target = encodeURIComponent(`http://[::1]:${v6.port}/elsewhere`);
    await sb.run("javascript", `await fetch("${base()}/redirect?to=${target}")`);
    const hop = v6.seen.find((s) => s.url === "/elsewhere");
    expect(hop).toBeDefined();
    expect(hop?.headers["x-api-key"]).toBeUndefined();
  });
});

describe("per-run limits end the request with an error naming the limit", () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await Sandbox.create({ runtime: limited });
  });
  afterAll(() => box.close());
  const attempt = (code: string) =>
    box.run(
      "javascript",
      `var out = []; for (const [u, o] of ${code}) { try { const r = await fetch(u, o); out.push((await r.text()).length) } catch (e) { out.push(e.message) } } out`,
    );

  it("maxRequests", async () => {
    const r = await attempt(`Array.from({ length: 4 }, () => ["${base()}/n", {}])`);
    expect(r.value).toContain("at most 3 requests per run (maxRequests)");
    expect(r.network).toHaveLength(4);
  });

  it("maxResponseBytes", async () => {
    const r = await attempt(`[["${base()}/bytes/2000", {}]]`);
    expect(r.value).toContain("larger than 1000 bytes (maxResponseBytes)");
  });

  it("maxBytesIn across requests of one run", async () => {
    const r = await attempt(`[["${base()}/bytes/900", {}], ["${base()}/bytes/900", {}]]`);
    expect(r.value).toMatch(/900[\s\S]*\(maxBytesIn\)/);
  });

  it("maxBytesOut", async () => {
    const before = web.seen.length;
    const r = await attempt(`[["${base()}/up", { method: "POST", body: "y".repeat(200) }]]`);
    expect(r.value).toContain("(maxBytesOut)");
    expect(web.seen.length).toBe(before);
  });

  it("requestTimeoutMs", async () => {
    const r = await attempt(`[["${base()}/slow", {}]]`);
    expect(r.value).toContain("longer than 1000 ms (requestTimeoutMs)");
  });
});

describe("nothing granted: a loopback listener sees nothing, whatever the language", () => {
  const attempts: [Language, string][] = [
    ["javascript", `try { await fetch("URL") } catch (e) { console.log(e.message) }`],
    ["typescript", `try { await fetch("URL") } catch (e: any) { console.log(e.message) }`],
    [
      "python",
      `import urllib.request, socket
try:
    urllib.request.urlopen("URL")
except Exception as e:
    print(e)
from pyodide.http import pyfetch
try:
    await pyfetch("URL")
except Exception as e:
    print(e)
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=1)
except Exception as e:
    print("socket", type(e).__name__)`,
    ],
    ["bash", `curl -sS URL; curl -sS http://localhost:PORT/; echo done`],
  ];
  for (const [language, code] of attempts) {
    it(language, async () => {
      const box = await Sandbox.create({ runtime: nothing });
      const url = `http://127.0.0.1:${sentinel.port}/`;
      const r = await box.run(
        language,
        code.replaceAll("URL", url).replaceAll("PORT", String(sentinel.port)),
      );
      await box.close();
      expect(`${r.stdout}${r.stderr}`).toContain(
        `network access to 127.0.0.1:${sentinel.port} is not granted`,
      );
      expect(sentinel.connections).toBe(0);
    });
  }
});

describe("a sandbox's own grant", () => {
  it("narrows the runtime's", async () => {
    const box = await Sandbox.create({ runtime: granted, net: [`127.0.0.1:${web.port}`] });
    const r = await box.run(
      "javascript",
      `const a = await (await fetch("${base()}/narrow")).text();
       let b; try { await fetch("http://[::1]:${v6.port}/"); b = "reached" } catch (e) { b = e.message }
       [a, b]`,
    );
    await box.close();
    expect(r.value).toContain("GET /narrow");
    expect(r.value).toContain(`network access to [::1]:${v6.port} is not granted`);
  });

  it("narrows a one-shot run's too", async () => {
    const r = await run({
      runtime: granted,
      language: "javascript",
      net: [`[::1]:${v6.port}`],
      code: `try { await fetch("${base()}/oneshot"); "reached" } catch (e) { e.message }`,
    });
    expect(r.value).toContain(`network access to 127.0.0.1:${web.port} is not granted`);
    expect(web.seen.some((s) => s.url === "/oneshot")).toBe(false);
  });

  it("may not be wider than the runtime's", async () => {
    await expect(Sandbox.create({ runtime: granted, net: ["example.com"] })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      details: { hosts: ["example.com"] },
    });
    await expect(Sandbox.create({ runtime: nothing, net: ["*"] })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
  });
});

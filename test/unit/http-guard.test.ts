// The HTTP guard `serve` and the router share (src/mcp/http-guard.ts), on a bare node:http server
// on loopback: the order of its checks (Host and Origin before the token), the token check (any
// wrong token 401 with a Bearer challenge, whatever its length), and the body limit (413 while the
// client is still sending, with no more than the limit read).

import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpGuard, readBoundedBody, readJsonBody, sendJson } from "../../dist/mcp/http-guard.js";
import { rawPost } from "../helpers/mcp-client.js";

const TOKEN = "guard-token-5b21";
const LIMIT = 1024 * 1024;
const MIB = 1024 * 1024;

let server: Server;
let url: string;
/** What the server had read of the last request whose body it refused. */
let readAtRefusal = -1;

beforeAll(async () => {
  const guard = httpGuard({ bind: "127.0.0.1", names: ["guard.test"], tokens: [TOKEN] });
  server = createServer((req, res) => {
    void (async () => {
      const admitted = guard(req, res);
      if (admitted === null) return;
      if (req.url === "/json") {
        const read = await readJsonBody(req, res);
        if (read !== null) sendJson(res, 200, { client: admitted.client, body: read.body });
        return;
      }
      const body = await readBoundedBody(req, res, LIMIT);
      if (body === null) readAtRefusal = req.socket.bytesRead;
      else sendJson(res, 200, { client: admitted.client, bytes: body.length });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (headers: Record<string, string>, body = "{}", path = "/") =>
  rawPost(`${url}${path}`, { "content-type": "application/json", ...headers }, { body });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("httpGuard", () => {
  it("refuses a foreign Host or Origin with 403 before it looks at the token", async () => {
    const cases: Record<string, string>[] = [
      { host: "evil.example" },
      { host: "evil.example", ...bearer("wrong") },
      { origin: "http://evil.example" },
      { origin: "http://evil.example", ...bearer(TOKEN) },
    ];
    for (const headers of cases) {
      const r = await post(headers);
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(r.headers["www-authenticate"]).toBeUndefined();
      expect(JSON.parse(r.body).error).toMatch(/^forbidden: (Host|Origin) "[^"]*evil\.example/);
    }
    const port = new URL(url).port;
    expect((await post({ host: `guard.test:${port}`, ...bearer(TOKEN) })).status).toBe(200);
  });

  it("answers 401 with a Bearer challenge for a missing or wrong token", async () => {
    for (const headers of [{}, bearer("wrong"), { authorization: TOKEN }, { authorization: "" }]) {
      const r = await post(headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers["www-authenticate"]).toBe('Bearer realm="polybox"');
      expect(JSON.parse(r.body).error).toBe(
        "unauthorized: send Authorization: Bearer <token> (the server's --token or POLYBOX_TOKEN)",
      );
    }
  });

  it("refuses a token that differs only in length, and names the client by the token's digest", async () => {
    // timingSafeEqual throws on buffers of unequal length: digests keep every comparison equal.
    for (const token of [`${TOKEN}x`, TOKEN.slice(0, -1), TOKEN.repeat(50), "x"]) {
      const r = await post(bearer(token));
      expect(r.status, token).toBe(401);
    }
    const ok = await post({ authorization: `bearer  ${TOKEN} ` });
    expect(ok.status).toBe(200);
    const digest = createHash("sha256").update(TOKEN).digest("hex");
    expect(JSON.parse(ok.body)).toEqual({ client: `token:${digest}`, bytes: 2 });
  });
});

describe("the body limit", () => {
  it("answers 413 while the client is still sending, having read no more than the limit", async () => {
    readAtRefusal = -1;
    const total = 64 * MIB;
    const r = await rawPost(`${url}/`, bearer(TOKEN), { streamBytes: total });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: `request body over ${LIMIT} bytes` });
    expect(r.headers.connection).toBe("close");
    // The answer came while most of the body was still to be sent (socket buffers hold a few MiB).
    expect(r.sent).toBeLessThan(total / 2);
    // Read: the headers and the body up to the chunk that passed the limit, no further.
    expect(readAtRefusal).toBeGreaterThan(LIMIT);
    expect(readAtRefusal).toBeLessThan(LIMIT + 256 * 1024);
  });

  it("answers 413 to a Content-Length over the limit without reading the body", async () => {
    readAtRefusal = -1;
    const r = await rawPost(
      `${url}/`,
      { ...bearer(TOKEN), "content-length": String(64 * MIB) },
      { streamBytes: 64 * MIB },
    );
    expect(r.status).toBe(413);
    expect(r.sent).toBeLessThan(32 * MIB);
    expect(readAtRefusal).toBeLessThan(LIMIT);
  });

  it("reads a body at the limit whole", async () => {
    const r = await rawPost(`${url}/`, bearer(TOKEN), { body: "x".repeat(LIMIT) });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).bytes).toBe(LIMIT);
  });

  it("answers a POST body that is not JSON with a JSON-RPC parse error", async () => {
    const bad = await post(bearer(TOKEN), "{not json", "/json");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({
      jsonrpc: "2.0",
      error: { code: -32700, message: "parse error: the body is not JSON" },
      id: null,
    });
    const good = await post(bearer(TOKEN), '{"a":1}', "/json");
    expect(JSON.parse(good.body).body).toEqual({ a: 1 });
  });
});

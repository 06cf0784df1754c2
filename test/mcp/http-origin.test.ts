// Host and Origin checks on every bind, not only 127.0.0.1 and ::1: a server bound to another
// loopback address (127.0.0.2) or to every interface answered a foreign Host and Origin, so a
// page on another site could drive it through DNS rebinding or a cross-site request.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostGuard } from "../../dist/mcp/http-guard.js";
import { call, type HttpHandle, httpServer, postInitialize } from "../helpers/mcp-client.js";

describe("hostGuard", () => {
  it("answers its bind address, loopback names on loopback, and listed names; nothing else", () => {
    const g = hostGuard({ bind: "127.0.0.2", port: 8765, names: ["Polybox.Test"] });
    expect(g({ host: "127.0.0.2:8765" })).toBeNull();
    expect(g({ host: "localhost:8765" })).toBeNull();
    expect(g({ host: "[::1]:8765" })).toBeNull();
    expect(g({ host: "polybox.test:8765" })).toBeNull();
    expect(g({ host: "POLYBOX.TEST.:8765" })).toBeNull();
    expect(g({ host: "evil.example:8765" })).toMatch(/evil\.example/);
    expect(g({ host: "127.0.0.2:9999" })).not.toBeNull();
    expect(g({ host: "127.0.0.2" })).not.toBeNull(); // port 80 is not this server's
    expect(g({})).not.toBeNull();
    expect(g({ host: "127.0.0.2:8765", origin: "http://127.0.0.2:8765" })).toBeNull();
    expect(g({ host: "127.0.0.2:8765", origin: "http://evil.example" })).toMatch(/Origin/);
    expect(g({ host: "127.0.0.2:8765", origin: "null" })).toMatch(/Origin/);
    expect(g({ host: "127.0.0.2:8765", origin: "http://localhost:3000" })).toMatch(/Origin/);
    expect(g({ host: "127.0.0.2:8765", origin: "file://" })).toMatch(/Origin/);
  });

  it("on a wildcard bind, answers the machine's addresses but not other names", () => {
    const g = hostGuard({ bind: "0.0.0.0", port: 80 });
    expect(g({ host: "127.0.0.1" })).toBeNull();
    expect(g({ host: "localhost:80" })).toBeNull();
    expect(g({ host: "evil.example" })).not.toBeNull();
  });
});

describe("polybox serve on 127.0.0.2", () => {
  let server: HttpHandle;
  beforeAll(async () => {
    server = await httpServer(["--host=127.0.0.2", "--allow-host=polybox.test"]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses a foreign Host and a foreign Origin, and serves its own", async () => {
    const port = new URL(server.url).port;
    expect(await postInitialize(server.url, { host: "evil.example" })).toBe(403);
    expect(await postInitialize(server.url, { host: `evil.example:${port}` })).toBe(403);
    expect(await postInitialize(server.url, { origin: "http://evil.example" })).toBe(403);
    expect(await postInitialize(server.url, { host: `polybox.test:${port}` })).toBe(200);
    expect(await postInitialize(server.url, { origin: `http://127.0.0.2:${port}` })).toBe(200);
  });

  it("still answers a real MCP client", async () => {
    const client = await server.connect();
    const r = await call(client, "execute_javascript", { code: "console.log(6 * 7)" });
    expect(r.structuredContent?.stdout).toBe("42\n");
  }, 60_000);
});

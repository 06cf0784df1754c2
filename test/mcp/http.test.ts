// End to end over Streamable HTTP against `polybox serve --port 0`: the bearer token (401 without
// it), the Host check that stops DNS rebinding, sessions of one token sharing its sandboxes, and a run.

import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type HttpHandle, httpServer, initializeRequest } from "../helpers/mcp-client.js";

const TOKEN = "test-token-7f3a";
let server: HttpHandle;

beforeAll(async () => {
  server = await httpServer([], { POLYBOX_TOKEN: TOKEN });
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
  expect(server.stderr()).not.toContain("[stdout:");
});

const INIT = initializeRequest();

/** A raw POST, so the test controls every header (fetch may not set Host). */
function post(
  url: string,
  headers: Record<string, string>,
  body: unknown = INIT,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        let data = "";
        res.on("data", (c) => {
          data += c;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("polybox serve", () => {
  it("answers 401 without a valid bearer token", async () => {
    const none = await post(server.url, {});
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(none.body).toMatch(/Authorization: Bearer/);
    expect((await post(server.url, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await post(server.url, { authorization: TOKEN })).status).toBe(401);
  });

  it("accepts the token, and refuses a foreign Host header (DNS rebinding)", async () => {
    expect((await post(server.url, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const rebound = await post(server.url, {
      authorization: `Bearer ${TOKEN}`,
      host: "evil.example:80",
    });
    expect(rebound.status).toBe(403);
  });

  it("serves MCP only at /mcp, and only after initialize", async () => {
    expect(
      (await post(server.url.replace(/\/mcp$/, "/other"), { authorization: `Bearer ${TOKEN}` }))
        .status,
    ).toBe(404);
    const noSession = await post(
      server.url,
      { authorization: `Bearer ${TOKEN}` },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(noSession.status).toBe(400);
    const stale = await post(
      server.url,
      { authorization: `Bearer ${TOKEN}`, "mcp-session-id": "gone" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(stale.status).toBe(404);
  });

  it("runs code for an authenticated client", async () => {
    const { tools } = await server.client.listTools();
    expect(tools).toHaveLength(21);
    const r = await call(server.client, "execute_bash", {
      code: "echo one two two | tr ' ' '\\n' | sort | uniq -c",
    });
    const lines = r.structuredContent?.stdout
      .trim()
      .split("\n")
      .map((l: string) => l.trim());
    expect(lines).toEqual(["1 one", "2 two"]);
  });

  it("shares sandboxes between sessions of one token", async () => {
    const created = await call(server.client, "create_sandbox", { language: "python" });
    const sandbox_id = created.structuredContent?.sandbox_id;
    await call(server.client, "execute_code", { sandbox_id, code: "shared = 'yes'" });
    const other = await server.connect(TOKEN);
    const r = await call(other, "execute_code", { sandbox_id, code: "shared" });
    expect(r.structuredContent?.value).toBe("'yes'");
    await call(other, "close_sandbox", { sandbox_id });
  });
});

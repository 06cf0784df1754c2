// T22, the end of a token-less HTTP session by idleness: its sandboxes are closed with it, since
// nobody else can reach them, while a token's sandboxes outlive its sessions. A session whose
// request is still being answered is in use, not idle. In process, with the
// HTTP server's own session timeout shortened (the CLI keeps the 30-minute default).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxService } from "../../dist/index.js";
import { type HttpServer, serveHttp } from "../../dist/mcp/http.js";
import { call, text } from "../helpers/mcp-client.js";
import { type Runtime, testRuntime } from "../helpers/runtime.js";

/**
 * Long enough that no gap between one client's requests reaches it on a loaded machine: the
 * client compiles a validator for every output schema after tools/list, in this process, which
 * has taken over three seconds on a 2-core machine running other suites beside this one.
 */
const IDLE_MS = 6000;
/** The session sweep runs every IDLE_MS, so a session goes between IDLE_MS and twice that. */
const EXPIRED_AFTER_MS = 2 * IDLE_MS + 500;

let runtime: Runtime | null = null;
let service: SandboxService | null = null;
let http: HttpServer | null = null;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await http?.close();
  await service?.close();
  await runtime?.close();
  http = service = runtime = null;
});

async function start(tokens?: string[]): Promise<string> {
  runtime = await testRuntime();
  service = new SandboxService({ runtime });
  http = await serveHttp({
    service,
    version: "0.0.0",
    host: "127.0.0.1",
    port: 0,
    sessionIdleMs: IDLE_MS,
    ...(tokens ? { tokens } : {}),
  });
  return http.url;
}

async function connect(url: string, token?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  });
  const client = new Client({ name: "expiry-test", version: "0.0.0" });
  await client.connect(transport);
  await client.listTools();
  clients.push(client);
  return client;
}

async function idleUntil(done: () => boolean): Promise<void> {
  const until = Date.now() + EXPIRED_AFTER_MS + 2000;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
}

describe("T22: session expiry", () => {
  it("T22: an idle-expired session's sandboxes are closed", async () => {
    const url = await start();
    const client = await connect(url);
    const made = await call(client, "create_sandbox", {});
    expect(made.isError, text(made)).toBeFalsy();
    expect(service!.sandboxes.size).toBe(1);
    await idleUntil(() => service!.sandboxes.size === 0);
    expect(service!.sandboxes.size).toBe(0);
  });

  it("a session answering a request is in use, however long the request takes", async () => {
    const url = await start();
    const client = await connect(url);
    const code = `import time\ntime.sleep(${(EXPIRED_AFTER_MS + 1000) / 1000})\nprint('done')`;
    const long = await call(client, "execute_python", { code, timeout_seconds: 60 });
    expect(long.structuredContent?.stdout).toBe("done\n");
    const next = await call(client, "execute_python", { code: "print('still here')" });
    expect(next.structuredContent?.stdout).toBe("still here\n");
  });

  it("T22: a token's sandboxes outlive its expired session and are found again with the token", async () => {
    const url = await start(["tok-1"]);
    const first = await connect(url, "tok-1");
    const id = (await call(first, "create_sandbox", {})).structuredContent?.sandbox_id;
    await new Promise((r) => setTimeout(r, EXPIRED_AFTER_MS)); // the session expires meanwhile
    await expect(call(first, "get_sandbox_status", {})).rejects.toThrow(
      /unknown or expired session/,
    );
    expect(service!.sandboxes.size).toBe(1);
    const again = await connect(url, "tok-1");
    const status = await call(again, "get_sandbox_status", {});
    expect(
      status.structuredContent?.sandboxes.map((s: { sandbox_id: string }) => s.sandbox_id),
    ).toEqual([id]);
  });
});

// End to end over stdio: the server-side bounds on sandboxes (--max-sandboxes, --idle-timeout),
// limits a client asks for beyond the operator's flags, and progress notifications on long runs.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;

beforeAll(async () => {
  server = await stdioServer([
    "--max-sandboxes=2",
    "--idle-timeout=2s",
    "--memory=256M",
    "--timeout=10s",
  ]);
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

describe("sandbox bounds", () => {
  it("refuses a sandbox past --max-sandboxes, saying how to free one", async () => {
    const a = await call(server.client, "create_sandbox", {});
    const b = await call(server.client, "create_sandbox", {});
    const c = await call(server.client, "create_sandbox", {});
    expect(c.isError).toBe(true);
    expect(text(c)).toMatch(
      /^TOO_MANY_SANDBOXES: 2 sandboxes are open, .*maxSandboxes=2.*close_sandbox.*--max-sandboxes=2/,
    );
    await call(server.client, "close_sandbox", { sandbox_id: a.structuredContent?.sandbox_id });
    await call(server.client, "close_sandbox", { sandbox_id: b.structuredContent?.sandbox_id });
  });

  it("closes sandboxes left idle past --idle-timeout", async () => {
    const created = await call(server.client, "create_sandbox", {});
    const sandbox_id = created.structuredContent?.sandbox_id;
    expect(created.structuredContent?.sandbox.expires_at).toEqual(expect.any(String));
    await call(server.client, "write_file", { sandbox_id, path: "f.txt", content: "x" });
    await new Promise((r) => setTimeout(r, 3500));
    expect(
      (await call(server.client, "get_sandbox_status", {})).structuredContent?.sandboxes,
    ).toEqual([]);
    const r = await call(server.client, "list_files", { sandbox_id });
    expect(text(r)).toMatch(
      /^SANDBOX_EXPIRED: sandbox .* no longer exists: it was idle for 2 s \(idleTimeoutMs\)/,
    );
  });

  it("keeps clients within the operator's limits", async () => {
    const memory = await call(server.client, "create_sandbox", { memory_mb: 512 });
    expect(memory.isError).toBe(true);
    expect(text(memory)).toMatch(/memory_mb/);
    const timeout = await call(server.client, "execute_python", { code: "1", timeout_seconds: 11 });
    expect(text(timeout)).toMatch(/timeout_seconds/);
    const within = await call(server.client, "create_sandbox", {
      memory_mb: 128,
      timeout_seconds: 5,
    });
    expect(within.structuredContent?.sandbox.limits).toMatchObject({
      memory_mb: 128,
      timeout_ms: 5000,
    });
    await call(server.client, "close_sandbox", {
      sandbox_id: within.structuredContent?.sandbox_id,
    });
  });
});

describe("progress", () => {
  it("sends progress notifications with elapsed time and the last line while a run goes on", async () => {
    const seen: { progress: number; message?: string }[] = [];
    const code =
      "import time\nfor i in range(5):\n    print('step', i, flush=True)\n    time.sleep(0.5)";
    const r = await server.client.callTool(
      { name: "execute_python", arguments: { code } },
      undefined,
      {
        onprogress: (p) => seen.push(p),
        timeout: 60_000,
      },
    );
    expect(r.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.at(-1)?.message).toMatch(/^\d+ s · step \d/);
  });
});

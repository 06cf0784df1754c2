// End to end over stdio: what a server started with --tools, --rate-limit and --concurrency lets
// through. Each describe starts its own server, since each stdio connection is one client.

import { afterEach, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle | null = null;

afterEach(async () => {
  if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
  server = null;
});

describe("--tools", () => {
  it("offers only the listed tools", async () => {
    server = await stdioServer(["--tools=execute_python,read_file"]);
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_python", "read_file"]);
    for (const t of tools) {
      expect(t.description?.length).toBeGreaterThan(40);
      expect(t.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(t.outputSchema).toMatchObject({ type: "object" });
    }
    // A tool left out is unknown to this server: a protocol error (-32602), not a tool result.
    await expect(call(server.client, "execute_bash", { code: "echo hi" })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it("lists all twenty-one tools by default", async () => {
    server = await stdioServer();
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "cancel_job",
        "check_job_status",
        "close_sandbox",
        "create_run_close",
        "create_sandbox",
        "execute_bash",
        "execute_code",
        "execute_javascript",
        "execute_python",
        "get_job_logs",
        "get_sandbox_status",
        "install_package",
        "list_files",
        "read_file",
        "upload_file",
        "write_file",
        "snapshot_sandbox",
        "restore_sandbox",
        "fork_sandbox",
        "list_snapshots",
        "delete_snapshot",
      ].sort(),
    );
  });
});

describe("--rate-limit", () => {
  it("refuses a client over its CPU budget and says when to retry", async () => {
    server = await stdioServer(["--rate-limit=1cpu-s/min"]);
    const burn = "import time\nt = time.time()\nwhile time.time() - t < 1.2: pass";
    const first = await call(server.client, "execute_python", { code: burn });
    expect(first.structuredContent?.status).toBe("ok");
    const second = await call(server.client, "execute_python", { code: "print(1)" });
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(
      /^RATE_LIMITED: rate limit reached: .* budget of 1cpu-s\/min \(rateLimit\); retry in \d+(\.\d)? s .*--rate-limit=1cpu-s\/min/,
    );
    // Tools that run nothing still answer.
    expect((await call(server.client, "get_sandbox_status", {})).isError).toBeFalsy();
  });
});

async function waitForOutput(h: McpHandle, jobId: string, expected: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const logs = await call(h.client, "get_job_logs", { job_id: jobId });
    if (logs.structuredContent?.stdout.includes(expected)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${jobId} never printed ${expected}`);
}

describe("--concurrency and the queue", () => {
  it("queues up to 4 × concurrency runs, then answers SERVER_BUSY", async () => {
    server = await stdioServer(["--concurrency=1"]);
    const jobs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(server.client, "execute_python", {
        code: "print('go', flush=True)\nwhile True: pass",
        async: true,
      });
      expect(r.isError, text(r)).toBeFalsy();
      jobs.push(r.structuredContent?.job_id);
    }
    const busy = await call(server.client, "execute_javascript", { code: "1" });
    expect(busy.isError).toBe(true);
    expect(text(busy)).toMatch(
      /^SERVER_BUSY: server busy: 1 runs are running \(concurrency=1\) and 4 are waiting.*--concurrency=1/,
    );
    const status = await call(server.client, "get_sandbox_status", {});
    expect(status.structuredContent).toMatchObject({
      running_runs: 1,
      queued_runs: 4,
      concurrency: 1,
    });
    // Cancelling a queued job frees its place at once, without it ever starting.
    for (const id of jobs.slice(1).reverse()) {
      const queued = await call(server.client, "cancel_job", { job_id: id });
      expect(queued.structuredContent).toMatchObject({
        status: "cancelled",
        cancelled: true,
        started_at: null,
      });
    }
    // Cancel the running one once its interpreter is really running (it printed).
    await waitForOutput(server, jobs[0]!, "go");
    expect(
      (await call(server.client, "cancel_job", { job_id: jobs[0] })).structuredContent?.status,
    ).toBe("cancelled");
    const ok = await call(server.client, "execute_javascript", { code: "console.log('free')" });
    expect(ok.structuredContent?.stdout).toBe("free\n");
  });
});

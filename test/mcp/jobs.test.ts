// End to end over stdio: async jobs — polled to completion with logs read while running,
// cancelled mid-run, unknown ids, and results forgotten after --job-retention.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, type ToolResult, text } from "../helpers/mcp-client.js";

let server: McpHandle;

beforeAll(async () => {
  server = await stdioServer(["--job-retention=3s"]);
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

/** Polls check_job_status until `done` holds (or 30 s pass). */
async function pollUntil(jobId: string, done: (r: ToolResult) => boolean): Promise<ToolResult> {
  for (let i = 0; i < 300; i++) {
    const r = await call(server.client, "check_job_status", { job_id: jobId });
    if (done(r)) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${jobId} did not reach the expected state`);
}

describe("async jobs", () => {
  it("runs in the background, shows logs while running, and completes", async () => {
    const code =
      "import time\nfor i in range(4):\n    print('tick', i, flush=True)\n    time.sleep(0.4)\n";
    const submitted = await call(server.client, "execute_python", { code, async: true });
    expect(submitted.structuredContent).toMatchObject({
      job_id: expect.any(String),
      status: "queued",
    });
    const jobId = submitted.structuredContent?.job_id;

    let logs: ToolResult | undefined;
    for (let i = 0; i < 100; i++) {
      logs = await call(server.client, "get_job_logs", { job_id: jobId });
      if (logs.structuredContent?.stdout.includes("tick 0")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(logs?.structuredContent).toMatchObject({ job_id: jobId, status: "running" });
    expect(logs?.structuredContent?.stdout).not.toContain("tick 3");

    const done = await pollUntil(
      jobId,
      (r) => r.structuredContent?.status !== "running" && r.structuredContent?.status !== "queued",
    );
    expect(done.structuredContent).toMatchObject({
      status: "completed",
      language: "python",
      result: { status: "ok", exit_code: 0 },
    });
    expect(done.structuredContent?.result.stdout).toBe("tick 0\ntick 1\ntick 2\ntick 3\n");
    expect(done.structuredContent?.duration_ms).toBeGreaterThan(1000);
    expect(done.structuredContent?.finished_at).toEqual(expect.any(String));
    expect(text(done)).toMatch(/^job .*: completed/);
  });

  it("cancels a runaway loop", async () => {
    const sb = await call(server.client, "create_sandbox", {});
    const sandbox_id = sb.structuredContent?.sandbox_id;
    const code = "print('spinning', flush=True)\nwhile True: pass";
    const submitted = await call(server.client, "execute_code", {
      sandbox_id,
      language: "python",
      code,
      async: true,
    });
    const jobId = submitted.structuredContent?.job_id;
    // Wait until the guest really runs (it printed), not just until the job left the queue.
    for (let i = 0; i < 300; i++) {
      if ((await call(server.client, "get_job_logs", { job_id: jobId })).structuredContent?.stdout)
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const cancelled = await call(server.client, "cancel_job", { job_id: jobId });
    expect(cancelled.structuredContent).toMatchObject({
      status: "cancelled",
      cancelled: true,
      sandbox_id,
    });
    expect(
      (await call(server.client, "check_job_status", { job_id: jobId })).structuredContent?.status,
    ).toBe("cancelled");
    // What the guest printed before the cancel stays in the job's logs.
    const logs = await call(server.client, "get_job_logs", { job_id: jobId });
    expect(logs.structuredContent?.stdout).toContain("spinning");
    // Cancelling again changes nothing. (Asked before the next run: on a loaded machine that run
    // can outlast this server's short job retention, after which the job is forgotten.)
    const again = await call(server.client, "cancel_job", { job_id: jobId });
    expect(again.structuredContent?.cancelled).toBe(false);
    expect(text(again)).toMatch(/already finished/);
    // The sandbox survives the cancellation (its files do; the interpreter was replaced).
    const after = await call(server.client, "execute_python", {
      sandbox_id,
      code: "print('alive')",
    });
    expect(after.structuredContent?.stdout).toBe("alive\n");
  });

  it("reports a failed job with the guest's error", async () => {
    const submitted = await call(server.client, "execute_bash", {
      code: "echo oops >&2; exit 3",
      async: true,
    });
    const done = await pollUntil(
      submitted.structuredContent?.job_id,
      (r) => r.structuredContent?.status === "failed",
    );
    expect(done.structuredContent?.result).toMatchObject({ exit_code: 3, stderr: "oops\n" });
  });

  it("answers unknown jobs with JOB_NOT_FOUND, and forgets finished ones after the retention time", async () => {
    for (const tool of ["check_job_status", "get_job_logs", "cancel_job"]) {
      const r = await call(server.client, tool, { job_id: "no-such-job" });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^JOB_NOT_FOUND: no job with id "no-such-job"/);
    }
    const submitted = await call(server.client, "execute_javascript", {
      code: "console.log(1)",
      async: true,
    });
    const jobId = submitted.structuredContent?.job_id;
    await pollUntil(jobId, (r) => r.structuredContent?.status === "completed");
    await new Promise((r) => setTimeout(r, 3100));
    const gone = await call(server.client, "check_job_status", { job_id: jobId });
    expect(gone.isError).toBe(true);
    expect(text(gone)).toMatch(/forgotten: finished jobs are kept for 3 s .*--job-retention/);
  });
});

// End to end over stdio with the SDK's real client: what a Bash loop printed before its timeout
// is in execute_bash's answer, and get_job_logs shows a running async job's loop output as it
// is printed, not only when the job ends.
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;
beforeAll(async () => {
  server = await stdioServer();
});
afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

it("execute_bash: a loop stopped by its timeout answers with the ticks it printed", async () => {
  const r = await call(server.client, "execute_bash", {
    code: "for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done",
    timeout_seconds: 3,
  });
  expect(r.structuredContent?.status, text(r)).toBe("timeout");
  expect(r.structuredContent?.stdout).toMatch(/^tick 1\ntick 2\n(tick 3\n)?(tick 4\n)?$/);
});

it("get_job_logs: an async job's loop output is there while the job runs", async () => {
  const started = await call(server.client, "execute_bash", {
    code: "for i in $(seq 1 60); do echo tick $i; sleep 1; done",
    async: true,
  });
  const jobId: string = started.structuredContent?.job_id;
  expect(jobId, text(started)).toBeTruthy();
  let stdout = "";
  for (let i = 0; i < 300 && !stdout.includes("tick 2\n"); i++) {
    await new Promise((r) => setTimeout(r, 100));
    stdout = (await call(server.client, "get_job_logs", { job_id: jobId })).structuredContent
      ?.stdout;
  }
  expect(stdout).toMatch(/^tick 1\ntick 2\n/);
  const status = await call(server.client, "check_job_status", { job_id: jobId });
  expect(status.structuredContent?.status).toBe("running");
  await call(server.client, "cancel_job", { job_id: jobId });
});

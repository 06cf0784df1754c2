// End to end with the SDK's real client over stdio and Streamable HTTP: run tools called as MCP
// tasks (the SDK's experimental tasks API). A task is a polybox job under the same id: its status
// comes from tasks/get, its answer (the same a waited call gets, checked against the tool's
// output schema) from tasks/result, and tasks/cancel stops it. A call without `task` is answered
// at once as before and leaves no task behind; `async: true` with check_job_status still works,
// and its job is a task too.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  type HttpHandle,
  httpServer,
  type McpHandle,
  stdioServer,
  type ToolResult,
  text,
} from "../helpers/mcp-client.js";

const RUN_TOOLS = [
  "execute_python",
  "execute_javascript",
  "execute_bash",
  "execute_code",
  "create_run_close",
];
const TICKS =
  "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.3)";
const MADE_UP = "00000000-0000-4000-8000-000000000000";

/** tools/call with `task`: the CreateTaskResult, not the run's answer. */
async function startTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Task> {
  const created = await client.request(
    { method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

async function taskResult(client: Client, taskId: string): Promise<ToolResult> {
  return (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
    timeout: 120_000,
  })) as ToolResult;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await fn();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const transports = [
  ["stdio", () => stdioServer()],
  ["Streamable HTTP", () => httpServer()],
] as const;

describe.each(transports)("tasks over %s", (_name, start) => {
  let server: McpHandle;
  let client: Client;

  beforeAll(async () => {
    server = await start();
    client = server.client;
  });

  afterAll(async () => {
    expect(await server.close()).toEqual({ code: 0, signal: null });
  });

  it("declares tasks: the server's capability, and the run tools' task support", async () => {
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    for (const t of tools) {
      const support = t.execution?.taskSupport;
      expect(support, t.name).toBe(RUN_TOOLS.includes(t.name) ? "optional" : "forbidden");
    }
  });

  it("runs a call as a task, through the SDK's callToolStream, to the answer a waited call gets", async () => {
    const seen: string[] = [];
    let answer: ToolResult | undefined;
    let taskId = "";
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "execute_python", arguments: { code: TICKS } },
      CallToolResultSchema,
      { task: { ttl: 60_000 }, timeout: 120_000 },
    )) {
      seen.push(message.type);
      if (message.type === "taskCreated") taskId = message.task.taskId;
      if (message.type === "result") answer = message.result as ToolResult;
      if (message.type === "error") throw message.error;
    }
    expect(seen[0]).toBe("taskCreated");
    expect(seen.at(-1)).toBe("result");
    expect(answer?.structuredContent).toMatchObject({
      status: "ok",
      stdout: "tick 0\ntick 1\ntick 2\n",
      sandbox_id: null,
    });
    expect(text(answer!)).toMatch(/^status: ok/);

    // The task is a job under the same id.
    const job = await call(client, "check_job_status", { job_id: taskId });
    expect(job.structuredContent).toMatchObject({ job_id: taskId, status: "completed" });
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: "completed", pollInterval: 500 });
    expect(task.statusMessage).toMatch(/run ok, exit code 0/);
    expect(task.ttl).toBeGreaterThan(0);
  });

  it("tasks/get follows a task while it works; tasks/result waits for its answer; tasks/list lists it", async () => {
    const sandbox_id = (await call(client, "create_sandbox", { language: "python" }))
      .structuredContent?.sandbox_id;
    const task = await startTask(client, "execute_code", { sandbox_id, code: `${TICKS}\nx = 7` });
    expect(task).toMatchObject({ status: "working", pollInterval: 500, ttl: null });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("working");
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(task.taskId);

    const answer = await taskResult(client, task.taskId);
    expect(answer.structuredContent).toMatchObject({
      status: "ok",
      stdout: "tick 0\ntick 1\ntick 2\n",
      sandbox_id,
    });
    const done = await client.experimental.tasks.getTask(task.taskId);
    expect(done.status).toBe("completed");
    // The run kept its state in the sandbox, as a waited call's would.
    const next = await call(client, "execute_code", { sandbox_id, code: "x * 6" });
    expect(next.structuredContent?.value).toBe("42");
  });

  it("a guest error is a completed task whose answer says how the code ended", async () => {
    const task = await startTask(client, "execute_javascript", { code: "throw new Error('boom')" });
    const answer = await taskResult(client, task.taskId);
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent?.status).toBe("error");
    expect(answer.structuredContent?.stderr).toMatch(/boom/);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
  });

  it("tasks/cancel stops a runaway loop; the next call in the sandbox answers at once", async () => {
    const sandbox_id = (await call(client, "create_sandbox", { language: "python" }))
      .structuredContent?.sandbox_id;
    const task = await startTask(client, "execute_code", {
      sandbox_id,
      code: "print('spinning', flush=True)\nwhile True: pass",
      timeout_seconds: 300,
    });
    // Running for real: its output is in the job's logs (the task id is the job id).
    await waitFor("the loop to start", async () => {
      const logs = await call(client, "get_job_logs", { job_id: task.taskId });
      return logs.structuredContent?.stdout.includes("spinning") ? true : undefined;
    });
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: "cancelled" });
    const answer = await taskResult(client, task.taskId);
    expect(answer.structuredContent).toMatchObject({ status: "cancelled", exit_code: 130 });
    expect(answer.structuredContent?.stdout).toContain("spinning");

    const started = Date.now();
    const next = await call(client, "execute_code", { sandbox_id, code: "print('after')" });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(next.structuredContent).toMatchObject({ status: "ok", stdout: "after\n" });

    // A finished task cannot be cancelled again; the SDK says so.
    const again = await client.experimental.tasks.cancelTask(task.taskId).then(
      () => null,
      (e: unknown) => e,
    );
    expect(again).toBeInstanceOf(McpError);
  });

  it("a call polybox refuses is a failed task whose answer says why", async () => {
    const task = await startTask(client, "execute_code", {
      sandbox_id: MADE_UP,
      language: "python",
      code: "1",
    });
    expect(task.status).toBe("failed");
    expect(task.statusMessage).toMatch(/^SANDBOX_NOT_FOUND/);
    const answer = await taskResult(client, task.taskId);
    expect(answer.isError).toBe(true);
    expect(text(answer)).toMatch(/^SANDBOX_NOT_FOUND: no sandbox with id/);
  });

  it("without `task` a call is answered at once and leaves no task; async jobs are tasks too", async () => {
    const before = (await client.experimental.tasks.listTasks()).tasks.length;
    const r = await call(client, "execute_bash", { code: "echo plain" });
    expect(r.structuredContent?.stdout).toBe("plain\n");
    expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);

    const submitted = await call(client, "execute_python", { code: TICKS, async: true });
    const jobId: string = submitted.structuredContent?.job_id;
    const finished = await waitFor("the job to finish", async () => {
      const s = await call(client, "check_job_status", { job_id: jobId });
      return s.structuredContent?.finished_at ? s : undefined;
    });
    expect(finished.structuredContent?.result.stdout).toBe("tick 0\ntick 1\ntick 2\n");
    expect(await client.experimental.tasks.getTask(jobId)).toMatchObject({
      taskId: jobId,
      status: "completed",
    });
    expect((await taskResult(client, jobId)).structuredContent?.stdout).toBe(
      "tick 0\ntick 1\ntick 2\n",
    );
  });

  it("an unknown task id is an error, and the server keeps serving", async () => {
    for (const ask of [
      () => client.experimental.tasks.getTask(MADE_UP),
      () => client.experimental.tasks.getTaskResult(MADE_UP, CallToolResultSchema),
      () => client.experimental.tasks.cancelTask(MADE_UP),
    ]) {
      const error = await ask().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(McpError);
    }
    const r = await call(client, "execute_javascript", { code: "console.log('alive')" });
    expect(r.structuredContent?.stdout).toBe("alive\n");
  });
});

describe("T22: another client's task, over HTTP", () => {
  let http: HttpHandle;

  beforeAll(async () => {
    http = await httpServer();
  });

  afterAll(async () => {
    expect(await http.close()).toEqual({ code: 0, signal: null });
  });

  it("is neither listed nor read nor cancelled by another session", async () => {
    const a = http.client;
    const task = await startTask(a, "execute_python", {
      code: "import time\ntime.sleep(3)\nprint('mine')",
    });
    const b = await http.connect();
    expect((await b.experimental.tasks.listTasks()).tasks).toEqual([]);
    for (const ask of [
      () => b.experimental.tasks.getTask(task.taskId),
      () => b.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
      () => b.experimental.tasks.cancelTask(task.taskId),
    ]) {
      const error = await ask().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(McpError);
    }
    const answer = await taskResult(a, task.taskId);
    expect(answer.structuredContent?.stdout).toBe("mine\n");
  });
});

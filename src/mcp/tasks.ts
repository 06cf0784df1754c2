// MCP adapter: MCP tasks (the SDK's experimental tasks API), one to one with polybox's jobs. A
// run tool called with `task` starts a job and answers a task whose id is the job's id;
// tasks/get, tasks/result, tasks/list and tasks/cancel read and cancel jobs. Every job is a task,
// so an `async: true` job can be polled with tasks/get too, and a task with check_job_status.
// Tasks belong to the caller, as jobs do (a token's sessions share them), and are kept as long as
// jobs are (--job-retention after they finish).
//
// The SDK runs a call *without* `task` to a task-capable tool through the tool's createTask and
// then polls this store until the task ends (McpServer's handleAutomaticTaskPolling), which
// would turn every call into a job polled every few seconds. The store is where the SDK shows
// the original request, so it tells the two apart: a call that asked for no task is answered
// as before, at once, with its cancellation and progress, and its answer is handed to the poll
// that follows as a task that has already ended.

import { randomUUID } from "node:crypto";
import type {
  CreateTaskOptions,
  TaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, Request, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { notStartedResult } from "../core/types.js";
import { isPolyboxError, type JobInfo, PolyboxError } from "../index.js";
import { capResponse } from "./budget.js";
import { errorResult, runAnswer } from "./render.js";
import { planOf } from "./task-plan.js";
import type { ToolContext } from "./tool.js";

/** How often a client should poll tasks/get; also how often tasks/result looks while it waits. */
export const TASK_POLL_MS = 500;
/** Page size of tasks/list. */
const LIST_PAGE = 100;
/** Failed task creations remembered at once (each is one short error). */
const MAX_FAILED = 100;
/** How long an answer for the SDK's own poll waits to be taken (it is taken at once). */
const HANDOFF_MS = 60_000;

/** A task that is not a job: a creation that failed, or an answer for the SDK's own poll. */
interface Held {
  task: Task;
  result: CallToolResult;
  /** Taken by the one read that follows, rather than kept until `expiresAt`. */
  once: boolean;
  expiresAt: number;
}

export class JobTaskStore implements TaskStore {
  private readonly held = new Map<string, Held>();

  constructor(private readonly ctx: ToolContext) {}

  async createTask(options: CreateTaskOptions, _id: unknown, request: Request): Promise<Task> {
    const plan = planOf(options);
    if (request.params?.task === undefined) return this.hold(await plan.answer(), true);
    let job: JobInfo;
    try {
      job = plan.job();
    } catch (error) {
      // The SDK lets a task tool answer nothing but a task, so a refusal is a task that failed.
      return this.hold(capResponse(errorResult(error), this.ctx.maxResponseBytes), false);
    }
    return this.taskOf(job);
  }

  async getTask(taskId: string): Promise<Task | null> {
    const job = this.job(taskId);
    return job ? this.taskOf(job) : (this.heldTask(taskId)?.task ?? null);
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const held = this.heldTask(taskId);
    if (held) {
      if (held.once) this.held.delete(taskId);
      return held.result;
    }
    const job = this.job(taskId);
    if (!job) throw notFound(taskId);
    if (job.finishedAt === null)
      throw new PolyboxError("INVALID_ARGUMENT", `task ${taskId} has not finished`);
    return capResponse(answerOf(job, this.ctx.maxResponseBytes), this.ctx.maxResponseBytes);
  }

  /** Results are the jobs' own; nothing else stores one. */
  async storeTaskResult(taskId: string): Promise<void> {
    throw new PolyboxError("INVALID_ARGUMENT", `task ${taskId}: a job stores its own result`);
  }

  /** The SDK asks for "cancelled" on tasks/cancel: that cancels the job. */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled" || this.heldTask(taskId)) return;
    await this.ctx.service.cancelJob(this.ctx.caller, taskId);
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    this.sweep();
    const all = [
      ...this.ctx.service.listJobs(this.ctx.caller).map((job) => this.taskOf(job)),
      ...[...this.held.values()].filter((h) => !h.once).map((h) => h.task),
    ];
    const from = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(from) || from < 0 || from > all.length)
      throw new PolyboxError("INVALID_ARGUMENT", "the cursor is not one tasks/list gave");
    const tasks = all.slice(from, from + LIST_PAGE);
    const next = from + tasks.length;
    return next < all.length ? { tasks, nextCursor: String(next) } : { tasks };
  }

  private job(taskId: string): JobInfo | null {
    try {
      return this.ctx.service.jobStatus(this.ctx.caller, taskId);
    } catch (error) {
      if (isPolyboxError(error, "JOB_NOT_FOUND")) return null;
      throw error;
    }
  }

  private heldTask(taskId: string): Held | undefined {
    this.sweep();
    return this.held.get(taskId);
  }

  private hold(result: CallToolResult, once: boolean): Task {
    this.sweep();
    const now = Date.now();
    const keep = once ? HANDOFF_MS : this.ctx.service.jobs.retentionMs;
    const task: Task = {
      taskId: randomUUID(),
      status: result.isError ? "failed" : "completed",
      ttl: keep,
      createdAt: at(now),
      lastUpdatedAt: at(now),
      pollInterval: TASK_POLL_MS,
      ...(result.isError ? { statusMessage: firstText(result) } : {}),
    };
    this.held.set(task.taskId, { task, result, once, expiresAt: now + keep });
    if (!once) {
      const failed = [...this.held].filter(([, h]) => !h.once);
      for (const [id] of failed.slice(0, Math.max(0, failed.length - MAX_FAILED)))
        this.held.delete(id);
    }
    return task;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, h] of this.held) if (h.expiresAt <= now) this.held.delete(id);
  }

  /** A job as the task a client polls. */
  private taskOf(job: JobInfo): Task {
    const retention = this.ctx.service.jobs.retentionMs;
    return {
      taskId: job.id,
      status: taskStatus(job),
      // Kept while it runs, then for the retention time after it finished.
      ttl: job.finishedAt === null ? null : job.finishedAt - job.createdAt + retention,
      createdAt: at(job.createdAt),
      lastUpdatedAt: at(job.finishedAt ?? job.startedAt ?? job.createdAt),
      pollInterval: TASK_POLL_MS,
      statusMessage: statusMessage(job),
    };
  }
}

/**
 * A job's status as a task's. A run that ended with a result of any status is a tool call that
 * completed (its result says how the code ended); only a job polybox could not run is "failed".
 */
function taskStatus(job: JobInfo): Task["status"] {
  if (job.finishedAt === null) return "working";
  if (job.status === "cancelled") return "cancelled";
  return job.result ? "completed" : "failed";
}

function statusMessage(job: JobInfo): string {
  if (job.status === "queued") return "queued: waiting for a free slot";
  if (job.status === "running") return "running";
  if (job.error) return `${job.error.code}: ${job.error.message}`;
  if (job.result)
    return `${job.status}: run ${job.result.status}, exit code ${job.result.exitCode}`;
  return job.status;
}

/** What the call would have answered had it waited: the same answer a run tool gives. */
function answerOf(job: JobInfo, maxResponseBytes: number): CallToolResult {
  if (job.error) {
    const text = `${job.error.code}: ${job.error.message}`;
    return { isError: true, content: [{ type: "text", text }] };
  }
  const result =
    job.result ??
    notStartedResult("cancelled while waiting in the queue; it never started", "cancelled");
  return runAnswer({ ...result, sandboxId: job.sandboxId }, maxResponseBytes);
}

const at = (ms: number) => new Date(ms).toISOString();

function firstText(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

function notFound(taskId: string): PolyboxError {
  return new PolyboxError(
    "JOB_NOT_FOUND",
    `no task with id ${JSON.stringify(taskId)}; finished tasks are kept as jobs are (--job-retention)`,
  );
}

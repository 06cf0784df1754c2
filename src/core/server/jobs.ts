// Trusted side: asynchronous runs. A job wraps one run that the caller does not wait for: it has
// an id, a status with timings, the output so far (captured live, so logs can be read while it
// runs), and an AbortController to cancel it. Finished jobs are kept for `retentionMs` so a client
// can collect the result, then forgotten, so a server that runs for weeks does not grow. A job may
// have an owner: asked with an owner, another owner's job is "not found", as an unknown id is.

import { randomUUID } from "node:crypto";
import { isPolyboxError, PolyboxError, type PolyboxErrorCode } from "../errors.js";
import { humanDuration } from "../human.js";
import { DEFAULT_MAX_LIMITS } from "../limits.js";
import type { Language, OutputStream, RunResult, RunStatus } from "../types.js";

export type JobStatus = "queued" | "running" | "completed" | "failed" | "timeout" | "cancelled";

export const DEFAULT_JOB_RETENTION_MS = 10 * 60_000;
/**
 * Characters of live output a job's log keeps per stream while it runs. The engine side already
 * stops forwarding past the run's own `maxOutputBytes`; this is the job's own wall, so that no
 * stream of messages, forged or not, can grow a log without bound.
 */
const MAX_LIVE_LOG_CHARS = DEFAULT_MAX_LIMITS.maxOutputBytes;
const MAX_FINISHED_JOBS = 1000;
const REMEMBERED_FORGOTTEN = 1000;

export interface JobInfo {
  id: string;
  status: JobStatus;
  language: Language;
  sandboxId: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Time spent waiting for a slot (so far, while queued). */
  queuedMs: number;
  /** Time spent running (so far, while running); null before it starts. */
  durationMs: number | null;
  /** The run's result once it finished; null before, or when the host failed. */
  result: RunResult | null;
  /** Why the job failed without a result (the host, not the guest, failed). */
  error: { code: PolyboxErrorCode | "INTERNAL"; message: string } | null;
}

export interface JobLogs {
  id: string;
  status: JobStatus;
  stdout: string;
  stderr: string;
}

/** What a job's run gets: cancellation, live output, and a hook to call when it leaves the queue. */
export interface JobContext {
  /** The job's id, for what the run leaves behind under its name (its kept output). */
  id: string;
  signal: AbortSignal;
  onOutput: (stream: OutputStream, text: string) => void;
  started: () => void;
}

interface Job {
  info: JobInfo;
  owner: string | null;
  logs: { stdout: string; stderr: string };
  controller: AbortController;
  done: Promise<void>;
}

/** A run's status → the job's: the guest's own failure and every limit but time count as failed. */
export function jobStatusOf(status: RunStatus): JobStatus {
  switch (status) {
    case "ok":
      return "completed";
    case "timeout":
      return "timeout";
    case "cancelled":
      return "cancelled";
    default:
      return "failed";
  }
}

export class JobManager {
  readonly retentionMs: number;
  private readonly now: () => number;
  private readonly jobs = new Map<string, Job>();
  /** Ids of forgotten jobs → their owner ("" for none), to say "forgotten" to that owner only. */
  private readonly forgotten = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;

  constructor(options: { retentionMs?: number; now?: () => number } = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_JOB_RETENTION_MS;
    this.now = options.now ?? Date.now;
    this.timer = setInterval(
      () => this.prune(),
      Math.min(60_000, Math.max(1000, this.retentionMs)),
    );
    this.timer.unref();
  }

  /**
   * Starts a job. `run` is called at once and may throw (e.g. the queue is full): then no job is
   * created and the error reaches the caller.
   */
  submit(
    meta: { language: Language; sandboxId: string | null; owner?: string },
    run: (ctx: JobContext) => Promise<RunResult>,
  ): JobInfo {
    this.prune();
    const controller = new AbortController();
    const info: JobInfo = {
      id: randomUUID(),
      status: "queued",
      language: meta.language,
      sandboxId: meta.sandboxId,
      createdAt: this.now(),
      startedAt: null,
      finishedAt: null,
      queuedMs: 0,
      durationMs: null,
      result: null,
      error: null,
    };
    const logs = { stdout: "", stderr: "" };
    const ctx: JobContext = {
      id: info.id,
      signal: controller.signal,
      onOutput: (stream, text) => {
        const room = MAX_LIVE_LOG_CHARS - logs[stream].length;
        if (room > 0) logs[stream] += text.length > room ? text.slice(0, room) : text;
      },
      started: () => {
        if (info.status !== "queued") return;
        info.status = "running";
        info.startedAt = this.now();
      },
    };
    const outcome = run(ctx);
    const done = outcome.then(
      (result) => {
        // The result's output is checked and capped; live output it lacks (a run that ended
        // without a result of its own) is kept rather than lost.
        if (result.stdout.length >= logs.stdout.length) logs.stdout = result.stdout;
        if (result.stderr.length >= logs.stderr.length) logs.stderr = result.stderr;
        this.finish(info, jobStatusOf(result.status), result, null);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return this.finish(info, "cancelled", null, null);
        const code = isPolyboxError(error) ? error.code : "INTERNAL";
        this.finish(info, "failed", null, {
          code,
          message: error instanceof Error ? error.message : String(error),
        });
      },
    );
    this.jobs.set(info.id, { info, owner: meta.owner ?? null, logs, controller, done });
    return this.snapshot(info);
  }

  /** With `owner`, only that owner's jobs are found (see the file header). */
  status(id: string, owner?: string): JobInfo {
    return this.snapshot(this.job(id, owner).info);
  }

  logs(id: string, owner?: string): JobLogs {
    const job = this.job(id, owner);
    return { id, status: job.info.status, ...job.logs };
  }

  /**
   * Cancels a queued or running job and waits (up to `waitMs`) for it to stop, so the answer can
   * say "cancelled". A job that already finished is left as it is.
   */
  async cancel(id: string, options: { owner?: string; waitMs?: number } = {}): Promise<JobInfo> {
    const job = this.job(id, options.owner);
    const waitMs = options.waitMs ?? 5000;
    if (job.info.finishedAt === null) {
      job.controller.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([job.done, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
    }
    return this.snapshot(job.info);
  }

  /** An owner's jobs, oldest first (finished ones until they are forgotten). */
  list(owner: string): JobInfo[] {
    this.prune();
    return [...this.jobs.values()]
      .filter((job) => job.owner === owner)
      .map((job) => this.snapshot(job.info));
  }

  /** Jobs not finished yet. */
  get active(): number {
    let n = 0;
    for (const job of this.jobs.values()) if (job.info.finishedAt === null) n++;
    return n;
  }

  /** Cancels the unfinished jobs of an owner that went away for good. */
  async cancelOwner(owner: string): Promise<void> {
    const pending = [...this.jobs.values()].filter(
      (j) => j.owner === owner && j.info.finishedAt === null,
    );
    for (const job of pending) job.controller.abort();
    await Promise.allSettled(pending.map((j) => j.done));
  }

  /** Cancels every unfinished job and stops the retention timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const pending = [...this.jobs.values()].filter((j) => j.info.finishedAt === null);
    for (const job of pending) job.controller.abort();
    await Promise.allSettled(pending.map((j) => j.done));
  }

  private finish(
    info: JobInfo,
    status: JobStatus,
    result: RunResult | null,
    error: JobInfo["error"],
  ): void {
    info.status = status;
    info.finishedAt = this.now();
    info.result = result;
    info.error = error;
  }

  private job(id: string, owner: string | undefined): Job {
    this.prune();
    const found = typeof id === "string" ? this.jobs.get(id) : undefined;
    // Another owner's job is answered as if it never existed; so is its forgotten id below.
    const job = found && (owner === undefined || found.owner === owner) ? found : undefined;
    if (job) return job;
    const keep = humanDuration(this.retentionMs);
    const forgottenOwner = typeof id === "string" ? this.forgotten.get(id) : undefined;
    const wasForgotten =
      forgottenOwner !== undefined && (owner === undefined || forgottenOwner === owner);
    throw new PolyboxError(
      "JOB_NOT_FOUND",
      wasForgotten
        ? `job ${id} finished more than ${keep} ago and its result was forgotten: finished jobs are kept for ${keep} (retentionMs)`
        : `no job with id ${JSON.stringify(id)} (finished jobs are kept for ${keep})`,
      { details: { jobId: id, limit: "retentionMs", value: keep } },
    );
  }

  private snapshot(info: JobInfo): JobInfo {
    const now = this.now();
    const queuedUntil = info.startedAt ?? info.finishedAt ?? now;
    return {
      ...info,
      queuedMs: queuedUntil - info.createdAt,
      durationMs: info.startedAt === null ? null : (info.finishedAt ?? now) - info.startedAt,
    };
  }

  private prune(): void {
    const now = this.now();
    const finished = [...this.jobs.values()].filter((j) => j.info.finishedAt !== null);
    const excess = finished.length - MAX_FINISHED_JOBS;
    finished.forEach((job, i) => {
      if (i < excess || now - job.info.finishedAt! >= this.retentionMs) {
        this.jobs.delete(job.info.id);
        this.forgotten.set(job.info.id, job.owner ?? "");
      }
    });
    for (const id of this.forgotten.keys()) {
      if (this.forgotten.size <= REMEMBERED_FORGOTTEN) break;
      this.forgotten.delete(id);
    }
  }
}

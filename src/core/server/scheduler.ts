// Trusted side: admission control for runs. At most `concurrency` runs execute at once; more wait
// in a bounded FIFO queue, and past it a caller hears SERVER_BUSY at once instead of piling up
// memory. Each client also has a CPU budget (run time in a sliding window); a client over it hears
// RATE_LIMITED with the time to wait, and may hold at most `maxRunsPerClient` of the running and
// waiting places, so that one client cannot fill the queue and lock every other out. The checks
// happen synchronously in `schedule`, so a caller that returns a job id knows the run was accepted.

import os from "node:os";
import { PolyboxError } from "../errors.js";
import { humanDuration } from "../human.js";

export interface RateLimit {
  /** Run time (ms) one client may use per window. */
  cpuMs: number;
  windowMs: number;
}

export interface SchedulerOptions {
  /** Runs at once (default: the number of cores). */
  concurrency?: number;
  /** Runs waiting for a slot (default 4 × concurrency). */
  queueLimit?: number;
  /** Per-client budget; null or absent = unlimited. */
  rateLimit?: RateLimit | null;
  /** Runs one client may have running or waiting at once (default: concurrency + queueLimit). */
  maxRunsPerClient?: number;
  now?: () => number;
}

export interface ScheduleOptions<T> {
  /** Aborting while queued removes the task and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** What the finished task cost, in ms of run time (default: its wall time). */
  cost?: (result: T) => number;
}

interface Waiting {
  start: () => void;
}

export class Scheduler {
  readonly concurrency: number;
  readonly queueLimit: number;
  readonly rateLimit: RateLimit | null;
  readonly maxRunsPerClient: number;
  private readonly now: () => number;
  private readonly queue: Waiting[] = [];
  private active = 0;
  /** Per client: runs accepted and not finished (running or waiting). */
  private readonly heldBy = new Map<string, number>();
  /** Per client: [finishedAt, costMs] of recent runs, oldest first. */
  private readonly usageLog = new Map<string, [number, number][]>();

  constructor(options: SchedulerOptions = {}) {
    this.concurrency = options.concurrency ?? defaultConcurrency();
    this.queueLimit = options.queueLimit ?? defaultQueueLimit(this.concurrency);
    this.rateLimit = options.rateLimit ?? null;
    this.maxRunsPerClient = options.maxRunsPerClient ?? this.concurrency + this.queueLimit;
    this.now = options.now ?? Date.now;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `concurrency must be a positive integer, got ${this.concurrency}`,
      );
    }
    if (!Number.isInteger(this.queueLimit) || this.queueLimit < 0) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `queueLimit must be a non-negative integer, got ${this.queueLimit}`,
      );
    }
    if (!Number.isInteger(this.maxRunsPerClient) || this.maxRunsPerClient < 1) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `maxRunsPerClient must be a positive integer, got ${this.maxRunsPerClient}`,
      );
    }
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.queue.length;
  }

  /**
   * Runs `task` when a slot is free. Throws (synchronously) RATE_LIMITED or SERVER_BUSY when the
   * task cannot be accepted. The task always starts on a later tick, never inside this call.
   */
  schedule<T>(
    client: string,
    task: () => Promise<T>,
    options: ScheduleOptions<T> = {},
  ): Promise<T> {
    this.checkRate(client);
    // Tasks queued in this same tick but not started yet still count against the free slots.
    const free = Math.max(0, this.concurrency - this.active);
    if (this.queue.length >= this.queueLimit + free) {
      throw new PolyboxError(
        "SERVER_BUSY",
        `server busy: ${this.active} runs are running (concurrency=${this.concurrency}) and ${this.queue.length - free} are waiting, the most the queue holds; try again in a few seconds`,
        { details: { limit: "concurrency", value: this.concurrency, retryAfterMs: 2_000 } },
      );
    }
    const held = this.heldBy.get(client) ?? 0;
    if (held >= this.maxRunsPerClient) {
      throw new PolyboxError(
        "SERVER_BUSY",
        `this client has ${held} runs running or waiting, the most one client may have (maxRunsPerClient=${this.maxRunsPerClient})`,
        { details: { limit: "maxRunsPerClient", value: this.maxRunsPerClient } },
      );
    }
    return new Promise<T>((resolve, reject) => {
      const { signal } = options;
      if (signal?.aborted) return reject(signal.reason);
      this.hold(client, 1);
      const onAbort = () => {
        const at = this.queue.indexOf(waiting);
        if (at >= 0) {
          this.queue.splice(at, 1);
          this.hold(client, -1);
          reject(signal?.reason);
        }
      };
      const waiting: Waiting = {
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          this.active++;
          const started = this.now();
          task().then(
            (result) => {
              this.record(client, options.cost ? options.cost(result) : this.now() - started);
              this.hold(client, -1);
              this.release();
              resolve(result);
            },
            (error: unknown) => {
              this.record(client, this.now() - started);
              this.hold(client, -1);
              this.release();
              reject(error);
            },
          );
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiting);
      // Start on a later tick, so the caller can publish a job as "queued" before it runs.
      if (free > 0) queueMicrotask(() => this.next());
    });
  }

  /** Run time (ms) this client used in the current window. */
  usage(client: string): number {
    if (!this.rateLimit) return 0;
    return this.entries(client).reduce((sum, [, cost]) => sum + cost, 0);
  }

  /** Runs this client has running or waiting. */
  heldFor(client: string): number {
    return this.heldBy.get(client) ?? 0;
  }

  private hold(client: string, delta: number): void {
    const n = (this.heldBy.get(client) ?? 0) + delta;
    if (n > 0) this.heldBy.set(client, n);
    else this.heldBy.delete(client);
  }

  private checkRate(client: string): void {
    const limit = this.rateLimit;
    if (!limit) return;
    const log = this.entries(client);
    let used = log.reduce((sum, [, cost]) => sum + cost, 0);
    if (used < limit.cpuMs) return;
    // The budget frees up as old runs leave the window: find the first moment it is under again.
    let retryAt = this.now();
    for (const [at, cost] of log) {
      used -= cost;
      retryAt = at + limit.windowMs;
      if (used < limit.cpuMs) break;
    }
    throw new PolyboxError(
      "RATE_LIMITED",
      `rate limit reached: this client used ${humanDuration(this.usage(client))} of run time in the last ${humanDuration(limit.windowMs)}, over its budget of ${describeRateLimit(limit)} (rateLimit); retry in ${humanDuration(Math.max(1000, retryAt - this.now()))}`,
      {
        details: {
          limit: "rateLimit",
          value: describeRateLimit(limit),
          retryAfterMs: Math.max(1000, retryAt - this.now()),
        },
      },
    );
  }

  private entries(client: string): [number, number][] {
    const log = this.usageLog.get(client);
    if (!log) return [];
    const since = this.now() - (this.rateLimit?.windowMs ?? 0);
    while (log.length > 0 && log[0]![0] <= since) log.shift();
    if (log.length === 0) this.usageLog.delete(client);
    return log;
  }

  private record(client: string, cost: number): void {
    if (!this.rateLimit || !(cost > 0)) return;
    const log = this.usageLog.get(client) ?? [];
    log.push([this.now(), cost]);
    this.usageLog.set(client, log);
  }

  private release(): void {
    this.active--;
    this.next();
  }

  private next(): void {
    while (this.active < this.concurrency && this.queue.length > 0) this.queue.shift()!.start();
  }
}

/** Runs at once unless told: the number of cores. */
export function defaultConcurrency(): number {
  return os.availableParallelism?.() ?? os.cpus().length;
}

/** Runs that may wait for a slot unless told. */
export function defaultQueueLimit(concurrency: number): number {
  return 4 * concurrency;
}

/** `10cpu-s/min`, as the flag spells it. */
export function describeRateLimit(limit: RateLimit): string {
  const unit =
    limit.windowMs === 3_600_000
      ? "h"
      : limit.windowMs === 1000
        ? "s"
        : limit.windowMs === 60_000
          ? "min"
          : null;
  const amount = +(limit.cpuMs / 1000).toFixed(3);
  return unit
    ? `${amount}cpu-s/${unit}`
    : `${amount} CPU-seconds per ${humanDuration(limit.windowMs)}`;
}

/** Parses `10cpu-s/min` (also `/s`, `/h`, and spaces or `cpu-sec`) into a budget. */
export function parseRateLimit(text: string): RateLimit {
  const m =
    /^\s*(\d+(?:\.\d+)?)\s*cpu[-_ ]?s(?:ec(?:onds?)?)?\s*\/\s*(s|sec|second|m|min|minute|h|hour)\s*$/i.exec(
      text,
    );
  if (!m || Number(m[1]) <= 0) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `cannot read "${text}" as a rate limit; write it as N cpu-s/min, e.g. 10cpu-s/min`,
    );
  }
  const unit = m[2]!.toLowerCase();
  const windowMs = unit.startsWith("h") ? 3_600_000 : unit.startsWith("m") ? 60_000 : 1000;
  return { cpuMs: Math.round(Number(m[1]) * 1000), windowMs };
}

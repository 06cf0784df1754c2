// Unit tests (no WASM) for the pieces the MCP server is built on: the scheduler's concurrency,
// bounded queue and per-client rate limit, and the job manager's states, logs, cancellation and
// retention. They use the built package, with fake clocks where time matters.

import { describe, expect, it } from "vitest";
import {
  isPolyboxError,
  JobManager,
  parseRateLimit,
  type RunResult,
  Scheduler,
} from "../../dist/index.js";

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

function fakeResult(status: RunResult["status"], durationMs = 10): RunResult {
  return {
    status,
    stdout: "out\n",
    stderr: "",
    exitCode: status === "ok" ? 0 : 1,
    value: null,
    durationMs,
    truncated: false,
    filesChanged: [],
    images: [],
    displays: [],
  };
}

describe("Scheduler", () => {
  it("runs at most `concurrency` tasks and queues the rest in order", async () => {
    const s = new Scheduler({ concurrency: 2, queueLimit: 2 });
    const gates = [0, 1, 2, 3].map(() => deferred<number>());
    const started: number[] = [];
    const all = gates.map((g, i) =>
      s.schedule("c", () => {
        started.push(i);
        return g.promise;
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1]);
    expect([s.running, s.queued]).toEqual([2, 2]);
    gates[0]!.resolve(0);
    await all[0];
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.resolve(1);
    await Promise.all(all);
    expect([s.running, s.queued]).toEqual([0, 0]);
  });

  it("refuses past the queue with SERVER_BUSY, synchronously", () => {
    const s = new Scheduler({ concurrency: 1, queueLimit: 1 });
    const never = () => new Promise<never>(() => {});
    s.schedule("c", never);
    s.schedule("c", never);
    let error: unknown;
    try {
      s.schedule("c", never);
    } catch (e) {
      error = e;
    }
    expect(isPolyboxError(error, "SERVER_BUSY")).toBe(true);
    expect((error as Error).message).toMatch(/concurrency=1/);
    expect(error).toMatchObject({ details: { limit: "concurrency", value: 1 } });
  });

  it("drops a queued task whose signal aborts", async () => {
    const s = new Scheduler({ concurrency: 1, queueLimit: 4 });
    const gate = deferred<void>();
    const first = s.schedule("c", () => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const second = s.schedule(
      "c",
      async () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    controller.abort();
    await expect(second).rejects.toBeDefined();
    expect(s.queued).toBe(0);
    gate.resolve();
    await first;
    expect(ran).toBe(false);
  });

  it("limits each client's run time per window and says when to retry", async () => {
    let now = 0;
    const s = new Scheduler({
      concurrency: 4,
      rateLimit: { cpuMs: 1000, windowMs: 60_000 },
      now: () => now,
    });
    await s.schedule("a", async () => fakeResult("ok", 700), { cost: (r) => r.durationMs });
    now = 10_000;
    await s.schedule("a", async () => fakeResult("ok", 400), { cost: (r) => r.durationMs });
    expect(() => s.schedule("a", async () => 1)).toThrow(/retry in 50 s/);
    await s.schedule("b", async () => 1); // another client has its own budget
    now = 60_001; // the first run left the window: 400 ms used, under 1 s
    await s.schedule("a", async () => 1);
  });

  it("T22: holds each client to its share of running and waiting places, freeing them as runs end", async () => {
    const s = new Scheduler({ concurrency: 1, queueLimit: 4, maxRunsPerClient: 2 });
    const gates = [deferred<number>(), deferred<number>()];
    const held = gates.map((g) => s.schedule("a", () => g.promise));
    let error: unknown;
    try {
      void s.schedule("a", async () => 1);
    } catch (e) {
      error = e;
    }
    expect(isPolyboxError(error, "SERVER_BUSY")).toBe(true);
    expect((error as Error).message).toMatch(/maxRunsPerClient=2/);
    expect(error).toMatchObject({ details: { limit: "maxRunsPerClient", value: 2 } });
    const other = s.schedule("b", async () => 2); // another client still gets in
    expect(s.heldFor("a")).toBe(2);
    for (const g of gates) g.resolve(0);
    await Promise.all([...held, other]);
    expect(s.heldFor("a")).toBe(0);
    // An aborted wait gives its place back too.
    const gate = deferred<number>();
    const running = s.schedule("a", () => gate.promise);
    const abort = new AbortController();
    const waiting = s.schedule("a", async () => 1, { signal: abort.signal });
    abort.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    expect(s.heldFor("a")).toBe(1);
    gate.resolve(0);
    await running;
  });

  it("parses rate limits as the flag spells them", () => {
    expect(parseRateLimit("10cpu-s/min")).toEqual({ cpuMs: 10_000, windowMs: 60_000 });
    expect(parseRateLimit("0.5 cpu-s / s")).toEqual({ cpuMs: 500, windowMs: 1000 });
    expect(parseRateLimit("600cpu-sec/h")).toEqual({ cpuMs: 600_000, windowMs: 3_600_000 });
    expect(() => parseRateLimit("10/min")).toThrow(/cpu-s\/min/);
    expect(() => parseRateLimit("0cpu-s/min")).toThrow();
  });
});

describe("JobManager", () => {
  const meta = { language: "python" as const, sandboxId: null };

  it("goes queued → running → completed, with logs while running", async () => {
    const jobs = new JobManager();
    const gate = deferred<RunResult>();
    const job = jobs.submit(meta, (ctx) => {
      setTimeout(() => {
        ctx.started();
        ctx.onOutput("stdout", "partial\n");
      }, 5);
      return gate.promise;
    });
    expect(job.status).toBe("queued");
    await new Promise((r) => setTimeout(r, 20));
    expect(jobs.status(job.id).status).toBe("running");
    expect(jobs.logs(job.id).stdout).toBe("partial\n");
    gate.resolve(fakeResult("ok"));
    await new Promise((r) => setTimeout(r, 0));
    const done = jobs.status(job.id);
    expect(done.status).toBe("completed");
    expect(done.result?.stdout).toBe("out\n");
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    await jobs.close();
  });

  it("maps run statuses onto job statuses", async () => {
    const jobs = new JobManager();
    const statuses = [];
    for (const s of ["error", "timeout", "memory_limit", "cancelled"] as const) {
      const job = jobs.submit(meta, async (ctx) => {
        ctx.started();
        return fakeResult(s);
      });
      await new Promise((r) => setTimeout(r, 0));
      statuses.push(jobs.status(job.id).status);
    }
    expect(statuses).toEqual(["failed", "timeout", "failed", "cancelled"]);
    await jobs.close();
  });

  it("cancels through the signal, and leaves finished jobs alone", async () => {
    const jobs = new JobManager();
    const job = jobs.submit(
      meta,
      (ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => resolve(fakeResult("cancelled"))),
        ),
    );
    expect((await jobs.cancel(job.id)).status).toBe("cancelled");
    expect((await jobs.cancel(job.id)).status).toBe("cancelled");
    await jobs.close();
  });

  it("does not create a job when the run is refused at once", () => {
    const jobs = new JobManager();
    expect(() =>
      jobs.submit(meta, () => {
        throw new Error("busy");
      }),
    ).toThrow("busy");
    void jobs.close();
  });

  it("T22: answers another owner's job, live or forgotten, as if it never existed", async () => {
    let now = 0;
    const jobs = new JobManager({ retentionMs: 1000, now: () => now });
    const gate = deferred<RunResult>();
    const job = jobs.submit({ ...meta, owner: "alice" }, () => gate.promise);
    const unknown = (id: string) => `no job with id "${id}"`;
    for (const probe of [
      () => jobs.status(job.id, "mallory"),
      () => jobs.logs(job.id, "mallory"),
    ]) {
      expect(probe).toThrow(unknown(job.id));
    }
    await expect(jobs.cancel(job.id, { owner: "mallory" })).rejects.toThrow(unknown(job.id));
    expect(jobs.status(job.id, "alice").status).toBe("queued");
    gate.resolve(fakeResult("ok"));
    await new Promise((r) => setTimeout(r, 0));
    now = 1000;
    expect(() => jobs.status(job.id, "alice")).toThrow(/forgotten/);
    expect(() => jobs.status(job.id, "mallory")).toThrow(unknown(job.id));
    await jobs.close();
  });

  it("cancels the jobs of an owner that went away, and only those", async () => {
    const jobs = new JobManager();
    const hang = (ctx: { signal: AbortSignal }) =>
      new Promise<RunResult>((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(fakeResult("cancelled"))),
      );
    const gone = jobs.submit({ ...meta, owner: "gone" }, hang);
    const stays = jobs.submit({ ...meta, owner: "stays" }, hang);
    await jobs.cancelOwner("gone");
    expect(jobs.status(gone.id).status).toBe("cancelled");
    expect(jobs.status(stays.id).status).toBe("queued");
    await jobs.close();
  });

  it("forgets finished jobs after the retention time", async () => {
    let now = 0;
    const jobs = new JobManager({ retentionMs: 1000, now: () => now });
    const job = jobs.submit(meta, async () => fakeResult("ok"));
    await new Promise((r) => setTimeout(r, 0));
    now = 999;
    expect(jobs.status(job.id).status).toBe("completed");
    now = 1000;
    expect(() => jobs.status(job.id)).toThrow(/forgotten/);
    expect(() => jobs.status("nope")).toThrow(/no job with id/);
    await jobs.close();
  });
});

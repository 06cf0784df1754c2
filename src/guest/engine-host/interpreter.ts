// Untrusted side: one interpreter = one worker thread running one engine. This wrapper owns the
// worker's lifetime and enforces what the worker cannot be trusted to enforce itself: the
// deadline (terminate, not ask), the JS heap cap (`resourceLimits`), and cancellation.

import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import {
  CANCEL_GRACE_MS,
  ENGINE_DEADLINE_GRACE_MS,
  runDeadline,
} from "../../protocol/deadlines.js";
import { exitCodeOf, RUN_EXIT_CODES } from "../../protocol/endings.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import type {
  EngineResult,
  FromWorker,
  NetDelivery,
  RestoreAnswer,
  RunRequest,
  StateAnswer,
  StateImage,
  WheelBlob,
  WorkerInit,
} from "../../protocol/messages.js";
import type { NetReply, NetRequest } from "../../protocol/net.js";
import {
  validateRestoreAnswer,
  validateResult,
  validateStateAnswer,
} from "../../protocol/validate.js";

/**
 * Between runs a worker should be idle. One that keeps its event loop busy (a guest timer or task
 * left running after its run returned) for this many consecutive checks is killed.
 */
const BUSY_WHILE_IDLE_CHECKS = 4;
const BUSY_CHECK_MS = 250;
/**
 * An idle worker's event loop is idle: nothing of a finished run may keep running. A guest that
 * works in bursts (an `Atomics.waitAsync` loop at 40% duty) must not slip under the bar, and an
 * honest worker collecting a big run's garbage on a loaded machine must not reach it: the check
 * is of wall time, which a busy machine stretches, so the bar is a fifth of it, and the first
 * seconds after a run (its garbage collected, its buffers finalized) do not count.
 */
const BUSY_THRESHOLD = 0.2;
const AFTER_RUN_GRACE_MS = 2_000;
const WORKER_URL = new URL("./worker-entry.js", import.meta.url);
/** How long a worker's termination may take to be confirmed before its host ends itself. */
const TERMINATE_CONFIRM_MS = 5_000;
const EXIT_WORKER_STUCK = 70;
/** How long a worker may take to replace its interpreter after a run before it is retired. */
const RENEWAL_TIMEOUT_MS = 10_000;

type Output = (stream: "stdout" | "stderr", text: string) => void;
/** Passes the guest's network request `req` on to the trusted side. */
type NetOut = (req: number, request: NetRequest) => void;

interface Pending {
  id: number;
  resolve: (result: EngineResult) => void;
  output: Output;
  timer: NodeJS.Timeout;
  request: RunRequest;
  net: NetOut;
  /** The network request the worker is blocked on, if any. */
  netWaiting: number | null;
  /** What the run printed so far (up to its cap): kept for a result the worker never sends. */
  seen: { stdout: string; stderr: string };
  /** A cancel was asked for: whatever result comes now is a cancelled run's. */
  cancelled?: boolean;
}

const EMPTY_CHANGES = { files: [], dirs: [], removed: [] };
/** How long a capture or a restore may take before the worker is retired. */
const STATE_TIMEOUT_MS = 40_000;

/** A capture or restore asked of the worker and not answered yet. */
interface StateAsk {
  answer: (raw: unknown) => void;
  fail: (why: string) => void;
  timer: NodeJS.Timeout;
}

export class Interpreter {
  readonly ready: Promise<void>;
  /** Why the worker booted a slower way than it was offered, if it did (logged by the pool). */
  bootNote: string | undefined;
  /** The worker can replace its interpreter with a brand-new one and so serve another run. */
  recyclable = false;
  /** The answer to the last `recycle` run's replacement: true once the worker took a new one. */
  private renewal: { id: number; arm: () => void; settle: (fresh: boolean) => void } | null = null;
  private readonly worker: Worker;
  /** The network bridge: replies go on `netPort`, then `netSignal[0]` wakes the worker. */
  private readonly netPort: MessagePort;
  private readonly netSignal: Int32Array;
  private pending: Pending | null = null;
  private dead = false;
  /** Why the worker ended, when it ended on its own (crash, heap limit). */
  private exitReason: "memory" | "crash" | null = null;
  /**
   * This interpreter was killed in a way that may leave guest work running in the process: a
   * kill for the host's memory (whose heaps stay large), or any kill of a wasix guest, whose
   * processes and threads are the sdk's workers, which terminating the engine worker does not
   * stop at once. The host then retires: its result says so, and the trusted side replaces it.
   */
  retiresHost = false;

  constructor(
    readonly language: WorkerInit["language"],
    readonly memoryMb: number,
    assets: WorkerInit["assets"],
  ) {
    const channel = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    this.netPort = channel.port1;
    this.netSignal = new Int32Array(signal);
    const init: WorkerInit = { language, memoryMb, assets, net: { signal, port: channel.port2 } };
    this.worker = new Worker(WORKER_URL, {
      workerData: init,
      transferList: [channel.port2],
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: {
        maxOldGenerationSizeMb: Math.max(64, memoryMb),
        maxYoungGenerationSizeMb: 32,
        // The thread's stack, set here rather than left to Node's default (4 MiB) or the OS's
        // (512 KiB for a macOS thread): QuickJS ends deep recursion with a catchable
        // InternalError only while V8's stack outlasts its own limit, which takes 3 MiB; below
        // that the worker dies (test/core/macos-traps.test.ts).
        stackSizeMb: 8,
      },
    });
    // The engine's own prints (library warnings) are not guest output; drop them.
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        if (message.type === "ready") {
          this.bootNote = message.note;
          this.recyclable = message.recyclable === true;
          resolve();
        } else if (message.type === "boot-failed") reject(new Error(message.message));
      };
      this.worker.once("message", onMessage);
      this.worker.once("exit", () =>
        reject(new Error(`${language} interpreter exited while booting`)),
      );
    });
    this.ready.catch(() => this.dispose());
    this.worker.on("message", (message: FromWorker) => this.onMessage(message));
    this.worker.on("error", (error: Error & { code?: string }) => {
      this.exitReason = error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "memory" : "crash";
    });
    this.worker.on("exit", () => this.onExit());
  }

  private readonly asks = new Map<number, StateAsk>();
  private nextAsk = 1;

  /** The interpreter's state between runs (see Engine.captureState), at most `maxBytes`. */
  capture(maxBytes: number): Promise<StateAnswer> {
    return this.ask<StateAnswer>(
      { type: "capture", maxBytes },
      (raw) =>
        validateStateAnswer(raw, maxBytes) ?? {
          captured: false,
          reason: "the interpreter answered with a state that is not valid or too large",
        },
      (why) => ({ captured: false, reason: why }),
    );
  }

  /** Restores a captured state into this interpreter, which has run no guest code yet. */
  restore(state: StateImage, memoryMb: number, wheels?: WheelBlob[]): Promise<RestoreAnswer> {
    return this.ask<RestoreAnswer>(
      { type: "restore", state, memoryMb, ...(wheels?.length ? { wheels } : {}) },
      (raw) =>
        validateRestoreAnswer(raw) ?? {
          restored: false,
          notKept: [],
          message: "the interpreter's answer to the restore was not valid",
        },
      (why) => ({ restored: false, notKept: [], message: why }),
    );
  }

  private ask<T>(
    message: Record<string, unknown>,
    check: (raw: unknown) => T,
    failed: (why: string) => T,
  ): Promise<T> {
    if (this.dead) return Promise.resolve(failed("the interpreter is no longer running"));
    const id = this.nextAsk++;
    return new Promise<T>((resolve) => {
      const done = (value: T) => {
        clearTimeout(this.asks.get(id)?.timer);
        this.asks.delete(id);
        resolve(value);
      };
      this.asks.set(id, {
        answer: (raw) => done(check(raw)),
        fail: (why) => done(failed(why)),
        timer: setTimeout(() => {
          done(failed("the interpreter did not answer in time; it was retired"));
          this.dispose();
        }, STATE_TIMEOUT_MS),
      });
      this.worker.postMessage({ ...message, id });
    });
  }

  private renewed_: Promise<boolean> = Promise.resolve(false);

  private expectRenewal(id: number): void {
    this.renewed_ = new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      this.renewal = {
        id,
        // Armed when the run's result arrives (see settle): the run itself has its own deadline.
        arm: () => {
          timer ??= setTimeout(() => {
            // A replacement that takes this long is not one to wait for: the worker goes.
            this.renewal?.settle(false);
            this.dispose();
          }, RENEWAL_TIMEOUT_MS);
          timer.unref();
        },
        settle: (fresh) => {
          if (timer) clearTimeout(timer);
          this.renewal = null;
          resolve(fresh && !this.dead);
        },
      };
    });
  }

  /**
   * After a `recycle` run: true once the worker holds a brand-new interpreter and may be handed
   * another run; false if it ended or was retired instead (it must then be disposed).
   */
  renewed(): Promise<boolean> {
    return this.renewed_;
  }

  get alive(): boolean {
    return !this.dead;
  }

  get busy(): boolean {
    return this.pending !== null;
  }

  /**
   * `recycle`: nothing of the run may remain (a warm-up or a one-shot, on a recyclable worker):
   * the worker replaces its interpreter after answering, and `renewed()` says when it has.
   */
  run(
    id: number,
    request: RunRequest,
    output: Output,
    net: NetOut,
    recycle = false,
  ): Promise<EngineResult> {
    if (this.dead)
      return Promise.resolve(this.failure("error", "the interpreter is no longer running"));
    if (this.pending) throw new Error("interpreter is busy");
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => this.kill("timeout"),
        Math.max(0, runDeadline(request) - Date.now()) + ENGINE_DEADLINE_GRACE_MS,
      );
      this.pending = {
        id,
        resolve,
        output,
        timer,
        request,
        net,
        netWaiting: null,
        seen: { stdout: "", stderr: "" },
      };
      if (recycle && this.recyclable) this.expectRenewal(id);
      this.worker.postMessage({
        type: "run",
        id,
        request,
        ...(recycle && this.recyclable ? { recycle } : {}),
      });
    });
  }

  /**
   * Stops the run in progress: the engine is asked first (one that yields to the event loop, like
   * Bash, stops at its next statement with its output and state intact); one that does not stop
   * within CANCEL_GRACE_MS is killed.
   */
  cancel(): void {
    const p = this.pending;
    if (!p || p.cancelled) return;
    p.cancelled = true;
    this.worker.postMessage({ type: "interrupt" });
    // A worker blocked on a network answer sees no message: wake it with a refusal.
    if (p.netWaiting !== null) {
      this.deliver({
        req: p.netWaiting,
        reply: { ok: false, kind: "failed", message: "the run was cancelled" },
      });
      p.netWaiting = null;
    }
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.kill("cancelled"), CANCEL_GRACE_MS);
  }

  /** The trusted side's answer to network request `req` of run `id`: wakes the worker. */
  netReply(id: number, req: number, reply: NetReply): void {
    const p = this.pending;
    if (!p || p.id !== id || p.netWaiting !== req) return;
    p.netWaiting = null;
    this.deliver({ req, reply });
  }

  private deliver(delivery: NetDelivery): void {
    this.netPort.postMessage(delivery);
    Atomics.store(this.netSignal, 0, 1);
    Atomics.notify(this.netSignal, 0);
  }

  /** The host is over its memory ceiling: end this interpreter, its run as `memory_limit`. */
  killForMemory(): void {
    this.retiresHost = true;
    const p = this.pending;
    if (p) {
      const message = limitMessage(
        "memory_limit",
        p.request.limits,
        "the engine host's memory passed its ceiling; the interpreter was killed",
      )!;
      this.settle(this.failure("memory_limit", message, p.seen));
    }
    this.dispose();
  }

  dispose(): void {
    this.stopIdleWatch();
    if (this.dead) return;
    this.renewal?.settle(false);
    // Dead from here on: never handed another run, whether or not the thread stops.
    this.dead = true;
    // A worker whose end is not confirmed may still be running guest code in this process: the
    // whole engine host goes, and the trusted side sees its tenant's interpreters lost.
    const unconfirmed = setTimeout(() => process.exit(EXIT_WORKER_STUCK), TERMINATE_CONFIRM_MS);
    unconfirmed.unref();
    void this.worker.terminate().then(() => clearTimeout(unconfirmed));
  }

  private onMessage(message: FromWorker): void {
    if (message?.type === "state" || message?.type === "restored") {
      this.asks.get(message.id)?.answer(message.answer);
      return;
    }
    if (message?.type === "recycled") {
      if (this.renewal && message.id === this.renewal.id && !this.pending)
        this.renewal.settle(true);
      return;
    }
    const p = this.pending;
    if (!p || !("id" in message) || message.id !== p.id) return;
    if (message.type === "net") {
      // One request at a time: an honest worker blocks on each. A second while one is waiting
      // is refused here; the trusted side bounds everything else.
      if (p.netWaiting !== null || !Number.isSafeInteger(message.req)) return;
      p.netWaiting = message.req;
      p.net(message.req, message.request);
    } else if (message.type === "output") {
      // The worker's realm may be the guest's: forward no more than the run may print.
      const room = p.request.limits.maxOutputBytes - p.seen[message.stream].length;
      if (room <= 0 || typeof message.text !== "string") return;
      const text = message.text.length > room ? message.text.slice(0, room) : message.text;
      p.seen[message.stream] += text;
      p.output(message.stream, text);
    } else if (message.type === "result") {
      // Bounded here, before it crosses to the server: the worker's realm may be the guest's.
      const result = validateResult(message.result, p.request.limits);
      this.settle(
        p.cancelled && result.status !== "cancelled"
          ? {
              ...result,
              status: "cancelled",
              exitCode: RUN_EXIT_CODES.cancelled,
              value: null,
              message: "cancelled",
            }
          : result,
      );
      // A worker that reports its state lost (it went over memory) is ending itself: retire it
      // now so that no further run is handed to it.
      if (message.result.stateLost) this.dispose();
    }
  }

  private settle(result: EngineResult): void {
    const p = this.pending;
    if (!p) return;
    clearTimeout(p.timer);
    this.pending = null;
    this.lastRunEnded = Date.now();
    this.renewal?.arm();
    p.resolve(result);
    this.watchIdle();
  }

  private idleWatch: NodeJS.Timeout | null = null;
  private lastRunEnded = 0;

  /** Kills the worker if guest work keeps running after its run returned (no deadline covers it). */
  private watchIdle(): void {
    if (this.idleWatch || this.dead) return;
    let last = this.worker.performance.eventLoopUtilization();
    let strikes = 0;
    this.idleWatch = setInterval(() => {
      if (this.dead) {
        this.stopIdleWatch();
        return;
      }
      const now = this.worker.performance.eventLoopUtilization();
      const busy = this.worker.performance.eventLoopUtilization(now, last).utilization;
      last = now;
      // A capture or restore in progress is work the engine host asked for, not the guest's.
      if (this.asks.size > 0) this.lastRunEnded = Date.now();
      if (this.pending || Date.now() - this.lastRunEnded < AFTER_RUN_GRACE_MS) strikes = 0;
      else if (busy > BUSY_THRESHOLD) strikes++;
      else strikes = 0;
      if (strikes >= BUSY_WHILE_IDLE_CHECKS) this.dispose();
    }, BUSY_CHECK_MS);
    this.idleWatch.unref();
  }

  private stopIdleWatch(): void {
    if (this.idleWatch) clearInterval(this.idleWatch);
    this.idleWatch = null;
  }

  private kill(status: "timeout" | "cancelled"): void {
    const p = this.pending;
    if (!p) return;
    const message =
      status === "timeout"
        ? limitMessage("timeout", p.request.limits, "the interpreter was killed")!
        : "cancelled; the interpreter was killed";
    if (this.language === "wasix") this.retiresHost = true;
    this.settle(this.failure(status, message, p.seen));
    this.dispose();
  }

  private onExit(): void {
    this.dead = true;
    this.renewal?.settle(false);
    for (const ask of [...this.asks.values()]) ask.fail("the interpreter ended");
    const p = this.pending;
    if (!p) return;
    if (this.exitReason === "memory") {
      const message = limitMessage("memory_limit", p.request.limits, "the interpreter was killed")!;
      this.settle(this.failure("memory_limit", message, p.seen));
    } else {
      this.settle(this.failure("error", "the interpreter crashed and was replaced", p.seen));
    }
  }

  /**
   * A result the worker could not give: whatever it printed before it ended is kept, and its exit
   * code is its ending's (1 for an error).
   */
  private failure(
    status: EngineResult["status"],
    message: string,
    seen = { stdout: "", stderr: "" },
  ): EngineResult {
    return {
      status,
      stdout: seen.stdout,
      stderr: seen.stderr,
      exitCode: exitCodeOf(status, 1),
      value: null,
      truncated: false,
      message,
      stateLost: true,
      changes: EMPTY_CHANGES,
      displays: [],
    };
  }
}

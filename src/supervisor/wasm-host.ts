// Trusted side: starts the engine host process and supervises it. Everything the host sends is
// validated before use. If the host dies or stops answering, every run in flight fails with a
// clear `error` result, and the next request starts a new host; workspaces live on this side and
// are untouched. Interpreter state, which lived in the host, is lost and results say so.

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import type { EngineHostConfig } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import { makeTempDirSync } from "../core/tmp.js";
import { limitMessage } from "../protocol/limit-messages.js";
import type {
  EngineLanguage,
  EngineResult,
  HostConfig,
  HostEvent,
  HostRequest,
  HostStats,
  RunRequest,
} from "../protocol/messages.js";
import { failedResult, validateHostEvent, validateResult } from "../protocol/validate.js";
import { ENGINE_HOST_MAIN, engineReadPaths, PYODIDE_DIR, QUICKJS_WASM } from "./assets.js";
import { engineHostNodeArgs } from "./jail/permissions.js";

const toRemoveOnExit = new Set<string>();
let exitHook = false;

/** One `exit` listener for every host of this process, however many there are. */
function removeOnExit(dir: string): void {
  toRemoveOnExit.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const d of toRemoveOnExit) rmSync(d, { recursive: true, force: true });
  });
}

const PING_EVERY_MS = 2_000;
const PING_TIMEOUT_MS = 10_000;
/** Past a run's own deadline, how long the host gets to answer a cancel before it is killed. */
const BACKSTOP_MS = 3_000;
/**
 * The guest gets its whole `timeoutMs` from the moment it starts; starting it (taking or booting
 * an interpreter) may take this much more. Past both, the run ends here as `timeout`, whatever
 * the host is doing: a caller never waits longer than timeoutMs + RUN_GRACE_MS.
 */
export const RUN_GRACE_MS = 3_000;

type Output = (stream: "stdout" | "stderr", text: string) => void;

interface InFlight {
  resolve: (result: EngineResult) => void;
  output: Output;
  limits: RunRequest["limits"];
  /** Live output accepted so far, per stream, up to the cap (the host may be the guest's). */
  seen: { stdout: string; stderr: string };
  /** Characters the host sent past the cap (an honest host sends none). */
  overflow: number;
  backstop: NodeJS.Timeout;
  /** Removes what the run added to the caller's AbortSignal. */
  detach: () => void;
}

/** How long `stats()` waits for the host to answer. */
const STATS_TIMEOUT_MS = 5_000;
/** Bytes of the host's own stderr passed on to the server's log per host process. */
const MAX_HOST_STDERR_BYTES = 64 * 1024;
/**
 * What an honest host never does, and how much of it is tolerated before the host is killed:
 * output past a run's cap (the host's own relay stops at it), messages for runs that are not in
 * flight (late output after a cancel is the only honest case), and messages that fail validation.
 */
const SLACK_CHARS = 64 * 1024;
const MAX_UNATTRIBUTED_CHARS = 4 * 1024 * 1024;
const MAX_MALFORMED = 64;
/** Log messages from one host process that reach the server's log. */
const MAX_HOST_LOG_LINES = 100;

export class EngineHost {
  private child: ChildProcess | null = null;
  private tmpDir: string | null = null;
  private started: Promise<ChildProcess> | null = null;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly waiters = new Map<number, (event: HostEvent) => void>();
  private nextId = 1;
  private lastPong = Date.now();
  private pinger: NodeJS.Timeout | null = null;
  private closed = false;
  /** Incremented each time a host process is started; lets sessions notice a restart. */
  generation = 0;
  restarts = 0;

  constructor(private readonly config: EngineHostConfig) {}

  /** Starts the host now rather than on the first run (so pools warm up early). */
  /**
   * Starts the host now rather than on the first run. `keepAlive`: someone is waiting for it, so
   * the program must not exit meanwhile (a warm host started in the background must not hold it).
   */
  async start(keepAlive = false): Promise<void> {
    await this.started_(keepAlive);
  }

  private waiting = 0;

  private async started_(keepAlive: boolean): Promise<ChildProcess> {
    const child = this.ensure();
    if (!keepAlive) return child;
    this.waiting++;
    this.ref();
    try {
      return await child;
    } finally {
      this.waiting--;
      this.idleUnref();
    }
  }

  private idleUnref(): void {
    if (this.inFlight.size === 0 && this.waiting === 0) this.unref();
  }

  async run(
    session: string | null,
    language: EngineLanguage,
    request: RunRequest,
    output: Output,
    signal?: AbortSignal,
  ): Promise<EngineResult> {
    const child = await this.started_(true);
    const id = this.nextId++;
    return new Promise<EngineResult>((resolve) => {
      // Armed before the request leaves: a host that never answers still ends the run.
      const backstop = setTimeout(
        () => this.onOverdue(id),
        request.limits.timeoutMs + RUN_GRACE_MS,
      );
      const cancel = () => this.send(child, { type: "cancel", id });
      this.inFlight.set(id, {
        resolve,
        output,
        limits: request.limits,
        seen: { stdout: "", stderr: "" },
        overflow: 0,
        backstop,
        detach: () => signal?.removeEventListener("abort", cancel),
      });
      this.ref();
      this.send(child, { type: "run", id, session, language, request });
      // An abort may already have happened during the caller's own awaits; it still counts.
      if (signal?.aborted) cancel();
      else signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  dispose(session: string): void {
    if (this.child?.connected) this.send(this.child, { type: "dispose", session });
  }

  async stats(): Promise<HostStats & { pid: number }> {
    const child = await this.ensure();
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const event = await new Promise<HostEvent>((resolve) => {
      this.waiters.set(id, resolve);
      timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve({ type: "log", level: "error", message: "no answer" });
      }, STATS_TIMEOUT_MS);
      this.send(child, { type: "stats", id });
    });
    clearTimeout(timer);
    if (event.type !== "stats")
      throw new PolyboxError("PROTOCOL_ERROR", "the engine host sent no stats");
    return { ...event.stats, pid: child.pid ?? -1 };
  }

  /** The engine host's own pid on this machine (inside a jail, below the launcher and its init). */
  get pid(): number | null {
    const pid = this.child?.pid;
    if (pid === undefined) return null;
    return descendant(pid, this.config.wrapDepth ?? 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.stopPinger();
    if (child && child.exitCode === null) {
      // Hold the event loop open until the host is really gone, or `await close()` never returns.
      this.ref();
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
    this.cleanup();
  }

  private ensure(): Promise<ChildProcess> {
    if (this.closed)
      return Promise.reject(new PolyboxError("SANDBOX_CLOSED", "the runtime is closed"));
    this.started ??= this.spawnHost();
    return this.started;
  }

  private spawnHost(): Promise<ChildProcess> {
    this.tmpDir = makeTempDirSync("host");
    // A program that exits without closing its runtime still leaves no temp dir behind.
    removeOnExit(this.tmpDir);
    const hostConfig: HostConfig = {
      pool: this.config.pool,
      memoryMb: this.config.memoryMb,
      pyodideDir: PYODIDE_DIR,
      quickjsWasm: QUICKJS_WASM,
      pythonSnapshot: this.config.pythonSnapshot,
    };
    const readPaths = [
      ...engineReadPaths(),
      ...(this.config.pythonSnapshot ? [this.config.pythonSnapshot] : []),
    ];
    const [command, args] = this.config.wrap(
      process.execPath,
      [...engineHostNodeArgs(readPaths), ENGINE_HOST_MAIN, JSON.stringify(hostConfig)],
      this.tmpDir,
    );
    const child = spawn(command, args, {
      cwd: this.tmpDir,
      // Nothing of the server's environment. One constant: glibc gives every thread its own
      // malloc arena, and with workers coming and going that held the host at ~1 GiB RSS and
      // climbing where two arenas keep it near 400 MiB (measured over 600 mixed runs).
      env: {
        MALLOC_ARENA_MAX: "2",
        // Inside the Linux jail io_uring calls are fatal (seccomp kills them): keep libuv off them.
        ...(this.config.wrapDepth ? { UV_USE_IO_URING: "0" } : {}),
      },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "advanced",
    });
    this.child = child;
    this.generation++;
    // The host's stderr is guest-reachable text: capped, and marked as such in the log.
    let stderrBudget = MAX_HOST_STDERR_BYTES;
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderrBudget <= 0) return;
      const text = chunk.subarray(0, stderrBudget).toString("utf8");
      stderrBudget -= chunk.length;
      this.config.log?.("warn", "engine host stderr (untrusted)", text);
    });
    return new Promise((resolve, reject) => {
      // After start, a failed write to a dying host is not fatal: its exit is handled below.
      child.on("error", () => undefined);
      child.once("error", (error) =>
        reject(
          new PolyboxError("ENGINE_FAILED", `cannot start the engine host: ${error.message}`, {
            cause: error,
          }),
        ),
      );
      child.on("message", (raw: unknown) => {
        const event = validateHostEvent(raw);
        if (!event) {
          if (++this.malformed > MAX_MALFORMED) this.misbehaved("sent malformed messages");
          return;
        }
        if (event.type === "ready") {
          this.lastPong = Date.now();
          this.startPinger(child);
          resolve(child);
        } else this.onEvent(event);
      });
      child.once("exit", (code, signal) => {
        reject(
          new PolyboxError(
            "ENGINE_FAILED",
            `the engine host exited during start (${signal ?? code})`,
          ),
        );
        this.onExit(child, `${signal ?? `exit code ${code}`}`);
      });
      this.idleUnref();
    });
  }

  private onEvent(event: HostEvent): void {
    switch (event.type) {
      case "output": {
        // A message for a run of this host's tenant, never beyond what that run may print.
        const f = this.inFlight.get(event.id);
        if (!f) {
          this.unattributed += event.text.length;
          if (this.unattributed > MAX_UNATTRIBUTED_CHARS)
            this.misbehaved("sent output for runs that are not in flight");
          break;
        }
        const room = f.limits.maxOutputBytes - f.seen[event.stream].length;
        if (event.text.length > room) {
          f.overflow += event.text.length - Math.max(0, room);
          if (f.overflow > SLACK_CHARS) {
            this.finish(event.id, {
              ...failedResult(limitMessage("output_limit", f.limits)!),
              status: "output_limit",
              truncated: true,
              ...f.seen,
            });
            this.misbehaved("sent output past a run's cap");
            break;
          }
          if (room <= 0) break;
        }
        const text = event.text.length > room ? event.text.slice(0, room) : event.text;
        f.seen[event.stream] += text;
        f.output(event.stream, text);
        break;
      }
      case "result": {
        const stopping = this.stopping.get(event.id);
        if (stopping) {
          clearTimeout(stopping);
          this.stopping.delete(event.id);
        }
        const f = this.inFlight.get(event.id);
        if (!f) break;
        const result = validateResult(event.result, f.limits);
        this.finish(event.id, result);
        break;
      }
      case "failed": {
        const f = this.inFlight.get(event.id);
        if (!f) break;
        this.finish(event.id, failedResult(`the engine could not run this code: ${event.message}`));
        break;
      }
      case "pong":
        this.lastPong = Date.now();
        break;
      case "stats":
        this.waiters.get(event.id)?.(event);
        this.waiters.delete(event.id);
        break;
      case "log":
        // Diagnostics, not data: a few per host reach the log, quoted; a flood does not.
        if (this.logged++ < MAX_HOST_LOG_LINES)
          this.config.log?.("warn", "engine host (untrusted)", event.message);
        break;
    }
  }

  private finish(id: number, result: EngineResult): void {
    const f = this.inFlight.get(id);
    if (!f) return;
    clearTimeout(f.backstop);
    f.detach();
    this.inFlight.delete(id);
    this.idleUnref();
    f.resolve(result);
  }

  /**
   * A run passed its deadline (and the grace for starting it) and the host did not end it: it
   * ends here as `timeout`, the host is told to stop it, and a host that has not stopped it
   * BACKSTOP_MS later is killed.
   */
  private onOverdue(id: number): void {
    const f = this.inFlight.get(id);
    const child = this.child;
    if (!f || !child) return;
    this.finish(id, {
      ...failedResult(
        limitMessage(
          "timeout",
          f.limits,
          "the engine did not stop in time; the interpreter was killed",
        )!,
      ),
      status: "timeout",
      exitCode: 124,
      ...f.seen,
    });
    this.send(child, { type: "cancel", id });
    this.stopping.set(
      id,
      setTimeout(() => {
        this.stopping.delete(id);
        this.config.log?.("warn", "the engine host did not stop an overdue run; restarting it");
        child.kill("SIGKILL");
      }, BACKSTOP_MS),
    );
  }

  /** Runs ended here while the host still had them: id → the timer that kills the host. */
  private readonly stopping = new Map<number, NodeJS.Timeout>();

  private unattributed = 0;
  private malformed = 0;
  private logged = 0;

  /** The host broke the protocol in a way no honest host does: it is killed (and restarted). */
  private misbehaved(why: string): void {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.config.log?.("warn", `the engine host ${why}; it was killed`);
    child.kill("SIGKILL");
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.stopPinger();
    this.child = null;
    this.started = null;
    this.unattributed = 0;
    this.malformed = 0;
    this.logged = 0;
    for (const timer of this.stopping.values()) clearTimeout(timer);
    this.stopping.clear();
    this.cleanup();
    if (!this.closed) this.restarts++;
    for (const [id, f] of [...this.inFlight]) {
      this.finish(id, {
        ...failedResult(
          `the engine process died (${how}) and was restarted; interpreter state is lost, workspace files are kept`,
        ),
        // What the run printed before the host died is the guest's, and kept.
        ...f.seen,
      });
    }
    for (const w of this.waiters.values())
      w({ type: "log", level: "error", message: "engine host died" });
    this.waiters.clear();
  }

  private startPinger(child: ChildProcess): void {
    this.stopPinger();
    this.pinger = setInterval(() => {
      if (this.inFlight.size > 0 && Date.now() - this.lastPong > PING_TIMEOUT_MS) {
        this.config.log?.("warn", "the engine host stopped answering; restarting it");
        child.kill("SIGKILL");
        return;
      }
      this.send(child, { type: "ping", id: 0 });
    }, PING_EVERY_MS);
    this.pinger.unref();
  }

  private stopPinger(): void {
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
  }

  private send(child: ChildProcess, message: HostRequest): void {
    // A host that died a moment ago still looks connected: the write fails with EPIPE, which is
    // its exit's business (handled there), never an exception of the server's.
    if (child.connected) child.send(message, (error) => void error);
  }

  // An idle host must not keep the embedding program alive; a busy one must. The process, its
  // IPC channel and its stderr pipe each hold the event loop open on their own.
  private ref(): void {
    this.child?.ref();
    (this.child?.channel as { ref?: () => void } | undefined)?.ref?.();
    (this.child?.stderr as { ref?: () => void } | null | undefined)?.ref?.();
  }

  private unref(): void {
    this.child?.unref();
    (this.child?.channel as { unref?: () => void } | undefined)?.unref?.();
    (this.child?.stderr as { unref?: () => void } | null | undefined)?.unref?.();
  }

  private cleanup(): void {
    if (this.tmpDir) {
      rmSync(this.tmpDir, { recursive: true, force: true });
      toRemoveOnExit.delete(this.tmpDir);
    }
    this.tmpDir = null;
  }
}

/** Follows the only child of `pid` down `depth` generations (Linux /proc), or returns `pid`. */
function descendant(pid: number, depth: number): number {
  let current = pid;
  for (let i = 0; i < depth; i++) {
    try {
      const children = readFileSync(`/proc/${current}/task/${current}/children`, "utf8").trim();
      if (!children) return current;
      current = Number(children.split(/\s+/)[0]);
    } catch {
      return current;
    }
  }
  return current;
}

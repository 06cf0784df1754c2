// Trusted side: starts the engine host process and supervises it. Everything the host sends is
// validated before use. If the host dies or stops answering, every run in flight fails with a
// clear `error` result, and the next request starts a new host; workspaces live on this side and
// are untouched. Interpreter state, which lived in the host, is lost and results say so.

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import type { EngineHostConfig } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import type { HostRun } from "../core/sandbox/run-host.js";
import { makeTempDirSync } from "../core/tmp.js";
import { RUN_GRACE_MS, WASM_BACKSTOP_MS } from "../protocol/deadlines.js";
import type {
  EngineLanguage,
  EngineResult,
  HostConfig,
  HostRequest,
  HostStats,
  RestoreAnswer,
  StateAnswer,
  StateImage,
  WheelBlob,
} from "../protocol/messages.js";
import { NO_INTERPRETER } from "../protocol/messages.js";
import {
  validateHostEvent,
  validateRestoreAnswer,
  validateStateAnswer,
  validateStats,
} from "../protocol/validate.js";
import { ENGINE_HOST_MAIN, engineReadPaths, PYODIDE_DIR, QUICKJS_WASM } from "./assets.js";
import { GuestChannel } from "./channel.js";
import { engineHostNodeArgs } from "./jail/permissions.js";
import { bootCacheGrants } from "./snapshot.js";

const toRemoveOnExit = new Set<string>();
let exitHook = false;

/** One `exit` listener for every host of this process, however many there are. */
function removeOnExit(dir: string): void {
  toRemoveOnExit.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const d of toRemoveOnExit) removeQuietly(d);
  });
}

/**
 * Removes a host's temp directory, or leaves it for the next start's sweep (core/tmp.ts). Never
 * throws: on Windows a directory a process still holds (one being torn down, or whose handles the
 * kernel has not closed yet) cannot be removed, and cleanup must never fail an exit or a close.
 */
function removeQuietly(dir: string): boolean {
  try {
    rmSync(dir, { recursive: true, force: true });
    return true;
  } catch {
    // Still in use: the pid in its name lets the next polybox process remove it.
    return false;
  }
}

const PING_EVERY_MS = 2_000;
/**
 * Pings in a row a host may leave unanswered while a run waits on it (10 s) before it is killed.
 * Counted in pings, not read off the clock: a program that embeds polybox and blocks its own event
 * loop for a while (just-bash run in-process, a long synchronous computation) neither sends pings
 * nor reads answers meanwhile, and the clock alone would blame the host for that silence and kill
 * it on the first tick after.
 */
const PINGS_UNANSWERED_MAX = 5;

/** How long `stats()` waits for the host to answer. */
const STATS_TIMEOUT_MS = 5_000;
/** How long a capture or a restore of an interpreter's state may take (Python runs pickling). */
const STATE_TIMEOUT_MS = 45_000;
/** Bytes of the host's own stderr passed on to the server's log per host process. */
const MAX_HOST_STDERR_BYTES = 64 * 1024;
export class WasmHost {
  private child: ChildProcess | null = null;
  private tmpDir: string | null = null;
  private started: Promise<ChildProcess> | null = null;
  private readonly channel: GuestChannel;
  private unanswered = 0;
  private pinger: NodeJS.Timeout | null = null;
  private closed = false;
  /** Incremented each time a host process is started; lets sessions notice a restart. */
  generation = 0;
  restarts = 0;

  constructor(private readonly config: EngineHostConfig) {
    this.channel = new GuestChannel({
      peer: "the engine host",
      kill: () => this.kill(),
      cancel: (id) => this.sendNow({ type: "cancel", id }),
      ...(config.log ? { log: config.log } : {}),
      runGraceMs: RUN_GRACE_MS,
      backstopMs: WASM_BACKSTOP_MS,
      onSettled: () => this.idleUnref(),
      replyNet: (id, req, reply) => this.sendNow({ type: "net-reply", id, req, reply }),
    });
  }

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
    if (this.channel.size === 0 && this.waiting === 0) this.unref();
  }

  async run(run: HostRun): Promise<EngineResult> {
    // After a run that overran, the host is being told to stop it, or killed: this run goes to
    // the host that comes out of that, not to one about to die.
    await this.channel.settled();
    const child = await this.started_(true);
    this.ref();
    const { session, language } = run;
    return this.channel.run(run, (id, request) =>
      this.send(child, { type: "run", id, session, language, request }),
    );
  }

  dispose(session: string): void {
    if (this.child?.connected) this.send(this.child, { type: "dispose", session });
  }

  /**
   * The state of `session`'s interpreter, at most `maxBytes`. A host that is not running holds
   * none. An answer that is not valid or is larger is refused: a PROTOCOL_ERROR.
   */
  async captureState(session: string, maxBytes: number): Promise<StateAnswer> {
    const child = this.child;
    if (!child?.connected || !this.started) return { captured: false, reason: NO_INTERPRETER };
    await this.started;
    this.ref();
    return this.channel.ask(
      (id) => this.send(child, { type: "capture", id, session, maxBytes }),
      (raw) => validateStateAnswer(raw, maxBytes),
      STATE_TIMEOUT_MS,
    );
  }

  /** Makes `session` a new interpreter of `language` with `state` restored into it. */
  async restoreState(
    session: string,
    language: EngineLanguage,
    state: StateImage,
    memoryMb: number,
    wheels: WheelBlob[] = [],
  ): Promise<RestoreAnswer> {
    const child = await this.started_(true);
    this.ref();
    return this.channel.ask(
      (id) =>
        this.send(child, {
          type: "restore",
          id,
          session,
          language,
          state,
          memoryMb,
          ...(wheels.length > 0 ? { wheels } : {}),
        }),
      validateRestoreAnswer,
      STATE_TIMEOUT_MS,
    );
  }

  async stats(): Promise<HostStats & { pid: number }> {
    const child = await this.ensure();
    const stats = await this.channel.ask(
      (id) => this.send(child, { type: "stats", id }),
      validateStats,
      STATS_TIMEOUT_MS,
    );
    return { ...stats, pid: child.pid ?? -1 };
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
      quickjsImage: this.config.quickjsImage ?? null,
    };
    const readPaths = [
      ...engineReadPaths(),
      ...bootCacheGrants(this.config.pythonSnapshot, this.config.quickjsImage),
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
      // On Windows a host that shares a console whose title is empty (one an MCP client started
      // hidden) aborts at start in Node's process_title assertion: it gets a console of its own.
      ...(process.platform === "win32" ? { detached: true, windowsHide: true } : {}),
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
        if (this.child !== child) return;
        const event = validateHostEvent(raw);
        if (!event) this.channel.malformed();
        else if (event.type === "ready") {
          this.startPinger(child);
          resolve(child);
        } else if (event.type === "pong") this.unanswered = 0;
        else if (event.type === "stats")
          this.channel.receive({ type: "answer", id: event.id, payload: event.stats });
        else if (event.type === "result" && event.retire) {
          this.channel.receive(event);
          this.retire(child);
        } else if (event.type === "state" || event.type === "restored")
          this.channel.receive({ type: "answer", id: event.id, payload: event.answer });
        else this.channel.receive(event);
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

  private kill(): void {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }

  /**
   * The host asked to go with a run's result: a kill there may have left guest work running in
   * it. It is detached now, so the tenant's next run starts a new host, and then killed.
   */
  private retire(child: ChildProcess): void {
    this.kill();
    this.onExit(child, "ended after a kill that could leave guest work running in it");
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.stopPinger();
    this.child = null;
    this.started = null;
    this.cleanup();
    if (!this.closed) this.restarts++;
    // What a run printed before the host died is the guest's, and kept (the channel does).
    this.channel.fail(
      `the engine process died (${how}) and was restarted; interpreter state is lost, workspace files are kept`,
    );
  }

  private startPinger(child: ChildProcess): void {
    this.stopPinger();
    this.unanswered = 0;
    this.pinger = setInterval(() => {
      if (this.channel.size > 0 && this.unanswered >= PINGS_UNANSWERED_MAX) {
        this.config.log?.("warn", "the engine host stopped answering; restarting it");
        child.kill("SIGKILL");
        return;
      }
      this.unanswered++;
      this.send(child, { type: "ping", id: 0 });
    }, PING_EVERY_MS);
    this.pinger.unref();
  }

  private stopPinger(): void {
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
  }

  private sendNow(message: HostRequest): void {
    if (this.child) this.send(this.child, message);
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
      // One still held is tried again at exit.
      if (removeQuietly(this.tmpDir)) toRemoveOnExit.delete(this.tmpDir);
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

// Trusted side: starts the engine host process and supervises it. Everything the host sends is
// validated before use. If the host dies or stops answering, every run in flight fails with a
// clear `error` result, and the next request starts a new host; workspaces live on this side and
// are untouched. Interpreter state, which lived in the host, is lost and results say so.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { EngineHostConfig } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import type {
  EngineLanguage,
  EngineResult,
  HostEvent,
  HostRequest,
  HostStats,
  RunRequest,
} from "../protocol/messages.js";
import { failedResult, validateHostEvent, validateResult } from "../protocol/validate.js";
import { ENGINE_HOST_MAIN, engineReadPaths, PYODIDE_DIR, QUICKJS_WASM } from "./assets.js";
import { engineHostNodeArgs } from "./permissions.js";

const PING_EVERY_MS = 2_000;
const PING_TIMEOUT_MS = 10_000;
/** Past a run's own deadline, how long the host gets to answer a cancel before it is killed. */
const BACKSTOP_MS = 3_000;

type Output = (stream: "stdout" | "stderr", text: string) => void;

interface InFlight {
  resolve: (result: EngineResult) => void;
  output: Output;
  maxOutputBytes: number;
  backstop: NodeJS.Timeout;
}

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
  async start(): Promise<void> {
    await this.ensure();
  }

  async run(
    session: string | null,
    language: EngineLanguage,
    request: RunRequest,
    output: Output,
    signal?: AbortSignal,
  ): Promise<EngineResult> {
    const child = await this.ensure();
    const id = this.nextId++;
    return new Promise<EngineResult>((resolve) => {
      const backstop = setTimeout(() => this.onOverdue(id), request.limits.timeoutMs + BACKSTOP_MS);
      this.inFlight.set(id, {
        resolve,
        output,
        maxOutputBytes: request.limits.maxOutputBytes,
        backstop,
      });
      this.ref();
      this.send(child, { type: "run", id, session, language, request });
      // An abort may already have happened during the caller's own awaits; it still counts.
      if (signal?.aborted) this.send(child, { type: "cancel", id });
      else
        signal?.addEventListener("abort", () => this.send(child, { type: "cancel", id }), {
          once: true,
        });
    });
  }

  dispose(session: string): void {
    if (this.child?.connected) this.send(this.child, { type: "dispose", session });
  }

  async stats(): Promise<HostStats & { pid: number }> {
    const child = await this.ensure();
    const id = this.nextId++;
    const event = await new Promise<HostEvent>((resolve) => {
      this.waiters.set(id, resolve);
      this.send(child, { type: "stats", id });
    });
    if (event.type !== "stats")
      throw new PolyboxError("PROTOCOL_ERROR", "engine host sent no stats");
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
    this.tmpDir = mkdtempSync(path.join(os.tmpdir(), "polybox-host-"));
    // A program that exits without closing its runtime still leaves no temp dir behind.
    process.once("exit", this.cleanupOnExit);
    const hostConfig = {
      pool: this.config.pool,
      poolPolicy: this.config.poolPolicy,
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
    child.stderr?.on("data", (chunk: Buffer) =>
      process.stderr.write(`[polybox engine host] ${chunk}`),
    );
    return new Promise((resolve, reject) => {
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
          process.stderr.write("polybox: dropped a malformed message from the engine host\n");
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
      this.unref();
    });
  }

  private onEvent(event: HostEvent): void {
    switch (event.type) {
      case "output": {
        this.inFlight.get(event.id)?.output(event.stream, event.text);
        break;
      }
      case "result": {
        const f = this.inFlight.get(event.id);
        if (!f) break;
        const result = validateResult(event.result, f.maxOutputBytes);
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
        process.stderr.write(`polybox engine host: ${event.message}\n`);
        break;
    }
  }

  private finish(id: number, result: EngineResult): void {
    const f = this.inFlight.get(id);
    if (!f) return;
    clearTimeout(f.backstop);
    this.inFlight.delete(id);
    if (this.inFlight.size === 0) this.unref();
    f.resolve(result);
  }

  /** A run passed its deadline and the host did not end it: ask once, then kill the host. */
  private onOverdue(id: number): void {
    const f = this.inFlight.get(id);
    const child = this.child;
    if (!f || !child) return;
    this.send(child, { type: "cancel", id });
    f.backstop = setTimeout(() => {
      if (this.inFlight.has(id)) {
        process.stderr.write(
          "polybox: the engine host did not end an overdue run; restarting it\n",
        );
        child.kill("SIGKILL");
      }
    }, BACKSTOP_MS);
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.stopPinger();
    this.child = null;
    this.started = null;
    this.cleanup();
    if (!this.closed) this.restarts++;
    for (const id of [...this.inFlight.keys()]) {
      this.finish(
        id,
        failedResult(
          `the engine process died (${how}) and was restarted; interpreter state is lost, workspace files are kept`,
        ),
      );
    }
    for (const w of this.waiters.values())
      w({ type: "log", level: "error", message: "engine host died" });
    this.waiters.clear();
  }

  private startPinger(child: ChildProcess): void {
    this.stopPinger();
    this.pinger = setInterval(() => {
      if (this.inFlight.size > 0 && Date.now() - this.lastPong > PING_TIMEOUT_MS) {
        process.stderr.write("polybox: the engine host stopped answering; restarting it\n");
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
    if (child.connected) child.send(message);
  }

  // An idle host must not keep the embedding program alive; a busy one must.
  private ref(): void {
    this.child?.ref();
    (this.child?.channel as { ref?: () => void } | undefined)?.ref?.();
  }

  private unref(): void {
    this.child?.unref();
    (this.child?.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private readonly cleanupOnExit = () => this.cleanup();

  private cleanup(): void {
    process.removeListener("exit", this.cleanupOnExit);
    if (this.tmpDir) rmSync(this.tmpDir, { recursive: true, force: true });
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

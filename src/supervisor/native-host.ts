// Trusted side, native mode: one jail per sandbox. Each jail is the Linux launcher running the
// native agent (agent.ts) under the machine's own Node, with the sandbox's private workspace copy
// on a tmpfs the size of its quota. The agent is untrusted: what it sends is validated like an
// engine host's messages, a jail that stops answering is killed, and when a jail dies its runs
// fail with a clear result while the sandbox's workspace, which lives here, is untouched.

import { type ChildProcess, spawn } from "node:child_process";
import {
  accessSync,
  constants as fsConstants,
  readFileSync,
  realpathSync,
  statSync,
} from "node:fs";
import path from "node:path";
import type { NativeInterpreters } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import { type LogFn, stderrLog } from "../core/log.js";
import type { EngineLanguage, EngineResult, RunRequest } from "../protocol/messages.js";
import {
  decode,
  encode,
  type FromAgent,
  readLines,
  type ToAgent,
} from "../protocol/native-wire.js";
import { failedResult, validateResult } from "../protocol/validate.js";
import { DIST_DIR } from "./assets.js";
import {
  GUEST_EXEC_PATH,
  type JailStatus,
  jailArgs,
  LAUNCHER_PATH,
  nodeInstallPaths,
  parseStatus,
  polyboxReadPaths,
} from "./jail/launcher.js";

const AGENT_MAIN = path.join(DIST_DIR, "guest", "native-agent", "agent.js");
const MIB = 1024 * 1024;
/** Past a run's own deadline, how long the agent gets to answer before the jail is killed. */
const BACKSTOP_MS = 5_000;

type Output = (stream: "stdout" | "stderr", text: string) => void;

/** What a sandbox needs of whatever runs its code (the WASM engine host has the same shape). */
export interface RunHost {
  readonly generation: number;
  start(): Promise<void>;
  run(
    session: string | null,
    language: EngineLanguage,
    request: RunRequest,
    output: Output,
    signal?: AbortSignal,
  ): Promise<EngineResult>;
  dispose(session: string): void;
}

interface InFlight {
  resolve: (result: EngineResult) => void;
  output: Output;
  limits: RunRequest["limits"];
  /** Live output accepted so far, up to the cap: kept if the jail dies mid-run. */
  seen: { stdout: string; stderr: string };
  backstop: NodeJS.Timeout;
  detach: () => void;
}

const MAX_JAIL_STDERR_BYTES = 64 * 1024;
/** Processes and threads one jail may hold (its agent's and interpreters' threads included). */
const PIDS_PER_JAIL = 256;

/**
 * How many jails may be open at once: together they may hold at most half the machine's pids
 * (`kernel.pid_max`), so that sandboxes can never exhaust the host's process table.
 */
function maxJails(): number {
  let pidMax = 32768;
  try {
    pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim()) || pidMax;
  } catch {
    // Not Linux /proc: the conservative default.
  }
  return Math.max(1, Math.floor(pidMax / 2 / PIDS_PER_JAIL));
}
const MAX_MALFORMED = 64;
const MAX_LOG_LINES = 100;

/** A host path as the jail must see it: real (links resolved), and its directory bound in. */
function interpreterPath(configured: string | undefined, fallback: string): string {
  return realpathSync(configured ?? fallback);
}

/**
 * Refuses, when a runtime is made, interpreter paths that cannot be run: otherwise every native
 * run would fail later with a file-system error. The message names the option and its flag.
 */
export function checkInterpreters(interpreters: NativeInterpreters): void {
  for (const key of ["python", "bash", "node"] as const) {
    const configured = interpreters[key];
    if (configured === undefined) continue;
    let why: string | null = null;
    try {
      const real = realpathSync(configured);
      if (!statSync(real).isFile()) why = "is not a file";
      else accessSync(real, fsConstants.X_OK);
    } catch (error) {
      why ??=
        (error as NodeJS.ErrnoException).code === "EACCES" ? "is not executable" : "does not exist";
    }
    if (why)
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `nativeInterpreters.${key} (--native-${key}): ${configured} ${why}`,
      );
  }
}

class Jail {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private status: JailStatus | null = null;
  dead: string | null = null;

  constructor(
    interpreters: Required<NativeInterpreters>,
    quotaBytes: number,
    private readonly log: LogFn,
  ) {
    const quotaMb = Math.ceil(quotaBytes / MIB) + 1;
    const outside = Object.values(interpreters)
      .filter((p) => !/^\/(usr|bin|sbin|lib)\//.test(p))
      .map((p) => path.dirname(p));
    const args = jailArgs(
      {
        readOnly: [
          ...nodeInstallPaths(),
          ...polyboxReadPaths(),
          ...outside,
          path.dirname(GUEST_EXEC_PATH),
        ],
        workspaceMb: quotaMb,
        tmpMb: 64,
        cwd: "/workspace",
        processes: PIDS_PER_JAIL,
        openFiles: 1024,
        fileSizeMb: quotaMb,
        pids: PIDS_PER_JAIL,
        statusFd: 3,
      },
      [
        interpreters.node,
        "--max-old-space-size=256",
        AGENT_MAIN,
        JSON.stringify({ ...interpreters, guestExec: GUEST_EXEC_PATH }),
      ],
    );
    this.child = spawn(LAUNCHER_PATH, args, {
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      env: { UV_USE_IO_URING: "0" },
    });
    // A write to a jail that just died fails with EPIPE: its 'close' handles the death.
    this.child.stdin?.on("error", () => undefined);
    // Guest-reachable text: capped, and passed to the log quoted as untrusted.
    let stderrBudget = MAX_JAIL_STDERR_BYTES;
    this.child.stderr?.on("data", (chunk: Buffer) => {
      if (stderrBudget <= 0) return;
      stderrBudget -= chunk.length;
      this.log("warn", "native jail stderr (untrusted)", chunk.toString("utf8"));
    });
    let statusText = "";
    (this.child.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
      statusText += chunk.toString();
    });
    this.ready = new Promise((resolve, reject) => {
      readLines(
        this.child.stdout!,
        (line) => {
          let message: FromAgent;
          try {
            message = decode(line) as FromAgent;
          } catch {
            if (++this.malformed > MAX_MALFORMED) this.misbehaved("sent malformed messages");
            return;
          }
          if (message?.type === "ready") resolve();
          else this.onMessage(message);
        },
        {
          // The largest honest frame is a result carrying a full workspace, base64-encoded.
          maxChars: Math.ceil(quotaBytes * 1.4) + 64 * MIB,
          onOverflow: () => this.misbehaved("sent a line longer than any honest message"),
        },
      );
      this.child.once("error", (error) => reject(error));
      this.child.once("close", (code, signal) => {
        this.status = parseStatus(statusText);
        const why =
          this.status?.error ?? `the native jail exited (${signal ?? `exit code ${code}`})`;
        this.dead = why;
        reject(new PolyboxError("ENGINE_FAILED", `cannot start a native jail: ${why}`));
        for (const [id, f] of [...this.inFlight])
          this.finish(id, {
            ...failedResult(`the native jail ended during the run: ${why}`),
            ...f.seen,
          });
      });
    });
    this.ready.catch(() => undefined);
  }

  start(): Promise<void> {
    return this.ready;
  }

  async run(
    language: EngineLanguage,
    request: RunRequest,
    output: Output,
    signal?: AbortSignal,
  ): Promise<EngineResult> {
    await this.ready;
    if (this.dead) return failedResult(`the native jail is gone: ${this.dead}`);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const backstop = setTimeout(() => {
        this.kill();
        this.finish(id, failedResult("the native jail stopped answering and was killed"));
      }, request.limits.timeoutMs + BACKSTOP_MS);
      const cancel = () => this.send({ type: "cancel", id });
      this.inFlight.set(id, {
        resolve,
        output,
        limits: request.limits,
        seen: { stdout: "", stderr: "" },
        backstop,
        detach: () => signal?.removeEventListener("abort", cancel),
      });
      this.send({ type: "run", id, language, request });
      if (signal?.aborted) cancel();
      else signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  private send(message: ToAgent): void {
    if (!this.dead && this.child.stdin?.writable) this.child.stdin.write(encode(message));
  }

  private onMessage(message: FromAgent): void {
    switch (message?.type) {
      case "output": {
        // Attributed to a run in flight and never past what that run may print: the agent runs
        // next to guest code and may be lying.
        const f = this.inFlight.get(message.id);
        const { stream, text } = message;
        if (!f || (stream !== "stdout" && stream !== "stderr") || typeof text !== "string") break;
        const room = f.limits.maxOutputBytes - f.seen[stream].length;
        if (room <= 0) break;
        const kept = text.length > room ? text.slice(0, room) : text;
        f.seen[stream] += kept;
        f.output(stream, kept);
        break;
      }
      case "result": {
        const f = this.inFlight.get(message.id);
        if (f) this.finish(message.id, validateResult(message.result, f.limits));
        break;
      }
      case "log":
        if (typeof message.message === "string" && this.logged++ < MAX_LOG_LINES)
          this.log("warn", "native agent (untrusted)", message.message.slice(0, 2000));
        break;
    }
  }

  private malformed = 0;
  private logged = 0;

  /** The agent broke the protocol as no honest agent does: the jail is killed. */
  private misbehaved(why: string): void {
    this.log("warn", `a native jail's agent ${why}; the jail was killed`);
    this.kill();
  }

  private finish(id: number, result: EngineResult): void {
    const f = this.inFlight.get(id);
    if (!f) return;
    f.detach();
    clearTimeout(f.backstop);
    this.inFlight.delete(id);
    f.resolve(result);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const closed = new Promise((resolve) => this.child.once("close", resolve));
    this.child.kill("SIGKILL");
    await closed;
  }
}

/** The native engines of one runtime: a jail per sandbox, made on its first run. */
export class NativeHost {
  private readonly interpreters: Required<NativeInterpreters>;
  private readonly jails = new Map<string, { jail: Jail; generation: number }>();
  private readonly maxJails = maxJails();
  private closed = false;

  constructor(
    interpreters: NativeInterpreters,
    private readonly log: LogFn = stderrLog,
  ) {
    this.interpreters = {
      python: interpreterPath(interpreters.python, "/usr/bin/python3"),
      bash: interpreterPath(interpreters.bash, "/bin/bash"),
      node: interpreterPath(interpreters.node, process.execPath),
    };
  }

  /** The RunHost a sandbox uses: its own jail, replaced (and the generation bumped) if it dies. */
  forSandbox(key: string, quotaBytes: number): RunHost {
    let generation = 0;
    const jail = (): Jail => {
      if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
      const current = this.jails.get(key);
      if (current && !current.jail.dead) return current.jail;
      if (current) generation++;
      const live = [...this.jails.values()].filter((j) => !j.jail.dead).length;
      if (!current && live >= this.maxJails) {
        throw new PolyboxError(
          "TOO_MANY_SANDBOXES",
          `at most ${this.maxJails} native sandboxes may be open at once on this machine (each may hold ${PIDS_PER_JAIL} processes, and together they may use half of kernel.pid_max); close one first`,
        );
      }
      const fresh = new Jail(this.interpreters, quotaBytes, this.log);
      this.jails.set(key, { jail: fresh, generation });
      return fresh;
    };
    return {
      get generation() {
        return generation;
      },
      start: () => jail().start(),
      run: (_session, language, request, output, signal) =>
        jail().run(language, request, output, signal),
      dispose: () => {
        const current = this.jails.get(key);
        this.jails.delete(key);
        void current?.jail.close();
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.jails.values()];
    this.jails.clear();
    await Promise.all(all.map(({ jail }) => jail.close()));
  }
}

// Trusted side, native mode: one jail per sandbox. Each jail is the Linux launcher running the
// native agent (agent.ts) under the machine's own Node, with the sandbox's private workspace copy
// on a tmpfs the size of its quota. The agent is untrusted: what it sends is validated like an
// engine host's messages, a jail that stops answering is killed, and when a jail dies its runs
// fail with a clear result while the sandbox's workspace, which lives here, is untouched.

import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import path from "node:path";
import type { NativeInterpreters } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import { DIST_DIR } from "../jail/assets.js";
import {
  type JailStatus,
  jailArgs,
  LAUNCHER_PATH,
  nodeInstallPaths,
  parseStatus,
  polyboxReadPaths,
} from "../jail/launcher.js";
import type { EngineLanguage, EngineResult, RunRequest } from "../protocol/messages.js";
import { failedResult, validateResult } from "../protocol/validate.js";
import { decode, encode, type FromAgent, readLines, type ToAgent } from "./wire.js";

const AGENT_MAIN = path.join(DIST_DIR, "native", "agent.js");
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
  maxOutputBytes: number;
  backstop: NodeJS.Timeout;
}

/** A host path as the jail must see it: real (links resolved), and its directory bound in. */
function interpreterPath(configured: string | undefined, fallback: string): string {
  return realpathSync(configured ?? fallback);
}

class Jail {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private status: JailStatus | null = null;
  dead: string | null = null;

  constructor(interpreters: Required<NativeInterpreters>, quotaBytes: number) {
    const quotaMb = Math.ceil(quotaBytes / MIB) + 1;
    const outside = Object.values(interpreters)
      .filter((p) => !/^\/(usr|bin|sbin|lib)\//.test(p))
      .map((p) => path.dirname(p));
    const args = jailArgs(
      {
        readOnly: [...nodeInstallPaths(), ...polyboxReadPaths(), ...outside],
        workspaceMb: quotaMb,
        tmpMb: 64,
        cwd: "/workspace",
        processes: 512,
        openFiles: 1024,
        fileSizeMb: quotaMb,
        pids: 512,
        statusFd: 3,
      },
      [interpreters.node, "--max-old-space-size=256", AGENT_MAIN, JSON.stringify(interpreters)],
    );
    this.child = spawn(LAUNCHER_PATH, args, {
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      env: { UV_USE_IO_URING: "0" },
    });
    this.child.stderr?.on("data", (chunk: Buffer) =>
      process.stderr.write(`[polybox native jail] ${chunk}`),
    );
    let statusText = "";
    (this.child.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
      statusText += chunk.toString();
    });
    this.ready = new Promise((resolve, reject) => {
      readLines(this.child.stdout!, (line) => {
        let message: FromAgent;
        try {
          message = decode(line) as FromAgent;
        } catch {
          process.stderr.write("polybox: dropped a malformed message from a native jail\n");
          return;
        }
        if (message?.type === "ready") resolve();
        else this.onMessage(message);
      });
      this.child.once("error", (error) => reject(error));
      this.child.once("close", (code, signal) => {
        this.status = parseStatus(statusText);
        const why =
          this.status?.error ?? `the native jail exited (${signal ?? `exit code ${code}`})`;
        this.dead = why;
        reject(new PolyboxError("ENGINE_FAILED", `cannot start a native jail: ${why}`));
        for (const id of [...this.inFlight.keys()])
          this.finish(id, failedResult(`the native jail ended during the run: ${why}`));
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
      this.inFlight.set(id, {
        resolve,
        output,
        maxOutputBytes: request.limits.maxOutputBytes,
        backstop,
      });
      this.send({ type: "run", id, language, request });
      const cancel = () => this.send({ type: "cancel", id });
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
        const f = this.inFlight.get(message.id);
        const { stream, text } = message;
        if (f && (stream === "stdout" || stream === "stderr") && typeof text === "string")
          f.output(stream, text.slice(0, f.maxOutputBytes));
        break;
      }
      case "result": {
        const f = this.inFlight.get(message.id);
        if (f) this.finish(message.id, validateResult(message.result, f.maxOutputBytes));
        break;
      }
      case "log":
        if (typeof message.message === "string")
          process.stderr.write(`polybox native agent: ${message.message.slice(0, 2000)}\n`);
        break;
    }
  }

  private finish(id: number, result: EngineResult): void {
    const f = this.inFlight.get(id);
    if (!f) return;
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
  private closed = false;

  constructor(interpreters: NativeInterpreters) {
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
      const fresh = new Jail(this.interpreters, quotaBytes);
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

// Untrusted side, native mode: the interpreters the agent starts, one long-lived process per
// language (drivers.ts), each in a Landlock domain below the agent's (polybox-guest-exec). Here
// they are spawned, fed a request, read back (output until the run's nonce, an answer on fd 4),
// frozen between runs and killed; and every other process in the jail is killed after a run.

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type {
  EngineLanguage,
  EngineResult,
  RunRequest,
  WasmOnlyLanguage,
} from "../../protocol/messages.js";
import { decode, encode, readLines } from "../../protocol/native-wire.js";
import { GUEST_WORKSPACE as WORKSPACE } from "../../protocol/paths.js";
import type { OutputSink } from "../engines/common/output.js";
import { BASH_DRIVER, NODE_DRIVER, PYTHON_DRIVER } from "./drivers.js";

const MIB = 1024 * 1024;

/** The agent's command line: where the interpreters are, and whether to run the proxy. */
export interface Paths {
  python: string;
  bash: string;
  node: string;
  /** Puts each interpreter in a Landlock domain below the agent's: guest code cannot reach us. */
  guestExec: string;
  /** Run the HTTP proxy on the jail's loopback (the runtime grants guests some network). */
  proxy?: boolean;
}
export const paths = JSON.parse(process.argv[2] ?? "{}") as Paths;

export type Kind = "python" | "bash" | "node";
export const KIND: Record<Exclude<EngineLanguage, WasmOnlyLanguage>, Kind> = {
  python: "python",
  bash: "bash",
  javascript: "node",
  typescript: "node",
};

export interface Answer {
  exitCode: number;
  value: string | null;
  status: EngineResult["status"] | null;
  displays: EngineResult["displays"];
}

/** One run in progress on an interpreter: what it waits for before it is complete. */
interface Pending {
  nonce: string;
  sink: OutputSink;
  seen: { stdout: boolean; stderr: boolean };
  answer: Answer | null;
  done: () => void;
}

export const BASE_ENV: Record<string, string> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: WORKSPACE,
  LANG: "C.UTF-8",
  TMPDIR: "/tmp",
  PYTHONDONTWRITEBYTECODE: "1",
  // Caches of libraries that would otherwise land in the workspace (HOME).
  MPLCONFIGDIR: "/tmp/.matplotlib",
  XDG_CACHE_HOME: "/tmp/.cache",
  UV_USE_IO_URING: "0",
};

export class Interpreter {
  readonly proc: ChildProcess;
  /** Whether a run has used it: only then does replacing it lose the guest's state. */
  used = false;
  pending: Pending | null = null;
  exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  stderrTail = "";
  private readonly held = { stdout: "", stderr: "" };

  constructor(
    readonly kind: Kind,
    readonly memoryMb: number,
  ) {
    const [command, args] = this.commandLine();
    this.proc = spawn(paths.guestExec, [command, ...args], {
      cwd: WORKSPACE,
      env: BASE_ENV,
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
      detached: true,
    });
    for (const stream of ["stdout", "stderr"] as const) {
      const s = this.proc[stream]!;
      s.setEncoding("utf8");
      s.on("data", (chunk: string) => this.onOutput(stream, chunk));
    }
    readLines(this.proc.stdio[4] as NodeJS.ReadableStream, (line) => this.onAnswer(line));
    // The control pipes reset when the interpreter dies mid-run; its exit is handled below.
    for (const fd of [3, 4])
      (this.proc.stdio[fd] as NodeJS.EventEmitter).on("error", () => undefined);
    this.proc.on("error", () => undefined);
    // 'exit' and then the end of both output streams: waiting for 'close' would also wait for
    // the control pipes, which a grandchild may hold.
    let open = 2;
    const settleExit = () => {
      if (!this.exited || open > 0) return;
      const p = this.pending;
      if (!p) return;
      for (const stream of ["stdout", "stderr"] as const) {
        if (this.held[stream]) p.sink.write(stream, this.held[stream]);
        this.held[stream] = "";
      }
      p.done();
    };
    this.proc.stdout!.on("end", () => {
      open--;
      settleExit();
    });
    this.proc.stderr!.on("end", () => {
      open--;
      settleExit();
    });
    this.proc.on("exit", (code, signal) => {
      this.exited = { code, signal };
      // Anything it left holding the output pipes goes too, so the streams can end. Not for an
      // interpreter that was replaced (another memoryMb, or a spare jail's warm one): its process
      // group is gone already, and the run that replaced it may have children of its own by now.
      if (interpreters.get(this.kind) === this) killStrays();
      settleExit();
    });
  }

  private commandLine(): [string, string[]] {
    const memoryBytes = this.memoryMb * MIB;
    switch (this.kind) {
      case "python":
        return [paths.python, ["-E", "-s", "-u", "-c", PYTHON_DRIVER, String(memoryBytes)]];
      case "bash":
        return [
          paths.bash,
          ["--noprofile", "--norc", "-c", BASH_DRIVER, "bash", String(memoryBytes / 1024)],
        ];
      case "node":
        return [paths.node, [`--max-old-space-size=${this.memoryMb}`, "-e", NODE_DRIVER]];
    }
  }

  /** Passes output on live, holding back a tail that could be the start of the end marker. */
  private onOutput(stream: "stdout" | "stderr", chunk: string): void {
    if (stream === "stderr") this.stderrTail = (this.stderrTail + chunk).slice(-4096);
    const p = this.pending;
    if (!p) return; // Between runs nothing of the guest's should arrive; drop it.
    let text = this.held[stream] + chunk;
    if (text.endsWith(p.nonce)) {
      text = text.slice(0, -p.nonce.length);
      this.held[stream] = "";
      p.sink.write(stream, text);
      p.seen[stream] = true;
      this.settle();
      return;
    }
    const keep = Math.min(text.length, p.nonce.length - 1);
    this.held[stream] = text.slice(text.length - keep);
    p.sink.write(stream, text.slice(0, text.length - keep));
  }

  private onAnswer(line: string): void {
    const p = this.pending;
    if (!p) return;
    if (this.kind === "bash") {
      p.answer = { exitCode: Number(line), value: null, status: null, displays: [] };
    } else {
      // The interpreter's driver writes this line, next to guest code: a line that is not JSON
      // leaves the run without an answer, and its deadline ends it.
      p.answer = (decode(line) as Answer | undefined) ?? null;
    }
    this.settle();
  }

  private settle(): void {
    const p = this.pending;
    if (p?.answer && p.seen.stdout && p.seen.stderr) p.done();
  }

  send(request: RunRequest, nonce: string, code: string, filename: string): void {
    const control = this.proc.stdio[3] as NodeJS.WritableStream;
    if (this.kind === "bash") {
      writeFileSync("/tmp/.polybox-stdin-bash", request.stdin);
      const exports = Object.entries(request.env)
        .map(([k, v]) => `export ${k}=${shellQuote(v)}`)
        .join("\n");
      control.write(`${nonce}\0${exports}\0${code.replace(/\0/g, "")}\0`);
    } else {
      control.write(
        encode({
          nonce,
          code,
          filename,
          stdin: request.stdin,
          env: request.env,
          wheels: request.wheels ?? [],
        }),
      );
    }
  }

  /** Stops every thread of the interpreter between runs. */
  freeze(): void {
    if (this.exited || !this.proc.pid) return;
    try {
      process.kill(this.proc.pid, "SIGSTOP");
    } catch {
      // Gone already.
    }
  }

  thaw(): void {
    if (this.exited || !this.proc.pid) return;
    try {
      process.kill(this.proc.pid, "SIGCONT");
    } catch {
      // Gone already.
    }
  }

  kill(): void {
    if (this.exited || this.proc.pid === undefined) return;
    try {
      process.kill(-this.proc.pid, "SIGKILL");
    } catch {
      this.proc.kill("SIGKILL");
    }
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

export const interpreters = new Map<Kind, Interpreter>();
/** Languages whose interpreter ended since their last run: their state is gone. */
export const lost = new Set<Kind>();

export function interpreterFor(kind: Kind, memoryMb: number): Interpreter {
  const current = interpreters.get(kind);
  if (current && !current.exited && current.memoryMb === memoryMb) return current;
  if (current) {
    current.kill();
    if (current.used) lost.add(kind);
  }
  const fresh = new Interpreter(kind, memoryMb);
  interpreters.set(kind, fresh);
  return fresh;
}

/**
 * Kills every process in the jail but this agent and the interpreters, pass after pass until a
 * pass finds none (a process may fork while a pass reads /proc).
 */
export function killStrays(): void {
  const keep = new Set([process.pid, 1]);
  for (const i of interpreters.values()) if (i.proc.pid && !i.exited) keep.add(i.proc.pid);
  const killed = new Set<number>();
  for (let pass = 0; pass < 20; pass++) {
    let found = 0;
    for (const name of readdirSync("/proc")) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || keep.has(pid) || isZombie(pid)) continue;
      try {
        process.kill(pid, "SIGKILL");
        killed.add(pid);
        found++;
      } catch {
        // Gone already.
      }
    }
    if (found === 0) break;
  }
  // SIGKILL takes effect asynchronously: wait (briefly) until they are really gone.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 250 && [...killed].some((pid) => !isZombie(pid)); i++)
    Atomics.wait(pause, 0, 0, 2);
}

function isZombie(pid: number): boolean {
  try {
    return /^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

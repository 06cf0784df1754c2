// Untrusted side, native mode: the first program in a sandbox's jail, run by the machine's own
// Node as the jail's unprivileged user. It keeps the sandbox's private workspace copy (a tmpfs
// at /workspace the size of the quota) in step with the trusted side, starts one long-lived
// interpreter per language (drivers.ts), runs requests one at a time, and enforces each run's
// timeout and output cap by killing that interpreter. When a run ends, every process it left
// behind is killed: a run's processes end with the run.
//
// Everything the agent sends is checked by the trusted side like any engine host's message.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { exitCodeOf } from "../../protocol/endings.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import type {
  EngineLanguage,
  EngineResult,
  RunRequest,
  WasmOnlyLanguage,
} from "../../protocol/messages.js";
import {
  decode,
  encode,
  type FromAgent,
  readLines,
  type ToAgent,
} from "../../protocol/native-wire.js";
import { GUEST_WORKSPACE as WORKSPACE } from "../../protocol/paths.js";
import { type GuestEntry, type GuestFs, WorkspaceMirror } from "../engines/common/mirror.js";
import { OutputSink } from "../engines/common/output.js";
import { BASH_DRIVER, NODE_DRIVER, PYTHON_DRIVER } from "./drivers.js";
import { GuestProxy } from "./proxy.js";

const MIB = 1024 * 1024;

interface Paths {
  python: string;
  bash: string;
  node: string;
  /** Puts each interpreter in a Landlock domain below the agent's: guest code cannot reach us. */
  guestExec: string;
  /** Run the HTTP proxy on the jail's loopback (the runtime grants guests some network). */
  proxy?: boolean;
}
const paths = JSON.parse(process.argv[2] ?? "{}") as Paths;

function send(message: FromAgent): void {
  process.stdout.write(encode(message));
}

// ---- the workspace copy ------------------------------------------------------------------------

function diskFs(root: string): GuestFs {
  const abs = (p: string) => path.join(root, p);
  return {
    list() {
      const out = new Map<string, GuestEntry>();
      // Names are read as bytes: a guest's file name need not be UTF-8, and a name decoded with
      // replacement characters names no file.
      const walk = (dir: Buffer, prefix: string) => {
        for (const raw of readdirSync(dir, { encoding: "buffer" })) {
          const name = nameOf(raw);
          const rel = prefix ? `${prefix}/${name}` : name;
          const full = Buffer.concat([dir, SLASH, raw]);
          const st = lstatSync(full);
          if (st.isDirectory()) {
            out.set(rel, { type: "dir", size: 0, mtimeMs: st.mtimeMs });
            walk(full, rel);
          } else if (st.isFile()) {
            out.set(rel, { type: "file", size: st.size, mtimeMs: st.mtimeMs });
          }
        }
      };
      walk(Buffer.from(root), "");
      return out;
    },
    read: (p) => readFileSync(abs(p)),
    write(p, data, mtimeMs) {
      const full = abs(p);
      mkdirSync(path.dirname(full), { recursive: true });
      // Never write through whatever the guest left at this path (a link, say).
      rmSync(full, { force: true, recursive: true });
      writeFileSync(full, data);
      utimesSync(full, mtimeMs / 1000, mtimeMs / 1000);
    },
    mkdir: (p) => void mkdirSync(abs(p), { recursive: true }),
    remove: (p) => rmSync(abs(p), { force: true, recursive: true }),
  };
}

const SLASH = Buffer.from("/");
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A file name's bytes as a string: as UTF-8 when they are, else with each byte from 0x80 up as a
 * lone surrogate U+DC80–U+DCFF (Python's surrogateescape). The trusted side leaves a name with a
 * surrogate out of the workspace, with a note that shows those bytes.
 */
function nameOf(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    let name = "";
    for (const b of raw) name += String.fromCharCode(b < 0x80 ? b : 0xdc00 + b);
    return name;
  }
}

const mirror = new WorkspaceMirror(diskFs(WORKSPACE));

// ---- interpreters ------------------------------------------------------------------------------

type Kind = "python" | "bash" | "node";
const KIND: Record<Exclude<EngineLanguage, WasmOnlyLanguage>, Kind> = {
  python: "python",
  bash: "bash",
  javascript: "node",
  typescript: "node",
};

interface Answer {
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

const BASE_ENV: Record<string, string> = {
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

class Interpreter {
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

const interpreters = new Map<Kind, Interpreter>();
/** Languages whose interpreter ended since their last run: their state is gone. */
const lost = new Set<Kind>();

function interpreterFor(kind: Kind, memoryMb: number): Interpreter {
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
function killStrays(): void {
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

// ---- runs --------------------------------------------------------------------------------------

let stripTypes: ((code: string) => { code: string } | { error: string }) | null = null;

const running = new Map<number, () => void>();

/** The run in progress, whose network requests the proxy relays. */
let currentRun: number | null = null;
/** The HTTP proxy on the jail's loopback, when the runtime grants guests network. */
let proxy: GuestProxy | null = null;

async function run(
  id: number,
  language: EngineLanguage,
  request: RunRequest,
): Promise<EngineResult> {
  currentRun = id;
  try {
    return await runNow(id, language, request);
  } finally {
    currentRun = null;
    proxy?.endRun(id);
  }
}

async function runNow(
  id: number,
  language: EngineLanguage,
  request: RunRequest,
): Promise<EngineResult> {
  const kind = KIND[language as keyof typeof KIND];
  if (!kind) throw new Error(`native mode has no interpreter for ${language}`);
  const { limits } = request;
  await mirror.apply(request.sync, request.fullSync);
  const stateLost = lost.delete(kind);

  let code = request.code;
  if (language === "typescript") {
    stripTypes ??= await (await import("../engines/javascript/typescript.js")).loadTypeStripper();
    const stripped = stripTypes(code);
    if ("error" in stripped) {
      return finish(
        request,
        { exitCode: 1, value: null, status: "error", displays: [] },
        {
          stdout: "",
          stderr: `${stripped.error}\n`,
          truncated: false,
          stateLost,
        },
      );
    }
    code = stripped.code;
  }

  const interp = interpreterFor(kind, limits.memoryMb);
  interp.used = true;
  let stoppedBy: EngineResult["status"] | null = null;
  const stop = (why: EngineResult["status"]) => {
    stoppedBy ??= why;
    interp.kill();
  };
  const sink = new OutputSink(
    limits.maxOutputBytes,
    (stream, text) => send({ type: "output", id, stream, text }),
    () => stop("output_limit"),
  );
  const nonce = `\u001fpolybox-${randomBytes(12).toString("hex")}\u001f`;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => stop("timeout"), limits.timeoutMs);
    // memoryMb holds for the interpreter and everything it starts, together: per-process limits
    // (address space, V8's heap) miss Buffers and children.
    const watch = setInterval(() => {
      if (residentBytes(interp) > limits.memoryMb * MIB) stop("memory_limit");
    }, MEMORY_CHECK_MS);
    const done = () => {
      clearTimeout(timer);
      clearInterval(watch);
      resolve();
    };
    interp.pending = { nonce, sink, seen: { stdout: false, stderr: false }, answer: null, done };
    running.set(id, () => stop("cancelled"));
    if (interp.exited) done();
    else {
      interp.thaw();
      interp.send(request, nonce, code, language === "typescript" ? "main.ts" : "main.js");
    }
  });
  running.delete(id);
  sink.flush();
  const answer = interp.pending?.answer ?? null;
  interp.pending = null;
  killStrays();
  // Nothing of a run may go on after it: threads, timers and tasks the guest left in its
  // interpreter stop with it (SIGSTOP cannot be caught) until that interpreter's next run.
  for (const i of interpreters.values()) i.freeze();

  let outcome: Answer;
  if (answer && !interp.exited && !stoppedBy) {
    // Bash survives a failed allocation and only returns an error status: name it.
    const bashOom =
      kind === "bash" && answer.exitCode !== 0 && OUT_OF_MEMORY.test(sink.text.stderr);
    outcome = bashOom ? { ...answer, status: "memory_limit" } : answer;
  } else {
    // The interpreter ended (the guest exited, crashed, or was stopped): its state is gone.
    interp.kill();
    lost.add(kind);
    const exit = interp.exited;
    const exitCode = exit?.code ?? (exit?.signal ? 128 + signalNumber(exit.signal) : 1);
    outcome = {
      exitCode: stoppedBy ? exitCodeOf(stoppedBy, exitCode) : exitCode,
      value: null,
      status: stoppedBy ?? (outOfMemory(interp) ? "memory_limit" : null),
      displays: [],
    };
  }
  return finish(request, outcome, {
    stdout: sink.text.stdout,
    stderr: sink.text.stderr,
    truncated: sink.truncated,
    stateLost,
    overflowed: sink.overflowed !== null,
  });
}

const MEMORY_CHECK_MS = 100;

/**
 * Resident memory of a run: its interpreter and every process in the jail that is neither this
 * agent, the jail's init, nor another (idle, frozen) interpreter.
 */
function residentBytes(running: Interpreter): number {
  const others = new Set([process.pid, 1]);
  for (const i of interpreters.values()) if (i !== running && i.proc.pid) others.add(i.proc.pid);
  let total = 0;
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || others.has(pid)) continue;
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // Exited while we looked.
    }
  }
  return total;
}

/** How each interpreter says it ran out of memory (V8's heap limit, MemoryError, bash's xmalloc). */
const OUT_OF_MEMORY =
  /heap out of memory|MemoryError|xmalloc|xrealloc|[Cc]annot allocate|out of memory/;

function outOfMemory(interp: Interpreter): boolean {
  return OUT_OF_MEMORY.test(interp.stderrTail) || interp.exited?.signal === "SIGKILL";
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGKILL: 9,
    SIGABRT: 6,
    SIGSEGV: 11,
    SIGTERM: 15,
    SIGTRAP: 5,
    SIGBUS: 7,
  };
  return numbers[signal] ?? 1;
}

async function finish(
  request: RunRequest,
  outcome: Answer,
  out: {
    stdout: string;
    stderr: string;
    truncated: boolean;
    stateLost: boolean;
    overflowed?: boolean;
  },
): Promise<EngineResult> {
  const changes = await mirror.collect();
  let status = outcome.status ?? (outcome.exitCode === 0 ? "ok" : "error");
  if (out.overflowed && status !== "timeout") status = "output_limit";
  const message = limitMessage(status, request.limits);
  return {
    status,
    stdout: out.stdout,
    stderr: out.stderr,
    exitCode: status === "ok" || status === "error" ? outcome.exitCode : outcome.exitCode || 1,
    value: status === "ok" ? outcome.value : null,
    truncated: out.truncated || status === "output_limit",
    ...(message ? { message } : {}),
    ...(out.stateLost ? { stateLost: true } : {}),
    changes,
    displays: outcome.displays ?? [],
  };
}

// ---- TLS trust ---------------------------------------------------------------------------------

/** The system's roots, bound read-only into the jail. */
const SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt";

/**
 * The trusted side ends tunnels to hosts it adds headers or secrets to, with certificates of its
 * own authority: the jail's programs trust that authority beside the system's roots. OpenSSL's
 * users (Python's ssl, curl, requests) read one bundle, which replaces the roots, so it holds
 * both; Node adds its extra file to its own. Set before any interpreter starts (the trusted side
 * sends this first), and only for this jail's programs.
 */
function trust(ca: string): void {
  if (typeof ca !== "string" || !ca.startsWith("-----BEGIN CERTIFICATE-----")) return;
  let roots = "";
  try {
    roots = readFileSync(SYSTEM_ROOTS, "utf8");
  } catch {
    // No system roots in this jail: the bundle holds the authority alone.
  }
  try {
    writeFileSync("/tmp/.polybox-ca.pem", ca);
    writeFileSync("/tmp/.polybox-ca-bundle.pem", `${roots}\n${ca}`);
  } catch (error) {
    // No trust, then: intercepted tunnels fail the guest's certificate check, nothing worse.
    send({ type: "log", message: `cannot write the trust bundle: ${String(error)}` });
    return;
  }
  for (const name of ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE"])
    BASE_ENV[name] = "/tmp/.polybox-ca-bundle.pem";
  BASE_ENV.NODE_EXTRA_CA_CERTS = "/tmp/.polybox-ca.pem";
}

// ---- the channel -------------------------------------------------------------------------------

let queue = Promise.resolve();
readLines(process.stdin, (line) => {
  // From the trusted side: JSON of the ToAgent shape (undefined only if a line was cut).
  const message = decode(line) as ToAgent | undefined;
  if (message === undefined) return;
  if (message.type === "cancel") {
    running.get(message.id)?.();
    return;
  }
  if (message.type === "net-reply") {
    proxy?.reply(message.id, message.req, message.reply);
    return;
  }
  if (message.type === "tunnel") {
    proxy?.tunnelReply(message.id, message.tun, message.reply);
    return;
  }
  if (message.type === "trust") {
    trust(message.ca);
    return;
  }
  if (message.type === "warm") {
    const kind = KIND[message.language as keyof typeof KIND];
    queue = queue.then(() => {
      if (kind) interpreterFor(kind, message.memoryMb);
    });
    return;
  }
  if (message.type !== "run") return;
  queue = queue.then(async () => {
    try {
      const result = await run(message.id, message.language, message.request);
      send({ type: "result", id: message.id, result });
    } catch (error) {
      send({ type: "log", message: `run ${message.id} failed: ${String(error)}` });
      send({
        type: "result",
        id: message.id,
        result: {
          status: "error",
          stdout: "",
          stderr: `polybox: the native engine could not run this code: ${String(error)}\n`,
          exitCode: 1,
          value: null,
          truncated: false,
          changes: { files: [], dirs: [], removed: [] },
          displays: [],
        },
      });
    }
  });
});
process.stdin.on("end", () => {
  for (const i of interpreters.values()) i.kill();
  process.exit(0);
});
// The proxy listens before any interpreter starts, so that every one of them has its address.
if (paths.proxy) {
  proxy = new GuestProxy(
    () => currentRun,
    (id, req, request) => send({ type: "net", id, req, request }),
    (id, tun, frame) => send({ type: "tunnel", id, tun, frame }),
    process.stdout,
  );
  const url = `http://127.0.0.1:${await proxy.listen()}`;
  // curl reads only the lower-case http_proxy; most tools read either.
  for (const name of ["http_proxy", "https_proxy", "all_proxy"]) {
    BASE_ENV[name] = url;
    BASE_ENV[name.toUpperCase()] = url;
  }
  // Node 24's own fetch and http honour the variables only when asked (older Nodes ignore this).
  BASE_ENV.NODE_USE_ENV_PROXY = "1";
}
send({ type: "ready" });

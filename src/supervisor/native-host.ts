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
import { type LogFn, silentLog } from "../core/log.js";
import type { HostRun, RunHost } from "../core/sandbox/run-host.js";
import { NATIVE_BACKSTOP_MS, RUN_GRACE_MS } from "../protocol/deadlines.js";
import type { EngineLanguage, EngineResult } from "../protocol/messages.js";
import { decode, encode, readLines, type ToAgent } from "../protocol/native-wire.js";
import { failedResult, validateAgentEvent } from "../protocol/validate.js";
import { DIST_DIR } from "./assets.js";
import { GuestChannel } from "./channel.js";
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

/**
 * Beyond its files (base64, 4/3 of their bytes), the most text an honest result line carries:
 * two output streams at the largest output cap, a value, display data, each JSON-escaped.
 */
const MAX_RESULT_TEXT_CHARS = 32 * MIB;
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
        `nativeInterpreters.${key}: ${configured} ${why}`,
        { details: { limit: `nativeInterpreters.${key}`, value: configured } },
      );
  }
}

class Jail {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly channel: GuestChannel;
  private status: JailStatus | null = null;
  /**
   * Settles once the agent has been sent the authority its programs trust (or there is none):
   * interpreters start only after it, so that every one of them has the trust in its env.
   */
  private readonly trusted: Promise<void>;
  dead: string | null = null;

  constructor(
    interpreters: Required<NativeInterpreters>,
    quotaBytes: number,
    private readonly log: LogFn,
    agentMain: string,
    proxy: boolean,
    authorityPem: (() => Promise<string>) | null,
  ) {
    this.channel = new GuestChannel({
      peer: "a native jail's agent",
      kill: () => this.kill(),
      cancel: (id) => this.send({ type: "cancel", id }),
      log,
      runGraceMs: RUN_GRACE_MS,
      backstopMs: NATIVE_BACKSTOP_MS,
      replyNet: (id, req, reply) => this.send({ type: "net-reply", id, req, reply }),
      replyTunnel: (id, tun, reply) => this.send({ type: "tunnel", id, tun, reply }),
    });
    const quotaMb = Math.ceil(quotaBytes / MIB) + 1;
    const outside = [...Object.values(interpreters), agentMain]
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
        // The agent's HTTP proxy listens on the jail's own loopback (guest network, relayed).
        loopback: proxy,
      },
      [
        interpreters.node,
        "--max-old-space-size=256",
        agentMain,
        JSON.stringify({ ...interpreters, guestExec: GUEST_EXEC_PATH, proxy }),
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
          const message = validateAgentEvent(decode(line));
          if (!message) this.channel.malformed();
          else if (message.type === "ready") resolve();
          else this.channel.receive(message);
        },
        {
          // The largest honest frame is a result carrying a full workspace, base64-encoded.
          maxChars: Math.ceil(quotaBytes * 1.4) + MAX_RESULT_TEXT_CHARS,
          onOverflow: () => this.channel.misbehaved("sent a line longer than any honest message"),
        },
      );
      this.child.once("error", (error) => reject(error));
      this.child.once("close", (code, signal) => {
        this.status = parseStatus(statusText);
        const why =
          this.status?.error ?? `the native jail exited (${signal ?? `exit code ${code}`})`;
        this.dead = why;
        reject(new PolyboxError("ENGINE_FAILED", `cannot start a native jail: ${why}`));
        this.channel.fail(`the native jail ended during the run: ${why}`);
      });
    });
    this.ready.catch(() => undefined);
    this.trusted =
      proxy && authorityPem
        ? authorityPem().then(
            (ca) => this.send({ type: "trust", ca }),
            (error: unknown) => log("warn", "no authority for intercepted tunnels", String(error)),
          )
        : Promise.resolve();
  }

  start(): Promise<void> {
    return this.ready;
  }

  /** See GuestChannel.settled. */
  settled(): Promise<void> {
    return this.channel.settled();
  }

  /** Starts these interpreters ahead of the first run (a spare jail, before any guest code). */
  warm(languages: readonly EngineLanguage[], memoryMb: number): void {
    void this.trusted.then(() => {
      for (const language of languages) this.send({ type: "warm", language, memoryMb });
    });
  }

  /** The jail has one interpreter per language: `run.session` does not choose among them. */
  async run(run: HostRun): Promise<EngineResult> {
    await this.ready;
    await this.trusted;
    if (this.dead) return failedResult(`the native jail is gone: ${this.dead}`);
    const { language } = run;
    return this.channel.run(run, (id, request) =>
      this.send({ type: "run", id, language, request }),
    );
  }

  private send(message: ToAgent): void {
    if (!this.dead && this.child.stdin?.writable) this.child.stdin.write(encode(message));
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

/**
 * Jails started ahead of time for the next sandboxes of the runtime's default workspace quota,
 * their interpreters already running: each is handed to one sandbox and never to another, and
 * refilled in the background once taken. They start only after the runtime's first native
 * sandbox, so a runtime that never goes native pays nothing for them.
 */
export interface NativeSpares {
  /** How many jails to keep ready (0: none). */
  count: number;
  /** The workspace quota they are made for; sandboxes with another quota get a jail of their own. */
  quotaBytes: number;
  /** The interpreters' memory limit (the runtime's default `memoryMb`). */
  memoryMb: number;
}

/** The interpreters a spare jail starts: every language native mode runs. */
const SPARE_LANGUAGES: readonly EngineLanguage[] = ["python", "bash", "javascript"];

/** The native engines of one runtime: a jail per sandbox, made on its first run. */
export class NativeHost {
  private readonly interpreters: Required<NativeInterpreters>;
  private readonly jails = new Map<string, { jail: Jail; generation: number }>();
  private readonly maxJails = maxJails();
  /** Spare jails, never used; `wanted` once a native sandbox has asked for a jail. */
  private readonly spare: Jail[] = [];
  private wanted = false;
  private closed = false;

  /** `agentMain`: the agent program the jails run (another one only to test this side). */
  constructor(
    interpreters: NativeInterpreters,
    private readonly log: LogFn = silentLog,
    private readonly agentMain: string = AGENT_MAIN,
    /** Whether guests may have network (a grant exists): the jails then run the agent's proxy. */
    private readonly proxy = false,
    private readonly spares: NativeSpares = { count: 0, quotaBytes: 0, memoryMb: 0 },
    /** The certificate (PEM) of the authority that ends tunnels to hosts the boundary adds to. */
    private readonly authorityPem: (() => Promise<string>) | null = null,
  ) {
    this.interpreters = {
      python: interpreterPath(interpreters.python, "/usr/bin/python3"),
      bash: interpreterPath(interpreters.bash, "/bin/bash"),
      node: interpreterPath(interpreters.node, process.execPath),
    };
  }

  /** The python3 native sandboxes run (links resolved): whose wheel tags packages must fit. */
  get pythonPath(): string {
    return this.interpreters.python;
  }

  /** The RunHost a sandbox uses: its own jail, replaced (and the generation bumped) if it dies. */
  forSandbox(key: string, quotaBytes: number): RunHost {
    let generation = 0;
    const jail = (): Jail => {
      if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
      const current = this.jails.get(key);
      if (current && !current.jail.dead) return current.jail;
      if (current) generation++;
      const live = this.liveJails();
      if (!current && live >= this.maxJails) {
        throw new PolyboxError(
          "TOO_MANY_SANDBOXES",
          `at most ${this.maxJails} native sandboxes may be open at once on this machine (each may hold ${PIDS_PER_JAIL} processes, and together they may use half of kernel.pid_max); close one first`,
        );
      }
      const fresh = this.takeSpare(quotaBytes) ?? this.newJail(quotaBytes);
      this.jails.set(key, { jail: fresh, generation });
      this.wanted = true;
      setImmediate(() => this.refill());
      return fresh;
    };
    return {
      get generation() {
        return generation;
      },
      start: () => jail().start(),
      run: async (run) => {
        // After a run that overran, the jail is being told to stop it, or killed: this run goes
        // to the jail that comes out of that, not to one about to die.
        await this.jails.get(key)?.jail.settled();
        return jail().run(run);
      },
      dispose: () => {
        const current = this.jails.get(key);
        this.jails.delete(key);
        void current?.jail.close();
      },
    };
  }

  private newJail(quotaBytes: number): Jail {
    return new Jail(
      this.interpreters,
      quotaBytes,
      this.log,
      this.agentMain,
      this.proxy,
      this.authorityPem,
    );
  }

  private liveJails(): number {
    let live = this.spare.filter((jail) => !jail.dead).length;
    for (const { jail } of this.jails.values()) if (!jail.dead) live++;
    return live;
  }

  /** A spare jail made for this quota, if one is alive: it leaves the spares for good. */
  private takeSpare(quotaBytes: number): Jail | null {
    if (quotaBytes !== this.spares.quotaBytes) return null;
    while (this.spare.length > 0) {
      const jail = this.spare.shift()!;
      if (!jail.dead) return jail;
    }
    return null;
  }

  /** Starts spare jails up to the count, within the machine's jail budget. */
  private refill(): void {
    if (this.closed || !this.wanted) return;
    for (let i = this.spare.length - 1; i >= 0; i--)
      if (this.spare[i]!.dead) this.spare.splice(i, 1);
    while (this.spare.length < this.spares.count && this.liveJails() < this.maxJails) {
      const jail = this.newJail(this.spares.quotaBytes);
      this.spare.push(jail);
      jail
        .start()
        .then(() => jail.warm(SPARE_LANGUAGES, this.spares.memoryMb))
        .catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.jails.values()].map(({ jail }) => jail).concat(this.spare);
    this.jails.clear();
    this.spare.length = 0;
    await Promise.all(all.map((jail) => jail.close()));
  }
}

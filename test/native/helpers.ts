// Scaffolding for the launcher's attack suite: running real commands in native/build/polybox-jail
// as root or as an unprivileged user, reading its status line, and watching the host's process
// table for anything a jail leaves behind.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const LAUNCHER = path.resolve(import.meta.dirname, "../../native/build/polybox-jail");
export const PYTHON = "/usr/bin/python3";
export const BASH = "/bin/bash";

/** The host id the jail's user is mapped to as root, and the unprivileged user's own. */
export const NOBODY = 65534;

export interface Mode {
  name: string;
  /** What runs the launcher: nothing (this process, root) or setpriv as nobody. */
  prefix: string[];
}

export const MODES: Mode[] = [
  { name: "as root", prefix: [] },
  {
    name: "as an unprivileged user",
    prefix: ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"],
  },
];

export const usable =
  process.platform === "linux" &&
  existsSync(LAUNCHER) &&
  existsSync(PYTHON) &&
  spawnSync(LAUNCHER, ["--probe"], { timeout: 10_000 }).status === 0;

export const isRoot = process.getuid?.() === 0;

export interface Status {
  exitCode: number;
  signal: string | null;
  limit: string | null;
  wallMs: number;
  cgroup: string;
  error: string | null;
}

export interface JailRun {
  /** The launcher's own exit status and signal, as the host saw them. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The parsed --status-fd line, or null if there was none. */
  status: Status | null;
  statusText: string;
  ms: number;
}

export interface RunOptions {
  input?: string;
  /** A guard for the whole spawn (the launcher's own --timeout-ms is what the tests check). */
  guardMs?: number;
  /** Descriptors for the launcher from fd 4 on (fd 3 is its status channel). */
  extraFds?: number[];
}

function argvFor(
  mode: Mode,
  flags: string[],
  command: string[],
  wrap: string[] = [],
  launcher = LAUNCHER,
): [string, string[]] {
  const argv = [...wrap, ...mode.prefix, launcher, "--status-fd", "3", ...flags, "--", ...command];
  return [argv[0]!, argv.slice(1)];
}

function parseStatus(text: string): Status | null {
  const line = text.trim();
  return line ? (JSON.parse(line) as Status) : null;
}

/** Runs `command` in a jail and waits for it. */
export function jail(
  mode: Mode,
  flags: string[],
  command: string[],
  opts: RunOptions = {},
): JailRun {
  const [file, args] = argvFor(mode, flags, command);
  const started = Date.now();
  const r = spawnSync(file, args, {
    input: opts.input ?? "",
    stdio: ["pipe", "pipe", "pipe", "pipe", ...(opts.extraFds ?? [])],
    encoding: "utf8",
    timeout: opts.guardMs ?? 15_000,
    killSignal: "SIGKILL",
    maxBuffer: 16 * 1024 * 1024,
  });
  const statusText = String(r.output?.[3] ?? "");
  return {
    code: r.status,
    signal: r.signal,
    stdout: String(r.stdout ?? ""),
    stderr: String(r.stderr ?? ""),
    status: parseStatus(statusText),
    statusText,
    ms: Date.now() - started,
  };
}

/** Runs python code in a jail. */
export function py(mode: Mode, code: string, flags: string[] = [], args: string[] = []): JailRun {
  return jail(mode, flags, [PYTHON, "-c", code, ...args]);
}

/** Runs a bash script in a jail. */
export function sh(mode: Mode, script: string, flags: string[] = [], args: string[] = []): JailRun {
  return jail(mode, flags, [BASH, "-c", script, "bash", ...args]);
}

export interface LiveJail {
  child: ChildProcess;
  done: Promise<JailRun>;
}

/**
 * Starts a jail without waiting for it (for tests that watch or kill it while it runs). `wrap`
 * runs first and must exec the rest (so the launcher stays this process's child).
 */
export function startJail(
  mode: Mode,
  flags: string[],
  command: string[],
  wrap: string[] = [],
  launcher = LAUNCHER,
): LiveJail {
  const [file, args] = argvFor(mode, flags, command, wrap, launcher);
  const started = Date.now();
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe", "pipe"] });
  const chunks: Record<number, string> = { 1: "", 2: "", 3: "" };
  for (const fd of [1, 2, 3]) {
    child.stdio[fd]?.on("data", (d: Buffer) => {
      chunks[fd] += d.toString("utf8");
    });
  }
  const done = new Promise<JailRun>((resolve) => {
    child.on("close", (code, signal) => {
      resolve({
        code,
        signal,
        stdout: chunks[1]!,
        stderr: chunks[2]!,
        status: parseStatus(chunks[3]!),
        statusText: chunks[3]!,
        ms: Date.now() - started,
      });
    });
  });
  return { child, done };
}

/** A string no other process on the host carries: tag a jail's processes with it. */
export function marker(name: string): string {
  return `pbxmark-${name}-${process.pid}-${randomBytes(5).toString("hex")}`;
}

/** Host processes (zombies aside) whose command line contains `tag`. */
export function hostProcesses(tag: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmdline.includes(tag)) continue;
      const state = /State:\s+(\S)/.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1];
      if (state !== "Z") found.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

/** Kills whatever still carries `tag` (cleanup only: tests assert before calling this). */
export function killTagged(tag: string): void {
  for (const pid of hostProcesses(tag)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 20 ms until it holds or `ms` pass; returns whether it held. */
export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
}

/** A directory the jail's host user (nobody, in both modes) owns and may write. */
export function nobodyDir(parent: string, name: string): string {
  const dir = path.join(parent, name);
  mkdirSync(dir, { recursive: true });
  if (isRoot) chownSync(dir, NOBODY, NOBODY);
  chmodSync(dir, 0o700);
  return dir;
}

/** The lines `KEY=value` of a jailed script's output, as an object. */
export function keyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

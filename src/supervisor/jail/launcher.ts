// Trusted side: layer L3 on Linux, the native launcher (native/, built by the install step). It
// starts one command in new user, pid, mount, network, ipc, uts and cgroup namespaces, on a new
// read-only root, with no capabilities, a seccomp allowlist and rlimits, and reports how the
// command ended as one JSON line on a status fd. This module finds it, checks that it works on
// this machine, and builds its command lines: for the WASM engine host, and for native jails.

import { spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import type { HostWrapper } from "../../core/config.js";
import { DIST_DIR, engineReadPaths } from "../assets.js";
import { grantSpellings } from "./permissions.js";

export const LAUNCHER_PATH = path.join(DIST_DIR, "..", "native", "build", "polybox-jail");
/** Starts a native jail's interpreters in a Landlock domain of their own (native/guest-exec.c). */
export const GUEST_EXEC_PATH = path.join(DIST_DIR, "..", "native", "build", "polybox-guest-exec");

/** The launcher's last line: how the jailed command ended. */
export interface JailStatus {
  exitCode: number;
  signal: string | null;
  limit: "timeout" | "terminated" | "memory" | "pids" | "cpu" | "file_size" | null;
  wallMs: number;
  cgroup: string;
  error: string | null;
}

export interface LauncherReport {
  available: boolean;
  /** Why not, or what the jail has (namespaces, seccomp, and whether cgroup limits apply). */
  detail: string;
  /** "active", or why cgroup v2 memory and pids limits are not available. */
  cgroup: string;
}

let cached: LauncherReport | null = null;

/** Whether the launcher is built and can make a jail here (probed once per process). */
export function launcherReport(): LauncherReport {
  cached ??= probe();
  return cached;
}

function probe(): LauncherReport {
  const off = (detail: string): LauncherReport => ({ available: false, detail, cgroup: detail });
  if (process.platform !== "linux") return off("the native launcher is for Linux only");
  if (!existsSync(LAUNCHER_PATH))
    return off(
      "the native launcher is not built (it needs Linux, make and a C compiler at install time)",
    );
  // A probe builds a whole jail (with cgroup limits asked for, to learn whether they apply),
  // drops everything, installs the filter, and exits without running anything.
  const r = spawnSync(LAUNCHER_PATH, ["--probe", "--memory-mb", "64", "--pids", "64"], {
    encoding: "utf8",
    timeout: 10_000,
    env: {},
  });
  const status = parseStatus(r.stdout ?? "");
  if (r.status !== 0 || !status || status.error) {
    const why = status?.error ?? (r.stderr?.trim() || r.error?.message || `exit ${r.status}`);
    return off(`the native launcher cannot make a jail here: ${why}`);
  }
  const cgroup = status.cgroup === "active" ? "active" : `unavailable: ${status.cgroup}`;
  return {
    available: true,
    detail: `polybox-jail: user, pid, mount, network, ipc, uts and cgroup namespaces; read-only root; no capabilities; seccomp allowlist; rlimits; cgroup v2 limits ${cgroup}`,
    cgroup,
  };
}

/** The status line the launcher wrote, if it is one. */
export function parseStatus(text: string): JailStatus | null {
  const line = text.trim().split("\n").pop();
  if (!line) return null;
  try {
    const v = JSON.parse(line) as Partial<JailStatus>;
    if (typeof v.exitCode !== "number" || typeof v.wallMs !== "number") return null;
    return v as JailStatus;
  } catch {
    return null;
  }
}

export interface JailSpec {
  /**
   * Host paths bound read-only at the same path inside, each in both spellings (as given, and
   * resolved): a jailed program that resolves links, as Node's module loader does, finds the
   * path it resolved to, and one that does not finds the path it was given.
   */
  readOnly?: string[];
  /** A tmpfs of this many MiB at /workspace (the jail's private copy). */
  workspaceMb?: number;
  tmpMb?: number;
  cwd?: string;
  /** rlimits */
  processes?: number;
  openFiles?: number;
  fileSizeMb?: number;
  /** cgroup v2 limits, where delegated */
  memoryMb?: number;
  pids?: number;
  timeoutMs?: number;
  statusFd?: number;
  keepFds?: number[];
  /** The jail's own loopback up (its network namespace has no other interface either way). */
  loopback?: boolean;
}

/** The launcher's command line for one jail running `command`. */
export function jailArgs(spec: JailSpec, command: string[]): string[] {
  const args: string[] = [];
  for (const p of grantSpellings(spec.readOnly ?? [])) args.push("--ro-bind", p);
  if (spec.workspaceMb) args.push("--workspace-mb", String(spec.workspaceMb));
  if (spec.tmpMb !== undefined) args.push("--tmp-mb", String(spec.tmpMb));
  if (spec.cwd) args.push("--cwd", spec.cwd);
  if (spec.processes) args.push("--nproc", String(spec.processes));
  if (spec.openFiles) args.push("--nofile", String(spec.openFiles));
  if (spec.fileSizeMb) args.push("--fsize-mb", String(spec.fileSizeMb));
  if (spec.memoryMb) args.push("--memory-mb", String(spec.memoryMb));
  if (spec.pids) args.push("--pids", String(spec.pids));
  if (spec.timeoutMs) args.push("--timeout-ms", String(Math.ceil(spec.timeoutMs)));
  if (spec.statusFd !== undefined) args.push("--status-fd", String(spec.statusFd));
  if (spec.loopback) args.push("--net", "loopback");
  for (const fd of spec.keepFds ?? []) args.push("--keep-fd", String(fd));
  return [...args, "--", ...command];
}

/**
 * Where the running Node lives, as a path to bind into a jail. The default binds cover /usr; a
 * Node installed elsewhere (nvm, /opt, a tarball) brings its whole install directory.
 */
export function nodeInstallPaths(): string[] {
  const real = realpathSync(process.execPath);
  if (/^\/(usr|bin|sbin|lib)\//.test(real)) return [];
  return [path.dirname(path.dirname(real))];
}

/**
 * What a jailed Node running polybox's own code must see: `dist/`, the package.json that makes
 * it ES modules, and the installed packages it loads (the engines, or the native agent's few).
 */
export function polyboxReadPaths(): string[] {
  return [...engineReadPaths(), path.join(DIST_DIR, "..", "package.json")];
}

/**
 * L3 for the WASM engine host on Linux: the host process runs inside a jail with no network,
 * nothing writable, and only polybox's own files and Node visible. The IPC
 * channel (fd 3) is the one descriptor passed in.
 */
export function linuxJailWrapper(extraReadPaths: string[]): HostWrapper {
  return (command, args) => [
    LAUNCHER_PATH,
    jailArgs(
      {
        readOnly: [...nodeInstallPaths(), ...polyboxReadPaths(), ...extraReadPaths],
        // Nothing writable: no /tmp, no /dev/shm (L2 forbids writes anyway; this is the wall
        // behind it).
        tmpMb: 0,
        // A directory the host may read anyway: on Node 22 and 24 a worker thread may read
        // anything under the process's working directory whatever the permission model grants
        // (the main thread may not), and /tmp holds the bound paths that live under the host's
        // /tmp, such as a Node installed there.
        cwd: DIST_DIR,
        // Node's threads count as processes: the pools, V8's and libuv's own.
        processes: 4096,
        openFiles: 4096,
        fileSizeMb: 16,
        keepFds: [3],
      },
      [command, ...args],
    ),
  ];
}

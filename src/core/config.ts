// Trusted side: how a Runtime is configured — pool sizes, limits and their ceilings, permissions,
// and how the engine host process is wrapped (permission model only, or also an OS jail).

import os from "node:os";
import type { EngineLanguage } from "../protocol/messages.js";
import type { Limits } from "./limits.js";
import type { LogFn } from "./log.js";
import type { Permissions } from "./types.js";

export type PoolSizes = Record<EngineLanguage, number>;

/** Turns the engine host's command line into the one actually spawned (e.g. under a jail). */
export type HostWrapper = (command: string, args: string[], tmpDir: string) => [string, string[]];

/** One engine host process: what it boots ahead of its first run, and how it is started. */
export interface EngineHostConfig {
  /** How many processes the wrapper puts between us and the engine host (the launcher: 2). */
  wrapDepth?: number;
  /** Interpreters the host boots before it reports ready (the language its tenant runs first). */
  pool: Partial<PoolSizes>;
  memoryMb: number;
  pythonSnapshot: string | null;
  wrap: HostWrapper;
  log?: LogFn;
}

/**
 * Warm engine hosts kept per language (each one process with one interpreter of that language
 * booted), so that a new sandbox or one-shot run starts at once: enough for a burst, sized by
 * cores and memory. Ruby, `wasm` and `wasix` start cold by default (a host boots them on demand).
 */
export function defaultPoolSizes(): PoolSizes {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const bigMachine = os.totalmem() >= 8 * 1024 ** 3;
  return {
    python: bigMachine ? Math.min(2, Math.max(1, Math.floor(cores / 2))) : 1,
    javascript: Math.min(4, Math.max(2, Math.floor(cores / 2) + 1)),
    typescript: 1,
    bash: Math.min(2, Math.max(1, Math.floor(cores / 2))),
    ruby: 0,
    wasm: 0,
    wasix: 0,
  };
}

/**
 * Which engines run code. `wasm`: the WebAssembly engines only. `native`: the machine's real
 * python3, bash and node, each sandbox in its own kernel jail (Linux with the launcher). `auto`:
 * WebAssembly by default, native where a sandbox or run asks for `engine: "native"`.
 */
/** Whether the engine host runs in an OS jail (the Linux launcher, or sandbox-exec on macOS). */
export interface OsJailStatus {
  active: boolean;
  detail: string;
}

export type Isolation = "wasm" | "native" | "auto";

/** Paths of the real interpreters native mode runs (defaults: /usr/bin/python3, /bin/bash, this Node). */
export interface NativeInterpreters {
  python?: string;
  bash?: string;
  node?: string;
}

export interface RuntimeOptions {
  /** Default: `auto` where the Linux launcher works, `wasm` elsewhere. */
  isolation?: Isolation;
  /** Run the WASM engine host inside the OS jail where there is one (default true). */
  osJail?: boolean;
  nativeInterpreters?: NativeInterpreters;
  /** Defaults applied to every sandbox and run (DEFAULT_LIMITS when omitted). */
  limits?: Partial<Limits>;
  /** Ceilings a sandbox or run may ask for (DEFAULT_MAX_LIMITS when omitted). */
  maxLimits?: Partial<Limits>;
  permissions?: Permissions;
  /** Warm engine hosts per language (see `defaultPoolSizes`). */
  pool?: Partial<PoolSizes>;
  /** Memory the warm hosts may use, estimated per host (default 1024 MiB). */
  poolBudgetMb?: number;
  /** After this long without a new tenant, warm hosts shrink to one per language (default 10 min). */
  poolIdleShrinkMs?: number;
  /** Where polybox's own diagnostics go (default: stderr). The library never prints otherwise. */
  log?: LogFn;
  /** Boot Python from a cached memory snapshot (default true). */
  pythonSnapshot?: boolean;
  /** Directory for caches such as the Python snapshot (default: the per-user cache dir). */
  cacheDir?: string;
  /** Where Python packages come from: directories of wheels or a Pyodide distribution, and
   * package index URLs (PEP 503), tried in order. URLs also need their host in `permissions.net`. */
  pythonPackages?: string[];
  /**
   * Where state that outlives the process lives: named sandboxes, snapshots (default: the
   * per-user state dir, see `defaultDataDir`). Nothing is written there until it is used.
   */
  dataDir?: string;
  /** Bytes the data directory may hold, objects and named workspaces together (default 10 GiB). */
  dataDirQuotaBytes?: number;
  /** Snapshots one sandbox may have (default 32). */
  maxSnapshotsPerSandbox?: number;
  /** Bytes one sandbox's snapshots may add up to, as its workspace held them (default 4 GiB). */
  maxSnapshotBytesPerSandbox?: number;
}

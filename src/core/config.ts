// Trusted side: how a Runtime is configured — pool sizes, limits and their ceilings, permissions,
// and how the engine host process is wrapped (permission model only, or also an OS jail).

import os from "node:os";
import type { EngineLanguage } from "../protocol/messages.js";
import type { Limits, NetLimits } from "./limits.js";
import type { LogFn } from "./log.js";
import type { NetSecret } from "./net-secrets.js";
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
  /** The verified QuickJS boot image, or null: JavaScript interpreters evaluate their set-up. */
  quickjsImage?: string | null;
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

/** A header the trusted side adds to a guest's requests to one host; the guest never sees it. */
export interface NetHeader {
  /** The host it is for, as a grant names it: `host` or `host:port`. */
  host: string;
  name: string;
  value: string;
}

/** How the trusted side makes the guest's network requests (which hosts: `permissions.net`). */
export interface NetOptions {
  /** Headers added at the boundary, e.g. an API key read from the server's environment. */
  headers?: NetHeader[];
  /**
   * Secrets every guest can use but never read: its environment holds a placeholder, and the
   * boundary puts the value in place of it only in requests to the secret's hosts.
   */
  secrets?: NetSecret[];
  /** Certificate authorities (PEM) trusted for HTTPS besides the system's, e.g. a test CA. */
  ca?: string | string[];
  /** Per-run network limits (DEFAULT_NET_LIMITS when omitted). */
  limits?: Partial<NetLimits>;
}

export interface RuntimeOptions {
  /** The guest's network: headers added at the boundary, extra CAs, per-run limits. */
  net?: NetOptions;
  /** Default: `auto` where the Linux launcher works, `wasm` elsewhere. */
  isolation?: Isolation;
  /** Run the WASM engine host inside the OS jail where there is one (default true). */
  osJail?: boolean;
  nativeInterpreters?: NativeInterpreters;
  /**
   * Native jails kept started (agent and interpreters running, no guest code) for the next
   * native sandboxes of the default workspace quota, each used by one sandbox only and refilled
   * in the background; they start after the runtime's first native sandbox (default 1, 0: none).
   */
  nativeSpares?: number;
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
  /**
   * After this long without a one-shot run, a principal's engine host is ended (default 10 min);
   * its next one-shot takes a warm host again.
   */
  principalIdleMs?: number;
  /**
   * Where polybox's own diagnostics go (default: nowhere; `stderrLog` prints them). The library
   * never writes to stdout or stderr by itself: stdout may be an MCP stdio channel.
   */
  log?: LogFn;
  /**
   * Whether `Runtime.create` waits for the boot caches (the Python snapshot and the QuickJS boot
   * image: seconds to build on a machine's first start, a hash check later). Default true. With
   * false the runtime is ready at once: runs that start before the caches are built boot without
   * them, and warm engine hosts start once they are. The MCP server and `polybox serve` use false,
   * so that a client's first `tools/list` never waits for them.
   */
  waitForBootCaches?: boolean;
  /** Boot Python from a cached memory snapshot (default true). */
  pythonSnapshot?: boolean;
  /** Boot JavaScript and TypeScript from a cached QuickJS boot image (default true). */
  quickjsImage?: boolean;
  /** Directory for caches such as the Python snapshot (default: the per-user cache dir). */
  cacheDir?: string;
  /**
   * Where Python packages come from, tried in order before Pyodide's own: directories of wheels
   * or a Pyodide distribution, and package index URLs (PEP 503). Naming an index allows it: like
   * the packages of Pyodide's lock file, packages are fetched by the trusted side whatever
   * `permissions.net` grants the guest.
   */
  pythonPackages?: string[];
  /**
   * Base URL of the Pyodide distribution that lock-file packages are downloaded from (default:
   * the jsDelivr CDN's copy of the installed Pyodide version). Every file is checked against the
   * lock file's sha256 whatever serves it.
   */
  pyodideCdn?: string;
  /** Refuse every package download: local sources and the package cache only (default false). */
  cachedOnly?: boolean;
  /**
   * The Wasmer registry's GraphQL endpoint that `wasix` runs' `wasmerPackage` names are looked up
   * at (default: the public registry, `https://registry.wasmer.io/graphql`). Naming it allows it:
   * package files are fetched by the trusted side whatever `permissions.net` grants the guest,
   * from the registry's host or `wasmerDownloadHosts` only, and checked against its sha256.
   */
  wasmerRegistry?: string;
  /**
   * Hosts Wasmer package files may be downloaded from besides the registry's own (default: the
   * public registry's CDN, `cdn.wasmer.io`, with the public registry; none with another).
   */
  wasmerDownloadHosts?: string[];
  /**
   * Whether the package sources named above (`pythonPackages` index URLs, `pyodideCdn`,
   * `wasmerRegistry` and `wasmerDownloadHosts`) may be on a private or loopback network: a mirror
   * inside the operator's network (default false: a source whose address is private, loopback or
   * link-local is refused with PERMISSION_DENIED naming this option). Only the configured host and
   * port are trusted there: links and redirects to any other private address stay refused.
   */
  allowPrivateIndex?: boolean;
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

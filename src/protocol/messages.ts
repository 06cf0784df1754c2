// The only code both sides of the trust boundary import: the messages that cross between the
// server (trusted) and the engine host (untrusted), and between the engine host and its workers.
// Everything here is structured-clone data: no functions, no class instances, no shared realm.
// What the untrusted side sends back is defined as zod schemas in schemas.ts (their types are
// re-exported here); the trusted side validates every message it receives with them.

import type { MessagePort } from "node:worker_threads";
import { type Language, WASM_ONLY_LANGUAGES, type WasmOnlyLanguage } from "./languages.js";
import type { NetReply, NetRequest } from "./net.js";
import type { EngineResult, FileSync, RestoreAnswer, StateAnswer, StateKind } from "./schemas.js";

export type { EngineStatus } from "./endings.js";
export type {
  Display,
  EngineResult,
  FileBlob,
  FileSync,
  HostEvent,
  HostStats,
  RestoreAnswer,
  StateAnswer,
  StateKind,
} from "./schemas.js";

/** A capture's answer where the session has no interpreter (it never ran, or its host is new). */
export const NO_INTERPRETER = "there is no interpreter to capture";

/** An interpreter's captured state: bytes in its engine's own format, and what they hold. */
export interface StateImage {
  kind: StateKind;
  data: Uint8Array;
}

export type EngineLanguage = Language;
export { WASM_ONLY_LANGUAGES, type WasmOnlyLanguage };

export interface RunLimits {
  timeoutMs: number;
  memoryMb: number;
  maxOutputBytes: number;
  workspaceQuotaBytes: number;
}

export interface RunRequest {
  code: string;
  stdin: string;
  env: Record<string, string>;
  limits: RunLimits;
  /**
   * When the guest must have stopped (epoch ms): set by the trusted side as the run leaves it,
   * `limits.timeoutMs` from then. Every layer arms its timer from it (`runDeadline`).
   */
  deadlineAt?: number;
  /** When true, the interpreter's workspace copy is wiped before `sync` is applied. */
  fullSync: boolean;
  sync: FileSync;
  /** Python wheels to install before the code runs (fetched and checked by the trusted side). */
  wheels?: WheelBlob[];
  /** Program arguments (`wasm`: `code` is the module's workspace path, these follow it). */
  args?: string[];
  /**
   * `wasix`: a Wasmer package (WEBC bytes, fetched and checked by the trusted side) whose command
   * `code` names (empty: its entrypoint).
   */
  wasmerPackage?: WasmerPackageBlob;
}

export interface WasmerPackageBlob {
  /** `namespace/name`. */
  name: string;
  version: string;
  sha256: string;
  data: Uint8Array;
}

export interface WheelBlob {
  fileName: string;
  data: Uint8Array;
  installDir: "site" | "dynlib";
}

// ---- server → engine host ------------------------------------------------------------------

/** The engine host's command-line configuration (one JSON argument). */
export interface HostConfig {
  /** Interpreters to boot before the first run (the language the trusted side expects first). */
  pool: Partial<Record<EngineLanguage, number>>;
  memoryMb: number;
  pyodideDir: string;
  quickjsWasm: string;
  pythonSnapshot: string | null;
  /** The QuickJS boot image (verified by the trusted side), or null to evaluate the set-up. */
  quickjsImage?: string | null;
}

export type HostRequest =
  | {
      type: "run";
      id: number;
      /** Interpreter to use: a session key keeps state across runs; null means one-shot. */
      session: string | null;
      language: EngineLanguage;
      request: RunRequest;
    }
  | { type: "cancel"; id: number }
  /** The answer to the guest's network request `req` of run `id`. */
  | { type: "net-reply"; id: number; req: number; reply: NetReply }
  | { type: "dispose"; session: string }
  /** Capture session's interpreter state between runs, in at most `maxBytes`. */
  | { type: "capture"; id: number; session: string; maxBytes: number }
  /**
   * Make `session` a fresh interpreter of `language` with `state` restored into it (any
   * interpreter the session had goes). Python wheels are installed first, so that the modules
   * the state imports are there.
   */
  | {
      type: "restore";
      id: number;
      session: string;
      language: EngineLanguage;
      state: StateImage;
      memoryMb: number;
      wheels?: WheelBlob[];
    }
  | { type: "ping"; id: number }
  | { type: "stats"; id: number };

// ---- engine host ↔ worker ------------------------------------------------------------------

/** Compiled once per engine host and shared with every worker (never crosses the IPC channel). */
export interface EngineAssets {
  pyodideDir: string;
  pythonWasm?: WebAssembly.Module;
  /**
   * The Python memory snapshot's file (verified by the trusted side): each worker reads its own
   * private copy, so the engine host holds none of its 31 MB.
   */
  pythonSnapshot?: string;
  quickjsWasm?: WebAssembly.Module;
  /** Names the QuickJS build (a hash of its module): a memory image restores only into its own. */
  quickjsBuild?: string;
  /** The QuickJS boot image's bytes (see engines/javascript/boot-image.ts), read-only. */
  quickjsImage?: SharedArrayBuffer;
  /** Ruby's module compiled with its memory capped at `rubyWasmMemoryMb` (the pools' default). */
  rubyWasm?: WebAssembly.Module;
  rubyWasmMemoryMb?: number;
  /** Ruby's module bytes, for workers with another memory limit to cap and compile themselves. */
  rubyWasmBytes?: SharedArrayBuffer;
  /** @wasmer/sdk's runtime module (wasix), compiled once and shared with its threads. */
  wasmerSdkWasm?: WebAssembly.Module;
}

export interface WorkerInit {
  language: EngineLanguage;
  memoryMb: number;
  assets: EngineAssets;
  /**
   * The synchronous network bridge: the worker posts a `net` message and blocks on `signal`
   * (Atomics.wait) until the engine host has put the reply on `port` and set `signal[0]`.
   */
  net: { signal: SharedArrayBuffer; port: MessagePort };
}

export type ToWorker =
  /**
   * `recycle`: nothing of this run may remain (a warm-up, or a one-shot). After its result the
   * worker checks that its realm is as it booted, replaces its interpreter with a brand-new one
   * and answers `recycled`, or ends itself: the engine host hands it on only after `recycled`.
   * Sent only to workers that said they can (`ready.recyclable`).
   */
  | { type: "run"; id: number; request: RunRequest; recycle?: boolean }
  | { type: "interrupt" }
  | { type: "capture"; id: number; maxBytes: number }
  | { type: "restore"; id: number; state: StateImage; memoryMb: number; wheels?: WheelBlob[] };

export type FromWorker =
  /** `note`: the boot took a slower path than it was offered (a refused boot image), and why. */
  /**
   * `recyclable`: the engine can replace its interpreter inside this worker (its guests cannot
   * reach the worker's realm: QuickJS, just-bash, plain WASI), so one worker serves many runs.
   */
  | { type: "ready"; note?: string; recyclable?: boolean }
  /** The interpreter after a `recycle` run is a brand-new one; the worker may take another run. */
  | { type: "recycled"; id: number }
  | { type: "boot-failed"; message: string }
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "net"; id: number; req: number; request: NetRequest }
  | { type: "result"; id: number; result: EngineResult }
  | { type: "state"; id: number; answer: StateAnswer }
  | { type: "restored"; id: number; answer: RestoreAnswer };

/** What the engine host puts on a worker's net port for request `req`. */
export interface NetDelivery {
  req: number;
  reply: NetReply;
}

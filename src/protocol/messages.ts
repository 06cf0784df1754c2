// The only code both sides of the trust boundary import: the messages that cross between the
// server (trusted) and the engine host (untrusted), and between the engine host and its workers.
// Everything here is structured-clone data: no functions, no class instances, no shared realm.
// The trusted side validates every message it receives with `validate.ts` before acting on it.

export type EngineLanguage = "python" | "javascript" | "typescript" | "bash" | "ruby" | "wasm";
/** Languages only the WebAssembly engines run (native mode has no interpreter for them). */
export type WasmOnlyLanguage = "ruby" | "wasm";
export const WASM_ONLY_LANGUAGES: readonly WasmOnlyLanguage[] = ["ruby", "wasm"];

/** How a run can end: `ok`/`error` are the guest's doing, the rest name what stopped it. */
export const RUN_STATUSES = [
  "ok",
  "error",
  "timeout",
  "memory_limit",
  "output_limit",
  "workspace_limit",
  "cancelled",
] as const;
export type EngineStatus = (typeof RUN_STATUSES)[number];

/** One file crossing the boundary, as bytes, with the mtime the trusted side holds for it. */
export interface FileBlob {
  path: string;
  data: Uint8Array;
  mtimeMs: number;
}

/** Files to bring an interpreter's private copy of the workspace up to date, or back from it. */
export interface FileSync {
  files: FileBlob[];
  dirs: string[];
  removed: string[];
}

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
  /** When true, the interpreter's workspace copy is wiped before `sync` is applied. */
  fullSync: boolean;
  sync: FileSync;
  /** Python wheels to install before the code runs (fetched and checked by the trusted side). */
  wheels?: WheelBlob[];
  /** Program arguments (`wasm`: `code` is the module's workspace path, these follow it). */
  args?: string[];
}

export interface WheelBlob {
  fileName: string;
  data: Uint8Array;
  installDir: "site" | "dynlib";
}

export interface EngineResult {
  status: EngineStatus;
  stdout: string;
  stderr: string;
  exitCode: number;
  value: string | null;
  truncated: boolean;
  message?: string;
  /** Set by the engine host when the interpreter was replaced and its state is gone. */
  stateLost?: boolean;
  changes: FileSync;
  /** Rich values the guest passed to `display()`, in order. */
  displays: Display[];
}

/**
 * One `display()` call: a text rendering an LLM can read, plus the rich form when there is one
 * (image bytes, HTML, JSON text).
 */
export interface Display {
  mimeType: string;
  text: string;
  data?: Uint8Array | string;
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
  | { type: "dispose"; session: string }
  | { type: "ping"; id: number }
  | { type: "stats"; id: number };

// ---- engine host → server ------------------------------------------------------------------

export interface HostStats {
  workers: number;
  pooled: Partial<Record<EngineLanguage, number>>;
  sessions: number;
  rssBytes: number;
  heapUsedBytes: number;
}

export type HostEvent =
  | { type: "ready"; pid: number; node: string }
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "result"; id: number; result: EngineResult }
  | { type: "failed"; id: number; message: string }
  | { type: "pong"; id: number }
  | { type: "stats"; id: number; stats: HostStats }
  | { type: "log"; level: "info" | "warn" | "error"; message: string };

// ---- engine host ↔ worker ------------------------------------------------------------------

/** Compiled once per engine host and shared with every worker (never crosses the IPC channel). */
export interface EngineAssets {
  pyodideDir: string;
  pythonWasm?: WebAssembly.Module;
  /** Copied privately by each worker before boot, then dropped: see engine-host/main.ts. */
  pythonSnapshot?: SharedArrayBuffer;
  quickjsWasm?: WebAssembly.Module;
  /** Ruby's module compiled with its memory capped at `rubyWasmMemoryMb` (the pools' default). */
  rubyWasm?: WebAssembly.Module;
  rubyWasmMemoryMb?: number;
  /** Ruby's module bytes, for workers with another memory limit to cap and compile themselves. */
  rubyWasmBytes?: SharedArrayBuffer;
}

export interface WorkerInit {
  language: EngineLanguage;
  memoryMb: number;
  assets: EngineAssets;
}

export type ToWorker = { type: "run"; id: number; request: RunRequest } | { type: "interrupt" };

export type FromWorker =
  | { type: "ready" }
  | { type: "boot-failed"; message: string }
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "result"; id: number; result: EngineResult };

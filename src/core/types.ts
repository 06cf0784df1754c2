// Public shapes of the library: what a run returns and what a caller may pass. These types are
// API; changing one is a breaking change for every embedder and for the MCP output schemas.

import {
  type EngineStatus,
  exitCodeOf,
  RUN_EXIT_CODES,
  RUN_STATUSES,
} from "../protocol/endings.js";
import type { NetRecordEntry } from "../protocol/net.js";
import type { Limits } from "./limits.js";

export { LANGUAGES, type Language } from "../protocol/languages.js";
export type { NetRecordEntry };

/**
 * How a run ended. `ok` and `error` are the guest's doing (exit code 0 or not); the rest name the
 * limit or the caller that stopped it.
 */
export type RunStatus = EngineStatus;
export { RUN_EXIT_CODES, RUN_STATUSES };

export interface RunResult {
  status: RunStatus;
  stdout: string;
  stderr: string;
  /** The guest's exit code; 0 for `ok`. A limit or a cancel gives its own (RUN_EXIT_CODES). */
  exitCode: number;
  /** Text form of the last expression's value (Python repr / JS inspection), if any. */
  value: string | null;
  durationMs: number;
  /** True when some output was dropped because of `maxOutputBytes`. */
  truncated: boolean;
  /** Workspace paths the run created, modified or removed. */
  filesChanged: string[];
  /** For any status but `ok`/`error` (and for host failures): what happened, naming the limit. */
  message?: string;
  /** True when the interpreter had to be replaced, so variables from earlier runs are gone. */
  stateLost?: boolean;
  /** Images the run produced: files it wrote (PNG, JPEG, GIF, SVG, WebP) and `display()`ed ones. */
  images: RunImage[];
  /** Other rich values passed to `display()`: HTML, JSON, DataFrames, plain text. */
  displays: RunDisplay[];
  /** Things the caller should know that are not errors, such as an image dropped for its size. */
  notes?: string[];
  /** The guest's network requests, in order (absent when it made none). */
  network?: NetRecordEntry[];
  /**
   * Set by SandboxService (never by Sandbox.run) for each stream longer than its
   * `inlineOutputBytes`: the result's stdout/stderr then hold the head and the tail, with a
   * marker where the middle was cut, and this says where the whole stream is kept.
   */
  fullOutput?: Partial<Record<OutputStream, FullOutput>>;
}

/**
 * @internal The result of a run that never started (cancelled in the queue, refused before its
 * guest ran): nothing was printed, returned or changed, and `message` says why.
 */
export function notStartedResult(message: string, status: RunStatus = "error"): RunResult {
  return {
    status,
    stdout: "",
    stderr: "",
    exitCode: exitCodeOf(status, 1),
    value: null,
    durationMs: 0,
    truncated: false,
    filesChanged: [],
    message,
    images: [],
    displays: [],
  };
}

/** Where the whole of a stream that a result holds only the head and tail of is kept. */
export interface FullOutput {
  /** Bytes of the whole stream (UTF-8). */
  bytes: number;
  /** The run's id (a job's id for a job), which names the kept copy. */
  runId: string;
  /** The sandbox whose workspace holds it at `path`; null when the service's store holds it. */
  sandboxId: string | null;
  /** Its workspace path in that sandbox; null when the service's store holds it. */
  path: string | null;
  /**
   * When the service's store forgets it (ms since the epoch; read it with
   * SandboxService.readRunOutput until then); null for a file in a sandbox.
   */
  expiresAt: number | null;
}

export interface RunImage {
  mimeType: string;
  data: Uint8Array;
  /** Workspace path for an image file, null for one passed to `display()`. */
  path: string | null;
}

export interface RunDisplay {
  mimeType: string;
  /** A text rendering an LLM can read (a bounded table for DataFrames). */
  text: string;
  /** The rich form (HTML or JSON text), when there is one. */
  data?: string;
}

export type OutputStream = "stdout" | "stderr";

export interface RunOptions
  extends Partial<Pick<Limits, "timeoutMs" | "memoryMb" | "maxOutputBytes">> {
  /** Text fed to the program's standard input. */
  stdin?: string;
  /**
   * Program arguments. Only `wasm` uses them: its `code` is the workspace path of a WASI module,
   * which runs with these arguments after its own path (`argv[0]`).
   */
  args?: string[];
  /**
   * `wasix` only: a Wasmer registry package, `namespace/name@version` (an exact version). Its
   * command named by `code` runs (empty `code`: the package's entrypoint) with `args`, in the
   * workspace. The package is fetched by the trusted side from the runtime's `wasmerRegistry`,
   * checked against the registry's sha256, pinned and cached; the guest never fetches it.
   */
  wasmerPackage?: string;
  /** Environment variables visible to the guest (nothing of the host's leaks by default). */
  env?: Record<string, string>;
  /** Aborting stops the run with status `cancelled`. */
  signal?: AbortSignal;
  /** Called with output as the guest writes it, before the run ends. */
  onOutput?: (stream: OutputStream, text: string) => void;
}

export interface FileInfo {
  /** Path relative to the workspace root, with `/` separators. */
  path: string;
  type: "file" | "directory";
  size: number;
  mtimeMs: number;
}

export interface Permissions {
  /**
   * Hosts guest code may reach, through the trusted side: `host`, `host:port`, `[v6]:port`, or
   * `*` for every host. Private, loopback and link-local addresses only when named literally.
   */
  net?: string[];
  /** Hosts refused even when `net` grants them (same form); wins over `net`. */
  denyNet?: string[];
  /** Host paths `upload` may read from. */
  read?: string[];
  /** Names of host environment variables that may be passed into guests. */
  env?: string[];
}

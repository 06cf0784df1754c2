// Trusted side: who calls the service and what a run or a file read through it passes and gets
// back. The adapters (MCP tools, the CLI, the cluster's nodes) build these.

import type { Language, OutputStream, RunResult } from "../types.js";

/** Who a call is for: the owner of what it makes, and where its named things are kept. */
export interface Caller {
  owner: string;
  account?: string;
  /**
   * Where the caller's named sandboxes and snapshots are kept: an identity that stays the same
   * across connections and restarts (a token's, the local user's). Without it a caller cannot
   * name sandboxes, and its snapshots go with the sandboxes they were taken of.
   */
  scope?: string;
}

export interface ExecuteRequest {
  language: Language;
  code: string;
  /** Run in this sandbox (keeping state); without it the run is one-shot in a fresh sandbox. */
  sandboxId?: string;
  /** Files written to the workspace before the run: text, or bytes for binary content. */
  files?: Record<string, string | Uint8Array>;
  /** Program arguments (`wasm` only: `code` is then the module's workspace path). */
  args?: string[];
  /** `wasix` only: a Wasmer registry package (`namespace/name@version`) whose command `code` names. */
  wasmerPackage?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  onOutput?: (stream: OutputStream, text: string) => void;
}

export interface ExecuteResult extends RunResult {
  sandboxId: string | null;
}

export interface ReadFileResult {
  path: string;
  size: number;
  mimeType: string;
  /** The text when the file is UTF-8 text, else null (use `bytes`). */
  text: string | null;
  bytes: Uint8Array;
}

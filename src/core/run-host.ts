// Trusted side: what a Sandbox needs of whatever runs its code. Two implementations live in
// src/jail: the tenant's own WASM engine host process (fleet.ts) and, in native mode, the
// sandbox's own kernel jail. Both sit on the far side of the trust boundary: what they return
// has been validated (src/protocol/validate.ts) before a Sandbox sees it.

import type { EngineLanguage, EngineResult, RunRequest } from "../protocol/messages.js";

export type OutputFn = (stream: "stdout" | "stderr", text: string) => void;

export interface RunHost {
  /** Changes whenever the process behind this host was replaced (interpreter state is gone). */
  readonly generation: number;
  /** Makes sure the process is up; `language` is the one about to run (a warm host for it). */
  start(language?: EngineLanguage): Promise<void>;
  run(
    session: string | null,
    language: EngineLanguage,
    request: RunRequest,
    output: OutputFn,
    signal?: AbortSignal,
  ): Promise<EngineResult>;
  /** Drops one session's interpreter. */
  dispose(session: string): void;
  /** Ends the process behind this host and everything in it. */
  close?(): Promise<void>;
  /** The process's pid on this machine, where there is one (for diagnostics and tests). */
  readonly pid?: number | null;
}

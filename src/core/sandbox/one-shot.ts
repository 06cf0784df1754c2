// Trusted side: a one-shot run: a sandbox made for one piece of code, in its principal's
// process, and destroyed after it.

import { PolyboxError } from "../errors.js";
import type { Limits } from "../limits.js";
import type { NetSecret } from "../net-secrets.js";
import type { Language, RunOptions, RunResult } from "../types.js";
import type { EngineKind, SandboxRuntime } from "./run-host.js";
import { Sandbox } from "./sandbox.js";

export interface OneShotOptions extends RunOptions {
  language: Language;
  code: string;
  /** Files (path → text or bytes) put in the workspace before the run. */
  files?: Record<string, string | Uint8Array>;
  runtime?: SandboxRuntime;
  limits?: Partial<Limits>;
  engine?: EngineKind;
  /** Hosts the code may reach, within the runtime's grant (see SandboxOptions.net). */
  net?: string[];
  /** Secrets the code can use but never read (see SandboxOptions.secrets). */
  secrets?: NetSecret[];
  /**
   * Whose one-shot this is. One engine process serves all one-shot runs of a principal, each in
   * a fresh interpreter; two principals' runs never share a process. Name one per client of
   * yours that must be walled off from the others (default: one principal for the runtime).
   */
  principal?: string;
}

/** The principal of one-shot runs that name none. */
export const DEFAULT_PRINCIPAL = "default";

/** Creates a sandbox, runs one piece of code in it, and destroys it. */
export async function run(options: OneShotOptions): Promise<RunResult> {
  const { language, code, files, runtime, limits, engine, net, secrets, principal, ...runOptions } =
    options;
  if (principal !== undefined && (typeof principal !== "string" || principal.length === 0))
    throw new PolyboxError("INVALID_ARGUMENT", "principal must be a non-empty string");
  const sandbox = await Sandbox.oneShot(
    {
      ...(runtime ? { runtime } : {}),
      ...(limits ? { limits } : {}),
      ...(engine ? { engine } : {}),
      ...(net ? { net } : {}),
      ...(secrets ? { secrets } : {}),
    },
    principal ?? DEFAULT_PRINCIPAL,
  );
  try {
    for (const [path, data] of Object.entries(files ?? {})) await sandbox.files.write(path, data);
    return await sandbox.runOnce(language, code, runOptions);
  } finally {
    await sandbox.close();
  }
}

// Trusted side: what a run fetches before its guest starts (a Python run's wheels, a Wasmer
// package), within the run's own timeout.

import { isPolyboxError } from "../errors.js";
import type { PackageResolver, Wheel } from "../packages/packages.js";
import { inlineDependencies } from "../packages/python-deps.js";
import type { EngineKind } from "./run-host.js";

/**
 * The wheels a Python run needs before it starts: PEP 723 requirements and matched imports,
 * beyond those the sandbox installed `before`.
 */
export async function wheelsFor(
  packages: PackageResolver,
  engine: EngineKind,
  before: ReadonlyMap<string, Wheel>,
  code: string,
  notes: string[],
): Promise<Wheel[]> {
  const required = inlineDependencies(code);
  const requiredNames = new Set(required.map((r) => r.name));
  // Imports are matched against Pyodide's lock file, which says nothing of what the machine's
  // python3 has (Debian's numpy, say): a native sandbox installs only what it is asked for.
  const wished =
    engine === "native"
      ? []
      : packages.packagesForImports(code).filter((n) => !before.has(n) && !requiredNames.has(n));
  const wheels = await packages.resolve(required, before, engine);
  for (const name of wished) {
    const installed = new Map([...before, ...wheels.map((w) => [w.name, w] as const)]);
    try {
      wheels.push(
        ...(await packages.resolve([{ name, specifier: "", extras: [], text: name }], installed)),
      );
    } catch (error) {
      if (!isPolyboxError(error)) throw error;
      notes.push(`the code imports ${name}, which was not installed: ${error.message}`);
    }
  }
  return wheels;
}

/** Why a run ended before its guest started. */
export class Stopped extends Error {
  constructor(readonly why: "timeout" | "cancelled") {
    super(why);
  }
}

/**
 * The part of a run before its guest starts. `wait` bounds each step by the run's timeout (and
 * its cancel signal), counted from the start of the run; what a step left running (a download)
 * ends by its own timeouts, into the cache.
 */
export class Preparation {
  private readonly startedAt = Date.now();

  constructor(
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  timeLeft(): number {
    return Math.max(1, this.timeoutMs - (Date.now() - this.startedAt));
  }

  async wait<T>(step: Promise<T>): Promise<T> {
    const left = this.timeoutMs - (Date.now() - this.startedAt);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Stopped("timeout")), Math.max(0, left));
      onAbort = () => reject(new Stopped("cancelled"));
      if (this.signal?.aborted) onAbort();
      else this.signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([step, stopped]);
    } finally {
      clearTimeout(timer);
      if (onAbort) this.signal?.removeEventListener("abort", onAbort);
    }
  }
}

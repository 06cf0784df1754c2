// Shared test runtime: one engine host per test file, with small pools so that several files can
// run side by side on a 2-core machine. Tests use the built package, as users do.

import { Runtime, type RuntimeOptions } from "../../dist/index.js";

export async function testRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  // No warm Ruby or wasm interpreter unless a test asks: a Ruby boot costs ~0.8 s of CPU.
  return Runtime.create({
    ...options,
    pool: { python: 1, javascript: 1, bash: 1, ruby: 0, wasm: 0, ...options.pool },
  });
}

export type { Language, RunResult } from "../../dist/index.js";
export { isPolyboxError, PolyboxError, Runtime, run, Sandbox } from "../../dist/index.js";

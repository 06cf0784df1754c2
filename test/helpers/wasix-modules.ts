// The WebAssembly modules the WASIX and Wasmer package tests run, committed in test/fixtures/wasix
// next to their C sources and built from them by test/fixtures/wasix/build.mjs (which says how,
// and with which toolchain), so that the tests need only Node. CI rebuilds them and checks the
// bytes; where its toolchain differs it points POLYBOX_TEST_WASIX_MODULES at the modules it
// rebuilt, and the tests run those.
import { readFileSync } from "node:fs";
import path from "node:path";

export const WASIX_MODULES_DIR =
  process.env.POLYBOX_TEST_WASIX_MODULES ||
  path.join(
    import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname),
    "..",
    "fixtures",
    "wasix",
  );

/**
 * A module by name: hello, grow, spin, flood, tool (the Wasmer package tests' command-line
 * tool), fork (asyncify at proc_fork), fork-no-asyncify, forkbomb, wasix-attack.
 */
export function wasixModule(name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(WASIX_MODULES_DIR, `${name}.wasm`)));
}

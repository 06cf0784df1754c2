// Builds WebAssembly test programs from C with Debian's clang, lld and wasi-libc, and asyncify
// passes with binaryen's wasm-opt (all installed by .ci/run). WASIX system calls the Debian
// wasi-libc does not wrap are declared by the C sources themselves as `wasix_32v1` imports. Builds
// go to a temporary directory, once per source text.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const cache = new Map<string, Uint8Array>();

/** The module `source` compiles to (wasm32-wasi, -O2); throws with clang's message on failure. */
export function buildC(source: string, flags: string[] = [], asyncify: string[] = []): Uint8Array {
  const key = `${flags.join(" ")}\n${asyncify.join(" ")}\n${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const dir = mkdtempSync(path.join(tmpdir(), "polybox-clang-"));
  try {
    writeFileSync(path.join(dir, "main.c"), source);
    execFileSync("clang", ["--target=wasm32-wasi", "-O2", ...flags, "main.c", "-o", "main.wasm"], {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
    });
    if (asyncify.length > 0) {
      // Binaryen's asyncify pass lets the sdk unwind the module's stack at these imports and
      // rewind it in a copy (fork), as wasix-libc's own builds do.
      execFileSync(
        "wasm-opt",
        [
          "main.wasm",
          ...["--enable-threads", "--enable-bulk-memory", "--enable-mutable-globals"],
          "--asyncify",
          `--pass-arg=asyncify-imports@${asyncify.join(",")}`,
          "-O2",
          "-o",
          "main.wasm",
        ],
        { cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
      );
    }
    const bytes = new Uint8Array(readFileSync(path.join(dir, "main.wasm")));
    cache.set(key, bytes);
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Flags for a WASIX process that can fork: memory imported and shared (the sdk copies it into
 * the child) and `__stack_pointer` exported (the sdk saves and restores the stack). Debian's
 * wasi-libc is built without atomics; a single-threaded program on shared memory does not need
 * them, so the feature check is off.
 */
export const WASIX_PROCESS_FLAGS = [
  "-matomics",
  "-mbulk-memory",
  "-mmutable-globals",
  "-Wl,--shared-memory,--import-memory,--max-memory=16777216,--no-check-features",
  "-Wl,--export=__stack_pointer",
];

/** A C fixture from test/fixtures/wasix, built. */
export function buildFixture(
  name: string,
  flags: string[] = [],
  asyncify: string[] = [],
): Uint8Array {
  const file = path.join(
    import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname),
    "..",
    "fixtures",
    "wasix",
    name,
  );
  return buildC(readFileSync(file, "utf8"), flags, asyncify);
}

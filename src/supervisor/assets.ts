// Trusted side: where the engine assets live on this machine. The engine host may read these
// paths and nothing else, so they are computed here, from the installed packages.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** polybox's own `dist/` directory (this file is dist/supervisor/assets.js). */
export const DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const ENGINE_HOST_MAIN = path.join(DIST_DIR, "guest", "engine-host", "main.js");

/** The installed directory of a package, found from its resolved entry point. */
function packageDir(name: string): string {
  const resolved = require.resolve(name);
  const marker = `${path.sep}node_modules${path.sep}${name.replace("/", path.sep)}${path.sep}`;
  const at = resolved.lastIndexOf(marker);
  if (at < 0)
    throw new Error(`cannot locate the installed package ${name} (resolved to ${resolved})`);
  return resolved.slice(0, at + marker.length - 1);
}

export const PYODIDE_DIR = `${packageDir("pyodide")}${path.sep}`;

/** The QuickJS build the JavaScript engine uses (quickjs-emscripten's RELEASE_SYNC variant). */
export const QUICKJS_WASM = path.join(
  path.dirname(
    createRequire(require.resolve("quickjs-emscripten")).resolve(
      "@jitl/quickjs-wasmfile-release-sync",
    ),
  ),
  "emscripten-module.wasm",
);

/** Ruby's WebAssembly module (CRuby 3.4 with its standard library), or null if not installed. */
export function rubyWasmPath(): string | null {
  try {
    return path.join(packageDir("@ruby/3.4-wasm-wasi"), "dist", "ruby+stdlib.wasm");
  } catch {
    return null;
  }
}

/**
 * The packages the engine host loads, everything they depend on coming along: the engines, and
 * zod, with which the host checks what its workers send (src/protocol/schemas.ts).
 */
const ENGINE_PACKAGES = [
  "zod",
  "node-inspect-extracted",
  "pyodide",
  "quickjs-emscripten",
  "just-bash",
  // Bash's own commands: bc's numbers, diff's matching, zip and unzip.
  "decimal.js",
  "diff",
  "fflate",
  "amaro",
  "@bjorn3/browser_wasi_shim",
  "@wasmer/sdk",
];
/**
 * Packages the engine host reads data from but loads no code of, so their dependencies stay
 * unreadable: Ruby's WebAssembly module (its JavaScript glue, @ruby/wasm-wasi, is not used).
 */
const ENGINE_DATA_PACKAGES = ["@ruby/3.4-wasm-wasi"];
/**
 * Dependencies the engine host must never load: `ws` is how Emscripten's socket layer reaches
 * the network from a WASM guest, so it is left unreadable (L2) as well as unloadable (L1). The
 * others are type declarations and native-addon build helpers, useless to a process that may not
 * load addons; leaving them out also keeps the Linux jail's bind list short.
 */
const NEVER_LOADED = new Set([
  "ws",
  // @wasmer/sdk's WISP client, its browser route to the network (polybox keeps the sdk's off).
  "@mercuryworkshop/wisp-js",
  "@types/emscripten",
  "node-addon-api",
  "node-gyp-build",
]);

/** A package and, recursively, the installed directories of its runtime dependencies. */
function dependencyClosure(name: string, from: NodeJS.Require, seen: Map<string, string>): void {
  let dir: string;
  try {
    const pkgJson = from.resolve(`${name}/package.json`);
    dir = path.dirname(pkgJson);
  } catch {
    // Packages whose `exports` hide package.json: find the directory from the entry point.
    try {
      const entry = from.resolve(name);
      const marker = `${path.sep}node_modules${path.sep}${name.replace("/", path.sep)}${path.sep}`;
      dir = entry.slice(0, entry.lastIndexOf(marker) + marker.length - 1);
    } catch {
      return; // An optional dependency that is not installed.
    }
  }
  if (seen.has(dir) || NEVER_LOADED.has(name)) return;
  seen.set(dir, name);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const local = createRequire(path.join(dir, "package.json"));
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    dependencyClosure(dep, local, seen);
  }
}

let readPaths: readonly string[] | null = null;

/**
 * What the engine host may read: polybox's own `dist/` and the installed directories of the
 * engines and their dependencies, nothing else of the project or machine. Walked once per
 * process: the walk reads ~50 package.json files (8–12 ms), and every host start needs it.
 */
export function engineReadPaths(): string[] {
  if (!readPaths) {
    const seen = new Map<string, string>();
    for (const name of ENGINE_PACKAGES) dependencyClosure(name, require, seen);
    readPaths = [DIST_DIR, ...seen.keys(), ...ENGINE_DATA_PACKAGES.map(packageDir)];
  }
  return [...readPaths];
}

// Trusted side: where the engine assets live on this machine. The engine host may read these
// paths and nothing else, so they are computed here, from the installed packages.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** polybox's own `dist/` directory (this file is dist/jail/assets.js). */
export const DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const ENGINE_HOST_MAIN = path.join(DIST_DIR, "engine-host", "main.js");

/** The installed directory of a package, found from its resolved entry point. */
function packageDir(name: string): string {
  const resolved = require.resolve(name);
  const marker = `${path.sep}node_modules${path.sep}${name.replace("/", path.sep)}${path.sep}`;
  const at = resolved.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot locate the installed package ${name} (resolved to ${resolved})`);
  return resolved.slice(0, at + marker.length - 1);
}

export const PYODIDE_DIR = `${packageDir("pyodide")}${path.sep}`;

/** The QuickJS build the JavaScript engine uses (quickjs-emscripten's RELEASE_SYNC variant). */
export const QUICKJS_WASM = path.join(
  path.dirname(createRequire(require.resolve("quickjs-emscripten")).resolve("@jitl/quickjs-wasmfile-release-sync")),
  "emscripten-module.wasm",
);

/**
 * The `node_modules` directories that hold the engines and what they import. The ESM loader of
 * the engine host reads package.json files along the way, so it needs the whole tree, read-only.
 */
export function engineReadPaths(): string[] {
  const roots = new Set<string>([DIST_DIR]);
  for (const name of ["pyodide", "quickjs-emscripten", "just-bash"]) {
    const dir = packageDir(name);
    roots.add(dir.slice(0, dir.lastIndexOf(`${path.sep}node_modules${path.sep}`) + "/node_modules".length));
  }
  return [...roots];
}

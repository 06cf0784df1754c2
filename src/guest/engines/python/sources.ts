// The Python side of the Python engine: the .py files beside this module, which `npm run lint`
// compiles and the build copies next to the compiled module in dist/ (wasm/guest-sources.mjs).
// They are read once, when the engine's module loads, before any guest code runs: the engine
// host and the native agent may both read polybox's dist/ (supervisor/assets.ts).
//
// The Pyodide runner is common.py, compat.py, net.py and runner.py joined, executed in one
// namespace (the interpreter's __main__, not the user's): it runs a cell like a notebook does,
// the value of the last expression returned as repr text, top-level `await` working, tracebacks
// showing only the user's frames, and SystemExit becoming an exit code. Native mode's Python
// driver (native-agent/drivers.ts) starts with common.py too.

import { readFileSync } from "node:fs";
import type { PyodideAPI } from "pyodide";
import { MACHINE } from "../common/machine.js";

const read = (name: string) => readFileSync(new URL(name, import.meta.url), "utf8");

/** The Pyodide runner's whole source. */
export const RUNNER_SOURCE = [
  read("common.py"),
  read("compat.py"),
  read("net.py"),
  read("runner.py"),
].join("\n");

/** Capturing and restoring the user's globals (state.py), run after the runner. */
export const STATE_SOURCE = read("state.py");

/** Run by the snapshot's builder: the modules the runner imports (snapshot_imports.py). */
export const SNAPSHOT_IMPORTS = read("snapshot_imports.py");

/** Run by the snapshot's builder with `_polybox_source` set to RUNNER_SOURCE (precompile.py). */
export const RUNNER_PRECOMPILE = read("precompile.py");

const RUNNER_BOOT = read("boot.py");

/**
 * Runs the runner in a booted interpreter: the snapshot builder's compiled copy if it was compiled
 * from this source (boot.py), else the source compiled now. What it tells the guest about the
 * machine (compat.py) is common/machine.ts's, handed over as data.
 */
export function bootRunner(py: PyodideAPI): void {
  py.globals.set("_polybox_source", RUNNER_SOURCE);
  py.globals.set("_polybox_machine", JSON.stringify(MACHINE));
  py.runPython(RUNNER_BOOT, { filename: "<polybox>" });
}

// Builds the Pyodide memory snapshot that every Python interpreter boots from. Run as its own
// short-lived process by the trusted side (src/supervisor/snapshot.ts), under the permission model
// with write access to the output file only. No guest code ever runs here: the snapshot is the
// interpreter's state right after start, with the modules polybox's runner imports loaded.

import { writeFileSync } from "node:fs";
import { RUNNER_PRECOMPILE, RUNNER_SOURCE, SNAPSHOT_IMPORTS } from "../engines/python/sources.js";
import { installBindingShim } from "./harden.js";

const [pyodideDir, outFile] = process.argv.slice(2);
if (!pyodideDir || !outFile) {
  process.stderr.write("usage: make-snapshot PYODIDE_DIR OUT_FILE\n");
  process.exit(2);
}
installBindingShim();
const { loadPyodide } = await import("pyodide");
const py = await loadPyodide({
  indexURL: pyodideDir,
  env: { HOME: "/workspace" },
  _makeSnapshot: true,
});
// The runner's imports, done once here rather than in every interpreter (see snapshot_imports.py).
py.runPython(SNAPSHOT_IMPORTS, { filename: "<polybox>" });
// The runner compiled (~110 ms in a fresh interpreter): see precompile.py.
py.globals.set("_polybox_source", RUNNER_SOURCE);
py.runPython(RUNNER_PRECOMPILE, { filename: "<polybox>" });
writeFileSync(outFile, py.makeMemorySnapshot());

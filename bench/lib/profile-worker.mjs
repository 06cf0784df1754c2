// One interpreter boot, timed phase by phase, in a worker thread started the way the engine host
// starts an interpreter's worker (see profile-host.mjs). It does what
// src/guest/engine-host/worker-entry.ts and the engines do, in the same order, with marks between
// the steps: `mode: "phases"` replicates the Python engine's calls one by one (Pyodide's own
// phases need hooks that `loadPyodide` only offers through its options), and `mode: "engine"`
// boots the real engine from dist/ as one step, so the two can be checked against each other.
// QuickJS needs no replica: its classes' prototypes are hooked, and the real engine is timed.
//
// CPU is the process's (process.cpuUsage counts every thread: V8's compilers and GC too), read at
// each mark; the host's main thread is idle meanwhile, waiting for this worker. `dist` is the
// file URL of polybox's dist/ directory.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const marks = [];
const mark = (name) =>
  marks.push({ name, at: performance.timeOrigin + performance.now(), cpu: process.cpuUsage() });
mark("worker first line");

const { language, mode, assets, memoryMb, dist } = workerData;
const harden = await import(`${dist}/guest/engine-host/harden.js`);
mark("worker imports");

/**
 * Times `WebAssembly.instantiate`, and hands it the host's compiled module as the Python engine
 * does while it boots (withSharedModule in src/guest/engines/python/engine.ts).
 */
function hookInstantiate(shared) {
  const original = WebAssembly.instantiate;
  WebAssembly.instantiate = async (source, imports) => {
    mark(language === "python" ? "Emscripten JS set-up" : "QuickJS module: JS set-up");
    const result =
      source instanceof WebAssembly.Module
        ? await original(source, imports)
        : shared
          ? { instance: await original(shared, imports), module: shared }
          : await original(source, imports);
    mark("instantiate");
    return result;
  };
  return () => {
    WebAssembly.instantiate = original;
  };
}

async function pythonPhases() {
  const { loadPyodide } = await import("pyodide");
  mark("import pyodide.mjs");
  const { bootRunner } = await import(`${dist}/guest/engines/python/sources.js`);
  // What loadPyodide would import itself (loadWasmScript): imported here so it is a phase.
  const createModule = (await import(pathToFileURL(`${assets.pyodideDir}pyodide.asm.mjs`).href))
    .default;
  mark("import pyodide.asm.mjs (Emscripten JS)");
  const snapshot = assets.pythonSnapshot ? readFileSync(assets.pythonSnapshot) : null;
  mark("snapshot read (private copy)");
  const restore = hookInstantiate(assets.pythonWasm);
  const py = await loadPyodide({
    indexURL: assets.pyodideDir,
    env: { HOME: "/workspace" },
    ...(snapshot ? { _loadSnapshot: snapshot } : {}),
    createPyodideModule: async (settings) => {
      mark("loadPyodide: config, lock file");
      const module = await createModule(settings);
      mark("Emscripten runtime init");
      const api = module.API;
      for (const [fn, label, before] of [
        ["restoreSnapshot", "snapshot restore into memory", "configureAPI"],
        ["finalizeBootstrap", "JS-side API set-up (finalizeBootstrap)", null],
      ]) {
        const original = api[fn];
        api[fn] = (...args) => {
          if (before) mark(before);
          const out = original.apply(api, args);
          mark(label);
          return out;
        };
      }
      return module;
    },
  });
  restore();
  mark("loadPyodide: finalizeSetup");
  py.FS.mkdirTree("/workspace");
  py.FS.chdir("/workspace");
  py.runPython(`import os, random; os.chdir("/workspace"); os.urandom(1); random.seed()`);
  mark("Python-side: workspace, entropy");
  bootRunner(py);
  py.globals.get("_polybox_run");
  py.setInterruptBuffer(new Int32Array(new SharedArrayBuffer(4)));
  mark("Python-side: polybox runner set-up");
}

/** The real JavaScript engine, with QuickJS's own steps marked through its classes' prototypes. */
async function javascriptEngine() {
  const q = await import("quickjs-emscripten");
  const { createEngine } = await import(`${dist}/guest/engines/javascript/engine.js`);
  mark("import quickjs-emscripten + engine (reads node-inspect)");
  const wrap = (proto, name, before, after) => {
    const original = proto[name];
    proto[name] = function (...args) {
      if (before) mark(before(args));
      const out = original.apply(this, args);
      mark(after(args));
      return out;
    };
  };
  wrap(
    q.QuickJSWASMModule.prototype,
    "newRuntime",
    () => "Emscripten runtime init",
    () => "runtime creation",
  );
  wrap(q.QuickJSRuntime.prototype, "newContext", null, () => "context creation");
  const evals = {
    "polybox:inspect": "node-inspect evaluation",
    "polybox:prelude": "prelude evaluation",
  };
  wrap(
    q.QuickJSContext.prototype,
    "evalCode",
    (a) => (a[1] === "polybox:inspect" ? "host bindings (defineHost)" : "between evaluations"),
    (a) => evals[a[1]] ?? `eval ${a[1]}`,
  );
  const restore = hookInstantiate(undefined);
  const engine = await createEngine({ language, memoryMb, assets });
  restore();
  // From the boot image, the host bindings and the restore are one step (no evaluation to mark).
  mark(
    engine.bootedFrom === "image" ? "host bindings, boot image restore" : "engine: prelude handles",
  );
  if (engine.bootNote) throw new Error(engine.bootNote);
}

async function realEngine() {
  const kind = language === "python" ? "python" : "javascript";
  const { createEngine } = await import(`${dist}/guest/engines/${kind}/engine.js`);
  mark("import engine");
  await createEngine({ language, memoryMb, assets });
  mark("createEngine (whole)");
}

try {
  harden.installMemoryGuard();
  harden.installBindingShim();
  harden.memoryGuard.limitBytes = memoryMb * 1024 * 1024;
  if (mode === "engine") await realEngine();
  else if (language === "python") await pythonPhases();
  else await javascriptEngine();
  delete assets.pythonSnapshot;
  delete assets.quickjsImage;
  harden.lockDownRealm(new URL(`${dist}/guest/engine-host/deny-modules.js`), []);
  mark("realm lock-down");
  parentPort.postMessage({ marks });
} catch (error) {
  parentPort.postMessage({ error: String(error?.stack ?? error) });
}

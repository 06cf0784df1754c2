// What polybox is compared with, each measured the way its users would run it: process starts of
// the real python3 / node / bash binaries; the peers a user would pick instead, with a new
// context or isolate per run (quickjs-emscripten with its module loaded once, isolated-vm, and
// `node:vm` as the floor); Pyodide fresh per call (what Pyodide-per-call servers do) and warm
// in-process (the Python floor); just-bash called directly; and for native mode, `bwrap` and
// polybox's own launcher around a bare `python3 -c pass`.
//
// The process starts are of the real binaries: `python3` on PATH may be a version manager's shim
// (pyenv's is a shell script that runs pyenv before Python, ~100 ms), which would flatter polybox,
// so each interpreter is asked for its own executable and that file is started directly.

import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

function which(name) {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      return { path: `${dir}/${name}`, real: realpathSync(`${dir}/${name}`) };
    } catch {}
  }
  return null;
}

/**
 * The binary that `name` on PATH ends up running (asked of the interpreter itself with `args`,
 * which print its executable), and whether PATH's entry is something else: a shim.
 */
function resolveBinary(name, args) {
  try {
    const real = realpathSync(execFileSync(name, args, { encoding: "utf8" }).trim());
    const onPath = which(name);
    return {
      path: real,
      onPath: onPath?.path ?? null,
      shim: onPath !== null && onPath.real !== real,
    };
  } catch {
    return null;
  }
}

/** The python3 that `python3` on PATH ends up running, and whether PATH's entry is a shim. */
export const python3Binary = resolveBinary("python3", [
  "-c",
  "import sys,os; print(os.path.realpath(sys.executable))",
]);
export const nodeBinary = resolveBinary("node", ["-p", "process.execPath"]);
export const bashBinary = resolveBinary("bash", ["-c", 'echo "$BASH"']);

export async function freshPyodide() {
  const { loadPyodide } = await import("pyodide");
  const py = await loadPyodide();
  py.setStdout({ batched: () => {} });
  py.runPython("print(1)");
}

export const python3 = () => exec(python3Binary.path, ["-c", "print(1)"]);

/**
 * The system's own /usr/bin/python3 when PATH resolves to a different one: builds differ in start
 * time (a version manager's may be several times slower), and the faster figure is the fair one.
 */
export const systemPython3 = (() => {
  try {
    const real = realpathSync("/usr/bin/python3");
    if (real === python3Binary.path) return null;
    const fn = () => exec(real, ["-c", "print(1)"]);
    fn.path = real;
    return fn;
  } catch {
    return null;
  }
})();
export const nodeE = () => exec(nodeBinary.path, ["-e", "console.log(1)"]);
export const bashC = () => exec(bashBinary.path, ["-c", "echo 1"]);

/** quickjs-emscripten as its users run it: the module loaded once, a new runtime and context per run. */
export async function quickjsContext() {
  const { newQuickJSWASMModule } = await import("quickjs-emscripten");
  const module = await newQuickJSWASMModule();
  return () => {
    const runtime = module.newRuntime();
    const ctx = runtime.newContext();
    ctx.unwrapResult(ctx.evalCode("1 + 1")).dispose();
    ctx.dispose();
    runtime.dispose();
  };
}

/** Where the bench installs isolated-vm: bench/baselines, with its own package.json and lockfile. */
const BASELINES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "baselines");

/**
 * isolated-vm with a new isolate (and context) per run, or `{ unavailable }` saying why. It is a
 * native addon whose install compiles V8 bindings for minutes where no prebuilt binary is
 * reachable, so it is no dependency of polybox's: the bench installs it on first use into
 * bench/baselines (`npm ci` there, from its lockfile; its progress on stderr), and leaves its row
 * out where that fails or `POLYBOX_BENCH_NO_INSTALL=1` forbids it.
 */
export async function isolatedVm() {
  // Its own copy only, never one a parent directory's node_modules happens to hold.
  const entry = path.join(BASELINES_DIR, "node_modules", "isolated-vm");
  if (!existsSync(path.join(entry, "package.json"))) {
    if (process.env.POLYBOX_BENCH_NO_INSTALL === "1")
      return { unavailable: "not installed in bench/baselines, and POLYBOX_BENCH_NO_INSTALL=1" };
    process.stderr.write(
      "bench: installing isolated-vm into bench/baselines (once; a native addon, it may compile " +
        "for several minutes)\n",
    );
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const installed = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], {
      cwd: BASELINES_DIR,
      // npm's own lines go to stderr: the bench's stdout is its report.
      stdio: ["ignore", 2, 2],
      shell: process.platform === "win32",
    });
    if (installed.status !== 0)
      return { unavailable: `npm ci in bench/baselines failed (exit ${installed.status})` };
  }
  try {
    const ivm = createRequire(import.meta.url)(entry);
    const fn = () => {
      const isolate = new ivm.Isolate({ memoryLimit: 32 });
      const context = isolate.createContextSync();
      context.evalSync("1 + 1");
      context.release();
      isolate.dispose();
    };
    return fn;
  } catch (error) {
    return { unavailable: String(error).split("\n")[0] };
  }
}

/** The floor for a new realm per run: `node:vm` with a new context (no isolate of its own). */
export async function nodeVmContext() {
  const vm = await import("node:vm");
  return () => {
    const context = vm.createContext({});
    vm.runInContext("1 + 1", context);
  };
}

/** The Python floor: Pyodide loaded once in this process, one `runPython` per run. */
export async function warmPyodide() {
  const { loadPyodide } = await import("pyodide");
  const py = await loadPyodide();
  py.setStdout({ batched: () => {} });
  return () => py.runPython("print(1)");
}

export async function justBash() {
  const { Bash } = await import("just-bash");
  return () => new Bash().exec("echo 1");
}

// --- native mode: what a jail adds to starting an interpreter ------------------------------------

const LAUNCHER = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../native/build/polybox-jail",
);
/** The interpreter the jails start: the system's own, which every jail can see. */
export const nativePython = existsSync("/usr/bin/python3")
  ? realpathSync("/usr/bin/python3")
  : python3Binary?.path;
export const bwrapBinary = (() => {
  const found = which("bwrap");
  return found ? found.real : null;
})();
/**
 * bwrap as a sandbox around one command: the root read-only, fresh /dev, /proc and /tmp, every
 * namespace unshared (network too), killed with its parent, in a new session.
 */
const BWRAP_ARGS = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  "--unshare-all",
  "--die-with-parent",
  "--new-session",
];
export const nativeBaselines = () => {
  if (process.platform !== "linux" || !nativePython) return null;
  const out = { bare: () => exec(nativePython, ["-c", "pass"]) };
  if (bwrapBinary) out.bwrap = () => exec(bwrapBinary, [...BWRAP_ARGS, nativePython, "-c", "pass"]);
  if (existsSync(LAUNCHER))
    out.polybox_jail = () => exec(LAUNCHER, ["--", nativePython, "-c", "pass"]);
  return out;
};

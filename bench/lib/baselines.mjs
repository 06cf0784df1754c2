// What polybox is compared with, each measured the way its users would run it: a fresh Pyodide per
// call (what Pyodide-per-call servers do), process starts of python3 / node / bash, a bare
// QuickJS context with the module loaded once, and just-bash called directly.
//
// The process starts are of the real binaries: `python3` on PATH may be a version manager's shim
// (pyenv's is a shell script that runs pyenv before Python, ~100 ms), which would flatter polybox,
// so the interpreter is resolved once through `sys.executable` and started directly.

import { execFile, execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
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

/** The python3 that `python3` on PATH ends up running, and whether PATH's entry is a shim. */
export const python3Binary = (() => {
  const real = execFileSync(
    "python3",
    ["-c", "import sys,os; print(os.path.realpath(sys.executable))"],
    {
      encoding: "utf8",
    },
  ).trim();
  const onPath = which("python3");
  const shim = onPath !== null && onPath.real !== real;
  return { path: real, onPath: onPath?.path ?? null, shim };
})();

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
export const nodeE = () => exec(process.execPath, ["-e", "console.log(1)"]);
export const bashC = () => exec("bash", ["-c", "echo 1"]);

export async function quickjsContext() {
  const { newQuickJSWASMModule } = await import("quickjs-emscripten");
  const module = await newQuickJSWASMModule();
  return () => {
    const ctx = module.newContext();
    ctx.unwrapResult(ctx.evalCode("1 + 1")).dispose();
    ctx.dispose();
  };
}

export async function justBash() {
  const { Bash } = await import("just-bash");
  return () => new Bash().exec("echo 1");
}

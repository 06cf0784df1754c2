// What polybox is compared with, each measured the way its users would run it: a fresh Pyodide per
// call (what Pyodide-per-call servers do), process starts of python3 / node / bash, a bare
// QuickJS context with the module loaded once, and just-bash called directly.

import { execFile } from "node:child_process";
import { promisify } from "node:util";

const exec = promisify(execFile);

export async function freshPyodide() {
  const { loadPyodide } = await import("pyodide");
  const py = await loadPyodide();
  py.setStdout({ batched: () => {} });
  py.runPython("print(1)");
}

export const python3 = () => exec("python3", ["-c", "print(1)"]);
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

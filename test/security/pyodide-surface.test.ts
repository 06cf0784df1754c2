// T14 Pyodide surface: what guest Python reaches beyond Python. `import js` and pyodide_js hand
// it the worker's JavaScript realm (that cannot be prevented inside one V8 isolate), so this file
// checks what the realm has left: stripped capabilities (L1), and the permission model inherited
// by the worker (L2). ctypes may load, but must stay inside the WebAssembly memory.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  newSandbox,
  REPO_DIR,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;
const PYODIDE_DIR = path.join(REPO_DIR, "node_modules", "pyodide");

beforeAll(async () => {
  rt = await securityRuntime();
  sb = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
});

async function pyValue(code: string): Promise<string | null> {
  const r = await sb.run("python", code);
  expect(r.status, r.stderr).toBe("ok");
  return r.value;
}

// The realm's fetch is polybox's bridge to the trusted side (T5 checks that it reaches nothing
// ungranted); the other network globals are gone.
it("T14 Pyodide import js: network globals are gone and process capabilities throw", async () => {
  const out = await pyValue(`
import js
def probe(fn):
    try:
        return "GOT " + str(fn())[:40]
    except BaseException as e:
        return "blocked"
[str(js.fetch.name), str(getattr(js, "XMLHttpRequest", None)), str(getattr(js, "WebSocket", None)), str(getattr(js, "EventSource", None)),
 probe(lambda: js.process.getBuiltinModule("fs")), probe(lambda: js.process.binding("fs")), probe(lambda: js.process._linkedBinding("fs")),
 probe(lambda: js.process.dlopen(js.Object.new(), "x")), probe(lambda: js.process.chdir("/")), probe(lambda: js.require("fs")),
 js.JSON.stringify(js.process.env)]`);
  expect(out).toBe(
    "['fetch', 'None', 'None', 'None', 'blocked', 'blocked', 'blocked', 'blocked', 'blocked', 'blocked', '{}']",
  );
});

// The memory guard takes V8's collector for itself (harden.ts: from a throwaway context, with
// --expose-gc on for that moment only); the realm must not have it, so a guest cannot stall its
// worker (and the engine host's other runs) with full collections in a loop.
it("T14 Pyodide run_js: V8's collector is not reachable from the realm", async () => {
  const out = await pyValue(`
from pyodide.code import run_js
def probe(src):
    try:
        return str(run_js(src))
    except BaseException as e:
        return "threw"
[probe("typeof gc"), probe("typeof globalThis.gc"), probe("'gc' in globalThis")]`);
  expect(out).toBe("['undefined', 'undefined', 'False']");
});

it("T14 Pyodide run_js: module loading is denied after boot, whatever the specifier", async () => {
  const specifiers = [
    "node:fs",
    "fs",
    "node:module",
    "node:worker_threads",
    "node:inspector",
    "ws",
    "pyodide",
    "./x.js",
    `file://${PYODIDE_DIR}/pyodide.mjs`,
    "data:text/javascript,export default 1",
  ];
  const out = await pyValue(`
from pyodide.code import run_js
out = []
for spec in ${JSON.stringify(specifiers)}:
    try:
        await run_js(f"import({spec!r})")
        out.append("LOADED " + spec)
    except BaseException as e:
        out.append("denied" if "module loading is disabled" in str(e) else "other: " + str(e)[:80])
out`);
  expect(out).toBe(`[${specifiers.map(() => "'denied'").join(", ")}]`);
});

it("T14 Pyodide run_js: replacing the intrinsics the loader hook could call opens no import", async () => {
  // On Node 22.15+ the hook that denies imports runs in this realm (module.registerHooks), and
  // it runs inside the import() call: every method it could look up is made to say "allowed"
  // (then a parentURL is planted where it looks) just for the moment each import starts. Put back
  // at once, so that Pyodide's own code, which calls them too, can still answer.
  const specifiers = [
    "node:fs",
    "node:net",
    "node:module",
    "data:text/javascript,export default 1",
  ];
  const own = await newSandbox(rt);
  const r = await own.run(
    "python",
    `
from pyodide.code import run_js
run_js("""{
  const yes = () => true;
  const specifiers = ${JSON.stringify(specifiers)};
  const attempt = (descriptors) => {
    const saved = descriptors.map(([object, name]) => [object, name, Object.getOwnPropertyDescriptor(object, name)]);
    for (const [object, name, descriptor] of descriptors)
      Object.defineProperty(object, name, { configurable: true, ...descriptor });
    try {
      return specifiers.map((spec) => import(spec));
    } finally {
      for (const [object, name, was] of saved.reverse())
        if (was) Object.defineProperty(object, name, was);
        else delete object[name];
    }
  };
  const methods = [];
  for (const proto of [Array.prototype, String.prototype])
    for (const name of ["some", "every", "includes", "startsWith", "find", "indexOf"])
      methods.push([proto, name, { value: yes, writable: true }]);
  methods.push([Object, "hasOwn", { value: yes, writable: true }]);
  methods.push([Reflect, "apply", { value: yes, writable: true }]);
  methods.push([Function.prototype, "call", { value: yes, writable: true }]);
  methods.push([Function.prototype, "apply", { value: yes, writable: true }]);
  const parent = [[Object.prototype, "parentURL", { get: () => ${JSON.stringify(`file://${PYODIDE_DIR}/`)} }]];
  const tried = [...attempt(methods), ...attempt(parent)];
  globalThis.__tried = Promise.allSettled(tried).then((results) => results.map((result) =>
    result.status === "fulfilled" ? "LOADED"
      : String(result.reason && result.reason.message).includes("module loading is disabled") ? "denied"
      : "other").join(","));
}""")
await run_js("globalThis.__tried")`,
  );
  await own.close();
  expect(r.status, JSON.stringify(r)).toBe("ok");
  const outcomes = String(r.value).replace(/'/g, "").split(",");
  // With the methods replaced, the hook still refuses each import itself.
  expect(outcomes.slice(0, specifiers.length)).toEqual(specifiers.map(() => "denied"));
  // With a parentURL on every object's prototype, Node's loader may fail first; none loads.
  expect(outcomes.slice(specifiers.length)).toHaveLength(specifiers.length);
  expect(outcomes).not.toContain("LOADED");
});

it("T14 Pyodide pyodide_js: the worker inherits the permission model (no writes, no children, reads only engine assets)", async () => {
  const out = await pyValue(`
from pyodide.code import run_js
run_js("""JSON.stringify([
  process.permission.has('fs.write'),
  process.permission.has('fs.write', '/tmp'),
  process.permission.has('child'),
  process.permission.has('fs.read', '/etc/passwd'),
  process.permission.has('fs.read', '/'),
  process.permission.has('fs.read', ${JSON.stringify(REPO_DIR)}),
  process.permission.has('fs.read', ${JSON.stringify(PYODIDE_DIR)}),
])""")`);
  // The last one is the control: the engine assets are readable, so the check itself works.
  expect(out).toBe("'[false,false,false,false,false,false,true]'");
});

it("T14 Pyodide ctypes: loads, but libc file access and wild pointers stay inside WebAssembly", async () => {
  const s = await newSandbox(rt);
  try {
    const r = await s.run(
      "python",
      `
import ctypes
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
print("fopen", libc.fopen(b"/etc/passwd", b"r"), libc.fopen(b"${path.join(PYODIDE_DIR, "package.json")}", b"r"))
print("pid", libc.getpid())`,
    );
    expect(r.stdout, r.stderr).toMatch(/fopen None None/);
    // Reading past the end of WebAssembly memory is a trap (the interpreter is replaced), not a
    // read of host memory.
    const wild = await s.run("python", "import ctypes\nctypes.string_at(0xFFFFFF00, 64)");
    expect(wild.status).not.toBe("ok");
    expect(wild.stdout + wild.stderr).not.toMatch(/root:.*:0:0:/);
  } finally {
    await s.close();
  }
  await expectRuntimeAnswers(rt);
});

it("T14 Pyodide: package loading cannot read or fetch from outside the engine assets", async () => {
  const r = await sb.run(
    "python",
    `
import pyodide_js
for spec in ["/etc/passwd", "file:///etc/passwd", "${REPO_DIR}/package.json"]:
    try:
        await pyodide_js.loadPackage(spec)
    except BaseException as e:
        print("blocked", type(e).__name__)
print("DONE")`,
  );
  expect(r.stdout).toContain("DONE");
  expect(r.stdout + r.stderr).not.toMatch(/root:.*:0:0:|"name": "polybox"/);
  expect(existsSync("/etc/passwd.whl")).toBe(false);
  await expectRuntimeAnswers(rt);
});

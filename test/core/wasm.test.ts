// The `wasm` language: a WASI preview 1 module in the workspace runs with arguments, stdin, the
// environment and the workspace; the result has the same shape as every other engine's. The
// modules are assembled from WAT by the test itself (test/helpers/wat.ts).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { dataString, wasiProgram, wat } from "../helpers/wat.js";

let runtime: Runtime;
let sb: Sandbox;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { wasm: 1 } });
  sb = await Sandbox.create({ runtime });
});
afterAll(async () => {
  await sb.close();
  await runtime.close();
});

/** Prints every argument (the NUL-separated argv buffer, NULs as spaces) and exits with argc. */
const ECHO_ARGS = wasiProgram(`(local $len i32) (local $i i32)
  (drop (call $args_sizes (i32.const 100) (i32.const 104)))
  (drop (call $args_get (i32.const 200) (i32.const 1024)))
  (local.set $len (i32.load (i32.const 104)))
  (block $done (loop $l
    (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
    (if (i32.eqz (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
      (then (i32.store8 (i32.add (i32.const 1024) (local.get $i)) (i32.const 32))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $l)))
  (call $print (i32.const 1024) (local.get $len))
  (call $exit (i32.load (i32.const 100)))`);

/** Copies stdin to stdout, and to the workspace file "copy.txt" (fd 3 is /workspace). */
const TEE = wasiProgram(
  `(local $n i32)
  (drop (call $path_open (i32.const 3) (i32.const 0) (i32.const 2048) (i32.const 8)
    (i32.const 9) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 40)))
  (i32.store (i32.const 48) (i32.const 4096))
  (i32.store (i32.const 52) (i32.const 4096))
  (drop (call $fd_read (i32.const 0) (i32.const 48) (i32.const 1) (i32.const 56)))
  (local.set $n (i32.load (i32.const 56)))
  (call $print (i32.const 4096) (local.get $n))
  (drop (call $write (i32.load (i32.const 40)) (i32.const 4096) (local.get $n)))`,
  dataString(2048, "copy.txt"),
);

it("runs a module with arguments and returns its exit code", async () => {
  await sb.files.write("bin/echo.wasm", ECHO_ARGS);
  const r = await sb.run("wasm", "bin/echo.wasm", { args: ["alpha", "beta gamma"] });
  expect(r).toMatchObject({ status: "error", exitCode: 3, value: null, truncated: false });
  expect(r.stdout).toBe("/workspace/bin/echo.wasm alpha beta gamma ");
  const again = await sb.run("wasm", "/workspace/bin/echo.wasm");
  expect(again.exitCode).toBe(1);
});

it("feeds stdin and writes to the workspace", async () => {
  await sb.files.write("tee.wasm", TEE);
  const r = await sb.run("wasm", "tee.wasm", { stdin: "through the pipe" });
  expect(r).toMatchObject({ status: "ok", exitCode: 0, stdout: "through the pipe" });
  expect(r.filesChanged).toEqual(["copy.txt"]);
  expect(new TextDecoder().decode(await sb.files.read("copy.txt"))).toBe("through the pipe");
});

it("answers a missing, invalid or non-WASI module with an error result naming the problem", async () => {
  expect(await sb.run("wasm", "missing.wasm")).toMatchObject({
    status: "error",
    exitCode: 127,
    stderr: "wasm: missing.wasm: no such file in the workspace\n",
  });
  await sb.files.write("junk.wasm", "not a module");
  expect((await sb.run("wasm", "junk.wasm")).stderr).toMatch(/not a valid WebAssembly module/);
  await sb.files.write(
    "env.wasm",
    wat('(module (import "env" "host_call" (func)) (func (export "_start")))'),
  );
  const foreign = await sb.run("wasm", "env.wasm");
  expect(foreign).toMatchObject({ status: "error", exitCode: 126 });
  expect(foreign.stderr).toMatch(/imports from env; only WASI preview 1/);
  expect((await sb.run("wasm", "../outside.wasm")).stderr).toMatch(/not a workspace path/);
});

it("reports a trap as an error and stays usable", async () => {
  await sb.files.write("trap.wasm", wasiProgram("unreachable"));
  const r = await sb.run("wasm", "trap.wasm");
  expect(r).toMatchObject({ status: "error", exitCode: 134 });
  expect(r.stderr).toMatch(/trap: unreachable/);
  expect((await sb.run("wasm", "bin/echo.wasm", { args: ["ok"] })).stdout).toMatch(/ ok $/);
});

it("runs one-shot through run() with the module passed as bytes", async () => {
  const r = await run({
    language: "wasm",
    code: "echo.wasm",
    args: ["x"],
    files: { "echo.wasm": ECHO_ARGS },
    runtime,
  });
  expect(r).toMatchObject({ exitCode: 2, stdout: "/workspace/echo.wasm x " });
});

// The `wasix` language: a WASIX (or WASI) module in the workspace runs on @wasmer/sdk inside the
// engine host, with arguments, stdin, the environment and the workspace; files it writes come
// back. The modules are built from C in test/fixtures/wasix (build.mjs there says how).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { wasixModule } from "../helpers/wasix-modules.js";
import { dataString, wasiProgram, wat } from "../helpers/wat.js";

let runtime: Runtime;
let sb: Sandbox;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { wasix: 1 } });
  sb = await Sandbox.create({ runtime });
}, 120_000);
afterAll(async () => {
  await sb?.close();
  await runtime?.close();
});

const HELLO = wasixModule("hello");

it("runs a WASIX module with arguments, env, stdin and the workspace", async () => {
  await sb.files.write("bin/hello.wasm", HELLO);
  await sb.files.write("input.txt", "from the workspace\n");
  await sb.files.write("out/keep.txt", "x");
  const r = await sb.run("wasix", "bin/hello.wasm", {
    args: ["alpha", "beta gamma"],
    env: { GREETING: "hi" },
    stdin: "through the pipe\n",
  });
  expect(r).toMatchObject({ status: "error", exitCode: 3, value: null, stderr: "" });
  expect(r.stdout).toContain("args: alpha beta gamma\n");
  expect(r.stdout).toContain("GREETING=hi\n");
  expect(r.stdout).toMatch(/proc_id=0 pid=\d+\n/);
  expect(r.stdout).toContain("thread_parallelism=0\n");
  expect(r.stdout).toContain("cwd=/workspace\n");
  expect(r.stdout).toContain("stdin=through the pipe\n");
  expect(r.stdout).toContain("input.txt=from the workspace\n");
  expect(r.filesChanged).toEqual(["out/result.txt"]);
  const written = new TextDecoder().decode(await sb.files.read("out/result.txt"));
  expect(written).toMatch(/^written by pid \d+\n$/);
}, 60_000);

it("sees files changed between runs, and reports only what the guest changed", async () => {
  await sb.files.write("input.txt", "second version\n");
  const r = await sb.run("wasix", "bin/hello.wasm", { stdin: "" });
  expect(r.stdout).toContain("input.txt=second version\n");
  // Same content as before: not reported again.
  expect(r.filesChanged ?? []).toEqual([]);
}, 60_000);

it("runs a plain WASI preview 1 module too", async () => {
  await sb.files.write(
    "plain.wasm",
    wasiProgram(
      `(call $print (i32.const 2048) (i32.const 6)) (call $exit (i32.const 5))`,
      dataString(2048, "plain\n"),
    ),
  );
  const r = await sb.run("wasix", "plain.wasm");
  expect(r).toMatchObject({ exitCode: 5, stdout: "plain\n" });
}, 60_000);

it("refuses imports beyond the system calls, and invalid or missing modules", async () => {
  await sb.files.write(
    "napi.wasm",
    wat(
      '(module (import "napi" "napi_run_script" (func)) (memory (export "memory") 1) (func (export "_start")))',
    ),
  );
  const foreign = await sb.run("wasix", "napi.wasm");
  expect(foreign).toMatchObject({ status: "error", exitCode: 126 });
  expect(foreign.stderr).toMatch(/imports napi\.napi_run_script; only WASI and WASIX/);
  expect(await sb.run("wasix", "missing.wasm")).toMatchObject({ exitCode: 127 });
  await sb.files.write("junk.wasm", "not a module");
  expect((await sb.run("wasix", "junk.wasm")).stderr).toMatch(/not a valid WebAssembly module/);
  expect((await sb.run("wasix", "../x.wasm")).stderr).toMatch(/not a workspace path/);
}, 60_000);

it("fork: the child runs on a copy of memory, its file comes back, the parent joins its exit", async () => {
  const fork = wasixModule("fork");
  await sb.files.write("fork.wasm", fork);
  const r = await sb.run("wasix", "fork.wasm");
  expect(r).toMatchObject({ status: "ok", exitCode: 0, stderr: "" });
  // The child's line, then the parent's after the join: both run, each on its own memory.
  expect(r.stdout).toBe(
    "parent starts\nchild: counter=11\nparent: child has a pid, joined errno=0 tag=1 exit=7 counter=10\n",
  );
  expect(new TextDecoder().decode(await sb.files.read("from-child.txt"))).toBe(
    "written by the child\n",
  );
  await sb.files.remove("from-child.txt");
}, 60_000);

it("fork from a module built without asyncify ends the process at the call", async () => {
  await sb.files.write("fork.wasm", wasixModule("fork-no-asyncify"));
  const r = await sb.run("wasix", "fork.wasm");
  // The sdk cannot resume a child there (measured on @wasmer/sdk 0.16): nothing after the call.
  expect(r).toMatchObject({ status: "error", stdout: "parent starts\n" });
  expect(r.exitCode).not.toBe(0);
}, 60_000);

it("a thread by the raw thread_spawn_v2 import shares memory with its spawner", async () => {
  // No libc: shared imported memory, `wasi_thread_start` exported, a ThreadStart record with a
  // stack for the thread. The thread stores 42 and wakes the spawner, which prints what it sees.
  const threaded = wat(
    `(module
      (import "env" "memory" (memory 2 2 shared))
      (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
      (import "wasix_32v1" "thread_spawn_v2" (func $spawn (param i32 i32) (result i32)))
      (global (export "__stack_pointer") (mut i32) (i32.const 65536))
      (data (i32.const 1024) "errno=?? flag=??\\n")
      (func $digits (param $at i32) (param $v i32)
        (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.div_u (local.get $v) (i32.const 10))))
        (i32.store8 (i32.add (local.get $at) (i32.const 1))
          (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10)))))
      (func (export "wasi_thread_start") (param $tid i32) (param $start i32)
        (i32.atomic.store (i32.const 512) (i32.const 42))
        (drop (memory.atomic.notify (i32.const 512) (i32.const 1))))
      (func (export "_start") (local $e i32)
        ;; ThreadStart at 256: stack_upper (u64) ... stack_size (u64, at +80).
        (i64.store (i32.const 256) (i64.const 98304))
        (i64.store (i32.const 336) (i64.const 16384))
        (local.set $e (call $spawn (i32.const 256) (i32.const 600)))
        (drop (memory.atomic.wait32 (i32.const 512) (i32.const 0) (i64.const 10000000000)))
        (call $digits (i32.const 1030) (local.get $e))
        (call $digits (i32.const 1038) (i32.atomic.load (i32.const 512)))
        (i32.store (i32.const 0) (i32.const 1024))
        (i32.store (i32.const 4) (i32.const 17))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`,
    { threads: true },
  );
  await sb.files.write("threaded.wasm", threaded);
  const r = await sb.run("wasix", "threaded.wasm");
  expect(r).toMatchObject({ exitCode: 0, stdout: "errno=00 flag=42\n", stderr: "" });
}, 60_000);

it("runs one-shot through run() with the module passed as bytes", async () => {
  const r = await run({
    language: "wasix",
    code: "hello.wasm",
    args: ["x"],
    files: { "hello.wasm": HELLO, "out/keep.txt": "x" },
    runtime,
  });
  expect(r).toMatchObject({ exitCode: 2 });
  expect(r.stdout).toContain("args: x\n");
  expect(r.filesChanged).toEqual(["out/result.txt"]);
}, 90_000);

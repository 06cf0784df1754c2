// Worker side: the Ruby engine, CRuby 3.4 compiled to WASI by the ruby.wasm project
// (@ruby/3.4-wasm-wasi, `ruby+stdlib.wasm`: the standard library is packed inside the module).
// That build is a reactor, not a command: it exports `ruby-init` and `rb-eval-string-protect`
// rather than `_start`, so one interpreter lives for the worker's life and keeps its state
// (top-level locals, methods, constants) between runs, and a run's value is `inspect` of its last
// expression, like Python's repr. The calls into the module are in ruby-abi.ts.
//
// The build also imports `rb-js-abi-host` (Ruby's `JS` module, which in a browser evaluates
// JavaScript). Here every one of those imports throws: guest Ruby cannot reach the worker's
// realm. A call that throws unwinds through the Ruby VM, so the interpreter is retired after it.

import { WASI, WASIProcExit } from "@bjorn3/browser_wasi_shim";
import type { RunRequest, WorkerInit } from "../../../protocol/messages.js";
import type { Engine, EngineOutcome, RunContext } from "../common/engine.js";
import { WorkspaceMirror } from "../common/mirror.js";
import { capMemory, nearMemoryCap } from "./memory-cap.js";
import { RubyAbi, type RubyValue } from "./ruby-abi.js";
import { type OutputTarget, WasiFiles } from "./wasi-fs.js";

const MIB = 1024 * 1024;
const BASE_ENV = ["HOME=/workspace", "TMPDIR=/tmp", "LANG=C.UTF-8", "PWD=/workspace"];
/** `inspect` of the last expression is cut here (the trusted side caps sizes again). */
const MAX_VALUE_CHARS = 64 * 1024;

/** Ruby's module, compiled with its memory capped at this worker's `memoryMb`. */
async function rubyModule(init: WorkerInit): Promise<WebAssembly.Module> {
  const { rubyWasm, rubyWasmBytes, rubyWasmMemoryMb } = init.assets;
  if (rubyWasm && rubyWasmMemoryMb === init.memoryMb) return rubyWasm;
  if (!rubyWasmBytes) throw new Error("the Ruby WebAssembly module is not available");
  return WebAssembly.compile(capMemory(new Uint8Array(rubyWasmBytes), init.memoryMb * MIB));
}

function jsInteropDisabled(name: string): () => never {
  return () => {
    throw new Error(`Ruby's JS interop is not available in the sandbox (${name.split(":")[0]})`);
  };
}

/** A Ruby string literal for `s` that interpolates nothing. */
function rubyString(s: string): string {
  return JSON.stringify(s).replace(/#/g, "\\u0023");
}

export async function createEngine(init: WorkerInit): Promise<Engine> {
  const module = await rubyModule(init);
  const files = new WasiFiles();
  const mirror = new WorkspaceMirror(files.guestFs());
  let target: OutputTarget | null = null;
  const shim = new WASI(
    ["ruby"],
    BASE_ENV,
    files.fds("", () => target),
    { debug: false },
  );
  const ruby = new RubyAbi();
  const imports: WebAssembly.Imports = {
    wasi_snapshot_preview1: shim.wasiImport,
    canonical_abi: ruby.imports(),
    "rb-js-abi-host": {},
  };
  for (const i of WebAssembly.Module.imports(module)) {
    if (i.module === "rb-js-abi-host")
      imports["rb-js-abi-host"]![i.name] = jsInteropDisabled(i.name);
  }
  const instance = await WebAssembly.instantiate(module, imports);
  ruby.bind(instance);
  shim.initialize(instance as never);
  ruby.init(["ruby", "-EUTF-8", "-e_=0"]);
  const memory = instance.exports.memory as WebAssembly.Memory;

  const intern = (name: string) => ruby.intern(name);
  const ids = {
    inspect: intern("inspect"),
    fullMessage: intern("full_message"),
    status: intern("status"),
    klass: intern("class"),
    name: intern("name"),
  };
  /** Calls a method with no arguments and returns the string it gives, or null if it raised. */
  const callString = (value: RubyValue, method: number): string | null => {
    const [result, state] = ruby.callProtect(value, method);
    try {
      if (state !== 0) {
        ruby.clearErrinfo();
        return null;
      }
      return ruby.stringOf(result);
    } finally {
      ruby.drop(result);
    }
  };
  const evalQuiet = (code: string) => {
    const [value, state] = ruby.evalProtect(code);
    ruby.drop(value);
    if (state !== 0) ruby.clearErrinfo();
  };
  evalQuiet('Dir.chdir("/workspace")');
  let broken = false;

  return {
    applyFiles: (request: RunRequest) => mirror.apply(request.sync, request.fullSync),
    collectFiles: () => mirror.collect(),
    interrupt: () => {},
    async run(request: RunRequest, ctx: RunContext): Promise<EngineOutcome> {
      if (broken) throw new Error("the Ruby interpreter is no longer usable");
      target = ctx;
      shim.fds[0] = WasiFiles.stdin(request.stdin);
      try {
        for (const [k, v] of Object.entries(request.env))
          evalQuiet(`ENV[${rubyString(k)}] = ${rubyString(v)}`);
        return evaluate(request.code, ctx);
      } catch (error) {
        // Something unwound through the VM (exit!, a trap, the JS interop stubs): its state can
        // no longer be trusted, so this worker ends after the result.
        broken = true;
        if (error instanceof WASIProcExit)
          return { exitCode: error.code, value: null, stateLost: true };
        const atCap = nearMemoryCap(memory, init.memoryMb * MIB);
        ctx.output.write("stderr", `ruby: ${error instanceof Error ? error.message : error}\n`);
        return {
          exitCode: 1,
          value: null,
          stateLost: true,
          ...(atCap ? { status: "memory_limit" } : {}),
        };
      } finally {
        target = null;
      }
    },
  };

  function evaluate(code: string, ctx: RunContext): EngineOutcome {
    const [value, state] = ruby.evalProtect(code);
    if (state === 0) {
      const inspected = callString(value, ids.inspect);
      ruby.drop(value);
      evalQuiet("$stdout.flush; $stderr.flush");
      return {
        exitCode: 0,
        value: inspected === null ? null : inspected.slice(0, MAX_VALUE_CHARS),
      };
    }
    ruby.drop(value);
    const error = ruby.errinfo();
    ruby.clearErrinfo();
    evalQuiet("$stdout.flush; $stderr.flush");
    try {
      return describeError(error, ctx);
    } finally {
      ruby.drop(error);
    }
  }

  function describeError(error: RubyValue, ctx: RunContext): EngineOutcome {
    const [klass] = ruby.callProtect(error, ids.klass);
    const className = callString(klass, ids.name) ?? "";
    ruby.drop(klass);
    if (className === "SystemExit") {
      const [statusValue, failed] = ruby.callProtect(error, ids.status);
      const status = failed === 0 ? Number(callString(statusValue, ids.inspect)) : 1;
      ruby.drop(statusValue);
      return { exitCode: Number.isInteger(status) ? status : 1, value: null };
    }
    const message = (callString(error, ids.fullMessage) ?? `${className}\n`)
      // full_message highlights with ANSI escapes; the frame of our own eval is noise.
      .replace(/\x1b\[[0-9;]*m/g, "")
      .split("\n")
      .filter((line) => !/^\s*from -e:in /.test(line))
      .join("\n");
    ctx.output.write("stderr", message.endsWith("\n") ? message : `${message}\n`);
    if (className === "NoMemoryError") return { exitCode: 1, value: null, status: "memory_limit" };
    return { exitCode: 1, value: null };
  }
}

// Worker side: the `wasm` language. A run names a WebAssembly module in the workspace (WASI
// preview 1, exporting `_start`) and runs it with arguments, stdin, environment and the
// workspace at /workspace. Each run is a fresh instance; only the workspace carries over.
//
// The module is untrusted input twice over: its bytes are parsed here (memory cap, see
// memory-cap.ts) and it may import only `wasi_snapshot_preview1`, which the in-memory shim
// answers. Anything else it imports (WASIX, `env`, a host's own functions) is refused before
// it is instantiated.

import { WASI, WASIProcExit } from "@bjorn3/browser_wasi_shim";
import type { RunRequest } from "../../../protocol/messages.js";
import {
  type Engine,
  type EngineOutcome,
  type RunContext,
  recyclable,
  stoppedAt,
} from "../common/engine.js";
import { WorkspaceMirror } from "../common/mirror.js";
import { capMemory, InitialMemoryError, ModuleFormatError, nearMemoryCap } from "./memory-cap.js";
import { OutputStopped, type OutputTarget, WasiFiles } from "./wasi-fs.js";

const MIB = 1024 * 1024;
const WASI_MODULES = new Set(["wasi_snapshot_preview1", "wasi_unstable"]);

/** The workspace-relative path a run names: `app.wasm`, `./bin/app.wasm` or `/workspace/app.wasm`. */
export function modulePath(code: string): string | null {
  let path = code.trim();
  if (path.startsWith("/workspace/")) path = path.slice("/workspace/".length);
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (path.startsWith("/") || parts.length === 0 || parts.includes("..")) return null;
  return parts.join("/");
}

function failed(ctx: RunContext, message: string, exitCode = 1): EngineOutcome {
  ctx.output.write("stderr", `wasm: ${message}\n`);
  return { exitCode, value: null };
}

export function createEngine(): Promise<Engine> {
  return recyclable(async () => createInstance());
}

function createInstance(): Engine {
  const files = new WasiFiles();
  const mirror = new WorkspaceMirror(files.guestFs());
  return {
    applyFiles: (request: RunRequest) => mirror.apply(request.sync, request.fullSync),
    collectFiles: () => mirror.collect(),
    interrupt: () => {},
    async run(request: RunRequest, ctx: RunContext): Promise<EngineOutcome> {
      const path = modulePath(request.code);
      if (path === null)
        return failed(ctx, `"${request.code}" is not a workspace path to a .wasm module`, 2);
      const bytes = files.readFile(path);
      if (bytes === null) return failed(ctx, `${path}: no such file in the workspace`, 127);
      const capBytes = request.limits.memoryMb * MIB;
      let module: WebAssembly.Module;
      try {
        module = await WebAssembly.compile(capMemory(bytes, capBytes));
      } catch (error) {
        if (error instanceof InitialMemoryError) return stoppedAt("memory_limit");
        const why = error instanceof ModuleFormatError ? error.message : String(error);
        return failed(ctx, `${path} is not a valid WebAssembly module: ${why}`, 126);
      }
      const foreign = WebAssembly.Module.imports(module).filter((i) => !WASI_MODULES.has(i.module));
      if (foreign.length > 0) {
        const names = [...new Set(foreign.map((i) => i.module))].join(", ");
        return failed(
          ctx,
          `${path} imports from ${names}; only WASI preview 1 (wasi_snapshot_preview1) is provided`,
          126,
        );
      }
      if (
        !WebAssembly.Module.exports(module).some(
          (e) => e.name === "_start" && e.kind === "function",
        )
      )
        return failed(ctx, `${path} does not export _start (it is not a WASI command)`, 126);

      let target: OutputTarget | null = ctx;
      const env = Object.entries({ HOME: "/workspace", PWD: "/workspace", ...request.env }).map(
        ([k, v]) => `${k}=${v}`,
      );
      const args = [`/workspace/${path}`, ...(request.args ?? [])];
      const shim = new WASI(
        args,
        env,
        files.fds(request.stdin, () => target, true),
        { debug: false },
      );
      const imports = { wasi_snapshot_preview1: shim.wasiImport, wasi_unstable: shim.wasiImport };
      let memory: WebAssembly.Memory | undefined;
      const overCap = (exitCode: number): EngineOutcome => ({
        exitCode,
        value: null,
        status: "memory_limit",
      });
      try {
        const instance = await WebAssembly.instantiate(module, imports);
        memory = instance.exports.memory as WebAssembly.Memory | undefined;
        if (!(memory instanceof WebAssembly.Memory))
          return failed(ctx, `${path} does not export its memory`, 126);
        const exitCode = shim.start(instance as never);
        return exitCode !== 0 && nearMemoryCap(memory, capBytes)
          ? overCap(exitCode)
          : { exitCode, value: null };
      } catch (error) {
        // The worker reports output_limit from the sink; the instance is simply abandoned.
        if (error instanceof OutputStopped) return { exitCode: 1, value: null };
        if (error instanceof WASIProcExit)
          return error.code !== 0 && nearMemoryCap(memory, capBytes)
            ? overCap(error.code)
            : { exitCode: error.code, value: null };
        const message = error instanceof Error ? error.message : String(error);
        if (nearMemoryCap(memory, capBytes)) {
          ctx.output.write("stderr", `wasm: trap after memory.grow was refused: ${message}\n`);
          return stoppedAt("memory_limit");
        }
        return failed(ctx, `trap: ${message}`, 134);
      } finally {
        target = null;
      }
    },
  };
}

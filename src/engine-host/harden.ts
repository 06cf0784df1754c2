// Layer L1, applied inside every engine worker. Before the engine boots we install the memory
// guard and the narrow `process.binding` shim Pyodide needs; after it has booted and before any
// guest code runs we strip the worker realm of everything that reaches the host: network
// globals, native bindings, builtin module access, the environment, and module loading.
//
// What L1 promises: code that escapes an engine into the worker's JavaScript realm finds no
// ready-made handle to the network, the file system or child processes. What it cannot promise:
// that no other path exists inside a shared V8 isolate. L2 (the permission model around the
// engine host) and L3 (the OS jail) are the walls that hold if it fails.

import nodeFs from "node:fs";
import { register } from "node:module";
import os from "node:os";

const WASM_PAGE = 65536;

/** Shared between the guard and the worker: the cap for WASM memory growth in this worker. */
export const memoryGuard = { limitBytes: Number.POSITIVE_INFINITY, hit: false };

/**
 * Worker `resourceLimits` do not count WebAssembly memory, so the cap is enforced where linear
 * memory grows: Emscripten grows it through `WebAssembly.Memory.prototype.grow`. A refused grow
 * makes malloc fail inside the engine (Python's MemoryError, QuickJS's "out of memory"), and the
 * `hit` flag lets the worker report `memory_limit` even if the guest catches that error. The
 * patched method is frozen so that code in the realm cannot put the original back.
 */
export function installMemoryGuard(): void {
  const proto = WebAssembly.Memory.prototype;
  const original = proto.grow;
  const guarded = function grow(this: WebAssembly.Memory, delta: number): number {
    const next = this.buffer.byteLength + delta * WASM_PAGE;
    if (next > memoryGuard.limitBytes) {
      memoryGuard.hit = true;
      throw new RangeError(`WebAssembly memory limit reached (${memoryGuard.limitBytes} bytes)`);
    }
    return original.call(this, delta);
  };
  Object.defineProperty(proto, "grow", { value: guarded, writable: false, configurable: false });
}

type Binding = (name: string) => unknown;

/** Pyodide's NODEFS reads `process.binding("constants")` at start; nothing else is served. */
export function installBindingShim(): void {
  const shim: Binding = (name) => {
    if (name === "constants") return { fs: nodeFs.constants, os: os.constants };
    throw new Error(`process.binding("${name}") is disabled in the sandbox`);
  };
  (process as unknown as { binding: Binding }).binding = shim;
}

const NETWORK_GLOBALS = ["fetch", "WebSocket", "EventSource", "XMLHttpRequest"];
const PROCESS_CAPABILITIES = [
  "binding",
  "_linkedBinding",
  "dlopen",
  "getBuiltinModule",
  "kill",
  "_kill",
  "abort",
  "chdir",
  "setuid",
  "setgid",
  "openStdin",
];

function deny(name: string): () => never {
  return () => {
    throw new Error(`${name} is disabled in the sandbox`);
  };
}

/** Strips the realm; call after the engine has booted and before guest code runs. */
export function lockDownRealm(hooksUrl: URL, allowedParents: string[] = []): void {
  for (const name of NETWORK_GLOBALS) {
    Object.defineProperty(globalThis, name, {
      value: undefined,
      writable: false,
      configurable: false,
    });
  }
  for (const name of PROCESS_CAPABILITIES) {
    try {
      Object.defineProperty(process, name, {
        value: deny(`process.${name}`),
        writable: false,
        configurable: false,
      });
    } catch {
      // A property Node made non-configurable stays as it is; L2 and L3 cover it.
    }
  }
  for (const key of Object.keys(process.env)) delete process.env[key];
  register(hooksUrl, { data: { allowedParents } });
}

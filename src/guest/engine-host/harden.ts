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
import Module, { register } from "node:module";
import os from "node:os";
import v8 from "node:v8";
import vm from "node:vm";
import { denyingResolve } from "./deny-modules.js";

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
/** Channels between realms of one process: nothing a guest should have, whoever listens. */
const CHANNEL_GLOBALS = ["BroadcastChannel"];
const PROCESS_CAPABILITIES = [
  // Writes straight to the engine host's stderr, past every output cap.
  "_rawDebug",
  // Lists the worker's own handles, its MessagePort to the engine host among them.
  "_getActiveHandles",
  "_getActiveRequests",
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

/**
 * Taken when this module loads, before any engine runs: just-bash's defense-in-depth replaces
 * `process.memoryUsage` with a thrower while a script runs, and the allocation guard below must
 * keep working then (a 1 MiB buffer in a Bash pipeline would otherwise fail the script).
 */
const memoryUsage = process.memoryUsage.bind(process);

/**
 * Memory V8 does not report as the isolate's: resizable and growable buffers (only their
 * initial length is counted), and Blob contents (held by Node outside the isolate). Tracked by
 * the wrappers below while the object lives.
 */
let uncountedBytes = 0;
const released = new FinalizationRegistry<number>((bytes) => {
  uncountedBytes -= bytes;
});

/** What this worker holds: JS heap, external memory (ArrayBuffers, WASM memory), and the rest. */
export function isolateBytes(): number {
  const usage = memoryUsage();
  return usage.heapUsed + usage.external + uncountedBytes;
}

/**
 * V8's full collection, for this module alone. No flag on the engine host's command line exposes
 * it: the flag is turned on just long enough to make one throwaway context, whose `gc` is taken,
 * and off again, so the realm's global never has it (`lockDownRealm` empties it anyway, should a
 * worker's realm have been made in that moment). Null where V8 refuses.
 */
const collectGarbage = takeCollector();

function takeCollector(): (() => void) | null {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}

/**
 * Whether the worker would hold more than `limitBytes` with `extraBytes` more, counting only what
 * is still reachable. `isolateBytes` also counts buffers nothing references any more until V8
 * collects them, and V8 is in no hurry to (their bytes are outside its heap): a guest writing
 * many buffers to files, each copied out of its interpreter, would be refused memory it does not
 * hold. So a figure over the limit is taken again after a full collection, and once more after a
 * second: V8 frees dead buffers' bytes on a background sweep that the next collection finishes,
 * and only then does `external` drop. Each costs a few milliseconds, and only near the limit.
 */
export function overMemoryLimit(limitBytes: number, extraBytes = 0): boolean {
  for (let collections = 0; ; collections++) {
    if (isolateBytes() + extraBytes <= limitBytes) return false;
    if (!collectGarbage || collections === 2) return true;
    collectGarbage();
  }
}

/** Records `bytes` more held by `owner` until it is collected (growth beyond its first length). */
function holdUncounted(owner: object, bytes: number): void {
  if (!(bytes > 0)) return;
  uncountedBytes += bytes;
  released.register(owner, bytes);
}

/** Allocations smaller than this are not checked (the heap limit and the next check catch them). */
const CHECKED_ALLOCATION = 1024 * 1024;

function chargeAllocation(bytes: number): void {
  if (!(bytes >= CHECKED_ALLOCATION)) return;
  if (overMemoryLimit(memoryGuard.limitBytes, bytes)) {
    memoryGuard.hit = true;
    throw new RangeError(
      `memory limit reached (${memoryGuard.limitBytes} bytes): refused a ${bytes}-byte buffer`,
    );
  }
}

/**
 * Buffers made in the realm (reachable from Pyodide through `run_js`) live outside WASM memory
 * and outside the worker's heap limit. Their constructors are wrapped in Proxies — so that
 * `instanceof` and statics keep working — that charge large allocations against the limit.
 */
function guardBufferConstructors(): void {
  const g = globalThis as unknown as Record<string, unknown>;
  const typed = [
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
  ];
  const guard = (
    name: string,
    size: (args: unknown[], ctor: { BYTES_PER_ELEMENT?: number }) => number,
    owner = g,
  ) => {
    const ctor = owner[name] as (new (
      ...args: unknown[]
    ) => unknown) & { BYTES_PER_ELEMENT?: number };
    if (typeof ctor !== "function") return;
    owner[name] = new Proxy(ctor, {
      construct(target, args, newTarget) {
        chargeAllocation(size(args, ctor));
        return Reflect.construct(target, args, newTarget);
      },
    });
  };
  const lengthArg = (args: unknown[], ctor: { BYTES_PER_ELEMENT?: number }) =>
    typeof args[0] === "number" ? args[0] * (ctor.BYTES_PER_ELEMENT ?? 1) : 0;
  for (const name of typed) guard(name, lengthArg);
  guard("ArrayBuffer", (args) => (typeof args[0] === "number" ? args[0] : 0));
  guard("SharedArrayBuffer", (args) => (typeof args[0] === "number" ? args[0] : 0));
  guardGrowth(ArrayBuffer.prototype as unknown as Growable, "resize");
  guardGrowth(SharedArrayBuffer.prototype as unknown as Growable, "grow");
  guardBlob(g);
  const wasm = g.WebAssembly as Record<string, unknown>;
  guard(
    "Memory",
    (args) => ((args[0] as { initial?: number } | undefined)?.initial ?? 0) * WASM_PAGE,
    wasm,
  );
  for (const method of ["alloc", "allocUnsafe", "allocUnsafeSlow"] as const) {
    const original = Buffer[method] as (size: number, ...rest: unknown[]) => Buffer;
    Object.defineProperty(Buffer, method, {
      value: (size: number, ...rest: unknown[]) => {
        chargeAllocation(size);
        return original.call(Buffer, size, ...rest);
      },
    });
  }
}

interface Growable {
  byteLength: number;
  [method: string]: unknown;
}

/**
 * A resizable ArrayBuffer or growable SharedArrayBuffer grows in place, and V8 keeps reporting
 * the length it was made with: each growth is charged and tracked until the buffer is collected.
 */
function guardGrowth(proto: Growable, method: "resize" | "grow"): void {
  const original = proto[method] as ((this: Growable, length: number) => void) | undefined;
  if (typeof original !== "function") return;
  Object.defineProperty(proto, method, {
    value: function grown(this: Growable, length: number): void {
      const growth = Number(length) - this.byteLength;
      if (growth > 0) chargeAllocation(Math.max(growth, CHECKED_ALLOCATION));
      original.call(this, length);
      holdUncounted(this, growth);
    },
    writable: false,
    configurable: false,
  });
}

/**
 * Blob (and File) contents live in Node, outside the isolate: charged by size and tracked while
 * held. A blob over the limit is dropped before anyone can hold it.
 */
function guardBlob(g: Record<string, unknown>): void {
  for (const name of ["Blob", "File"]) {
    const ctor = g[name] as (new (...args: unknown[]) => { size: number }) | undefined;
    if (typeof ctor !== "function") continue;
    g[name] = new Proxy(ctor, {
      construct(target, args, newTarget) {
        const blob = Reflect.construct(target, args, newTarget) as { size: number };
        chargeAllocation(blob.size);
        holdUncounted(blob, blob.size);
        return blob;
      },
    });
  }
}

/** The worker's own timers, captured before the realm's are wrapped. */
export const hostTimers = { setTimeout, setInterval, clearTimeout, clearInterval };

const guestTimers = new Set<{ clear(): void }>();

/**
 * Timers created after lock-down belong to guest code (reached through the realm) or to an
 * engine during a run; none may outlive the run that created them, or a finished run could go on
 * burning CPU with no deadline. `clearGuestTimers` is called when each run ends.
 */
function trackTimers(): void {
  const wrap = <A extends unknown[], T>(create: (...args: A) => T, clear: (t: T) => void) =>
    function tracked(...args: A): T {
      const handle = create(...args);
      const entry = { clear: () => clear(handle) };
      guestTimers.add(entry);
      return handle;
    };
  const g = globalThis as unknown as Record<string, unknown>;
  g.setTimeout = wrap(setTimeout, clearTimeout);
  g.setInterval = wrap(setInterval, clearInterval);
  g.setImmediate = wrap(setImmediate, clearImmediate);
}

export function clearGuestTimers(): void {
  for (const t of guestTimers) t.clear();
  guestTimers.clear();
}

type RegisterHooks = (hooks: { resolve: ReturnType<typeof denyingResolve> }) => unknown;

/**
 * From now on imports fail but those `allowedParents` make. In this thread where Node can
 * (`module.registerHooks`, 22.15+: free), else on a loader thread `register` starts (Node 20:
 * ~60 ms of CPU per worker, paid by every fresh interpreter).
 */
function denyModuleLoading(hooksUrl: URL, allowedParents: string[]): void {
  const registerHooks = (Module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks === "function")
    registerHooks({ resolve: denyingResolve(allowedParents) });
  else register(hooksUrl, { data: { allowedParents } });
}

/**
 * Strips the realm; call after the engine has booted and before guest code runs. `fetch` becomes
 * the one given (the bridge to the trusted side), or nothing.
 */
export function lockDownRealm(
  hooksUrl: URL,
  allowedParents: string[] = [],
  bridgedFetch?: typeof fetch,
): void {
  for (const name of [...NETWORK_GLOBALS, ...CHANNEL_GLOBALS]) {
    Object.defineProperty(globalThis, name, {
      value: name === "fetch" ? bridgedFetch : undefined,
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
  // The collector stays this module's: a guest calling it in a loop would stall its worker. V8
  // makes that global non-configurable but writable, so it can be emptied and frozen.
  if ("gc" in globalThis)
    Object.defineProperty(globalThis, "gc", { value: undefined, writable: false });
  // Facts about the host that guest code has no business reading.
  const facts: Record<string, unknown> = {
    argv: ["node"],
    execArgv: [],
    argv0: "node",
    execPath: "node",
    title: "node",
    report: undefined,
    cwd: () => "/",
  };
  for (const [name, value] of Object.entries(facts)) {
    try {
      Object.defineProperty(process, name, { value, writable: false, configurable: false });
    } catch {
      // Non-configurable in this Node version; nothing secret is lost by leaving it.
    }
  }
  // The ESM hook does not see CommonJS `require` (Emscripten's socket layer calls
  // `require("ws")` lazily), so the CommonJS loader is closed too.
  const cjs = Module as unknown as { _load: unknown; prototype: { require: unknown } };
  cjs._load = deny("require");
  cjs.prototype.require = deny("require");
  denyModuleLoading(hooksUrl, allowedParents);
  trackTimers();
  guardBufferConstructors();
}

/**
 * The realm's intrinsics as they are now: for each of the global object, the standard
 * constructors, their prototypes and the namespace objects, its prototype, whether it is
 * extensible, and each own property's descriptor (values and accessors by identity). A worker
 * whose engine can replace its interpreter (recyclable) serves many runs only while this stays as
 * it was when the worker booted: whatever a run could have planted in the realm (a property on
 * `Object.prototype`, a replaced `JSON.parse`, a new global) shows here.
 */
export type RealmFingerprint = ReadonlyMap<object, ObjectPrint>;

interface ObjectPrint {
  proto: object | null;
  extensible: boolean;
  props: Map<PropertyKey, PropertyDescriptor>;
}

const INTRINSIC_NAMES = [
  "Object",
  "Function",
  "Array",
  "String",
  "Number",
  "Boolean",
  "Symbol",
  "BigInt",
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
  "Promise",
  "RegExp",
  "Date",
  "Map",
  "Set",
  "WeakMap",
  "WeakSet",
  "WeakRef",
  "FinalizationRegistry",
  "ArrayBuffer",
  "SharedArrayBuffer",
  "DataView",
  "Uint8Array",
  "Int8Array",
  "Uint8ClampedArray",
  "Uint16Array",
  "Int16Array",
  "Uint32Array",
  "Int32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "JSON",
  "Math",
  "Reflect",
  "Proxy",
  "Atomics",
  "WebAssembly",
  "TextEncoder",
  "TextDecoder",
  "URL",
  "Buffer",
] as const;

function realmObjects(): object[] {
  const g = globalThis as unknown as Record<string, unknown>;
  const objects = new Set<object>([globalThis]);
  const add = (v: unknown) => {
    if ((typeof v === "object" || typeof v === "function") && v !== null) objects.add(v);
  };
  for (const name of INTRINSIC_NAMES) {
    const value = g[name];
    add(value);
    if (typeof value === "function") add(value.prototype);
  }
  // The prototypes no constructor is named for.
  add(Object.getPrototypeOf(Uint8Array));
  add(Object.getPrototypeOf(Uint8Array.prototype));
  add(Object.getPrototypeOf(function* () {}));
  add(Object.getPrototypeOf(async () => {}));
  add(Object.getPrototypeOf([][Symbol.iterator]()));
  add(Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())));
  for (const ns of ["WebAssembly"]) {
    const space = g[ns] as Record<string, unknown> | undefined;
    for (const key of Object.keys(space ?? {})) {
      add(space?.[key]);
      add((space?.[key] as { prototype?: unknown } | undefined)?.prototype);
    }
  }
  return [...objects];
}

function printOf(object: object): ObjectPrint {
  const props = new Map<PropertyKey, PropertyDescriptor>();
  for (const key of Reflect.ownKeys(object)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
    if (descriptor) props.set(key, descriptor);
  }
  return { proto: Reflect.getPrototypeOf(object), extensible: Reflect.isExtensible(object), props };
}

export function realmFingerprint(): RealmFingerprint {
  return new Map(realmObjects().map((object) => [object, printOf(object)]));
}

/**
 * Whether the realm is as `before` found it. The global object's accessors are compared by key
 * only: Node defines some globals lazily (a getter that replaces itself on first use).
 */
export function realmUnchanged(before: RealmFingerprint): boolean {
  for (const [object, was] of before) {
    const now = printOf(object);
    if (now.proto !== was.proto || now.extensible !== was.extensible) return false;
    if (now.props.size !== was.props.size) return false;
    for (const [key, a] of was.props) {
      const b = now.props.get(key);
      if (!b) return false;
      if (object === globalThis && (a.get || a.set)) continue;
      if (
        !Object.is(a.value, b.value) ||
        a.get !== b.get ||
        a.set !== b.set ||
        a.writable !== b.writable ||
        a.enumerable !== b.enumerable ||
        a.configurable !== b.configurable
      )
        return false;
    }
  }
  return true;
}

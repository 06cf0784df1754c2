// Worker side: the `wasix` language. A run names a WebAssembly module in the workspace (WASIX or
// WASI preview 1, exporting `_start`) and runs it on @wasmer/sdk with arguments, stdin, the
// run's environment and the workspace at /workspace. The sdk's sandbox (its in-memory file
// system) lives as long as this interpreter; each run is a new process in it.
//
// What is trusted here: nothing the module says. Its bytes are parsed for the memory cap
// (memory-cap.ts) and its imports are checked before the sdk sees it: only the WASI and WASIX
// system-call modules (and an imported `env.memory`, which threaded modules need) are allowed,
// so a module cannot reach the sdk's other host bridges (its N-API layer evaluates JavaScript
// in the worker realm). The sdk's network policy is `disabled`: no socket leaves the sandbox.
// The sdk starts worker threads of its own; they are hardened as ours are (wasmer-worker.ts).

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Process, type Sandbox, Wasmer } from "@wasmer/sdk/node";
import type { RunRequest, WorkerInit } from "../../../protocol/messages.js";
import { GUEST_WORKSPACE as ROOT } from "../../../protocol/paths.js";
import { type Engine, type EngineOutcome, type RunContext, stoppedAt } from "../common/engine.js";
import { type GuestEntry, type GuestFs, WorkspaceMirror } from "../common/mirror.js";
import { capMemory, InitialMemoryError, ModuleFormatError } from "../wasi/memory-cap.js";
import { modulePath } from "../wasi/wasm.js";
import { WebcFormatError, webcAtoms } from "./webc-atoms.js";

const MIB = 1024 * 1024;
/** Import modules a guest may use: the system calls, nothing of the sdk's other bridges. */
const SYSCALL_MODULES = new Set([
  "wasi_snapshot_preview1",
  "wasi_unstable",
  "wasix_32v1",
  "wasix_64v1",
]);
/** Threads the sdk may run a guest's threads on; the machine-wide default would be every core. */
const PARALLELISM = 2;

/** The sdk's own files: its entry point and, beside it, the runtime module and worker script. */
const SDK_ENTRY = import.meta.resolve("@wasmer/sdk/node");
const SDK_ADAPTER = new URL("./node-worker-adapter.js", SDK_ENTRY).href;
const SDK_WASM = new URL("../pkg/wasmer_sdk_js_bg.wasm", SDK_ENTRY);
/** Our entry point for the sdk's threads: it hardens each one before the sdk runs in it. */
const SDK_WORKER = new URL("../../engine-host/wasmer-worker.js", import.meta.url).href;

/** The smallest WASI command: `_start` returns at once. Runs once at boot to start the sdk's threads. */
const EMPTY_COMMAND = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02,
  0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x13, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72,
  0x79, 0x02, 0x00, 0x06, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0x00, 0x00, 0x0a, 0x04, 0x01, 0x02,
  0x00, 0x0b,
]);

function failed(ctx: RunContext, message: string, exitCode = 1): EngineOutcome {
  ctx.output.write("stderr", `wasix: ${message}\n`);
  return { exitCode, value: null };
}

/**
 * Starts the sdk's threads from our hardened entry instead of its own script. The sdk creates its
 * threads through `globalThis.Worker` (installing its node:worker_threads adapter only when there
 * is none), so the adapter is installed here first, with the script swapped.
 */
async function useHardenedWorkers(): Promise<void> {
  const { NodeWorkerAdapter } = (await import(SDK_ADAPTER)) as {
    NodeWorkerAdapter: new (url: string | URL, options?: object) => object;
  };
  const sdkWorker = new URL("./node-worker.js", SDK_ENTRY).href;
  class HardenedWorker extends NodeWorkerAdapter {
    constructor(url: string | URL, options?: object) {
      if (String(url) !== sdkWorker) throw new Error(`unexpected worker script ${String(url)}`);
      super(SDK_WORKER, options);
    }
  }
  Object.defineProperty(globalThis, "Worker", { configurable: true, value: HardenedWorker });
}

export async function createEngine(init: WorkerInit): Promise<Engine> {
  const wasm = init.assets.wasmerSdkWasm ?? readFileSync(fileURLToPath(SDK_WASM));
  await useHardenedWorkers();
  capPackageModulesAtCompile();
  const wasmer = await Wasmer.create({ wasm, cache: false, parallelism: PARALLELISM });
  const sandbox = await wasmer.sandboxes.create({ network: { mode: "disabled" } });
  await sandbox.fs.mkdir(ROOT, { recursive: true });
  // Starts the sdk's threads now, while module loading is still open in this realm.
  const warm = await sandbox.installPackage(EMPTY_COMMAND);
  await sandbox.command(warm, [], { cwd: ROOT }).run({ timeoutMs: 30_000, check: false });
  const files = new SdkFiles(sandbox);
  const mirror = new WorkspaceMirror(files);
  return {
    applyFiles: (request: RunRequest) => mirror.apply(request.sync, request.fullSync),
    collectFiles: () => mirror.collect(),
    interrupt: () => void current.process?.kill().catch(() => {}),
    run: (request, ctx) => runModule(sandbox, request, ctx),
  };
}

type SdkPackage = Awaited<ReturnType<Sandbox["installPackage"]>>;

/** Modules whose imports reach beyond the system calls, named for the message (at most five). */
function foreignImports(module: WebAssembly.Module): string[] {
  const foreign = WebAssembly.Module.imports(module).filter(
    (i) => !SYSCALL_MODULES.has(i.module) && !(i.module === "env" && i.kind === "memory"),
  );
  return [...new Set(foreign.map((i) => `${i.module}.${i.name}`))].slice(0, 5);
}

/** Wasmer packages installed in this interpreter's sdk sandbox, by the sha256 of their bytes. */
const installedPackages = new Map<string, SdkPackage>();

const digest = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Package modules by the sha256 of their bytes, with the memory cap written in. A package's
 * modules are inside its WEBC file, which the sdk parses itself, so their bytes cannot be capped
 * before it sees them as a workspace module's are; the sdk compiles them in this realm with
 * `new WebAssembly.Module(bytes)` when a command first runs (measured on 0.16), and that
 * constructor, wrapped here, compiles the capped bytes instead.
 */
const cappedModules = new Map<string, Uint8Array>();

function capPackageModulesAtCompile(): void {
  const Original = WebAssembly.Module;
  const bytesOf = (source: unknown): Uint8Array | null =>
    source instanceof ArrayBuffer
      ? new Uint8Array(source)
      : ArrayBuffer.isView(source)
        ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
        : null;
  WebAssembly.Module = new Proxy(Original, {
    construct(target, args, newTarget) {
      const bytes = cappedModules.size > 0 ? bytesOf(args[0]) : null;
      const capped = bytes && cappedModules.get(digest(bytes));
      return Reflect.construct(target, capped ? [capped, ...args.slice(1)] : args, newTarget);
    },
  });
}

/**
 * The sdk package for a run's Wasmer package: its atoms' imports checked as a workspace
 * module's are (only system calls) and their memory capped at `memoryMb` (when the sdk compiles
 * them: see `cappedModules`), then installed from the bytes (the sdk reads the WEBC file and
 * reaches no network for it). A package is installed once per interpreter, so its modules keep
 * the cap of the first run that used it there. Returns an outcome when it cannot run.
 */
async function packageFor(
  sandbox: Sandbox,
  blob: NonNullable<RunRequest["wasmerPackage"]>,
  memoryMb: number,
  ctx: RunContext,
): Promise<SdkPackage | EngineOutcome> {
  const known = installedPackages.get(blob.sha256);
  if (known) return known;
  const label = `${blob.name}@${blob.version}`;
  const caps = new Map<string, Uint8Array>();
  try {
    for (const [name, bytes] of webcAtoms(blob.data)) {
      const module = await WebAssembly.compile(bytes);
      const names = foreignImports(module);
      if (names.length > 0)
        return failed(
          ctx,
          `${label}: module ${name} imports ${names.join(", ")}; only WASI and WASIX system calls are provided`,
          126,
        );
      // A module that imports its memory gets it from the sdk, sized by what the sdk read in
      // the package: capping the import would not link. Its own declared maximum holds.
      if (!WebAssembly.Module.imports(module).some((i) => i.kind === "memory"))
        caps.set(digest(bytes), capMemory(bytes, memoryMb * MIB));
    }
  } catch (error) {
    if (error instanceof InitialMemoryError) return stoppedAt("memory_limit");
    const why = error instanceof WebcFormatError ? error.message : String(error);
    return failed(ctx, `${label} cannot run: ${why}`, 126);
  }
  for (const [hash, capped] of caps) cappedModules.set(hash, capped);
  try {
    const pkg = await sandbox.installPackage(blob.data);
    installedPackages.set(blob.sha256, pkg);
    return pkg;
  } catch (error) {
    return failed(
      ctx,
      `${label} cannot run: ${error instanceof Error ? error.message : error}`,
      126,
    );
  }
}

/** The guest process of the run in progress, for `interrupt` (output cap, cancel). */
const current: { process: Process | null } = { process: null };

async function runModule(
  sandbox: Sandbox,
  request: RunRequest,
  ctx: RunContext,
): Promise<EngineOutcome> {
  if (request.wasmerPackage) {
    const pkg = await packageFor(sandbox, request.wasmerPackage, request.limits.memoryMb, ctx);
    if (!("commands" in pkg)) return pkg;
    const name = request.code.trim();
    const label = `${request.wasmerPackage.name}@${request.wasmerPackage.version}`;
    if (name === "" && pkg.entrypoint === undefined)
      return failed(
        ctx,
        `${label} has no entrypoint; name one of its commands: ${pkg.commands.join(", ")}`,
        127,
      );
    if (name !== "" && !pkg.commands.includes(name))
      return failed(
        ctx,
        `${label} has no command "${name}"; its commands: ${pkg.commands.join(", ")}`,
        127,
      );
    return spawn(sandbox, name === "" ? pkg : pkg.command(name), request, ctx);
  }
  const path = modulePath(request.code);
  if (path === null)
    return failed(ctx, `"${request.code}" is not a workspace path to a .wasm module`, 2);
  let bytes: Uint8Array;
  try {
    bytes = await sandbox.fs.readFile(`${ROOT}/${path}`);
  } catch {
    return failed(ctx, `${path}: no such file in the workspace`, 127);
  }
  let capped: Uint8Array;
  try {
    capped = capMemory(bytes, request.limits.memoryMb * MIB);
    const names = foreignImports(await WebAssembly.compile(capped));
    if (names.length > 0) {
      return failed(
        ctx,
        `${path} imports ${names.join(", ")}; only WASI and WASIX system calls are provided`,
        126,
      );
    }
  } catch (error) {
    if (error instanceof InitialMemoryError) return stoppedAt("memory_limit");
    const why = error instanceof ModuleFormatError ? error.message : String(error);
    return failed(ctx, `${path} is not a valid WebAssembly module: ${why}`, 126);
  }
  let pkg: SdkPackage;
  try {
    // Installed by content: the same module again is the same package, not a second copy.
    pkg = await sandbox.installPackage(capped);
  } catch (error) {
    return failed(
      ctx,
      `${path} cannot run: ${error instanceof Error ? error.message : error}`,
      126,
    );
  }
  return spawn(sandbox, pkg, request, ctx);
}

/** Runs `selector` (a package or one of its commands) as a new process in the workspace. */
async function spawn(
  sandbox: Sandbox,
  selector: Parameters<Sandbox["command"]>[0],
  request: RunRequest,
  ctx: RunContext,
): Promise<EngineOutcome> {
  const remaining = Math.max(1, ctx.deadline - Date.now());
  const env = { HOME: ROOT, PWD: ROOT, ...request.env };
  const process = await sandbox
    .command(selector, request.args ?? [], { cwd: ROOT, env })
    .spawn({ timeoutMs: remaining, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  current.process = process;
  try {
    if (process.stdin) {
      if (request.stdin !== "") await process.stdin.write(request.stdin);
      await process.stdin.close();
    }
    // Streamed as it comes; past the output cap the sink asks to stop and the process is killed.
    const pump = async (stream: "stdout" | "stderr") => {
      const source = process[stream];
      if (!source) return;
      const decoder = new TextDecoder();
      for await (const chunk of source) {
        ctx.output.write(stream, decoder.decode(chunk, { stream: true }));
        if (ctx.stopRequested) break;
      }
      ctx.output.write(stream, decoder.decode());
    };
    await Promise.all([pump("stdout"), pump("stderr")]);
    if (ctx.stopRequested) await process.kill();
    const output = await process.wait({ check: false });
    if (output.reason === "timeout") return stoppedAt("timeout");
    return { exitCode: output.exitCode, value: null };
  } finally {
    current.process = null;
  }
}

/**
 * The sdk's file system as the mirror needs it. The sdk reports no modification times, so a file
 * counts as changed when its content digest changes; the time given is the one the trusted side
 * sent with it, or when this side first saw the new content.
 */
class SdkFiles implements GuestFs {
  private readonly seen = new Map<string, { digest: string; mtimeMs: number }>();

  constructor(private readonly sandbox: Sandbox) {}

  async list(): Promise<Map<string, GuestEntry>> {
    const out = new Map<string, GuestEntry>();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await this.sandbox.fs.readDir(`${ROOT}/${dir}`)) {
        const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
        if (entry.kind === "directory") {
          out.set(rel, { type: "dir", size: 0, mtimeMs: 0 });
          await walk(rel);
        } else {
          const data = await this.read(rel);
          const hash = digest(data);
          let known = this.seen.get(rel);
          if (known?.digest !== hash) {
            known = { digest: hash, mtimeMs: Date.now() };
            this.seen.set(rel, known);
          }
          out.set(rel, { type: "file", size: data.length, mtimeMs: known.mtimeMs });
        }
      }
    };
    await walk("");
    return out;
  }

  read(path: string): Promise<Uint8Array> {
    return this.sandbox.fs.readFile(`${ROOT}/${path}`);
  }

  async write(path: string, data: Uint8Array, mtimeMs: number): Promise<void> {
    await this.sandbox.fs.writeFile(`${ROOT}/${path}`, data);
    this.seen.set(path, { digest: digest(data), mtimeMs });
  }

  async mkdir(path: string): Promise<void> {
    await this.sandbox.fs.mkdir(`${ROOT}/${path}`, { recursive: true });
  }

  async remove(path: string): Promise<void> {
    try {
      await this.sandbox.fs.remove(`${ROOT}/${path}`, { recursive: true });
    } catch {
      // Already gone.
    }
    for (const key of [...this.seen.keys()])
      if (key === path || key.startsWith(`${path}/`)) this.seen.delete(key);
  }
}

// Untrusted side: the engine host process. The server starts it (see src/jail) under Node's
// permission model with an empty environment; it owns the worker pools and the interpreters
// that sandboxes keep between runs, and talks to the server only over the IPC channel.
// It holds no workspace: files arrive with each run and changes leave with its result.

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { capMemory } from "../engines/wasi/memory-cap.js";
import type {
  EngineAssets,
  EngineLanguage,
  EngineResult,
  HostEvent,
  HostRequest,
} from "../protocol/messages.js";
import type { Interpreter } from "./interpreter.js";
import { type PoolPolicy, type PoolSizes, Pools } from "./pool.js";

export interface HostConfig {
  pool: PoolSizes;
  memoryMb: number;
  pyodideDir: string;
  quickjsWasm: string;
  pythonSnapshot: string | null;
  poolPolicy: PoolPolicy;
}

const config = JSON.parse(process.argv[2] ?? "{}") as HostConfig;

function send(event: HostEvent): void {
  process.send?.(event);
}
const log = (message: string) => send({ type: "log", level: "warn", message });

/**
 * Compiles each engine's WebAssembly once for the whole host: workers instantiate the shared
 * `WebAssembly.Module` instead of compiling their own copy, which saves boot time and memory.
 */
async function loadAssets(): Promise<EngineAssets> {
  const assets: EngineAssets = { pyodideDir: config.pyodideDir };
  const compile = async (file: string) => {
    try {
      return await WebAssembly.compile(readFileSync(file));
    } catch (error) {
      log(`could not precompile ${file}, workers will compile their own: ${String(error)}`);
      return undefined;
    }
  };
  const [pythonWasm, quickjsWasm] = await Promise.all([
    compile(path.join(config.pyodideDir, "pyodide.asm.wasm")),
    compile(config.quickjsWasm),
  ]);
  if (pythonWasm) assets.pythonWasm = pythonWasm;
  if (quickjsWasm) assets.quickjsWasm = quickjsWasm;
  loadRuby(assets);
  if (config.pythonSnapshot) {
    try {
      // Shared read-mostly with the workers; each copies it privately before booting and drops
      // its reference, so no guest can reach the bytes the next interpreter boots from.
      const bytes = readFileSync(config.pythonSnapshot);
      const shared = new SharedArrayBuffer(bytes.length);
      new Uint8Array(shared).set(bytes);
      assets.pythonSnapshot = shared;
    } catch (error) {
      log(`python snapshot unreadable, booting without it: ${String(error)}`);
    }
  }
  return assets;
}

/**
 * Ruby's module (ruby+stdlib.wasm, ~30 MB) is read once: its bytes are shared with the workers
 * (for the few that need another memory cap) and it is compiled once with its memory capped at
 * the pools' `memoryMb`. Found from the installed package, which the engine host may read (L2).
 */
function loadRuby(assets: EngineAssets): void {
  try {
    const file = fileURLToPath(import.meta.resolve("@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm"));
    const bytes = readFileSync(file);
    const shared = new SharedArrayBuffer(bytes.length);
    new Uint8Array(shared).set(bytes);
    assets.rubyWasmBytes = shared;
    assets.rubyWasm = new WebAssembly.Module(capMemory(bytes, config.memoryMb * 1024 * 1024));
    assets.rubyWasmMemoryMb = config.memoryMb;
  } catch (error) {
    log(`Ruby is unavailable: ${String(error)}`);
  }
}

/**
 * One-shot interpreters of these engines go back to the pool, as a brand-new instance in the
 * same worker, after a run that ended normally; their guests cannot reach the worker realm.
 * Python's can (Pyodide hands guests the realm), so its workers are always destroyed. QuickJS
 * would qualify, but a new QuickJS instance makes Emscripten import Node modules lazily, which L1
 * refuses after boot, so its workers are destroyed too. A run that hit a limit or was cancelled
 * always destroys its worker. `wasm` runs a fresh WebAssembly instance per run anyway, and its
 * reset gives it a new in-memory workspace. Ruby's reset would mean a new ~0.7 s boot: not done.
 */
const RECYCLABLE = new Set<EngineLanguage>(["bash", "wasm"]);

const pools = new Pools(config.pool, config.memoryMb, await loadAssets(), log, config.poolPolicy);
const sessions = new Map<string, Interpreter>();
const running = new Map<number, Interpreter>();
/** Runs received and not yet answered. */
const pending = new Set<number>();
/** Runs cancelled before their interpreter was ready (still booting or queued in `take`). */
const cancelledEarly = new Set<number>();

async function run(request: Extract<HostRequest, { type: "run" }>): Promise<void> {
  const { id, session, language } = request;
  let interpreter = session ? sessions.get(session) : undefined;
  if (interpreter && !interpreter.alive) {
    sessions.delete(session!);
    interpreter = undefined;
  }
  const fresh = interpreter === undefined;
  const onLoan = !session && RECYCLABLE.has(language);
  interpreter ??= await pools.take(language, request.request.limits.memoryMb, onLoan);
  if (cancelledEarly.delete(id)) {
    if (fresh) interpreter.dispose();
    if (onLoan) pools.lost(interpreter);
    send({ type: "result", id, result: cancelledResult() });
    return;
  }
  if (session) sessions.set(session, interpreter);
  running.set(id, interpreter);
  let recycled = false;
  try {
    const result = await interpreter.run(id, request.request, (stream, text) =>
      send({ type: "output", id, stream, text }),
    );
    if (fresh && session && !request.request.fullSync) result.stateLost = true;
    send({ type: "result", id, result });
    if (onLoan && (result.status === "ok" || result.status === "error")) {
      recycled = await interpreter.recycle();
      if (recycled) pools.giveBack(interpreter);
    }
  } finally {
    running.delete(id);
    if (onLoan && !recycled) pools.lost(interpreter);
    if ((!session && !recycled) || !interpreter.alive) {
      interpreter.dispose();
      if (session && sessions.get(session) === interpreter) sessions.delete(session);
    }
  }
}

function cancelledResult(): EngineResult {
  return {
    status: "cancelled",
    stdout: "",
    stderr: "",
    exitCode: 130,
    value: null,
    truncated: false,
    message: "cancelled before it started",
    changes: { files: [], dirs: [], removed: [] },
    displays: [],
  };
}

process.on("message", (message: HostRequest) => {
  switch (message?.type) {
    case "run":
      pending.add(message.id);
      run(message)
        .catch((error: unknown) => send({ type: "failed", id: message.id, message: String(error) }))
        .finally(() => {
          pending.delete(message.id);
          cancelledEarly.delete(message.id);
        });
      break;
    case "cancel": {
      const interpreter = running.get(message.id);
      if (interpreter) interpreter.cancel();
      else if (pending.has(message.id)) cancelledEarly.add(message.id);
      break;
    }
    case "dispose": {
      const interpreter = sessions.get(message.session);
      sessions.delete(message.session);
      interpreter?.dispose();
      break;
    }
    case "ping":
      send({ type: "pong", id: message.id });
      break;
    case "stats": {
      const mem = process.memoryUsage();
      send({
        type: "stats",
        id: message.id,
        stats: {
          workers: sessions.size + Object.values(pools.counts()).reduce((a, b) => a + b, 0),
          pooled: pools.counts() as Record<EngineLanguage, number>,
          sessions: sessions.size,
          rssBytes: mem.rss,
          heapUsedBytes: mem.heapUsed,
        },
      });
      break;
    }
  }
});

// The server is our only reason to live: when the channel closes, go.
process.on("disconnect", () => {
  pools.close();
  process.exit(0);
});

pools.start();
send({ type: "ready", pid: process.pid, node: process.version });

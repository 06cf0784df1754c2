// Untrusted side: the engine host process. The server starts it (see src/supervisor/wasm-host.ts)
// under Node's permission model with an empty environment, one process per tenant: one stateful
// sandbox, or one principal's one-shot runs (each in a fresh interpreter: see pool.ts), so no two
// principals' guest code ever shares a process. It talks to the server only over the IPC channel.
// It holds no workspace: files arrive with each run and changes leave with its result.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_EXIT_CODES } from "../../protocol/endings.js";
import type {
  EngineAssets,
  EngineLanguage,
  EngineResult,
  HostConfig,
  HostEvent,
  HostRequest,
  RestoreAnswer,
  StateAnswer,
} from "../../protocol/messages.js";
import { NO_INTERPRETER } from "../../protocol/messages.js";
import { capMemory } from "../engines/wasi/memory-cap.js";
import type { Interpreter } from "./interpreter.js";
import { Pools } from "./pool.js";

const config = JSON.parse(process.argv[2] ?? "{}") as HostConfig;

function send(event: HostEvent): void {
  process.send?.(event);
}
const log = (message: string) => send({ type: "log", level: "warn", message });

/**
 * Each engine's WebAssembly is compiled once per host, when a language is first needed: workers
 * instantiate the shared `WebAssembly.Module` instead of compiling their own copy. A host serves
 * one sandbox, which may never use most languages, so nothing is compiled ahead of need.
 */
const compiled = new Map<string, Promise<WebAssembly.Module | undefined>>();
/** A hash of each compiled file: names an engine build, so a memory image restores into its own. */
const builds = new Map<string, string>();

function compileOnce(file: string): Promise<WebAssembly.Module | undefined> {
  let module = compiled.get(file);
  if (!module) {
    module = (async () => {
      try {
        const bytes = readFileSync(file);
        builds.set(file, createHash("sha256").update(bytes).digest("hex").slice(0, 32));
        return await WebAssembly.compile(bytes);
      } catch (error) {
        log(`could not precompile ${file}, workers will compile their own: ${String(error)}`);
        return undefined;
      }
    })();
    compiled.set(file, module);
  }
  return module;
}

let quickjsImage: SharedArrayBuffer | undefined | null = null;

/**
 * The QuickJS boot image, read once and shared read-only with the JavaScript workers, which copy
 * it into their interpreter's memory and drop their reference before any guest code runs.
 */
function bootImage(): SharedArrayBuffer | undefined {
  if (quickjsImage !== null) return quickjsImage;
  quickjsImage = undefined;
  if (config.quickjsImage) {
    try {
      const bytes = readFileSync(config.quickjsImage);
      quickjsImage = new SharedArrayBuffer(bytes.length);
      new Uint8Array(quickjsImage).set(bytes);
    } catch (error) {
      log(`QuickJS boot image unreadable, booting without it: ${String(error)}`);
    }
  }
  return quickjsImage;
}

/** What a worker of `language` needs to boot, loaded on first use. */
async function assetsFor(language: EngineLanguage): Promise<EngineAssets> {
  const assets: EngineAssets = { pyodideDir: config.pyodideDir };
  if (language === "python") {
    const pythonWasm = await compileOnce(path.join(config.pyodideDir, "pyodide.asm.wasm"));
    if (pythonWasm) assets.pythonWasm = pythonWasm;
    // Read by each worker itself, privately (see EngineAssets.pythonSnapshot).
    if (config.pythonSnapshot) assets.pythonSnapshot = config.pythonSnapshot;
  } else if (language === "javascript" || language === "typescript") {
    const quickjsWasm = await compileOnce(config.quickjsWasm);
    if (quickjsWasm) assets.quickjsWasm = quickjsWasm;
    const build = builds.get(config.quickjsWasm);
    if (build) assets.quickjsBuild = build;
    const image = bootImage();
    if (image) assets.quickjsImage = image;
  } else if (language === "ruby") {
    Object.assign(assets, ruby());
  } else if (language === "wasix") {
    const sdkWasm = await compileOnce(
      fileURLToPath(
        new URL("../pkg/wasmer_sdk_js_bg.wasm", import.meta.resolve("@wasmer/sdk/node")),
      ),
    );
    if (sdkWasm) assets.wasmerSdkWasm = sdkWasm;
  }
  return assets;
}

let rubyAssets: Partial<EngineAssets> | null = null;

/**
 * Ruby's module (ruby+stdlib.wasm, ~30 MB) is read once: its bytes are shared with the workers
 * (for the few that need another memory cap) and it is compiled once with its memory capped at
 * the pools' `memoryMb`. Found from the installed package, which the engine host may read (L2).
 */
function ruby(): Partial<EngineAssets> {
  if (rubyAssets) return rubyAssets;
  rubyAssets = {};
  try {
    const file = fileURLToPath(import.meta.resolve("@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm"));
    const bytes = readFileSync(file);
    const shared = new SharedArrayBuffer(bytes.length);
    new Uint8Array(shared).set(bytes);
    rubyAssets = {
      rubyWasmBytes: shared,
      rubyWasm: new WebAssembly.Module(capMemory(bytes, config.memoryMb * 1024 * 1024)),
      rubyWasmMemoryMb: config.memoryMb,
    };
  } catch (error) {
    log(`Ruby is unavailable: ${String(error)}`);
  }
  return rubyAssets;
}

const pools = new Pools(config.pool, config.memoryMb, assetsFor, log);
const sessions = new Map<string, Interpreter>();
const running = new Map<number, Interpreter>();
/** Runs received and not yet answered. */
const pending = new Set<number>();
/** Runs cancelled before their interpreter was ready (still booting). */
const cancelledEarly = new Set<number>();

async function run(request: Extract<HostRequest, { type: "run" }>): Promise<void> {
  const { id, session, language } = request;
  let interpreter = session ? sessions.get(session) : undefined;
  // A session's interpreter that is dead, or still busy with a run the trusted side has already
  // ended (its timeout's slow path: the kill here had not landed when the next run came), is
  // replaced: the run gets a fresh interpreter and is told its state was lost.
  if (interpreter && (!interpreter.alive || interpreter.busy)) {
    sessions.delete(session!);
    interpreter.dispose();
    interpreter = undefined;
  }
  const fresh = interpreter === undefined;
  // A one-shot counts towards its language's demand from the moment it asks for an interpreter.
  const done = session ? () => undefined : pools.inUse(language);
  try {
    interpreter ??= await pools.take(language, request.request.limits.memoryMb);
  } catch (error) {
    done();
    throw error;
  }
  if (cancelledEarly.delete(id)) {
    done();
    if (fresh && session) interpreter.dispose();
    else if (fresh) void pools.giveBack(language, interpreter, false);
    send({ type: "result", id, result: cancelledResult() });
    return;
  }
  if (session) sessions.set(session, interpreter);
  running.set(id, interpreter);
  // Nothing of a one-shot may remain: a recyclable worker replaces its interpreter after it.
  const recycle = !session && interpreter.recyclable;
  try {
    const result = await interpreter.run(
      id,
      request.request,
      (stream, text) => send({ type: "output", id, stream, text }),
      (req, netRequest) => send({ type: "net", id, req, request: netRequest }),
      recycle,
    );
    if (fresh && session && !request.request.fullSync) result.stateLost = true;
    // What a kill could not stop must not meet the tenant's next run: on `retire`, the trusted
    // side ends this process before it sends anything more.
    const retire = interpreter.retiresHost;
    if (retire) result.stateLost = true;
    send({ type: "result", id, result, ...(retire ? { retire } : {}) });
  } finally {
    running.delete(id);
    done();
    if (!session) void pools.giveBack(language, interpreter, recycle && !interpreter.retiresHost);
    else if (!interpreter.alive) {
      interpreter.dispose();
      if (sessions.get(session) === interpreter) sessions.delete(session);
    }
  }
}

/** Captures a session's interpreter state between runs (the trusted side checks the answer). */
async function capture(request: Extract<HostRequest, { type: "capture" }>): Promise<void> {
  const interpreter = sessions.get(request.session);
  const answer: StateAnswer =
    interpreter?.alive && !interpreter.busy
      ? await interpreter.capture(request.maxBytes)
      : { captured: false, reason: NO_INTERPRETER };
  send({ type: "state", id: request.id, answer });
}

/** A fresh interpreter with a captured state put back becomes the session's. */
async function restore(request: Extract<HostRequest, { type: "restore" }>): Promise<void> {
  const { id, session, language, state, memoryMb, wheels } = request;
  let answer: RestoreAnswer;
  const interpreter = await pools.take(language, memoryMb);
  try {
    answer = await interpreter.restore(state, memoryMb, wheels);
  } catch (error) {
    answer = { restored: false, notKept: [], message: String(error) };
  }
  if (answer.restored && interpreter.alive) {
    const before = sessions.get(session);
    sessions.set(session, interpreter);
    if (before && before !== interpreter) before.dispose();
  } else {
    interpreter.dispose();
    answer = { ...answer, restored: false };
  }
  send({ type: "restored", id, answer });
}

function cancelledResult(): EngineResult {
  return {
    status: "cancelled",
    stdout: "",
    stderr: "",
    exitCode: RUN_EXIT_CODES.cancelled,
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
    case "net-reply":
      running.get(message.id)?.netReply(message.id, message.req, message.reply);
      break;
    case "dispose": {
      const interpreter = sessions.get(message.session);
      sessions.delete(message.session);
      interpreter?.dispose();
      break;
    }
    case "capture":
      capture(message).catch((error: unknown) =>
        send({
          type: "state",
          id: message.id,
          answer: { captured: false, reason: String(error).slice(0, 1000) },
        }),
      );
      break;
    case "restore":
      restore(message).catch((error: unknown) =>
        send({
          type: "restored",
          id: message.id,
          answer: { restored: false, notKept: [], message: String(error).slice(0, 1000) },
        }),
      );
      break;
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
          pooled: pools.counts(),
          sessions: sessions.size,
          rssBytes: mem.rss,
          heapUsedBytes: mem.heapUsed,
        },
      });
      break;
    }
  }
});

/**
 * The backstop behind every per-worker memory check: memory a guest holds where no wrapper sees
 * it still shows in the process's resident size. This process serves one tenant, so when it holds
 * more than its interpreters may use in all (plus a fixed allowance for Node and the engines'
 * compiled code), every interpreter of that tenant is ended.
 */
const HOST_ALLOWANCE_MB = 320;
/**
 * What an interpreter holds beyond its guest's memory, where that is more than the allowance
 * covers: @wasmer/sdk instantiates its 4.7 MB runtime in the worker and in each of its own
 * threads (measured: a host with a booted wasix interpreter is ~110 MiB over one with a wasm
 * one, 178 vs 75 MiB on Node 20 and 212 vs 100 MiB on Node 24).
 */
const INTERPRETER_ALLOWANCE_MB: Partial<Record<EngineLanguage, number>> = { wasix: 192 };
const MEMORY_CHECK_MS = 500;
setInterval(() => {
  const live = new Set([...sessions.values(), ...running.values()].filter((i) => i.alive));
  if (live.size === 0) return;
  let ceilingMb = HOST_ALLOWANCE_MB;
  for (const interpreter of live)
    ceilingMb += interpreter.memoryMb + (INTERPRETER_ALLOWANCE_MB[interpreter.language] ?? 0);
  if (process.memoryUsage.rss() <= ceilingMb * 1024 * 1024) return;
  log(`resident memory passed ${ceilingMb} MiB; ending this tenant's interpreters`);
  for (const interpreter of live) interpreter.killForMemory();
}, MEMORY_CHECK_MS).unref();

// The server is our only reason to live: when the channel closes, go.
process.on("disconnect", () => {
  pools.close();
  process.exit(0);
});

// Ready once the warm interpreters are: a host handed to a tenant answers its first run at once.
await pools.start();
send({ type: "ready", pid: process.pid, node: process.version });

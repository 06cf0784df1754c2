// Untrusted side: the entry point of one engine worker thread. It hardens the realm (L1), boots
// the engine named in its init data, and then serves run requests one at a time. Deadlines are
// enforced outside, by the engine host terminating this thread; here we only stop early where an
// engine can (output cap) and turn what happened into an EngineResult.

import { parentPort, workerData } from "node:worker_threads";
import type {
  Display,
  EngineResult,
  FromWorker,
  RestoreAnswer,
  RunRequest,
  StateAnswer,
  StateImage,
  ToWorker,
  WheelBlob,
  WorkerInit,
} from "../../protocol/messages.js";
import { type Engine, type EngineFactory, isRecyclable } from "../engines/common/engine.js";
import { createNetBridge, type NetCall, realmFetch } from "../engines/common/net.js";
import { OutputSink } from "../engines/common/output.js";

/** More display() calls than this in one run are dropped (the trusted side caps sizes). */
const MAX_DISPLAYS = 100;
/** Display data past this many bytes in one run is dropped here (the trusted side's budget is smaller). */
const MAX_DISPLAY_BYTES = 16 * 1024 * 1024;

import { runDeadline } from "../../protocol/deadlines.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import {
  clearGuestTimers,
  hostTimers,
  installBindingShim,
  installMemoryGuard,
  lockDownRealm,
  memoryGuard,
  overMemoryLimit,
  type RealmFingerprint,
  realmFingerprint,
  realmUnchanged,
} from "./harden.js";

const port = parentPort!;
const init = workerData as WorkerInit;

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

const netBridge = createNetBridge(init.net, send);
/** The network of the run in progress (null between runs: a leftover timer gets no network). */
let currentNet: NetCall | null = null;

const FACTORIES: Record<WorkerInit["language"], () => Promise<EngineFactory>> = {
  python: async () => (await import("../engines/python/engine.js")).createEngine,
  javascript: async () => (await import("../engines/javascript/engine.js")).createEngine,
  typescript: async () => (await import("../engines/javascript/engine.js")).createEngine,
  bash: async () => (await import("../engines/bash/engine.js")).createEngine,
  ruby: async () => (await import("../engines/wasi/ruby.js")).createEngine,
  wasm: async () => (await import("../engines/wasi/wasm.js")).createEngine,
  wasix: async () => (await import("../engines/wasix/engine.js")).createEngine,
};

/**
 * Engines that import modules after boot, and the tree they load from: just-bash loads each
 * command (and that command's dependencies) on first use, from its node_modules tree.
 */
const justBash = import.meta.resolve("just-bash");
const LAZY_LOADING_PACKAGES: Record<WorkerInit["language"], string[]> = {
  bash: [justBash.slice(0, justBash.lastIndexOf("/node_modules/") + "/node_modules/".length)],
  javascript: [],
  typescript: [],
  python: [],
  ruby: [],
  wasm: [],
  wasix: [],
};

async function boot(): Promise<Engine> {
  installMemoryGuard();
  installBindingShim();
  memoryGuard.limitBytes = init.memoryMb * 1024 * 1024;
  const engine = await (await FACTORIES[init.language]())(init);
  // The snapshot copy was needed to boot; keeping it would count against the guest's memory.
  delete init.assets.pythonSnapshot;
  delete init.assets.rubyWasmBytes;
  delete init.assets.quickjsImage;
  lockDownRealm(
    new URL("./deny-modules.js", import.meta.url),
    LAZY_LOADING_PACKAGES[init.language],
    realmFetch(() => currentNet),
  );
  if (isRecyclable(engine)) bootRealm = realmFingerprint();
  return engine;
}

/** The realm as it was handed its first run: a recycled worker must still match it. */
let bootRealm: RealmFingerprint | null = null;

/**
 * Replaces the interpreter after a run nothing of which may remain. The engine's guests cannot
 * reach this realm; if the realm changed anyway (an engine bug a guest found), the worker is not
 * reused: it ends, and its engine host boots another.
 */
async function recycle(engine: Engine, id: number): Promise<void> {
  if (!isRecyclable(engine) || !bootRealm || !realmUnchanged(bootRealm)) {
    process.exit(EXIT_NOT_RECYCLED);
  }
  try {
    await engine.reset();
  } catch {
    process.exit(EXIT_NOT_RECYCLED);
  }
  send({ type: "recycled", id });
}

/** A worker that could not be handed on after a recycle run ends with this code. */
const EXIT_NOT_RECYCLED = 75;
/** A worker that ends itself over memory or with its state lost: a worker's code, not a run's. */
const EXIT_OVER_MEMORY = 137;

/** Asks the run in progress to stop (a cancel): engines that yield to the event loop see it. */
let stopCurrent: (() => void) | null = null;

async function serve(engine: Engine, id: number, request: RunRequest): Promise<EngineResult> {
  memoryGuard.limitBytes = request.limits.memoryMb * 1024 * 1024;
  memoryGuard.hit = false;
  let stopRequested = false;
  const stop = () => {
    stopRequested = true;
    engine.interrupt();
  };
  stopCurrent = stop;
  const output = new OutputSink(
    request.limits.maxOutputBytes,
    (stream, text) => send({ type: "output", id, stream, text }),
    stop,
  );
  await engine.applyFiles(request);
  const deadline = runDeadline(request);
  const net = netBridge(id, deadline);
  currentNet = net;
  const displays: Display[] = [];
  let displayBytes = 0;
  let displaysDropped = false;
  const ctx = {
    output,
    display: (item: Display) => {
      const size = item.text.length + (item.data?.length ?? 0);
      if (displays.length >= MAX_DISPLAYS || displayBytes + size > MAX_DISPLAY_BYTES) {
        if (!displaysDropped)
          output.write("stderr", "polybox: display() output past the run's limit was dropped\n");
        displaysDropped = true;
        return;
      }
      displayBytes += size;
      displays.push(item);
    },
    deadline,
    net,
    get stopRequested() {
      return stopRequested;
    },
  };
  let outcome: Awaited<ReturnType<Engine["run"]>>;
  try {
    outcome = await engine.run(request, ctx);
  } catch (error) {
    // An engine bug, not a guest error: report it as an error result rather than dying.
    output.write("stderr", `polybox: engine failure: ${String(error)}\n`);
    outcome = { exitCode: 1, value: null };
  }
  currentNet = null;
  output.flush();
  clearGuestTimers();
  const changes = await engine.collectFiles();
  let status: EngineResult["status"] = outcome.status ?? (outcome.exitCode === 0 ? "ok" : "error");
  const overMemory = overMemoryLimit(request.limits.memoryMb * 1024 * 1024);
  if (memoryGuard.hit || overMemory) status = "memory_limit";
  else if (output.overflowed) status = "output_limit";
  const message = outcome.message ?? limitMessage(status, request.limits);
  return {
    status,
    stdout: output.text.stdout,
    stderr: output.text.stderr,
    exitCode: status === "ok" || status === "error" ? outcome.exitCode : outcome.exitCode || 1,
    value: status === "ok" ? outcome.value : null,
    truncated: output.truncated || status === "output_limit",
    ...(message ? { message } : {}),
    // An interpreter that hit its memory limit may still hold what filled it (a global array,
    // buffers in the realm) and would fail the next run the same way: the worker ends itself
    // after replying, and the result says its state is lost.
    ...(status === "memory_limit" || outcome.stateLost ? { stateLost: true } : {}),
    changes,
    displays,
  };
}

/** Between runs nothing may grow: a guest timer allocating in the background ends the worker. */
function watchIdleMemory(limitBytes: () => number): void {
  hostTimers
    .setInterval(() => {
      if (!busy && overMemoryLimit(limitBytes())) process.exit(EXIT_OVER_MEMORY);
    }, 1_000)
    .unref();
}

let busy = false;

/** Answers "capture your state": between runs, in the run queue's order. */
async function capture(engine: Engine, message: { id: number; maxBytes: number }): Promise<void> {
  busy = true;
  let answer: StateAnswer;
  try {
    answer = engine.captureState
      ? await engine.captureState(message.maxBytes)
      : { captured: false, reason: `${init.language} interpreters are not captured` };
  } catch (error) {
    answer = { captured: false, reason: `the capture failed: ${String(error)}` };
  } finally {
    busy = false;
  }
  // The bytes move to the engine host rather than being copied: the image may be large.
  const buffer = answer.captured ? answer.data.buffer : null;
  send(
    { type: "state", id: message.id, answer },
    buffer instanceof ArrayBuffer && answer.captured && answer.data.byteLength === buffer.byteLength
      ? [buffer]
      : [],
  );
}

/** Answers "restore this state" (this interpreter has run no guest code yet). */
async function restore(
  engine: Engine,
  message: { id: number; state: StateImage; memoryMb: number; wheels?: WheelBlob[] },
): Promise<void> {
  busy = true;
  memoryGuard.limitBytes = message.memoryMb * 1024 * 1024;
  lastLimit = memoryGuard.limitBytes;
  let answer: RestoreAnswer;
  try {
    if (!engine.restoreState) throw new Error(`${init.language} interpreters are not restored`);
    const notKept = await engine.restoreState(message.state, message.wheels ?? []);
    answer = { restored: true, notKept: notKept.slice(0, 1000).map((n) => n.slice(0, 300)) };
  } catch (error) {
    answer = { restored: false, notKept: [], message: String(error).slice(0, 1000) };
  } finally {
    busy = false;
  }
  send({ type: "restored", id: message.id, answer });
}

let lastLimit = init.memoryMb * 1024 * 1024;

boot().then(
  (engine) => {
    let queue = Promise.resolve();
    port.on("message", (message: ToWorker) => {
      if (message?.type === "interrupt") {
        stopCurrent?.();
        return;
      }
      if (message?.type === "capture" || message?.type === "restore") {
        queue = queue.then(() =>
          (message.type === "capture" ? capture : restore)(engine, message as never),
        );
        return;
      }
      if (message?.type !== "run") return;
      queue = queue.then(async () => {
        busy = true;
        lastLimit = message.request.limits.memoryMb * 1024 * 1024;
        const result = await serve(engine, message.id, message.request);
        stopCurrent = null;
        busy = false;
        send({ type: "result", id: message.id, result });
        if (result.stateLost) hostTimers.setTimeout(() => process.exit(EXIT_OVER_MEMORY), 0);
        // What the run left in the interpreter goes before anyone's next run, after the answer.
        else if (message.recycle) await recycle(engine, message.id);
      });
    });
    watchIdleMemory(() => lastLimit);
    send({
      type: "ready",
      ...(engine.bootNote ? { note: engine.bootNote.slice(0, 1000) } : {}),
      ...(isRecyclable(engine) ? { recyclable: true } : {}),
    });
  },
  (error: unknown) => {
    send({
      type: "boot-failed",
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  },
);

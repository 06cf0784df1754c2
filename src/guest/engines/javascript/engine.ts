// Worker side: the JavaScript engine, QuickJS compiled to WebAssembly (quickjs-emscripten). Each
// worker owns one QuickJS module instance, runtime and context, so nothing is shared with any
// other sandbox. Code runs as a global script with top-level await allowed, which keeps both the
// value of the last expression and global bindings between runs. The deadline and the output cap
// reach the guest through QuickJS's interrupt handler; memory through the runtime's limit and the
// worker's WASM memory guard. This file boots the interpreter (from the boot image, or by
// evaluating the set-up), runs the guest's event loop and rewinds it; what the guest can call is
// in host.ts, a captured state's format in state-image.ts.

import {
  newQuickJSWASMModule,
  newVariant,
  type QuickJSHandle,
  type QuickJSSyncVariant,
  RELEASE_SYNC,
} from "quickjs-emscripten";
import type {
  RunRequest,
  StateAnswer,
  StateImage,
  WorkerInit,
} from "../../../protocol/messages.js";
import { type Engine, type EngineOutcome, type RunContext, stoppedAt } from "../common/engine.js";
import { WorkspaceMirror } from "../common/mirror.js";
import {
  applyBootImage,
  type BootImage,
  bootImageBuild,
  decodeBootImage,
  encodeBootImage,
  findRandomState,
} from "./boot-image.js";
import { defineHost } from "./host.js";
import { INSPECT_SOURCE } from "./inspect.js";
import { MemFs } from "./memfs.js";
import { PRELUDE_SOURCE, rewriteImports } from "./prelude.js";
import { captureImage, type EmscriptenHeap, growTo, parseImage } from "./state-image.js";
import { loadTypeStripper } from "./typescript.js";

/** Everything a new context evaluates before it is ready: what a boot image stands in for. */
const SETUP_SOURCE = `${INSPECT_SOURCE}\0${PRELUDE_SOURCE}`;
let setupBuild: { quickjs: string; build: string } | null = null;
/** The boot image name of this QuickJS build with this set-up (hashed once per worker). */
function imageBuild(quickjsBuild: string): string {
  if (setupBuild?.quickjs !== quickjsBuild)
    setupBuild = { quickjs: quickjsBuild, build: bootImageBuild(quickjsBuild, SETUP_SOURCE) };
  return setupBuild.build;
}

/** QuickJS's JS_EVAL_FLAG_ASYNC: top-level await in a script; the result is a promise of {value}. */
const EVAL_FLAG_ASYNC = 1 << 7;
/** QuickJS's JS_EVAL_FLAG_COMPILE_ONLY: parse and compile, run nothing. */
const EVAL_FLAG_COMPILE_ONLY = 1 << 5;
const MB = 1024 * 1024;

/** The JavaScript engine, and how its interpreter was set up. */
export interface JavaScriptEngine extends Engine {
  /** "image": restored from the boot image; "evaluated": node-inspect and the prelude evaluated. */
  readonly bootedFrom: "image" | "evaluated";
  /** Rewinds the interpreter to its set-up (absent where there is no image to rewind to). */
  reset?(): Promise<void>;
}

/**
 * `variant`: another QuickJS build, for tests only — the debug build, whose runtime refuses to be
 * disposed while any handle is still alive, is how the leak test finds a handle left undisposed.
 * `takeImage`: for the boot image's builder only (make-quickjs-image.ts): called once the set-up
 * is evaluated with the boot image of this interpreter.
 */
export async function createEngine(
  init: WorkerInit,
  variant?: QuickJSSyncVariant,
  takeImage?: (image: Uint8Array) => void,
): Promise<JavaScriptEngine> {
  const { quickjsWasm } = init.assets;
  let bootNote: string | undefined;
  const stripTypes = init.language === "typescript" ? await loadTypeStripper() : null;
  // Emscripten names the program after process.argv[1] and copies that name into the memory at
  // init, so the runtime and context would sit at addresses that depend on the script's path: a
  // fixed name lays every interpreter out alike, which a boot image (or a captured state) needs.
  const argv1 = process.argv[1];
  process.argv[1] = "polybox";
  let module: Awaited<ReturnType<typeof newQuickJSWASMModule>>;
  try {
    module = await newQuickJSWASMModule(
      variant ??
        (quickjsWasm ? newVariant(RELEASE_SYNC, { wasmModule: quickjsWasm }) : RELEASE_SYNC),
    );
  } finally {
    if (argv1 === undefined) process.argv.length = 1;
    else process.argv[1] = argv1;
  }
  const runtime = module.newRuntime();
  runtime.setMaxStackSize(1 * MB);
  const ctx = runtime.newContext();
  const fs = new MemFs();
  let mirror = new WorkspaceMirror(fs.asGuestFs());

  let current: RunContext | null = null;
  let stdin = "";
  const timers = new Map<number, NodeJS.Timeout>();
  const immediates = new Map<number, NodeJS.Immediate>();
  /**
   * Under Node a timer set in a callback never runs before an immediate set in that callback
   * (or earlier): the immediates' check phase comes first. The guest's callbacks run slower than
   * Node's, long enough for a short timer to come due in the same timers phase, so a timer that
   * comes due while such an immediate is pending is held until it has run. `turn` numbers the
   * guest's callbacks (0 is the program itself); `createdIn` says in which each was set.
   */
  let turn = 0;
  const createdIn = new Map<number, number>();
  const held: number[] = [];
  const heldBack = (id: number): boolean => {
    const setIn = createdIn.get(id) ?? 0;
    for (const immediate of immediates.keys())
      if ((createdIn.get(immediate) ?? 0) <= setIn) return true;
    return false;
  };
  const becomeDue = (id: number) => {
    createdIn.delete(id);
    due.push(id);
    wake?.();
  };
  let wake: (() => void) | null = null;
  const due: number[] = [];

  defineHost(ctx, fs, {
    out: (stream, text) => current?.output.write(stream, text),
    net: (request) =>
      current
        ? current.net(request)
        : { ok: false, kind: "failed", message: "no run is in progress" },
    display: (item) => current?.display(item),
    stdin: () => {
      // Like a pipe: the first read gets everything, later reads get end-of-file.
      const text = stdin;
      stdin = "";
      return text;
    },
    setTimer: (id, ms) => {
      createdIn.set(id, turn);
      timers.set(
        id,
        setTimeout(() => {
          timers.delete(id);
          if (heldBack(id)) held.push(id);
          else becomeDue(id);
        }, ms),
      );
    },
    setImmediate: (id) => {
      createdIn.set(id, turn);
      immediates.set(
        id,
        setImmediate(() => {
          immediates.delete(id);
          becomeDue(id);
          for (const timer of held.filter((t) => !heldBack(t))) {
            held.splice(held.indexOf(timer), 1);
            becomeDue(timer);
          }
        }),
      );
    },
    clearTimer: (id) => {
      clearTimeout(timers.get(id));
      timers.delete(id);
      clearImmediate(immediates.get(id));
      immediates.delete(id);
      createdIn.delete(id);
      if (held.includes(id)) held.splice(held.indexOf(id), 1);
    },
  });
  const memory = module.getWasmMemory();
  const heap = (module as unknown as { module: EmscriptenHeap }).module;
  /** Where the runtime, the context and its global object are: the same in every fresh one. */
  const base = (): number[] => [
    (runtime as unknown as { rt: { value: number } }).rt.value,
    (ctx as unknown as { ctx: { value: number } }).ctx.value,
    ctx.global.value as number,
  ];

  /**
   * The set-up from the boot image (see boot-image.ts): refused, before anything is written,
   * unless it was taken of this build and set-up and this interpreter is laid out as its was.
   */
  const restoreBoot = (bytes: Uint8Array, quickjsBuild: string): QuickJSHandle[] => {
    const image = decodeBootImage(bytes, imageBuild(quickjsBuild), init.memoryMb * MB);
    const mine = base();
    if (
      image.pointers.length !== mine.length + SETUP_HANDLES ||
      mine.some((p, i) => p !== image.pointers[i])
    )
      throw new Error(
        `the boot image was taken of an interpreter laid out otherwise (${image.pointers.slice(0, mine.length)} here ${mine}); not used`,
      );
    growTo(memory, heap, image.memoryBytes);
    applyBootImage(memory, image);
    rewindImage = image;
    const contextMemory = (ctx as unknown as { memory: ContextMemory }).memory;
    return image.pointers.slice(mine.length).map((p) => contextMemory.heapValueHandle(p));
  };

  const evaluateSetup = (): QuickJSHandle[] => {
    ctx.unwrapResult(ctx.evalCode(INSPECT_SOURCE, "polybox:inspect")).dispose();
    const prelude = ctx.unwrapResult(ctx.evalCode(PRELUDE_SOURCE, "polybox:prelude"));
    return [
      prelude,
      ...["fire", "setEnv", "inspect", "exitSignal"].map((name) => ctx.getProp(prelude, name)),
    ];
  };

  /** The interpreter's memory right after its set-up: `reset` puts it back (see below). */
  let rewindImage: BootImage | null = null;
  let bootedFrom: JavaScriptEngine["bootedFrom"] = "evaluated";
  let handles: QuickJSHandle[] | null = null;
  const offered = variant || takeImage ? undefined : init.assets.quickjsImage;
  if (offered && init.assets.quickjsBuild) {
    try {
      handles = restoreBoot(new Uint8Array(offered), init.assets.quickjsBuild);
      bootedFrom = "image";
    } catch (error) {
      bootNote = `QuickJS boot image not used, evaluating the set-up instead: ${String(error)}`;
    }
  }
  handles ??= evaluateSetup();
  const [prelude, fire, setEnv, inspect, exitSignal] = handles as [
    QuickJSHandle,
    QuickJSHandle,
    QuickJSHandle,
    QuickJSHandle,
    QuickJSHandle,
  ];

  /** Where this side's wrappers point: an image restores only where they point the same. */
  const pointers = (): number[] => [
    ...base(),
    ...[prelude, fire, setEnv, inspect, exitSignal].map((h) => h.value as number),
  ];

  const imageOfNow = (): Uint8Array => {
    const randomStateAt = findRandomState(memory, base()[1]!, () => {
      const drawn = ctx.unwrapResult(ctx.evalCode("Math.random()", "polybox:seed"));
      const n = ctx.getNumber(drawn);
      drawn.dispose();
      return n;
    });
    return encodeBootImage(memory, {
      build: imageBuild(init.assets.quickjsBuild ?? ""),
      pointers: pointers(),
      randomStateAt,
    });
  };
  if (takeImage) takeImage(imageOfNow());
  else if (!rewindImage && !variant) {
    // Set up by evaluation (no boot image yet): an image of this interpreter, taken before any
    // guest code, is what `reset` rewinds to. Without one it is not recycled.
    try {
      const own = imageOfNow();
      rewindImage = decodeBootImage(own, imageBuild(init.assets.quickjsBuild ?? ""), Infinity);
    } catch {
      rewindImage = null;
    }
  }

  const describe = (handle: QuickJSHandle): string => {
    const r = ctx.callFunction(inspect, ctx.undefined, handle);
    if (r.error) {
      r.error.dispose();
      return "[uninspectable value]";
    }
    const text = ctx.getString(r.value);
    r.value.dispose();
    return text;
  };

  /** Turns a thrown guest value into an outcome: process.exit, a limit, or an uncaught error. */
  const failure = (error: QuickJSHandle, run: RunContext): EngineOutcome => {
    try {
      if (ctx.eq(error, exitSignal)) {
        const code = ctx.getProp(exitSignal, "code");
        const n = ctx.typeof(code) === "number" ? ctx.getNumber(code) : 0;
        code.dispose();
        return { exitCode: n, value: null };
      }
      const text = describe(error);
      if (/^InternalError: interrupted/.test(text) && Date.now() >= run.deadline) {
        return stoppedAt("timeout");
      }
      if (/^InternalError: out of memory/.test(text)) {
        return stoppedAt("memory_limit");
      }
      if (!run.stopRequested) run.output.write("stderr", `Uncaught ${text}\n`);
      return { exitCode: 1, value: null };
    } finally {
      error.dispose();
    }
  };

  const nextTimer = (deadline: number) =>
    new Promise<void>((resolve) => {
      const guard = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      wake = () => {
        clearTimeout(guard);
        resolve();
      };
      if (due.length > 0) wake();
    }).finally(() => {
      wake = null;
    });

  /**
   * The program as Node would run it (the prelude's `prepare` says how), if that compiles; as it
   * was otherwise, so that a misreading of its text never stops a program that would run.
   */
  const prepared = (code: string, hadImports: boolean, filename: string): string => {
    const prepare = ctx.getProp(prelude, "prepare");
    const text = ctx.newString(code);
    const r = ctx.callFunction(prepare, ctx.undefined, text, hadImports ? ctx.true : ctx.false);
    prepare.dispose();
    text.dispose();
    if (r.error) {
      r.error.dispose();
      return code;
    }
    const out = ctx.getString(r.value);
    r.value.dispose();
    if (out === code) return code;
    const compiled = ctx.evalCode(out, filename, EVAL_FLAG_ASYNC | EVAL_FLAG_COMPILE_ONLY);
    if (compiled.error) {
      compiled.error.dispose();
      return code;
    }
    compiled.value.dispose();
    return out;
  };

  /** Node's order after each callback: the nextTick queue, then promise jobs, until both are empty. */
  const runMicrotasks = (): QuickJSHandle | null => {
    const runTicks = ctx.getProp(prelude, "runTicks");
    try {
      for (;;) {
        const ticked = ctx.callFunction(runTicks, ctx.undefined);
        if (ticked.error) return ticked.error;
        const ran = ctx.getNumber(ticked.value);
        ticked.value.dispose();
        const jobs = runtime.executePendingJobs();
        if (jobs.error) return jobs.error;
        if (ran === 0 && jobs.value === 0) return null;
      }
    } finally {
      runTicks.dispose();
    }
  };

  const drainJobs = (run: RunContext): QuickJSHandle | null => {
    const jobs = runMicrotasks();
    if (jobs) return jobs;
    while (due.length > 0) {
      const id = due.shift()!;
      turn++;
      const idHandle = ctx.newNumber(id);
      const r = ctx.callFunction(fire, ctx.undefined, idHandle);
      idHandle.dispose();
      if (r.error) return r.error;
      r.value.dispose();
      const more = runMicrotasks();
      if (more) return more;
      if (Date.now() >= run.deadline) break;
    }
    return null;
  };

  /**
   * A fresh interpreter in place: the QuickJS instance's memory becomes the set-up's image again
   * (pages the image lacks are zeroed, `Math.random` gets fresh entropy), with an empty
   * workspace and no timers. The runtime, the context and the prelude's handles live at the same
   * addresses as in the image, and this side's wrappers hold nothing else between runs, so what
   * the next guest meets is byte for byte what a newly booted interpreter holds. QuickJS guests
   * cannot reach the worker's realm, whose own check (worker-entry.ts) runs before this.
   */
  const reset = async (): Promise<void> => {
    if (!rewindImage) throw new Error("this interpreter has no image to rewind to");
    // WebAssembly memory does not shrink: an instance a run grew would hold that memory, unused,
    // for as long as the worker lives. Such a worker is not recycled; a new one takes its place.
    if (memory.buffer.byteLength > rewindImage.memoryBytes + REWIND_MAX_GROWTH_BYTES)
      throw new Error("the run grew the interpreter's memory; a new worker takes its place");
    for (const timer of timers.values()) clearTimeout(timer);
    timers.clear();
    due.length = 0;
    wake = null;
    current = null;
    stdin = "";
    fs.clear();
    mirror = new WorkspaceMirror(fs.asGuestFs());
    // The one piece of this side's wrapper state that mirrors the C side: whether QuickJS has an
    // interrupt handler. The image has none, so the wrapper must forget its own, or the next
    // run's setInterruptHandler would not enable it again (no deadline, no output-cap stop).
    runtime.removeInterruptHandler();
    applyBootImage(memory, rewindImage);
  };

  return {
    bootedFrom,
    ...(bootNote ? { bootNote } : {}),
    ...(rewindImage ? { reset } : {}),
    applyFiles(request: RunRequest) {
      fs.quotaBytes = request.limits.workspaceQuotaBytes;
      return mirror.apply(request.sync, request.fullSync);
    },
    collectFiles: () => mirror.collect(),
    interrupt() {
      // The interrupt handler reads `stopRequested`; nothing else to do here.
    },
    async captureState(maxBytes: number): Promise<StateAnswer> {
      return captureImage(module.getWasmMemory(), pointers(), init, maxBytes);
    },
    /**
     * This interpreter becomes the captured one: its WebAssembly memory is replaced by the image.
     * Booted the same way, it holds its runtime, context, the prelude's handles and its host
     * functions (registered in the same order, so with the same ids) where the captured one did;
     * the image is refused unless every pointer this side holds is the same in it. The memory
     * grows (through the engine's own allocator, so that Emscripten's views follow) to the
     * image's size first, and nothing can fail once the copy starts.
     */
    async restoreState(state: StateImage): Promise<string[]> {
      if (state.kind !== "memory") throw new Error(`a ${state.kind} state is not a QuickJS image`);
      const image = parseImage(state.data, init);
      const mine = pointers();
      if (mine.length !== image.pointers.length || mine.some((p, i) => p !== image.pointers[i]))
        throw new Error("the image was taken of an interpreter laid out otherwise; not restored");
      growTo(memory, heap, image.memoryBytes);
      const bytes = new Uint8Array(memory.buffer);
      bytes.set(image.heap);
      bytes.fill(0, image.heap.length);
      return [];
    },
    dispose() {
      for (const timer of timers.values()) clearTimeout(timer);
      for (const immediate of immediates.values()) clearImmediate(immediate);
      for (const handle of [fire, setEnv, inspect, exitSignal, prelude]) handle.dispose();
      ctx.dispose();
      runtime.dispose();
    },
    async run(request: RunRequest, run: RunContext): Promise<EngineOutcome> {
      current = run;
      stdin = request.stdin;
      fs.quotaHit = false;
      runtime.setMemoryLimit(request.limits.memoryMb * MB);
      runtime.setInterruptHandler(() => Date.now() >= run.deadline || run.stopRequested);
      const env = ctx.newString(JSON.stringify(request.env));
      ctx.callFunction(setEnv, ctx.undefined, env).dispose();
      env.dispose();
      try {
        let source = request.code;
        if (stripTypes) {
          const stripped = stripTypes(source);
          if ("error" in stripped) {
            run.output.write("stderr", `${stripped.error}\n`);
            return { exitCode: 1, value: null };
          }
          source = stripped.code;
        }
        const filename = stripTypes ? "main.ts" : "main.js";
        const code = rewriteImports(source);
        const evaluated = ctx.evalCode(
          prepared(code, code !== source, filename),
          filename,
          EVAL_FLAG_ASYNC,
        );
        if (evaluated.error) return failure(evaluated.error, run);
        const promise = evaluated.value;
        try {
          const outcome = await settle(promise, run);
          if (fs.quotaHit && !outcome.status) {
            return { ...outcome, status: "workspace_limit" };
          }
          return outcome;
        } finally {
          promise.dispose();
        }
      } finally {
        for (const timer of timers.values()) clearTimeout(timer);
        timers.clear();
        for (const immediate of immediates.values()) clearImmediate(immediate);
        immediates.clear();
        held.length = 0;
        createdIn.clear();
        due.length = 0;
        current = null;
      }
    },
  };

  function pendingTimers(): number {
    return timers.size + immediates.size + held.length;
  }

  /** Runs jobs and timers until the script's promise settles and no timer is left. */
  async function settle(promise: QuickJSHandle, run: RunContext): Promise<EngineOutcome> {
    // An error thrown before the program's first await ends it there, as in Node: no nextTick
    // callback and no promise job runs after it.
    const first = ctx.getPromiseState(promise);
    if (first.type === "rejected") return failure(first.error, run);
    if (first.type === "fulfilled") first.value.dispose();
    for (;;) {
      const thrown = drainJobs(run);
      if (thrown) return failure(thrown, run);
      const state = ctx.getPromiseState(promise);
      if (state.type === "rejected") return failure(state.error, run);
      if (state.type === "fulfilled" && pendingTimers() === 0 && due.length === 0) {
        const value = ctx.getProp(state.value, "value");
        state.value.dispose();
        const text = ctx.typeof(value) === "undefined" ? null : describe(value);
        value.dispose();
        // process.exitCode, as Node exits with it once nothing is left to run.
        const finish = ctx.getProp(exitSignal, "finish");
        const finished = ctx.callFunction(finish, exitSignal);
        finish.dispose();
        // An 'exit' listener that throws (or runs out of time) ends the run as any error does.
        if (finished.error) return failure(finished.error, run);
        const exitCode =
          ctx.typeof(finished.value) === "number" ? ctx.getNumber(finished.value) : 0;
        finished.value.dispose();
        return { exitCode, value: text };
      }
      if (state.type === "fulfilled") state.value.dispose();
      if (state.type === "pending" && pendingTimers() === 0 && due.length === 0) {
        run.output.write(
          "stderr",
          "Uncaught Error: top-level await never settled (nothing left to wait for)\n",
        );
        return { exitCode: 1, value: null };
      }
      if (Date.now() >= run.deadline) return stoppedAt("timeout");
      await nextTimer(run.deadline);
    }
  }
}

/** The handles the set-up leaves this side: the prelude's exports object and four of them. */
const SETUP_HANDLES = 5;
/** How much a run may grow the QuickJS memory and still have its worker recycled. */
const REWIND_MAX_GROWTH_BYTES = 32 * MB;
/** quickjs-emscripten's wrapper of a context's memory: how a handle is made of a pointer. */
interface ContextMemory {
  heapValueHandle(ptr: number): QuickJSHandle;
}

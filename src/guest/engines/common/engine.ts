// Worker side: the one interface every language engine implements. An engine lives in its own
// worker thread, owns one interpreter, and runs one request at a time. It never sees the host's
// file system or network: files arrive in the request and leave in the result.

import { RUN_EXIT_CODES } from "../../../protocol/endings.js";
import type {
  Display,
  EngineResult,
  RunRequest,
  StateAnswer,
  StateImage,
  WheelBlob,
  WorkerInit,
} from "../../../protocol/messages.js";
import type { NetCall } from "./net.js";
import type { OutputSink } from "./output.js";

/** What a run produced, before the worker adds output, file changes and limit verdicts. */
export interface EngineOutcome {
  exitCode: number;
  value: string | null;
  /** Set when the engine itself detected a limit (e.g. QuickJS's interrupt at the deadline). */
  status?: EngineResult["status"];
  message?: string;
  /** The interpreter cannot be trusted after this run (it was unwound mid-call); retire it. */
  stateLost?: boolean;
}

/** The outcome of a run the engine itself stopped at a limit: its status, and that exit code. */
export function stoppedAt(status: "timeout" | "memory_limit"): EngineOutcome {
  return { exitCode: RUN_EXIT_CODES[status], value: null, status };
}

export interface RunContext {
  output: OutputSink;
  /** Epoch ms after which the run must stop. */
  deadline: number;
  /** True once the output cap was crossed; engines stop the guest as soon as they can. */
  readonly stopRequested: boolean;
  /** Records one `display()` call of the guest. */
  display(item: Display): void;
  /** Makes a network request through the trusted side, blocking until it answers. */
  net: NetCall;
}

export interface Engine {
  /** Brings the private workspace copy up to date; called before `run`. */
  applyFiles(request: RunRequest): Promise<void>;
  run(request: RunRequest, ctx: RunContext): Promise<EngineOutcome>;
  /** Workspace changes since `applyFiles`. */
  collectFiles(): Promise<EngineResult["changes"]>;
  /** Asks a running guest to stop (output cap); a no-op where the engine cannot. */
  interrupt(): void;
  /** Set when the engine booted a slower way than it was offered (a refused boot image), and why. */
  readonly bootNote?: string;
  /** Frees the interpreter where the engine holds more than its worker's lifetime frees. */
  dispose?(): void;
  /**
   * Captures the interpreter's state between runs, in at most `maxBytes` (see StateKind). Absent
   * where an engine cannot capture its state faithfully: its restore is a fresh interpreter.
   */
  captureState?(maxBytes: number): Promise<StateAnswer>;
  /**
   * Puts a captured state into this interpreter, which has run nothing of a guest's yet; returns
   * what was not kept. Throws if the state cannot be restored (the interpreter is then retired).
   */
  restoreState?(state: StateImage, wheels: WheelBlob[]): Promise<string[]>;
}

export type EngineFactory = (init: WorkerInit) => Promise<Engine>;

/**
 * An engine whose interpreter can be replaced by a brand-new one inside the same worker. Only for
 * engines whose guests cannot reach the worker's JavaScript realm (just-bash, plain WASI
 * programs): for them a fresh instance is as clean as a fresh worker, and far cheaper. `reset`
 * throws away every bit of interpreter state.
 */
export interface RecyclableEngine extends Engine {
  reset(): Promise<void>;
}

export function isRecyclable(engine: Engine): engine is RecyclableEngine {
  return typeof (engine as Partial<RecyclableEngine>).reset === "function";
}

export function recyclable(create: () => Promise<Engine>): Promise<RecyclableEngine> {
  return create().then((first) => {
    let inner = first;
    return {
      applyFiles: (request) => inner.applyFiles(request),
      run: (request, ctx) => inner.run(request, ctx),
      collectFiles: () => inner.collectFiles(),
      interrupt: () => inner.interrupt(),
      async reset() {
        inner = await create();
      },
    };
  });
}

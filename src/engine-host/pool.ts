// Untrusted side: warm pools of booted, never-used interpreters, one pool per language. A run
// takes one and it is never given to another sandbox; the pool refills in the background, one
// boot at a time, so that refilling does not starve the runs in flight of CPU. The pools stay
// within a memory budget (estimated per interpreter) and shrink to one interpreter per language
// after a quiet spell; the next run refills them.

import type { EngineLanguage, WorkerInit } from "../protocol/messages.js";
import { Interpreter } from "./interpreter.js";

export type PoolSizes = Record<EngineLanguage, number>;

/** Resident memory one idle interpreter costs, in MiB, as measured by `npm run bench`. */
const ESTIMATED_MB: Record<EngineLanguage, number> = {
  python: 90,
  javascript: 12,
  typescript: 40,
  bash: 25,
  ruby: 110,
  wasm: 10,
};

export interface PoolPolicy {
  /** Idle interpreters may not use more than this (estimated), across languages. */
  budgetMb: number;
  /** After this long without a run, pools shrink to one interpreter per language. */
  idleShrinkMs: number;
}

export const DEFAULT_POOL_POLICY: PoolPolicy = { budgetMb: 1024, idleShrinkMs: 10 * 60_000 };

export class Pools {
  private readonly idle: Record<EngineLanguage, Interpreter[]> = {
    python: [],
    javascript: [],
    typescript: [],
    bash: [],
    ruby: [],
    wasm: [],
  };
  private readonly loaned: Record<EngineLanguage, number> = {
    python: 0,
    javascript: 0,
    typescript: 0,
    bash: 0,
    ruby: 0,
    wasm: 0,
  };
  private readonly booting: Record<EngineLanguage, number> = {
    python: 0,
    javascript: 0,
    typescript: 0,
    bash: 0,
    ruby: 0,
    wasm: 0,
  };
  private refilling = false;
  private closed = false;
  private lastTake = Date.now();
  private shrunk = false;
  private readonly shrinkTimer: NodeJS.Timeout;

  constructor(
    private readonly sizes: PoolSizes,
    private readonly memoryMb: number,
    private readonly assets: WorkerInit["assets"],
    private readonly log: (message: string) => void,
    private readonly policy: PoolPolicy = DEFAULT_POOL_POLICY,
  ) {
    this.shrinkTimer = setInterval(
      () => this.shrinkIfIdle(),
      Math.min(30_000, Math.max(50, policy.idleShrinkMs / 4)),
    );
    this.shrinkTimer.unref();
  }

  start(): void {
    void this.refill();
  }

  /** The pool size a language is refilled to right now (smaller after an idle spell). */
  private target(language: EngineLanguage): number {
    return this.shrunk ? Math.min(1, this.sizes[language]) : this.sizes[language];
  }

  private estimatedMb(): number {
    let total = 0;
    for (const l of Object.keys(this.idle) as EngineLanguage[])
      total += (this.idle[l].length + this.booting[l]) * ESTIMATED_MB[l];
    return total;
  }

  private shrinkIfIdle(): void {
    if (this.shrunk || Date.now() - this.lastTake < this.policy.idleShrinkMs) return;
    this.shrunk = true;
    for (const l of Object.keys(this.idle) as EngineLanguage[]) {
      for (const extra of this.idle[l].splice(this.target(l))) extra.dispose();
    }
  }

  counts(): PoolSizes {
    const count = (l: EngineLanguage) => this.idle[l].length;
    return {
      python: count("python"),
      javascript: count("javascript"),
      typescript: count("typescript"),
      bash: count("bash"),
      ruby: count("ruby"),
      wasm: count("wasm"),
    };
  }

  /** A booted interpreter of `language`, fresh from the pool when one is warm. */
  /**
   * A booted interpreter of `language`, fresh from the pool when one is warm. `onLoan` marks a
   * one-shot whose worker will come back through `giveBack` (or `lost`): it still counts toward
   * the pool's size, so the pool does not boot a replacement for it.
   */
  async take(language: EngineLanguage, memoryMb: number, onLoan = false): Promise<Interpreter> {
    this.lastTake = Date.now();
    this.shrunk = false;
    const standard = memoryMb === this.memoryMb;
    if (standard && onLoan) this.loaned[language]++;
    if (standard) {
      const queue = this.idle[language];
      while (queue.length > 0) {
        const interpreter = queue.shift()!;
        if (interpreter.alive) {
          void this.refill();
          return interpreter;
        }
      }
    }
    const interpreter = new Interpreter(language, memoryMb, this.assets);
    await interpreter.ready;
    void this.refill();
    return interpreter;
  }

  /** A loaned interpreter that will not come back (it hit a limit, or could not be reset). */
  lost(interpreter: Interpreter): void {
    if (interpreter.memoryMb !== this.memoryMb) return;
    this.loaned[interpreter.language] = Math.max(0, this.loaned[interpreter.language] - 1);
    void this.refill();
  }

  private async refill(): Promise<void> {
    if (this.refilling || this.closed) return;
    this.refilling = true;
    try {
      for (;;) {
        const language = (Object.keys(this.sizes) as EngineLanguage[]).find(
          (l) =>
            this.idle[l].length + this.booting[l] + this.loaned[l] < this.target(l) &&
            this.estimatedMb() + ESTIMATED_MB[l] <= this.policy.budgetMb,
        );
        if (!language || this.closed) break;
        this.booting[language]++;
        const interpreter = new Interpreter(language, this.memoryMb, this.assets);
        try {
          await interpreter.ready;
          if (this.closed) interpreter.dispose();
          else this.idle[language].push(interpreter);
        } catch (error) {
          this.log(`could not boot a ${language} interpreter for the pool: ${String(error)}`);
          break;
        } finally {
          this.booting[language]--;
        }
      }
    } finally {
      this.refilling = false;
    }
  }

  /** Takes back a recycled interpreter if the pool has room for it; otherwise ends it. */
  giveBack(interpreter: Interpreter): void {
    if (interpreter.memoryMb !== this.memoryMb) {
      interpreter.dispose();
      return;
    }
    this.loaned[interpreter.language] = Math.max(0, this.loaned[interpreter.language] - 1);
    const queue = this.idle[interpreter.language];
    if (
      !this.closed &&
      interpreter.alive &&
      interpreter.memoryMb === this.memoryMb &&
      queue.length < this.target(interpreter.language)
    ) {
      queue.push(interpreter);
    } else interpreter.dispose();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.shrinkTimer);
    for (const queue of Object.values(this.idle)) for (const i of queue.splice(0)) i.dispose();
  }
}

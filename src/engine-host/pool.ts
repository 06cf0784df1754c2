// Untrusted side: warm pools of booted, never-used interpreters, one pool per language. A run
// takes one and it is never given to another sandbox; the pool refills in the background, one
// boot at a time, so that refilling does not starve the runs in flight of CPU.

import type { EngineLanguage, WorkerInit } from "../protocol/messages.js";
import { Interpreter } from "./interpreter.js";

export type PoolSizes = Record<EngineLanguage, number>;

export class Pools {
  private readonly idle: Record<EngineLanguage, Interpreter[]> = { python: [], javascript: [], typescript: [], bash: [] };
  private readonly booting: Record<EngineLanguage, number> = { python: 0, javascript: 0, typescript: 0, bash: 0 };
  private refilling = false;
  private closed = false;

  constructor(
    private readonly sizes: PoolSizes,
    private readonly memoryMb: number,
    private readonly assets: WorkerInit["assets"],
    private readonly log: (message: string) => void,
  ) {}

  start(): void {
    void this.refill();
  }

  counts(): PoolSizes {
    const count = (l: EngineLanguage) => this.idle[l].length;
    return { python: count("python"), javascript: count("javascript"), typescript: count("typescript"), bash: count("bash") };
  }

  /** A booted interpreter of `language`, fresh from the pool when one is warm. */
  async take(language: EngineLanguage, memoryMb: number): Promise<Interpreter> {
    if (memoryMb === this.memoryMb) {
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

  private async refill(): Promise<void> {
    if (this.refilling || this.closed) return;
    this.refilling = true;
    try {
      for (;;) {
        const language = (Object.keys(this.sizes) as EngineLanguage[]).find(
          (l) => this.idle[l].length + this.booting[l] < this.sizes[l],
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

  close(): void {
    this.closed = true;
    for (const queue of Object.values(this.idle)) for (const i of queue.splice(0)) i.dispose();
  }
}

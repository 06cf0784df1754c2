// Untrusted side: the interpreters an engine host boots before it is needed. An engine host
// serves exactly one sandbox (or one one-shot run), so its pool is small and never refills: the
// warm interpreters it starts with are for that tenant's first runs, and an interpreter a run
// needs beyond them is booted on demand. Keeping hosts warm is the trusted side's job (see
// src/supervisor/fleet.ts), which starts whole host processes ahead of need.

import type { EngineAssets, EngineLanguage, RunRequest } from "../../protocol/messages.js";
import { Interpreter } from "./interpreter.js";

/**
 * What a warm interpreter runs, a few times over, before anyone's code: a worker's first runs
 * compile the engine's run path (V8 compiles and tiers up the glue between the engine and the
 * worker only as it is used) and load what the engine imports lazily. An empty program left most
 * of that to the tenant's first runs (measured for JavaScript, 2 cores: the engine's part of a
 * claimed host's first `1+1` took 2.6 ms and of `console.log(1)` 6.4 ms, against 0.4 ms once
 * warm; with these programs run WARM_UP_RUNS times, 0.4 and 0.5 ms). So each program prints and
 * ends in a value, as most code does. None declares anything or writes a file: the interpreter a
 * tenant gets has nothing in it that a fresh one lacks, and what it printed went nowhere.
 */
export const WARM_UP_PROGRAMS: Readonly<Partial<Record<EngineLanguage, string>>> = {
  python: 'print("", 0)\n({"a": [0]})',
  javascript: 'console.log("", 0); ({ a: [0] })',
  typescript: 'console.log("" as string, 0); ({ a: [0] }) as { a: number[] }',
  bash: 'echo "" 0',
};
const WARM_UP_RUNS = 4;

function warmUpRequest(code: string, memoryMb: number): RunRequest {
  return {
    code,
    stdin: "",
    env: {},
    limits: {
      timeoutMs: 30_000,
      memoryMb,
      maxOutputBytes: 4096,
      workspaceQuotaBytes: 1024 * 1024,
    },
    fullSync: true,
    sync: { files: [], dirs: [], removed: [] },
  };
}

export type PoolSizes = Record<EngineLanguage, number>;

export class Pools {
  private readonly idle = new Map<EngineLanguage, Interpreter[]>();
  private closed = false;

  constructor(
    private readonly sizes: Partial<PoolSizes>,
    private readonly memoryMb: number,
    private readonly assets: (language: EngineLanguage) => Promise<EngineAssets>,
    private readonly log: (message: string) => void,
  ) {}

  /** Boots the warm interpreters; resolves when they are ready (or failed to boot). */
  async start(): Promise<void> {
    const boots: Promise<void>[] = [];
    for (const [language, count] of Object.entries(this.sizes) as [EngineLanguage, number][]) {
      for (let i = 0; i < count; i++) boots.push(this.warm(language));
    }
    await Promise.all(boots);
  }

  private async warm(language: EngineLanguage): Promise<void> {
    try {
      const interpreter = await this.boot(language, this.memoryMb);
      const program = WARM_UP_PROGRAMS[language];
      // The programs make no network requests, so none needs an answer.
      for (let i = 0; i < WARM_UP_RUNS && program && !this.closed && interpreter.alive; i++)
        await interpreter.run(
          0,
          warmUpRequest(program, this.memoryMb),
          () => {},
          () => {},
          true,
        );
      if (this.closed || !interpreter.alive) interpreter.dispose();
      else this.queue(language).push(interpreter);
    } catch (error) {
      this.log(`could not boot a ${language} interpreter ahead of need: ${String(error)}`);
    }
  }

  private queue(language: EngineLanguage): Interpreter[] {
    let queue = this.idle.get(language);
    if (!queue) {
      queue = [];
      this.idle.set(language, queue);
    }
    return queue;
  }

  private async boot(language: EngineLanguage, memoryMb: number): Promise<Interpreter> {
    const interpreter = new Interpreter(language, memoryMb, await this.assets(language));
    await interpreter.ready;
    if (interpreter.bootNote) this.log(interpreter.bootNote);
    return interpreter;
  }

  counts(): Partial<PoolSizes> {
    const counts: Partial<PoolSizes> = {};
    for (const [language, queue] of this.idle) counts[language] = queue.length;
    return counts;
  }

  /** A booted interpreter of `language`: a warm one when its memory limit matches, else a new one. */
  async take(language: EngineLanguage, memoryMb: number): Promise<Interpreter> {
    if (memoryMb === this.memoryMb) {
      const queue = this.queue(language);
      while (queue.length > 0) {
        const interpreter = queue.shift()!;
        if (interpreter.alive) return interpreter;
      }
    }
    return this.boot(language, memoryMb);
  }

  close(): void {
    this.closed = true;
    for (const queue of this.idle.values()) for (const i of queue.splice(0)) i.dispose();
  }
}

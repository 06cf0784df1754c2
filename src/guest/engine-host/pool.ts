// Untrusted side: the interpreters an engine host boots before it is needed. An engine host
// serves exactly one sandbox (or one one-shot run), so its pool is small and never refills: the
// warm interpreters it starts with are for that tenant's first runs, and an interpreter a run
// needs beyond them is booted on demand. Keeping hosts warm is the trusted side's job (see
// src/supervisor/fleet.ts), which starts whole host processes ahead of need.

import type { EngineAssets, EngineLanguage, RunRequest } from "../../protocol/messages.js";
import { Interpreter } from "./interpreter.js";

/**
 * Languages whose warm interpreters run an empty program once before anyone's code: a worker's
 * first run compiles the engine's run path and loads what it imports lazily (measured for
 * JavaScript: 6–9 ms for the first run, 1 ms after), which a warm interpreter should have paid
 * ahead of need. The program is empty, so it leaves nothing a tenant's code could see; its
 * output, if any, goes nowhere.
 */
const WARM_UP: ReadonlySet<EngineLanguage> = new Set([
  "python",
  "javascript",
  "typescript",
  "bash",
]);

function warmUpRequest(memoryMb: number): RunRequest {
  return {
    code: "",
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
      if (WARM_UP.has(language) && !this.closed)
        // The empty program makes no requests, so none needs an answer.
        await interpreter.run(
          0,
          warmUpRequest(this.memoryMb),
          () => {},
          () => {},
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

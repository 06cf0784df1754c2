// Untrusted side: the interpreters an engine host keeps ready for its principal's runs. A host
// serves one principal (one MCP client, or the owner an embedder names) for its one-shot runs, or
// one stateful sandbox. A one-shot takes a warm interpreter and gives it back after its run:
// an engine whose interpreter can be replaced inside its worker (QuickJS, just-bash) comes back
// with a brand-new one; any other (Pyodide, whose guests reach the worker's realm) is ended, and
// the pool boots a replacement in the background. How many it keeps follows demand: as many as
// were in use at once lately, within a per-language cap, and at least one of each language the
// principal ran. Starting whole hosts ahead of need is the trusted side's job
// (src/supervisor/fleet.ts).

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

/**
 * At most this many warm interpreters of a language in one host, however many were in use at
 * once: each is a worker (Python ~90 MiB, JavaScript ~12, Bash ~25).
 */
const MAX_WARM: Record<EngineLanguage, number> = {
  python: 2,
  javascript: 4,
  typescript: 2,
  bash: 4,
  ruby: 1,
  wasm: 2,
  wasix: 1,
};
/** Demand is the most runs of a language in flight at once within this window. */
const DEMAND_WINDOW_MS = 60_000;
/**
 * A replacement boots this long after the run that used its predecessor: a back-to-back caller's
 * next run should not find a boot beside it on a small machine, and a burst ends first.
 */
const REFILL_DELAY_MS = 50;

interface Demand {
  inUse: number;
  peak: number;
  peakAt: number;
}

export class Pools {
  private readonly idle = new Map<EngineLanguage, Interpreter[]>();
  private readonly booting = new Map<EngineLanguage, number>();
  private readonly demand = new Map<EngineLanguage, Demand>();
  /** Interpreters of a one-shot that just ended, still replacing their interpreter. */
  private readonly renewing = new Map<EngineLanguage, number>();
  /** Runs waiting for an interpreter that is booting or renewing (null: none came; boot one). */
  private readonly waiters = new Map<EngineLanguage, ((i: Interpreter | null) => void)[]>();
  private refillTimer: NodeJS.Timeout | null = null;
  private refilling = false;
  private closed = false;

  constructor(
    private readonly sizes: Partial<PoolSizes>,
    private readonly memoryMb: number,
    private readonly assets: (language: EngineLanguage) => Promise<EngineAssets>,
    private readonly log: (message: string) => void,
  ) {
    for (const [language, count] of Object.entries(sizes) as [EngineLanguage, number][])
      if (count > 0) this.demand.set(language, { inUse: 0, peak: count, peakAt: Date.now() });
  }

  /** Boots the warm interpreters; resolves when they are ready (or failed to boot). */
  async start(): Promise<void> {
    const boots: Promise<void>[] = [];
    for (const [language, count] of Object.entries(this.sizes) as [EngineLanguage, number][]) {
      for (let i = 0; i < count; i++) boots.push(this.warm(language));
    }
    await Promise.all(boots);
  }

  private async warm(language: EngineLanguage): Promise<void> {
    this.booting.set(language, (this.booting.get(language) ?? 0) + 1);
    try {
      const interpreter = await this.boot(language, this.memoryMb);
      const program = WARM_UP_PROGRAMS[language];
      // The programs make no network requests, so none needs an answer. Each is a recycle run:
      // a worker that can replace its interpreter does so after each.
      for (let i = 0; i < WARM_UP_RUNS && program && !this.closed && interpreter.alive; i++) {
        await interpreter.run(
          0,
          warmUpRequest(program, this.memoryMb),
          () => {},
          () => {},
          true,
        );
        if (interpreter.recyclable && !(await interpreter.renewed())) break;
      }
      this.booting.set(language, (this.booting.get(language) ?? 1) - 1);
      if (this.closed || !interpreter.alive) interpreter.dispose();
      else this.offer(language, interpreter);
    } catch (error) {
      this.booting.set(language, (this.booting.get(language) ?? 1) - 1);
      this.log(`could not boot a ${language} interpreter ahead of need: ${String(error)}`);
    }
    this.wakeUnsupplied(language);
  }

  /** A ready interpreter: to the run waiting longest, else to the pool. */
  private offer(language: EngineLanguage, interpreter: Interpreter): void {
    const waiter = this.waiters.get(language)?.shift();
    if (waiter) waiter(interpreter);
    else this.queue(language).push(interpreter);
  }

  /** Interpreters that will become ready soon: booting, or renewing after a one-shot. */
  private coming(language: EngineLanguage): number {
    return (this.booting.get(language) ?? 0) + (this.renewing.get(language) ?? 0);
  }

  /** Runs waiting for more interpreters than are coming boot their own. */
  private wakeUnsupplied(language: EngineLanguage): void {
    const waiting = this.waiters.get(language) ?? [];
    while (waiting.length > this.coming(language)) waiting.pop()!(null);
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

  /**
   * A booted interpreter of `language`: a warm one when its memory limit matches; else one about
   * to be ready (a boot under way, or a one-shot's renewing: back-to-back runs wait the
   * millisecond a renewal takes rather than boot another); else a new one.
   */
  async take(language: EngineLanguage, memoryMb: number): Promise<Interpreter> {
    if (memoryMb === this.memoryMb && !this.closed) {
      const queue = this.queue(language);
      while (queue.length > 0) {
        const interpreter = queue.shift()!;
        if (interpreter.alive) return interpreter;
      }
      const waiting = this.waiters.get(language) ?? [];
      this.waiters.set(language, waiting);
      if (waiting.length < this.coming(language)) {
        const interpreter = await new Promise<Interpreter | null>((r) => waiting.push(r));
        if (interpreter?.alive) return interpreter;
      }
    }
    return this.boot(language, memoryMb);
  }

  /** A one-shot run of `language` starts: counted, so that the pool follows demand. */
  inUse(language: EngineLanguage): () => void {
    const now = Date.now();
    const d = this.demand.get(language) ?? { inUse: 0, peak: 0, peakAt: now };
    this.demand.set(language, d);
    d.inUse++;
    if (d.inUse >= d.peak || now - d.peakAt > DEMAND_WINDOW_MS) {
      d.peak = d.inUse;
      d.peakAt = now;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      d.inUse--;
    };
  }

  /**
   * A one-shot's interpreter after its run. A recyclable one whose worker took a brand-new
   * interpreter goes back to the pool (if the pool wants it); any other is ended. Either way the
   * pool tops itself up in the background.
   */
  async giveBack(
    language: EngineLanguage,
    interpreter: Interpreter,
    recycled: boolean,
  ): Promise<void> {
    const reusable = recycled && interpreter.memoryMb === this.memoryMb;
    if (reusable) this.renewing.set(language, (this.renewing.get(language) ?? 0) + 1);
    const fresh = reusable && (await interpreter.renewed());
    if (reusable) this.renewing.set(language, (this.renewing.get(language) ?? 1) - 1);
    const wanted =
      (this.waiters.get(language)?.length ?? 0) > 0 ||
      this.queue(language).length < this.target(language);
    if (fresh && !this.closed && interpreter.alive && wanted) this.offer(language, interpreter);
    else interpreter.dispose();
    this.wakeUnsupplied(language);
    this.refillSoon();
  }

  /** How many warm interpreters of `language` this host keeps now. */
  private target(language: EngineLanguage): number {
    const d = this.demand.get(language);
    if (!d) return 0;
    const recent = Date.now() - d.peakAt <= DEMAND_WINDOW_MS ? d.peak : 1;
    return Math.min(MAX_WARM[language], Math.max(1, recent));
  }

  private refillSoon(): void {
    if (this.closed || this.refillTimer) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      void this.refill();
    }, REFILL_DELAY_MS);
    this.refillTimer.unref();
  }

  /** Boots warm interpreters one at a time until every language in demand has its share. */
  private async refill(): Promise<void> {
    if (this.refilling || this.closed) return;
    this.refilling = true;
    try {
      for (;;) {
        const language = [...this.demand.keys()].find(
          (l) => this.queue(l).length + (this.booting.get(l) ?? 0) < this.target(l),
        );
        if (!language || this.closed) break;
        const before = this.queue(language).length;
        await this.warm(language);
        // One that failed to boot is not retried at once: the next run's give-back tries again.
        if (this.queue(language).length <= before) break;
      }
    } finally {
      this.refilling = false;
    }
  }

  close(): void {
    this.closed = true;
    if (this.refillTimer) clearTimeout(this.refillTimer);
    for (const waiting of this.waiters.values()) for (const w of waiting.splice(0)) w(null);
    for (const queue of this.idle.values()) for (const i of queue.splice(0)) i.dispose();
  }
}

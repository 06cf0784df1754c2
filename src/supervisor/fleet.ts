// Trusted side: the engine host processes of one runtime. The process is the wall between
// tenants: every stateful sandbox gets an engine host of its own (jailed on Linux), and so does
// every principal (one MCP client, or the owner an embedder names) for its one-shot runs; no
// guest ever shares a process, a realm, a BroadcastChannel or a worker pool with another
// tenant's code. Inside a principal's host each one-shot gets a fresh interpreter (see
// src/guest/engine-host/pool.ts), so back-to-back and parallel one-shots cost a run, not a Node
// start and an engine boot. Starting a host costs both, so the fleet keeps warm hosts per
// language, started ahead of need one at a time and within a memory budget, and hands one out
// when a tenant first runs code.

import type { EngineHostConfig, PoolSizes } from "../core/config.js";
import { PolyboxError } from "../core/errors.js";
import type { HostRun, RunHost } from "../core/sandbox/run-host.js";
import type {
  EngineLanguage,
  EngineResult,
  HostStats,
  RestoreAnswer,
  StateAnswer,
  StateImage,
  WheelBlob,
} from "../protocol/messages.js";
import { NO_INTERPRETER } from "../protocol/messages.js";
import { WasmHost } from "./wasm-host.js";

/**
 * Resident memory of one idle host with one interpreter, in MiB (Node itself, then per engine),
 * as measured on Linux x64 with Node 20: idle warm hosts of an MCP server held 184 (Python),
 * 100-105 (JavaScript), 125 (TypeScript) and 100-105 (Bash) MiB RSS. Lower guesses let the
 * budget admit more hosts than it could hold.
 */
const HOST_MB = 75;
const INTERPRETER_MB: Record<EngineLanguage, number> = {
  python: 110,
  javascript: 30,
  typescript: 50,
  bash: 30,
  ruby: 110,
  wasm: 10,
  // @wasmer/sdk: its 4.7 MB runtime module, instantiated in the worker and in its own threads
  // (measured: ~110 MiB more than a host with a wasm interpreter).
  wasix: 110,
};

export interface FleetPolicy {
  /** Warm hosts may not use more than this (estimated), across languages. */
  budgetMb: number;
  /** After this long without a claim, warm hosts shrink to one per language. */
  idleShrinkMs: number;
  /** After this long without a one-shot, a principal's host is ended (the next claims anew). */
  principalIdleMs: number;
}

export interface FleetStats {
  /** Warm hosts ready to be claimed, per language. */
  warm: Partial<Record<EngineLanguage, number>>;
  /** Hosts serving a tenant now. */
  claimed: number;
}

type Base = Omit<EngineHostConfig, "pool">;

/**
 * How long a claimed host's replacement waits for the tenant's first run to end before it starts
 * anyway. Starting a host is a Node start and an interpreter boot: on a small machine, one started
 * the moment a tenant claims a warm host competes with that tenant's run for the CPU (measured on
 * 2 cores: a warm JavaScript one-shot took 56 ms with the refill beside it, 19 ms without).
 */
const REFILL_GRACE_MS = 250;

export class HostFleet {
  private readonly warm = new Map<EngineLanguage, WasmHost[]>();
  private readonly claimed = new Set<WasmHost>();
  private refilling = false;
  private closed = false;
  private lastClaim = Date.now();
  private shrunk = false;
  private readonly shrinkTimer: NodeJS.Timeout;
  /** Released hosts that were killed and have not exited yet. */
  private readonly exiting = new Set<Promise<void>>();

  constructor(
    private readonly base: Base,
    private readonly sizes: PoolSizes,
    private readonly policy: FleetPolicy,
  ) {
    this.shrinkTimer = setInterval(
      () => this.shrinkIfIdle(),
      Math.min(30_000, Math.max(50, policy.idleShrinkMs / 4)),
    );
    this.shrinkTimer.unref();
  }

  /** Starts warming hosts in the background. */
  start(): void {
    void this.refill();
  }

  /**
   * The boot caches became ready after the runtime did (RuntimeOptions.waitForBootCaches):
   * hosts started from now on boot from them (and may read them).
   */
  setBootCaches(caches: Pick<Base, "pythonSnapshot" | "quickjsImage" | "wrap">): void {
    Object.assign(this.base, caches);
    this.cachesPending = null;
    // Principals' hosts started without them would boot every Python run the slow way for their
    // whole life: each goes once idle, and the principal's next one-shot claims a new one.
    for (const host of this.principals.values()) host.retireWhenIdle();
  }

  /**
   * The boot caches are being built (RuntimeOptions.waitForBootCaches false). A Python host
   * waits for them: booting without the snapshot beside its build costs more than the build.
   */
  bootCachesPending(ready: Promise<unknown>): void {
    const pending: Promise<void> = ready.then(
      () => undefined,
      () => undefined,
    );
    this.cachesPending = pending;
    void pending.then(() => {
      if (this.cachesPending === pending) this.cachesPending = null;
    });
  }

  private cachesPending: Promise<void> | null = null;

  /** A RunHost for one tenant: it claims its own engine host on first use. */
  forTenant(): TenantHost {
    return new TenantHost(this);
  }

  private readonly principals = new Map<string, PrincipalHost>();

  /**
   * The RunHost of one principal's one-shot runs: its own engine host, claimed on the first and
   * kept for the next (each run gets a fresh interpreter there). Closing what this returns does
   * not end the host: `releasePrincipal` does, or the principal's idleness, or `close()`.
   */
  forPrincipal(principal: string): RunHost {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    // Each call finds the principal's host anew: one that retired (idle, or started before the
    // boot caches) is replaced by the next one-shot's claim.
    const current = () => this.principalHost(principal);
    return {
      get generation() {
        return current().generation;
      },
      get pid() {
        return current().pid;
      },
      start: (language) => current().start(language),
      run: async (run) => {
        if (run.session !== null)
          throw new PolyboxError("INVALID_ARGUMENT", "a principal's host runs one-shots only");
        return current().run(run);
      },
      dispose: () => undefined,
      close: async () => undefined,
    };
  }

  private principalHost(principal: string): PrincipalHost {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    let host = this.principals.get(principal);
    if (!host) {
      const created = new PrincipalHost(this, () => {
        if (this.principals.get(principal) === created) this.principals.delete(principal);
      });
      host = created;
      this.principals.set(principal, host);
    }
    return host;
  }

  /** Ends a principal's one-shot host (its client went away); its runs in flight fail. */
  async releasePrincipal(principal: string): Promise<void> {
    const host = this.principals.get(principal);
    this.principals.delete(principal);
    await host?.close();
  }

  /** Principals with a one-shot host now. */
  get principalCount(): number {
    return this.principals.size;
  }

  /** The pid of a principal's one-shot host, once it has one (for diagnostics and tests). */
  principalPid(principal: string): number | null {
    return this.principals.get(principal)?.pid ?? null;
  }

  /** @internal An engine host for one tenant, warm for `language` when one is ready. */
  async claim(language: EngineLanguage): Promise<WasmHost> {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    this.lastClaim = Date.now();
    this.shrunk = false;
    if (language === "python" && this.cachesPending && !this.warm.get(language)?.length)
      await this.cachesPending;
    const host = this.takeWarm(language) ?? this.newHost(language);
    this.claimed.add(host);
    // The replacement starts once the tenant's first run is over (TenantHost calls refillSoon),
    // or after a grace if it does not run at once.
    setTimeout(() => void this.refill(), REFILL_GRACE_MS).unref();
    try {
      await host.start(true);
    } catch (error) {
      this.claimed.delete(host);
      throw error;
    }
    return host;
  }

  /**
   * @internal A tenant's first run is over: a good moment to start replacing its host, once the
   * run's answer is on its way (spawning a host blocks this thread for a few milliseconds).
   */
  refillSoon(): void {
    setImmediate(() => void this.refill()).unref();
  }

  /**
   * Ends a tenant's host; it is never handed to anyone else. The host is killed at once; its exit
   * (the kernel tearing down a few hundred MiB) is awaited by `close()`, not by the tenant, so a
   * one-shot's answer does not wait for it.
   */
  async release(host: WasmHost): Promise<void> {
    this.claimed.delete(host);
    const exited = host.close();
    this.exiting.add(exited);
    void exited.finally(() => this.exiting.delete(exited));
  }

  stats(): FleetStats {
    const warm: FleetStats["warm"] = {};
    for (const [language, hosts] of this.warm) warm[language] = hosts.length;
    return { warm, claimed: this.claimed.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.shrinkTimer);
    const principals = [...this.principals.values()];
    this.principals.clear();
    await Promise.all(principals.map((p) => p.close()));
    const all = [...this.claimed, ...[...this.warm.values()].flat()];
    this.warm.clear();
    this.claimed.clear();
    await Promise.all([...all.map((h) => h.close()), ...this.exiting]);
  }

  private takeWarm(language: EngineLanguage): WasmHost | undefined {
    const hosts = this.warm.get(language);
    // Hosts still booting are in the list too: waiting for one beats starting another.
    return hosts?.shift();
  }

  private newHost(language: EngineLanguage): WasmHost {
    return new WasmHost({ ...this.base, pool: { [language]: 1 } });
  }

  private target(language: EngineLanguage): number {
    return this.shrunk ? Math.min(1, this.sizes[language]) : this.sizes[language];
  }

  private estimatedMb(): number {
    let total = 0;
    for (const [language, hosts] of this.warm)
      total += hosts.length * (HOST_MB + INTERPRETER_MB[language]);
    return total;
  }

  /** How long a principal's one-shot host may sit unused before it is ended. */
  get principalIdleMs(): number {
    return this.policy.principalIdleMs;
  }

  private shrinkIfIdle(): void {
    // Idle means no claim for a while and no host starting (a slow start is not idleness).
    if (this.shrunk || this.refilling || Date.now() - this.lastClaim < this.policy.idleShrinkMs)
      return;
    this.shrunk = true;
    for (const [language, hosts] of this.warm)
      for (const extra of hosts.splice(this.target(language))) void extra.close();
  }

  /** Starts warm hosts one at a time until every language has its share or the budget is used. */
  private async refill(): Promise<void> {
    if (this.refilling || this.closed) return;
    this.refilling = true;
    try {
      for (;;) {
        const language = (Object.keys(this.sizes) as EngineLanguage[]).find(
          (l) =>
            (this.warm.get(l)?.length ?? 0) < this.target(l) &&
            this.estimatedMb() + HOST_MB + INTERPRETER_MB[l] <= this.policy.budgetMb,
        );
        if (!language || this.closed) break;
        const host = this.newHost(language);
        const hosts = this.warm.get(language) ?? [];
        this.warm.set(language, hosts);
        hosts.push(host);
        try {
          await host.start();
        } catch (error) {
          const i = hosts.indexOf(host);
          if (i >= 0) hosts.splice(i, 1);
          void host.close();
          if (!this.closed)
            this.base.log?.(
              "warn",
              `could not start a warm ${language} engine host`,
              String(error),
            );
          break;
        }
        if (this.closed) await host.close();
      }
    } finally {
      this.refilling = false;
    }
  }
}

/**
 * The RunHost of one tenant (a sandbox, or a one-shot run): its own engine host process, claimed
 * from the fleet on first use and ended by `close()`. If the process dies the next run starts a
 * new one (and the generation tells the sandbox that interpreter state is gone).
 */
export class TenantHost implements RunHost {
  private host: Promise<WasmHost> | null = null;
  private current: WasmHost | null = null;
  private closed = false;
  private ranOnce = false;

  constructor(private readonly fleet: HostFleet) {}

  get generation(): number {
    return this.current?.generation ?? 0;
  }

  /** How many times this tenant's engine host died and was replaced. */
  get restarts(): number {
    return this.current?.restarts ?? 0;
  }

  /** The engine host's pid on this machine, once it has one. */
  get pid(): number | null {
    return this.current?.pid ?? null;
  }

  async start(language: EngineLanguage = "javascript"): Promise<void> {
    await this.claim(language);
  }

  async run(run: HostRun): Promise<EngineResult> {
    const host = await this.claim(run.language);
    try {
      return await host.run(run);
    } finally {
      if (!this.ranOnce) {
        this.ranOnce = true;
        this.fleet.refillSoon();
      }
    }
  }

  dispose(session: string): void {
    this.current?.dispose(session);
  }

  async captureState(session: string, maxBytes: number): Promise<StateAnswer> {
    if (!this.current) return { captured: false, reason: NO_INTERPRETER };
    return this.current.captureState(session, maxBytes);
  }

  async restoreState(
    session: string,
    language: EngineLanguage,
    state: StateImage,
    memoryMb: number,
    wheels?: WheelBlob[],
  ): Promise<RestoreAnswer> {
    const host = await this.claim(language);
    return host.restoreState(session, language, state, memoryMb, wheels);
  }

  /** What the tenant's engine host holds now (interpreters, sessions, memory). */
  async stats(): Promise<HostStats & { pid: number }> {
    if (!this.current) throw new PolyboxError("ENGINE_FAILED", "the engine host is not started");
    return this.current.stats();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const host = await this.host?.catch(() => null);
    if (host) await this.fleet.release(host);
  }

  private claim(language: EngineLanguage): Promise<WasmHost> {
    if (this.closed) return Promise.reject(new PolyboxError("SANDBOX_CLOSED", "closed"));
    if (!this.host) {
      this.host = this.fleet.claim(language);
      this.host.then(
        (h) => {
          this.current = h;
        },
        () => {
          this.host = null;
        },
      );
    }
    return this.host;
  }
}

/**
 * The engine host of one principal's one-shot runs. Every one-shot of the principal goes to this
 * one process; its first claims a warm host from the fleet. If the process dies, the runs in
 * flight there fail (the channel says so) and the next run starts it again. After
 * `principalIdleMs` with no run it is ended, so an idle principal holds no memory.
 */
class PrincipalHost {
  private readonly tenant: TenantHost;
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly fleet: HostFleet,
    private readonly forget: () => void,
  ) {
    this.tenant = fleet.forTenant();
  }

  get pid(): number | null {
    return this.tenant.pid;
  }

  get generation(): number {
    return this.tenant.generation;
  }

  start(language?: EngineLanguage): Promise<void> {
    return this.held(() => this.tenant.start(language));
  }

  /** A one-shot: always a fresh interpreter, whatever `run.session` says. */
  run(run: HostRun): Promise<EngineResult> {
    return this.held(() => this.tenant.run({ ...run, session: null }));
  }

  /** Runs `work` with this host counted busy, so that it is not ended meanwhile. */
  private async held<T>(work: () => Promise<T>): Promise<T> {
    this.busy();
    try {
      return await work();
    } finally {
      this.idle();
    }
  }

  private busy(): void {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    this.inFlight++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private retiring = false;

  /** Ends this host as soon as no run is in flight; the principal's next run claims another. */
  retireWhenIdle(): void {
    this.retiring = true;
    if (this.inFlight === 0) this.retire();
  }

  private retire(): void {
    this.forget();
    void this.close();
  }

  private idle(): void {
    this.inFlight--;
    if (this.inFlight > 0 || this.closed) return;
    if (this.retiring) {
      this.retire();
      return;
    }
    this.idleTimer = setTimeout(() => this.retire(), this.fleet.principalIdleMs);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.tenant.close();
  }
}

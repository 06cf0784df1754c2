// Trusted side: the sandboxes a long-running server keeps for its clients, by id. Each sandbox
// belongs to the owner that created it (an opaque string the front end chooses: a token, a
// session, a stdio connection); every lookup names the caller, and another owner's sandbox is
// "not found", word for word as an unknown id, so ids cannot be probed. The manager bounds how
// many exist at once, in total and per account (whose limits a sandbox counts against), and
// closes the ones nobody has used for `idleTimeoutMs`, so that a client that forgets
// `close_sandbox` cannot hold memory and disk forever.

import { PolyboxError } from "./errors.js";
import { humanDuration } from "./human.js";
import type { Limits } from "./limits.js";
import type { SandboxRuntime } from "./run-host.js";
import { type EngineKind, Sandbox, type SandboxInfo } from "./sandbox.js";
import type { Language } from "./types.js";

export const DEFAULT_MAX_SANDBOXES = 64;
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;

export interface SandboxManagerOptions {
  runtime: SandboxRuntime;
  /** Sandboxes open at once (default 64). */
  maxSandboxes?: number;
  /** Sandboxes one account may have open at once (default: `maxSandboxes`). */
  maxSandboxesPerClient?: number;
  /** A sandbox unused this long is closed (default 30 min; 0 = never). */
  idleTimeoutMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface ManagedSandboxInfo extends SandboxInfo {
  /** The language `execute_code` uses when the caller names none. */
  defaultLanguage: Language | null;
  /** When the idle timeout will close it, if it stays unused; null when there is no timeout. */
  expiresAt: number | null;
  limits: Limits;
}

/** Who a sandbox belongs to: its owner alone may use it; its account pays for it in limits. */
export interface SandboxOwner {
  owner: string;
  /** Whose per-client limit the sandbox counts against (default: the owner). */
  account?: string;
}

interface Entry {
  sandbox: Sandbox;
  owner: string;
  account: string;
  defaultLanguage: Language | null;
  /** Last time a caller looked the sandbox up (a queued job counts as use before it runs). */
  touchedAt: number;
}

/** How many ids of closed sandboxes are remembered, to say "closed" rather than "never existed". */
const REMEMBERED_CLOSED = 1000;

export class SandboxManager {
  readonly maxSandboxes: number;
  readonly maxSandboxesPerClient: number;
  readonly idleTimeoutMs: number;
  private readonly runtime: SandboxRuntime;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  /** Why a sandbox went away, told only to its owner. */
  private readonly closedReasons = new Map<string, { owner: string; reason: string }>();
  private readonly timer: NodeJS.Timeout | null;
  private creating = 0;
  private readonly creatingBy = new Map<string, number>();
  private closed = false;

  constructor(options: SandboxManagerOptions) {
    this.runtime = options.runtime;
    this.maxSandboxes = options.maxSandboxes ?? DEFAULT_MAX_SANDBOXES;
    this.maxSandboxesPerClient = options.maxSandboxesPerClient ?? this.maxSandboxes;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    if (!Number.isInteger(this.maxSandboxes) || this.maxSandboxes < 1) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `maxSandboxes must be a positive integer, got ${this.maxSandboxes}`,
      );
    }
    if (!Number.isInteger(this.maxSandboxesPerClient) || this.maxSandboxesPerClient < 1) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `maxSandboxesPerClient must be a positive integer, got ${this.maxSandboxesPerClient}`,
      );
    }
    // Sweep a few times per timeout so a sandbox outlives its deadline by at most a quarter of it.
    const every = Math.min(60_000, Math.max(1000, Math.floor(this.idleTimeoutMs / 4)));
    this.timer = this.idleTimeoutMs > 0 ? setInterval(() => void this.sweep(), every) : null;
    this.timer?.unref();
  }

  async create(
    by: SandboxOwner,
    options: { limits?: Partial<Limits>; defaultLanguage?: Language; engine?: EngineKind } = {},
  ): Promise<Sandbox> {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the sandbox manager is closed");
    const owner = checkOwner(by.owner);
    const account = by.account === undefined ? owner : checkOwner(by.account);
    if (this.entries.size + this.creating >= this.maxSandboxes) {
      throw new PolyboxError(
        "TOO_MANY_SANDBOXES",
        `${this.entries.size} sandboxes are open, the most allowed (maxSandboxes=${this.maxSandboxes}); close one first` +
          (this.idleTimeoutMs > 0
            ? `, or wait: idle sandboxes close after ${humanDuration(this.idleTimeoutMs)}`
            : ""),
        { details: { limit: "maxSandboxes", value: this.maxSandboxes } },
      );
    }
    const mine = (this.creatingBy.get(account) ?? 0) + this.countFor(account);
    if (mine >= this.maxSandboxesPerClient) {
      throw new PolyboxError(
        "TOO_MANY_SANDBOXES",
        `this client has ${mine} sandboxes open, the most one client may have (maxSandboxesPerClient=${this.maxSandboxesPerClient}); close one first` +
          (this.idleTimeoutMs > 0
            ? `, or wait: idle sandboxes close after ${humanDuration(this.idleTimeoutMs)}`
            : ""),
        { details: { limit: "maxSandboxesPerClient", value: this.maxSandboxesPerClient } },
      );
    }
    this.creating++;
    this.creatingBy.set(account, (this.creatingBy.get(account) ?? 0) + 1);
    try {
      const sandbox = await Sandbox.create({
        runtime: this.runtime,
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.engine ? { engine: options.engine } : {}),
      });
      this.entries.set(sandbox.id, {
        sandbox,
        owner,
        account,
        defaultLanguage: options.defaultLanguage ?? null,
        touchedAt: this.now(),
      });
      return sandbox;
    } finally {
      this.creating--;
      const left = (this.creatingBy.get(account) ?? 1) - 1;
      if (left > 0) this.creatingBy.set(account, left);
      else this.creatingBy.delete(account);
    }
  }

  /** The owner's open sandbox with this id; marks it used. */
  get(id: string, owner: string): Sandbox {
    const entry = this.entry(id, owner);
    entry.touchedAt = this.now();
    return entry.sandbox;
  }

  defaultLanguage(id: string, owner: string): Language | null {
    return this.entry(id, owner).defaultLanguage;
  }

  info(id: string, owner: string): ManagedSandboxInfo {
    return this.describe(this.entry(id, owner));
  }

  /** The owner's open sandboxes; nobody else's. */
  list(owner: string): ManagedSandboxInfo[] {
    return [...this.entries.values()].filter((e) => e.owner === owner).map((e) => this.describe(e));
  }

  /** Sandboxes open in total, every owner's. */
  get size(): number {
    return this.entries.size;
  }

  /** Sandboxes open that count against this account's limit. */
  countFor(account: string): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.account === account) n++;
    return n;
  }

  /** Destroys a sandbox and its files. Unknown ids are an error, so a typo is not silent. */
  async close(id: string, owner: string): Promise<void> {
    const entry = this.entry(id, owner);
    await this.forget(id, entry, "it was closed");
  }

  /** Closes every sandbox of an owner that went away for good (`reason` is told if it returns). */
  async closeOwner(owner: string, reason: string): Promise<string[]> {
    const mine = [...this.entries].filter(([, e]) => e.owner === owner);
    await Promise.allSettled(mine.map(([id, e]) => this.forget(id, e, reason)));
    return mine.map(([id]) => id);
  }

  /** Closes sandboxes idle past the timeout; returns their ids. */
  async sweep(): Promise<string[]> {
    if (this.idleTimeoutMs <= 0) return [];
    const now = this.now();
    const idle = [...this.entries].filter(
      ([, e]) => !e.sandbox.info().running && now - lastUse(e) >= this.idleTimeoutMs,
    );
    const reason = `it was idle for ${humanDuration(this.idleTimeoutMs)} (idleTimeoutMs) and was closed`;
    await Promise.allSettled(idle.map(([id, e]) => this.forget(id, e, reason)));
    return idle.map(([id]) => id);
  }

  /** Closes every sandbox. Idempotent. */
  async closeAll(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled(
      [...this.entries].map(([id, e]) => this.forget(id, e, "the server shut down")),
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeAll();
  }

  /**
   * The entry, if this owner may see it. Another owner's sandbox (open or closed) gets the very
   * answer an id that never existed gets, so a caller learns nothing about ids not its own.
   */
  private entry(id: string, owner: string): Entry {
    const entry = typeof id === "string" ? this.entries.get(id) : undefined;
    if (entry && !entry.sandbox.isClosed && entry.owner === owner) return entry;
    const closed = typeof id === "string" ? this.closedReasons.get(id) : undefined;
    const why = closed?.owner === owner ? closed.reason : undefined;
    throw new PolyboxError(
      "SANDBOX_NOT_FOUND",
      why
        ? `sandbox ${id} no longer exists: ${why}; create a new one`
        : `no sandbox with id ${JSON.stringify(id)}`,
      { details: { sandboxId: id } },
    );
  }

  private async forget(id: string, entry: Entry, reason: string): Promise<void> {
    this.entries.delete(id);
    this.closedReasons.set(id, { owner: entry.owner, reason });
    if (this.closedReasons.size > REMEMBERED_CLOSED) {
      this.closedReasons.delete(this.closedReasons.keys().next().value!);
    }
    await entry.sandbox.close();
  }

  private describe(entry: Entry): ManagedSandboxInfo {
    const info = entry.sandbox.info();
    return {
      ...info,
      lastUsedAt: lastUse(entry),
      defaultLanguage: entry.defaultLanguage,
      expiresAt: this.idleTimeoutMs > 0 ? lastUse(entry) + this.idleTimeoutMs : null,
      limits: { ...entry.sandbox.limits },
    };
  }
}

function lastUse(entry: Entry): number {
  return Math.max(entry.touchedAt, entry.sandbox.info().lastUsedAt);
}

/** Owners are opaque, but an empty one would be a shared bucket by accident. */
function checkOwner(owner: string): string {
  if (typeof owner !== "string" || owner === "") {
    throw new PolyboxError("INVALID_ARGUMENT", "a sandbox owner must be a non-empty string");
  }
  return owner;
}

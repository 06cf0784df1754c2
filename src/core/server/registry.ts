// Trusted side: the sandboxes a long-running server keeps for its clients, by id. Each sandbox
// belongs to the owner that created it (an opaque string the front end chooses: a token, a
// session, a stdio connection); every lookup names the caller, and another owner's sandbox is
// "not found", word for word as an unknown id, so ids cannot be probed. The manager bounds how
// many exist at once, in total and per account (whose limits a sandbox counts against), and
// closes the ones nobody has used for `idleTimeoutMs` (or that lived `maxLifetimeMs`), so that a
// client that forgets to close one cannot hold memory and disk forever. A named sandbox is
// unloaded instead (its files stay in the data directory). A sandbox that went away says why:
// closed, expired, or (told by the service) lost with an earlier server process.

import { PolyboxError, type PolyboxErrorCode } from "../errors.js";
import { humanDuration } from "../human.js";
import type { Limits } from "../limits.js";
import type { NetSecret } from "../net-secrets.js";
import { type EngineKind, Sandbox, type SandboxInfo } from "../sandbox/index.js";
import type { SandboxRuntime } from "../sandbox/run-host.js";
import type { Language } from "../types.js";

export const DEFAULT_MAX_SANDBOXES = 64;
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_MAX_NAMED_SANDBOXES_PER_CLIENT = 100;

export interface SandboxManagerOptions {
  runtime: SandboxRuntime;
  /** Sandboxes open at once (default 64). */
  maxSandboxes?: number;
  /** Sandboxes one account may have open at once (default: `maxSandboxes`). */
  maxSandboxesPerClient?: number;
  /**
   * Named sandboxes one scope may keep in the data directory, open or not (default 100): a
   * name not there yet is refused past it, until one is deleted.
   */
  maxNamedSandboxesPerClient?: number;
  /** A sandbox unused this long is closed (default 30 min; 0 = never). Runs and queued ones count as use. */
  idleTimeoutMs?: number;
  /** A sandbox open this long is closed whatever it is doing (default 0 = no limit). */
  maxLifetimeMs?: number;
  /**
   * Record the ephemeral sandboxes open in the runtime's data directory, so that a manager of a
   * later process can tell their ids from ones that never existed (default false).
   */
  recordLive?: boolean;
  /** Told of every sandbox opened (awaited before create answers) and closed: a cluster records them. */
  onSandbox?: SandboxEvents;
  /** Clock, for tests. */
  now?: () => number;
}

export interface ManagedSandboxInfo extends SandboxInfo {
  /** The language `execute_code` uses when the caller names none. */
  defaultLanguage: Language | null;
  /** When the idle timeout (or the lifetime limit) will close it; null when neither applies. */
  expiresAt: number | null;
  limits: Limits;
}

/** Listeners of a manager's sandboxes; a failing `opened` fails the create that told it. */
export interface SandboxEvents {
  opened(id: string): Promise<void> | void;
  closed(id: string): void;
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
  /** When this manager opened it. */
  openedAt: number;
  /** Runs queued or running for it: while there are any, it is not idle. */
  holds: number;
}

/** What a new sandbox is: ephemeral, or named (opened from the data directory, or made there). */
export interface CreateOptions {
  limits?: Partial<Limits>;
  defaultLanguage?: Language;
  engine?: EngineKind;
  /** A named sandbox's name: opened if it exists in `scope`, made there if not. */
  name?: string;
  /** Whose names and snapshots (see SandboxOptions.scope). */
  scope?: string;
  /** Hosts its guests may reach, within the runtime's grant (see SandboxOptions.net). */
  net?: string[];
  /** Secrets its guests can use but never read (see SandboxOptions.secrets). */
  secrets?: NetSecret[];
}

/** The option whose limit closed a sandbox that expired. */
type ExpiryLimit = "idleTimeoutMs" | "maxLifetimeMs";

/** How many ids of closed sandboxes are remembered, to say "closed" rather than "never existed". */
const REMEMBERED_CLOSED = 1000;

export class SandboxManager {
  readonly maxSandboxes: number;
  readonly maxSandboxesPerClient: number;
  readonly maxNamedSandboxesPerClient: number;
  readonly idleTimeoutMs: number;
  private readonly runtime: SandboxRuntime;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  /** Why a sandbox went away, told only to its owner. */
  private readonly closedReasons = new Map<
    string,
    { owner: string; reason: string; code: PolyboxErrorCode; limit?: ExpiryLimit }
  >();
  readonly maxLifetimeMs: number;
  private readonly recordLive: boolean;
  private readonly events: SandboxEvents | undefined;
  /** Named sandboxes being opened, by scope and name, so two calls share one open. */
  private readonly opening = new Map<string, Promise<Sandbox>>();
  /** The last named open or fork of each scope: they take turns, so each counts the ones before. */
  private readonly namedTurns = new Map<string, Promise<void>>();
  private liveWrites: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | null;
  private creating = 0;
  private readonly creatingBy = new Map<string, number>();
  private closed = false;

  constructor(options: SandboxManagerOptions) {
    this.runtime = options.runtime;
    this.maxSandboxes = options.maxSandboxes ?? DEFAULT_MAX_SANDBOXES;
    this.maxSandboxesPerClient = options.maxSandboxesPerClient ?? this.maxSandboxes;
    this.maxNamedSandboxesPerClient =
      options.maxNamedSandboxesPerClient ?? DEFAULT_MAX_NAMED_SANDBOXES_PER_CLIENT;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxLifetimeMs = options.maxLifetimeMs ?? 0;
    this.recordLive = options.recordLive ?? false;
    this.events = options.onSandbox;
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
    if (!Number.isInteger(this.maxNamedSandboxesPerClient) || this.maxNamedSandboxesPerClient < 1) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `maxNamedSandboxesPerClient must be a positive integer, got ${this.maxNamedSandboxesPerClient}`,
      );
    }
    if (!(this.maxLifetimeMs >= 0)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `maxLifetimeMs must be 0 (no limit) or more, got ${this.maxLifetimeMs}`,
      );
    }
    // Sweep a few times per timeout so a sandbox outlives its deadline by at most a quarter of it.
    const shortest = Math.min(
      ...[this.idleTimeoutMs, this.maxLifetimeMs].filter((t) => t > 0),
      Number.POSITIVE_INFINITY,
    );
    const every = Math.min(60_000, Math.max(1000, Math.floor(shortest / 4)));
    this.timer = Number.isFinite(shortest) ? setInterval(() => void this.sweep(), every) : null;
    this.timer?.unref();
  }

  async create(by: SandboxOwner, options: CreateOptions = {}): Promise<Sandbox> {
    if (options.name === undefined) {
      return this.admit(by, options.defaultLanguage, () =>
        Sandbox.create({
          runtime: this.runtime,
          ...(options.limits ? { limits: options.limits } : {}),
          ...(options.engine ? { engine: options.engine } : {}),
          ...(options.scope !== undefined ? { scope: options.scope } : {}),
          ...(options.net ? { net: options.net } : {}),
          ...(options.secrets ? { secrets: options.secrets } : {}),
        }),
      );
    }
    const name = options.name;
    const scope = options.scope;
    if (scope === undefined) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        "named sandboxes need a caller with a stable identity (a scope) to keep them under",
      );
    }
    const loaded = this.findNamed(scope, name);
    if (loaded) {
      // The same scope is the same client (a new connection of it): the sandbox is its.
      loaded.owner = checkOwner(by.owner);
      loaded.touchedAt = this.now();
      return loaded.sandbox;
    }
    const key = `${scope}\0${name}`;
    const pending = this.opening.get(key);
    if (pending) return pending;
    const opened = this.namedTurn(scope, name, () =>
      this.admit(by, options.defaultLanguage, () =>
        Sandbox.open(name, {
          runtime: this.runtime,
          scope,
          ...(options.limits ? { limits: options.limits } : {}),
          ...(options.engine ? { engine: options.engine } : {}),
          ...(options.net ? { net: options.net } : {}),
          ...(options.secrets ? { secrets: options.secrets } : {}),
        }),
      ),
    ).finally(() => this.opening.delete(key));
    this.opening.set(key, opened);
    return opened;
  }

  /** Registers a sandbox `make` makes, if the limits on open sandboxes allow one more. */
  async admit(
    by: SandboxOwner,
    defaultLanguage: Language | undefined,
    make: () => Promise<Sandbox>,
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
      const sandbox = await make();
      const now = this.now();
      this.entries.set(sandbox.id, {
        sandbox,
        owner,
        account,
        defaultLanguage: defaultLanguage ?? null,
        touchedAt: now,
        openedAt: now,
        holds: 0,
      });
      this.closedReasons.delete(sandbox.id);
      this.saveLive();
      if (this.events) {
        try {
          await this.events.opened(sandbox.id);
        } catch (error) {
          await this.forget(
            sandbox.id,
            this.entries.get(sandbox.id)!,
            "it could not be recorded",
            "SANDBOX_NOT_FOUND",
          );
          throw error;
        }
      }
      return sandbox;
    } finally {
      this.creating--;
      const left = (this.creatingBy.get(account) ?? 1) - 1;
      if (left > 0) this.creatingBy.set(account, left);
      else this.creatingBy.delete(account);
    }
  }

  /**
   * Runs `open`, which opens or makes the named sandbox `name` of `scope` (Sandbox.open, or a
   * fork to that name), after the scope's earlier ones, if `maxNamedSandboxesPerClient` allows:
   * a name the data directory does not hold yet is one more. What an open that failed left of
   * a name that was not there is removed.
   */
  async namedTurn<T>(scope: string, name: string, open: () => Promise<T>): Promise<T> {
    const state = this.runtime.state;
    const dir = state.sandboxDir(scope, name);
    const before = this.namedTurns.get(scope) ?? Promise.resolve();
    let done!: () => void;
    const gate = new Promise<void>((resolve) => {
      done = resolve;
    });
    const turn = before.then(() => gate);
    this.namedTurns.set(scope, turn);
    await before;
    let made = false;
    try {
      await state.init();
      // Unreadable metadata is the open's to report, as it was before there was a cap.
      const known = await state.readMeta(dir).then(
        (meta) => meta !== null,
        () => true,
      );
      if (!known) {
        made = true;
        const count = await state.countNamed(scope);
        if (count >= this.maxNamedSandboxesPerClient) {
          throw new PolyboxError(
            "TOO_MANY_SANDBOXES",
            `this client keeps ${count} named sandboxes, open or not, the most one client may keep (maxNamedSandboxesPerClient=${this.maxNamedSandboxesPerClient}); delete one first (close it with delete: true, or Sandbox.deleteNamed): a named sandbox that is only closed still counts`,
            {
              details: {
                limit: "maxNamedSandboxesPerClient",
                value: this.maxNamedSandboxesPerClient,
              },
            },
          );
        }
      }
      return await open();
    } catch (error) {
      if (made) await state.dropUnmade(dir).catch(() => undefined);
      throw error;
    } finally {
      done();
      if (this.namedTurns.get(scope) === turn) this.namedTurns.delete(scope);
    }
  }

  private findNamed(scope: string, name: string): Entry | undefined {
    for (const e of this.entries.values())
      if (e.sandbox.name === name && e.sandbox.scope === scope && !e.sandbox.isClosed) return e;
    return undefined;
  }

  /**
   * Marks a sandbox in use until the returned function is called (a run queued or running for
   * it), so that the idle timeout leaves it alone however long the queue is.
   */
  hold(id: string, owner: string): () => void {
    const entry = this.entry(id, owner);
    entry.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holds--;
      entry.touchedAt = this.now();
    };
  }

  /** Writes the ids of the ephemeral sandboxes open, in turn (see `recordLive`). */
  private saveLive(): void {
    if (!this.recordLive || this.closed) return;
    const live = [...this.entries.values()]
      .filter((e) => e.sandbox.name === null)
      .map((e) => ({ id: e.sandbox.id, scope: e.sandbox.scope }));
    const state = this.runtime.state;
    // Best effort: a full disk must not fail the call that opened or closed a sandbox.
    this.liveWrites = this.liveWrites.then(() => state.recordLive(live)).catch(() => undefined);
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

  /**
   * Closes a sandbox: destroys an ephemeral one and its files; unloads a named one (its files
   * stay) unless `remove` is true. Unknown ids are an error, so a typo is not silent.
   */
  async close(id: string, owner: string, options: { delete?: boolean } = {}): Promise<void> {
    const entry = this.entry(id, owner);
    const named = entry.sandbox.name !== null;
    const reason = !named
      ? "it was closed"
      : options.delete
        ? "it was deleted"
        : `it was closed (its files are kept: open the sandbox named "${entry.sandbox.name}" again)`;
    await this.forget(id, entry, reason, "SANDBOX_NOT_FOUND", options);
  }

  /** Closes every sandbox of an owner that went away for good (`reason` is told if it returns). */
  async closeOwner(owner: string, reason: string): Promise<string[]> {
    const mine = [...this.entries].filter(([, e]) => e.owner === owner);
    await Promise.allSettled(
      mine.map(([id, e]) => this.forget(id, e, reason, "SANDBOX_NOT_FOUND")),
    );
    return mine.map(([id]) => id);
  }

  /**
   * Closes sandboxes idle past the timeout (none with a run queued or running) and those past
   * their lifetime (whatever they are doing); returns their ids. Named ones are unloaded.
   */
  async sweep(): Promise<string[]> {
    const now = this.now();
    const old = [...this.entries].filter(
      ([, e]) => this.maxLifetimeMs > 0 && now - e.openedAt >= this.maxLifetimeMs,
    );
    const idle = [...this.entries].filter(
      ([, e]) =>
        !old.some(([, o]) => o === e) &&
        this.idleTimeoutMs > 0 &&
        e.holds === 0 &&
        !e.sandbox.info().running &&
        now - lastUse(e) >= this.idleTimeoutMs,
    );
    const why = (e: Entry, what: string) =>
      e.sandbox.name === null
        ? `${what} and was closed`
        : `${what} and was unloaded (its files are kept: open the sandbox named "${e.sandbox.name}" again)`;
    await Promise.allSettled([
      ...old.map(([id, e]) =>
        this.forget(
          id,
          e,
          why(
            e,
            `it reached its maximum lifetime of ${humanDuration(this.maxLifetimeMs)} (maxLifetimeMs)`,
          ),
          "SANDBOX_EXPIRED",
          { limit: "maxLifetimeMs" },
        ),
      ),
      ...idle.map(([id, e]) =>
        this.forget(
          id,
          e,
          why(e, `it was idle for ${humanDuration(this.idleTimeoutMs)} (idleTimeoutMs)`),
          "SANDBOX_EXPIRED",
          { limit: "idleTimeoutMs" },
        ),
      ),
    ]);
    return [...old, ...idle].map(([id]) => id);
  }

  /** Closes every sandbox. Idempotent. */
  async closeAll(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled(
      [...this.entries].map(([id, e]) =>
        this.forget(id, e, "the server shut down", "SANDBOX_NOT_FOUND"),
      ),
    );
    await this.liveWrites;
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
    const mine = closed?.owner === owner ? closed : undefined;
    throw new PolyboxError(
      mine?.code ?? "SANDBOX_NOT_FOUND",
      mine
        ? `sandbox ${id} no longer exists: ${mine.reason}; create a new one`
        : `no sandbox with id ${JSON.stringify(id)}`,
      {
        details: {
          sandboxId: id,
          ...(mine?.limit
            ? {
                limit: mine.limit,
                value: mine.limit === "idleTimeoutMs" ? this.idleTimeoutMs : this.maxLifetimeMs,
              }
            : {}),
        },
      },
    );
  }

  private async forget(
    id: string,
    entry: Entry,
    reason: string,
    code: PolyboxErrorCode,
    options: { delete?: boolean; limit?: ExpiryLimit } = {},
  ): Promise<void> {
    this.entries.delete(id);
    this.closedReasons.set(id, {
      owner: entry.owner,
      reason,
      code,
      ...(options.limit ? { limit: options.limit } : {}),
    });
    if (this.closedReasons.size > REMEMBERED_CLOSED) {
      this.closedReasons.delete(this.closedReasons.keys().next().value!);
    }
    this.saveLive();
    this.events?.closed(id);
    await entry.sandbox.close(options.delete ? { delete: true } : {});
  }

  private describe(entry: Entry): ManagedSandboxInfo {
    const info = entry.sandbox.info();
    return {
      ...info,
      lastUsedAt: lastUse(entry),
      defaultLanguage: entry.defaultLanguage,
      expiresAt: expiry(
        this.idleTimeoutMs > 0 ? lastUse(entry) + this.idleTimeoutMs : null,
        this.maxLifetimeMs > 0 ? entry.openedAt + this.maxLifetimeMs : null,
      ),
      limits: { ...entry.sandbox.limits },
    };
  }
}

function expiry(idle: number | null, lifetime: number | null): number | null {
  if (idle === null) return lifetime;
  return lifetime === null ? idle : Math.min(idle, lifetime);
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

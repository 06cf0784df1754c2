// Trusted side: a Sandbox is one workspace plus, per language, one interpreter that keeps its
// state between runs. Runs of one sandbox are serialized (they share files and state); runs of
// different sandboxes go in parallel. Everything a caller passes is checked (run-request.ts)
// before the engine host sees it; a run's own steps are in run-path.ts, what outlives its
// interpreters in persistence.ts.

import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { PolyboxError } from "../errors.js";
import { type Limits, resolveLimits } from "../limits.js";
import { type NetSecret, NetSecrets } from "../net-secrets.js";
import { packageRequirements } from "../packages/python-deps.js";
import { LANGUAGES, type Language, type RunOptions, type RunResult } from "../types.js";
import { SandboxFiles } from "./files.js";
import { Interpreters, type SandboxParts } from "./interpreters.js";
import {
  captureFiles,
  captureStates,
  deleteNamed,
  linkOrCopy,
  type NamedSandboxInfo,
  namedSandboxes,
  pendingFromRecords,
  stateOf,
  withinCeilings,
} from "./persistence.js";
import { defaultRuntime, type EngineKind, type RunHost, type SandboxRuntime } from "./run-host.js";
import { execute } from "./run-path.js";
import {
  buildRequest,
  checkCode,
  checkEngineLanguage,
  checkNet,
  checkSecrets,
  checkWasmerPackage,
} from "./run-request.js";
import {
  checkName,
  LOCAL_SCOPE,
  type SandboxMeta,
  type SnapshotInfo,
  type StateRecord,
} from "./state.js";
import { Workspace } from "./workspace.js";

export type { EngineKind } from "./run-host.js";

export interface SandboxOptions {
  runtime?: SandboxRuntime;
  /**
   * `wasm`: the WebAssembly engines. `native`: the machine's real interpreters in a kernel jail
   * (needs a runtime with isolation `native` or `auto`). Default: the runtime's isolation.
   */
  engine?: EngineKind;
  /** Limits for this sandbox, within the runtime's ceilings. */
  limits?: Partial<Limits>;
  /**
   * Hosts this sandbox's guests may reach, narrower than the runtime's `permissions.net` (each
   * entry must lie within it). Default: the runtime's grant. Not kept with a named sandbox.
   */
  net?: string[];
  /**
   * Secrets this sandbox's guests can use but never read, besides the runtime's (`net.secrets`):
   * each guest sees a placeholder in the environment variable `name`, and the trusted side puts
   * the value in place of it only in requests to the secret's hosts, which must lie within the
   * runtime's grant. One named as a runtime's secret replaces it. Never stored: not kept with a
   * named sandbox or a snapshot.
   */
  secrets?: NetSecret[];
  /**
   * Whose named sandboxes and snapshots these are, in the runtime's data directory (default
   * "local"): another scope's names and snapshot ids are unknown to this one.
   */
  scope?: string;
}

/** What a sandbox's files are, beside its id: where they live and under which name. */
interface Placement {
  id?: string;
  /** A named sandbox's name; null for an ephemeral one. */
  name: string | null;
  scope: string;
  /** A named sandbox's directory in the data directory. */
  home?: string;
  /** A one-shot's principal: it runs in that principal's process, not one of its own. */
  principal?: string;
}

export interface SandboxInfo {
  id: string;
  /** A named sandbox's name (its files outlive the process); null for an ephemeral one. */
  name: string | null;
  createdAt: number;
  lastUsedAt: number;
  languages: Language[];
  engine: EngineKind;
  fileCount: number;
  bytes: number;
  running: boolean;
  closed: boolean;
}

export class Sandbox {
  readonly id: string;
  readonly files: SandboxFiles;
  readonly limits: Readonly<Limits>;
  /** @internal */
  readonly workspace: Workspace;
  private createdAt = Date.now();
  /** Which engines run this sandbox's code, and the host that runs them. */
  readonly engine: EngineKind;
  private readonly host: RunHost;
  /** What it knows of its interpreters (see interpreters.ts). */
  private readonly interpreters: Interpreters;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly untrack: () => void;
  /** A named sandbox's name: its files live in the data directory and outlive the process. */
  readonly name: string | null;
  /** @internal Whose names and snapshots these are (see SandboxOptions.scope). */
  readonly scope: string;
  private readonly home: string | null;
  private snapshotted = false;
  /** The sandbox's own network grant (within the runtime's), or null for the runtime's. */
  private netGrant: readonly string[] | null = null;
  /** The secrets its guests can use: the runtime's and its own. */
  private netSecrets: NetSecrets = NetSecrets.none;

  private constructor(
    private readonly runtime: SandboxRuntime,
    limits: Limits,
    engine: EngineKind | undefined,
    place: Placement,
  ) {
    this.id = place.id ?? randomUUID();
    this.name = place.name;
    this.scope = place.scope;
    this.home = place.home ?? null;
    this.limits = limits;
    this.engine = engine ?? (runtime.isolation === "native" ? "native" : "wasm");
    if (this.engine !== "wasm" && this.engine !== "native")
      throw new PolyboxError("INVALID_ARGUMENT", `engine must be "wasm" or "native"`);
    // Every sandbox has a process of its own (its engine host, or its native jail); a one-shot
    // runs in its principal's, in a fresh interpreter.
    this.host = runtime.hostFor(this.engine, this.id, limits.workspaceQuotaBytes, place.principal);
    this.workspace = new Workspace(
      limits.workspaceQuotaBytes,
      place.home
        ? { home: place.home, durable: true, charge: runtime.state.chargeFor(place.home) }
        : {},
    );
    this.files = new SandboxFiles(this);
    this.interpreters = new Interpreters(this.id, this.host);
    this.untrack = runtime.track(() => this.close());
  }

  static async create(options: SandboxOptions = {}): Promise<Sandbox> {
    return Sandbox.make(options);
  }

  /** @internal The sandbox of one one-shot run of `principal` (see `run`). */
  static oneShot(options: SandboxOptions, principal: string): Promise<Sandbox> {
    return Sandbox.make(options, principal);
  }

  private static async make(options: SandboxOptions, principal?: string): Promise<Sandbox> {
    const runtime = options.runtime ?? (await defaultRuntime());
    const limits = resolveLimits(runtime.limits, options.limits, runtime.maxLimits);
    const net = checkNet(runtime, options.net);
    const secrets = checkSecrets(runtime, options.secrets);
    const sandbox = new Sandbox(runtime, limits, options.engine, {
      name: null,
      scope: options.scope ?? LOCAL_SCOPE,
      ...(principal !== undefined ? { principal } : {}),
    });
    sandbox.netGrant = net;
    sandbox.netSecrets = secrets;
    return sandbox;
  }

  /** The hosts this sandbox's guests may reach, when narrower than the runtime's grant. */
  get net(): readonly string[] | null {
    return this.netGrant;
  }

  /**
   * Opens the named sandbox `name` of the runtime's data directory, creating it if there is none:
   * its files outlive the process, and opening it again later (in this process or another) brings
   * them back. Its interpreters do not: the first run after a reopen says `stateLost`. Limits
   * and engine are those it was created with unless `options` says otherwise.
   */
  static async open(name: string, options: SandboxOptions = {}): Promise<Sandbox> {
    return Sandbox.openNamed(checkName(name), options, false);
  }

  private static async openNamed(
    name: string,
    options: SandboxOptions,
    mustBeNew: boolean,
  ): Promise<Sandbox> {
    const runtime = options.runtime ?? (await defaultRuntime());
    const scope = options.scope ?? LOCAL_SCOPE;
    const net = checkNet(runtime, options.net);
    const secrets = checkSecrets(runtime, options.secrets);
    const state = runtime.state;
    await state.init();
    const home = state.sandboxDir(scope, name);
    await fs.mkdir(home, { recursive: true });
    await state.lock(home, name);
    let sandbox: Sandbox | null = null;
    try {
      const meta = await state.readMeta(home);
      if (meta && mustBeNew) {
        throw new PolyboxError("INVALID_ARGUMENT", `a sandbox named "${name}" exists already`, {
          details: { name },
        });
      }
      if (meta && options.engine && options.engine !== meta.engine) {
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `the sandbox named "${name}" uses engine "${meta.engine}", not "${options.engine}"`,
          { details: { name } },
        );
      }
      const limits = resolveLimits(
        runtime.limits,
        options.limits ?? (meta ? withinCeilings(meta.limits, runtime.maxLimits) : undefined),
        runtime.maxLimits,
      );
      const place = { name, scope, home, ...(meta ? { id: meta.id } : {}) };
      sandbox = new Sandbox(runtime, limits, meta?.engine ?? options.engine, place);
      sandbox.netGrant = net;
      sandbox.netSecrets = secrets;
      if (!meta) {
        const record: SandboxMeta = {
          version: 1,
          id: sandbox.id,
          name,
          engine: sandbox.engine,
          limits: { ...limits },
          createdAt: sandbox.createdAt,
          scope: path.basename(state.scopeDir(scope)),
        };
        await state.createNamed(home, record);
      } else sandbox.createdAt = meta.createdAt;
      await sandbox.workspace.load();
      if (meta)
        for (const language of LANGUAGES)
          sandbox.interpreters.freshState.set(language, { why: "reopened" });
      return sandbox;
    } catch (error) {
      if (sandbox) await sandbox.close();
      else await state.unlock(home);
      throw error;
    }
  }

  /**
   * A new sandbox with the files of `source`: a live sandbox (as its files are now) or the id of
   * a snapshot (of `options.scope`). Named if `options.name` is given (a name not in use), else
   * ephemeral. Files are hard links where the file system allows, so a fork costs little disk.
   */
  static async fork(
    source: Sandbox | string,
    options: SandboxOptions & { name?: string } = {},
  ): Promise<Sandbox> {
    const live = source instanceof Sandbox ? source : null;
    const runtime = live ? live.runtime : (options.runtime ?? (await defaultRuntime()));
    const scope = live ? live.scope : (options.scope ?? LOCAL_SCOPE);
    const state = runtime.state;
    await state.init();
    const taken = live ? null : await state.snapshot(scope, String(source));
    const name = options.name === undefined ? undefined : checkName(options.name);
    const settings: SandboxOptions = {
      runtime,
      scope,
      ...(options.limits || live ? { limits: options.limits ?? { ...live!.limits } } : {}),
      ...(options.engine || live ? { engine: options.engine ?? live!.engine } : {}),
      ...(options.net || live?.netGrant ? { net: [...(options.net ?? live!.netGrant ?? [])] } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
    };
    const target = name
      ? await Sandbox.openNamed(name, settings, true)
      : await Sandbox.create(settings);
    try {
      // The source's interpreters' state: the snapshot's, or captured from the live source now.
      const states = taken
        ? pendingFromRecords(taken.states)
        : await live!.exclusive(() => captureStates(live!.parts()));
      for (const [language, captured] of states) {
        target.interpreters.freshState.set(language, {
          why: "forked",
          ...(captured.pending ? { state: captured.pending } : {}),
          ...(captured.info.reason ? { reason: captured.info.reason } : {}),
        });
      }
      if (live && target.engine === live.engine)
        for (const [name, wheel] of live.interpreters.wheels)
          target.interpreters.wheels.set(name, wheel);
      await target.exclusive(async () => {
        if (taken) {
          await state.serial(() =>
            target.workspace.replace(taken.entries, (dest, e) =>
              state.objects.materialize(e.hash!, dest, e.mtimeMs),
            ),
          );
        } else {
          // The source's files are never written in place, so linking to them is linking to
          // content that stays as it is.
          await live!.exclusive(async () => {
            const entries = await live!.workspace.describe();
            await target.workspace.replace(entries, async (dest, e) =>
              linkOrCopy(await live!.workspace.hostFile(e.path), dest, e.mtimeMs),
            );
          });
        }
      });
    } catch (error) {
      await target.close({ delete: true });
      throw error;
    }
    return target;
  }

  /**
   * Records the workspace's files and, where an engine can capture it faithfully, each
   * interpreter's state as a snapshot (an id to `restore` or `fork` from later); the info says
   * per language what was kept (see SnapshotStateInfo). Counts against `maxSnapshotsPerSandbox`,
   * `maxSnapshotBytesPerSandbox` and the data directory's `dataDirQuotaBytes`. A snapshot of an
   * ephemeral sandbox goes when the sandbox closes; a named sandbox's, when it is deleted.
   */
  async snapshot(options: { label?: string } = {}): Promise<SnapshotInfo> {
    const label = options.label ?? null;
    if (label !== null && (typeof label !== "string" || label.length > 200)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        "a snapshot label is a string of at most 200 characters",
      );
    }
    return this.exclusive(async () => {
      const state = this.runtime.state;
      await state.init();
      await state.checkSnapshotLimits(this.scope, this.id, this.workspace.usedBytes);
      const captured = await captureStates(this.parts());
      let bytes = this.workspace.usedBytes;
      for (const c of captured.values()) bytes += c.info.bytes;
      await state.checkSnapshotLimits(this.scope, this.id, bytes);
      this.snapshotted = true;
      return state.serial(async () => {
        const entries = await captureFiles(this.workspace, state);
        const records: Partial<Record<Language, StateRecord>> = {};
        for (const [language, c] of captured) {
          const p = c.pending;
          const hash = p?.hash ?? (p?.data ? await state.objects.storeState(p.data) : undefined);
          records[language] = { ...c.info, ...(hash ? { hash } : {}) };
        }
        return state.saveSnapshot(
          this.scope,
          { label, sandboxId: this.id, sandboxName: this.name },
          entries,
          this.name === null,
          records,
        );
      });
    });
  }

  /**
   * Puts the workspace back as a snapshot (of this scope) recorded it. The interpreters are
   * replaced: each language's next run gets the state the snapshot holds of it (see
   * SnapshotInfo.state), or starts fresh and says `stateLost`; installed packages are installed
   * again.
   */
  async restore(snapshotId: string): Promise<SnapshotInfo> {
    return this.exclusive(async () => {
      const state = this.runtime.state;
      await state.init();
      const { info, entries, states } = await state.snapshot(this.scope, snapshotId);
      await state.serial(() =>
        this.workspace.replace(entries, (dest, e) =>
          state.objects.materialize(e.hash!, dest, e.mtimeMs),
        ),
      );
      for (const language of LANGUAGES) this.host.dispose(this.sessionKey(language));
      this.interpreters.synced.clear();
      const pending = pendingFromRecords(states);
      for (const language of LANGUAGES) {
        const captured = pending.get(language);
        this.interpreters.freshState.set(language, {
          why: "restored",
          ...(captured?.pending ? { state: captured.pending } : {}),
          ...(captured?.info.reason ? { reason: captured.info.reason } : {}),
        });
      }
      return info;
    });
  }

  /** The snapshots of a scope of the runtime's data directory (all, or one sandbox's). */
  static async listSnapshots(
    options: { runtime?: SandboxRuntime; scope?: string; sandboxId?: string } = {},
  ): Promise<SnapshotInfo[]> {
    const state = await stateOf(options.runtime);
    return state.listSnapshots(options.scope ?? LOCAL_SCOPE, options.sandboxId);
  }

  static async deleteSnapshot(
    id: string,
    options: { runtime?: SandboxRuntime; scope?: string } = {},
  ): Promise<void> {
    const state = await stateOf(options.runtime);
    await state.deleteSnapshot(options.scope ?? LOCAL_SCOPE, id);
  }

  /** The named sandboxes of a scope, open or not. */
  static async listNamed(
    options: { runtime?: SandboxRuntime; scope?: string } = {},
  ): Promise<NamedSandboxInfo[]> {
    return namedSandboxes(await stateOf(options.runtime), options.scope ?? LOCAL_SCOPE);
  }

  /** Deletes a named sandbox that is not open (an open one: `close({ delete: true })`). */
  static async deleteNamed(
    name: string,
    options: { runtime?: SandboxRuntime; scope?: string } = {},
  ): Promise<void> {
    await deleteNamed(await stateOf(options.runtime), options.scope ?? LOCAL_SCOPE, name);
  }

  /** Runs code in this sandbox. The outcome (including limits hit) is the result; bad input throws. */
  async run(language: Language, code: string, options: RunOptions = {}): Promise<RunResult> {
    return this.runThen(language, code, options, async (result) => result);
  }

  /**
   * @internal Like `run`, then `after` with the result before any other operation of this
   * sandbox starts, so that what `after` writes (with `workspace`, not `files`, whose calls would
   * wait behind it) is in place before the next run, and no queued run delays it.
   */
  async runThen<T>(
    language: Language,
    code: string,
    options: RunOptions,
    after: (result: RunResult) => Promise<T>,
  ): Promise<T> {
    const lang = checkEngineLanguage(language, this.engine);
    checkCode(code, this.limits);
    const request = buildRequest(code, options, this.requestParts());
    checkWasmerPackage(lang, options);
    return this.exclusive(async () =>
      after(await execute(this.parts(), lang, request, options, this.sessionKey(lang))),
    );
  }

  /**
   * Installs Python packages (and their dependencies) into this sandbox's Python interpreter,
   * from the runtime's package sources. Returns the distribution names installed.
   */
  async installPackages(packages: string | string[]): Promise<string[]> {
    const requirements = packageRequirements(packages);
    return this.exclusive(async () => {
      const wheels = await this.runtime.packages.resolve(
        requirements,
        this.interpreters.wheels,
        this.engine,
      );
      if (wheels.length > 0) {
        const request = buildRequest("", {}, this.requestParts());
        const r = await execute(
          this.parts(),
          "python",
          request,
          {},
          this.sessionKey("python"),
          wheels,
        );
        if (r.status !== "ok") {
          throw new PolyboxError(
            "ENGINE_FAILED",
            `installing ${wheels.map((w) => w.fileName).join(", ")} failed: ${r.message ?? r.stderr.trim()}`,
          );
        }
      }
      return [...new Set(requirements.map((r) => r.name))];
    });
  }

  /** @internal Like `run`, in a fresh pool interpreter that is discarded afterwards (one-shot). */
  async runOnce(language: Language, code: string, options: RunOptions = {}): Promise<RunResult> {
    const lang = checkEngineLanguage(language, this.engine);
    checkCode(code, this.limits);
    const request = buildRequest(code, options, this.requestParts());
    checkWasmerPackage(lang, options);
    return this.exclusive(() => execute(this.parts(), lang, request, options, null));
  }

  /** What a request takes of this sandbox: its limits, their ceilings and its secrets. */
  private requestParts(): Parameters<typeof buildRequest>[2] {
    return { limits: this.limits, maxLimits: this.runtime.maxLimits, netSecrets: this.netSecrets };
  }

  /** What its run path and its snapshots work on. */
  private parts(): SandboxParts {
    return {
      runtime: this.runtime,
      engine: this.engine,
      limits: this.limits,
      workspace: this.workspace,
      home: this.home,
      interpreters: this.interpreters,
      netGrant: this.netGrant,
      netSecrets: this.netSecrets,
    };
  }

  private sessionKey(language: Language): string {
    return this.interpreters.sessionKey(language);
  }

  /** @internal Runs `fn` after every earlier operation of this sandbox has finished. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const next = this.queue.then(() => {
      this.assertOpen();
      return fn();
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** @internal */
  assertOpen(): void {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", `sandbox ${this.id} is closed`);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** @internal The pid of the process that runs this sandbox's code, once it has one. */
  get hostPid(): number | null {
    return this.host.pid ?? null;
  }

  info(): SandboxInfo {
    return {
      id: this.id,
      name: this.name,
      createdAt: this.createdAt,
      lastUsedAt: this.interpreters.lastUsedAt,
      languages: [...this.interpreters.synced.keys()],
      engine: this.engine,
      fileCount: this.workspace.fileCount,
      bytes: this.workspace.usedBytes,
      running: this.interpreters.runs > 0,
      closed: this.closed,
    };
  }

  /**
   * Ends the sandbox's interpreters. An ephemeral sandbox is destroyed with every byte of its
   * workspace and its snapshots. A named one is unloaded: its files stay for the next `open`,
   * unless `delete` is true, which destroys it and its snapshots too. Idempotent.
   */
  async close(options: { delete?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.untrack();
    for (const language of LANGUAGES) this.host.dispose(this.sessionKey(language));
    await this.queue;
    await this.host.close?.();
    const state = this.runtime.state;
    if (this.home === null) {
      await this.workspace.destroy();
      if (this.snapshotted) await state.dropSnapshotsOf(this.scope, this.id);
    } else if (options.delete) {
      await this.workspace.destroy();
      await state.unlock(this.home);
      await state.deleteNamed(this.scope, this.home, this.id);
    } else {
      this.workspace.unload();
      await state.unlock(this.home);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

// Trusted side: a Sandbox is one workspace plus, per language, one interpreter that keeps its
// state between runs. Runs of one sandbox are serialized (they share files and state); runs of
// different sandboxes go in parallel. Everything a caller passes is checked here, before the
// engine host sees it.

import { randomUUID } from "node:crypto";
import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { exitCodeOf } from "../../protocol/endings.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import {
  type EngineLanguage,
  type EngineResult,
  NO_INTERPRETER,
  type RunRequest,
  type StateImage,
  WASM_ONLY_LANGUAGES,
} from "../../protocol/messages.js";
import { isPolyboxError, PolyboxError } from "../errors.js";
import { describeLimit, type Limits, MAX_WORKSPACE_ENTRIES, resolveLimits } from "../limits.js";
import { type NetSecret, NetSecrets } from "../net-secrets.js";
import type { Wheel } from "../packages.js";
import { inlineDependencies, packageRequirements } from "../python-deps.js";
import { collectRichOutput } from "../rich-output.js";
import { defaultRuntime, type EngineKind, type RunHost, type SandboxRuntime } from "../run-host.js";
import {
  checkName,
  type DataDir,
  LOCAL_SCOPE,
  type SandboxMeta,
  type SnapshotInfo,
  type SnapshotStateInfo,
  type StateRecord,
} from "../state.js";
import {
  type FileInfo,
  LANGUAGES,
  type Language,
  type RunOptions,
  type RunResult,
} from "../types.js";
import { parseWasmerPackage } from "../wasmer-packages.js";
import { resolveWorkspacePath, Workspace, type WorkspaceEntry } from "../workspace.js";

export type { EngineKind } from "../run-host.js";

/** How long past a run's timeout the trusted side may take to store the files it changed. */
const STORE_GRACE_MS = 2_000;

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

/** Why a language's interpreter in a sandbox is new while its files are not. */
type Fresh = "reopened" | "restored" | "forked";

const FRESH_NOTES: Record<Fresh, string> = {
  reopened:
    "this named sandbox was reopened: its files are as they were, but its interpreters are new (variables, imports and installed packages from before are gone)",
  restored:
    "this sandbox's files were restored from a snapshot: its interpreters are new (variables and imports from before are gone; installed packages are installed again)",
  forked:
    "this sandbox is a fork: it has its source's files, but this interpreter is new (the snapshot held none of its state)",
};

/** What a restore brought back, per kind of state, for the first run's notes. */
const RESTORED_NOTES: Record<StateImage["kind"], (language: Language, why: Fresh) => string> = {
  memory: (language, why) =>
    `this sandbox was ${why === "forked" ? "forked" : "restored from a snapshot"}: its ${language} interpreter was restored whole, as it was when the state was captured`,
  globals: (language, why) =>
    `this sandbox was ${why === "forked" ? "forked" : "restored from a snapshot"}: its ${language} interpreter is new, with the global values and imported modules that could be captured put back`,
};

/** A language's interpreter state waiting for that language's next run to be put back. */
interface PendingState {
  kind: StateImage["kind"];
  /** The bytes, or the object in the data directory that holds them. */
  data?: Uint8Array;
  hash?: string;
  bytes: number;
  notKept: string[];
}

/** Why a language's interpreter is new, and the state to put into it, if there is one. */
interface FreshEntry {
  why: Fresh;
  state?: PendingState;
  /** Why the snapshot holds no state of this language. */
  reason?: string;
}

/** A state captured for a snapshot or a fork: what the info says, and its bytes. */
interface CapturedState {
  info: SnapshotStateInfo;
  pending?: PendingState;
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

const RUN_OPTION_KEYS = new Set([
  "timeoutMs",
  "memoryMb",
  "maxOutputBytes",
  "stdin",
  "args",
  "wasmerPackage",
  "env",
  "signal",
  "onOutput",
]);

/** `wasmerPackage` is for `wasix` runs and names one package exactly (INVALID_ARGUMENT if not). */
function checkWasmerPackage(language: Language, options: RunOptions): void {
  if (options.wasmerPackage === undefined) return;
  if (language !== "wasix")
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `wasmerPackage is for language "wasix" (Wasmer packages run on its engine), not "${language}"`,
      { details: { limit: "wasmerPackage" } },
    );
  parseWasmerPackage(options.wasmerPackage);
}

/** A sandbox's own network grant, checked against the runtime's. */
/** The runtime's secrets and a sandbox's own, each of whose hosts the runtime grants. */
function checkSecrets(runtime: SandboxRuntime, secrets: NetSecret[] | undefined): NetSecrets {
  if (secrets === undefined) return runtime.netSecrets;
  const own = NetSecrets.create(secrets, "secrets", (host) => runtime.checkNetGrant([host]));
  return runtime.netSecrets.with(own);
}

function checkNet(runtime: SandboxRuntime, net: unknown): readonly string[] | null {
  if (net === undefined) return null;
  if (!Array.isArray(net) || net.length > 256 || net.some((h) => typeof h !== "string"))
    throw new PolyboxError("INVALID_ARGUMENT", "net must be an array of at most 256 host strings");
  runtime.checkNetGrant(net);
  return [...net];
}

export function checkLanguage(language: unknown): Language {
  if (typeof language === "string" && (LANGUAGES as readonly string[]).includes(language))
    return language as Language;
  throw new PolyboxError(
    "UNSUPPORTED_LANGUAGE",
    `unsupported language ${JSON.stringify(language)}; supported languages: ${LANGUAGES.join(", ")}`,
  );
}

export class SandboxFiles {
  /** @internal */
  constructor(private readonly sandbox: Sandbox) {}

  /** Writes text (UTF-8) or bytes to a workspace path, creating parent directories. */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    if (typeof data !== "string" && !(data instanceof Uint8Array)) {
      throw new PolyboxError("INVALID_ARGUMENT", "file content must be a string or a Uint8Array");
    }
    const rel = resolveWorkspacePath(path, { file: true });
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await this.sandbox.exclusive(() => this.sandbox.workspace.write(rel, bytes));
  }

  /** Reads a file as bytes, or as text when `encoding` is "utf8". */
  read(path: string): Promise<Uint8Array>;
  read(path: string, encoding: "utf8"): Promise<string>;
  async read(path: string, encoding?: "utf8"): Promise<Uint8Array | string> {
    const rel = resolveWorkspacePath(path);
    const bytes = await this.sandbox.exclusive(() => this.sandbox.workspace.read(rel));
    return encoding === "utf8" ? new TextDecoder().decode(bytes) : bytes;
  }

  /** Lists files and directories under `path` (the whole workspace by default), recursively. */
  async list(path = ""): Promise<FileInfo[]> {
    const rel = resolveWorkspacePath(path, { allowRoot: true });
    this.sandbox.assertOpen();
    return this.sandbox.workspace.list(rel);
  }

  /** Removes a file or a directory tree. */
  async remove(path: string): Promise<void> {
    const rel = resolveWorkspacePath(path);
    await this.sandbox.exclusive(async () => {
      await this.sandbox.workspace.remove(rel);
    });
  }
}

export class Sandbox {
  readonly id: string;
  readonly files: SandboxFiles;
  readonly limits: Readonly<Limits>;
  /** @internal */
  readonly workspace: Workspace;
  private createdAt = Date.now();
  private lastUsedAt = Date.now();
  /** Per language: the workspace generation its interpreter has seen, or null for "send everything". */
  private readonly synced = new Map<Language, number | null>();
  /**
   * Languages whose interpreter was replaced during a run its caller cancelled: whoever cancels
   * often stops listening (an MCP client that sent notifications/cancelled never gets the
   * answer), so the next run of that language says the state was lost too.
   */
  private readonly lossToRetell = new Set<Language>();
  /** Python packages installed in this sandbox, re-installed whenever its interpreter is fresh. */
  private readonly wheels = new Map<string, Wheel>();
  private hostGeneration: number;
  /** Which engines run this sandbox's code, and the host that runs them. */
  readonly engine: EngineKind;
  private readonly host: RunHost;
  private queue: Promise<unknown> = Promise.resolve();
  private runs = 0;
  private closed = false;
  private readonly untrack: () => void;
  /** A named sandbox's name: its files live in the data directory and outlive the process. */
  readonly name: string | null;
  /** @internal Whose names and snapshots these are (see SandboxOptions.scope). */
  readonly scope: string;
  private readonly home: string | null;
  /** Per language: why its next interpreter is new, and the state to restore into it. */
  private readonly freshState = new Map<Language, FreshEntry>();
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
    this.hostGeneration = this.host.generation;
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
        for (const language of LANGUAGES) sandbox.freshState.set(language, { why: "reopened" });
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
        : await live!.exclusive(() => live!.captureStates());
      for (const [language, captured] of states) {
        target.freshState.set(language, {
          why: "forked",
          ...(captured.pending ? { state: captured.pending } : {}),
          ...(captured.info.reason ? { reason: captured.info.reason } : {}),
        });
      }
      if (live && target.engine === live.engine)
        for (const [name, wheel] of live.wheels) target.wheels.set(name, wheel);
      await target.exclusive(async () => {
        if (taken) {
          await state.serial(() =>
            target.workspace.replace(taken.entries, (dest, e) =>
              state.materialize(e.hash!, dest, e.mtimeMs),
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
      const captured = await this.captureStates();
      let bytes = this.workspace.usedBytes;
      for (const c of captured.values()) bytes += c.info.bytes;
      await state.checkSnapshotLimits(this.scope, this.id, bytes);
      this.snapshotted = true;
      return state.serial(async () => {
        const entries = await this.captureFiles(state);
        const records: Partial<Record<Language, StateRecord>> = {};
        for (const [language, c] of captured) {
          const p = c.pending;
          const hash = p?.hash ?? (p?.data ? await state.storeState(p.data) : undefined);
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

  /** Every entry of the workspace, each file's content in the object store. */
  private async captureFiles(state: DataDir): Promise<WorkspaceEntry[]> {
    const entries = await this.workspace.describe((host) => state.ingest(host));
    for (const e of entries) {
      // A hash known from before may name an object collected since (its snapshots deleted).
      if (e.hash && !(await state.hasObject(e.hash)))
        e.hash = await state.ingest(await this.workspace.hostFile(e.path));
    }
    return entries;
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
        this.workspace.replace(entries, (dest, e) => state.materialize(e.hash!, dest, e.mtimeMs)),
      );
      for (const language of LANGUAGES) this.host.dispose(this.sessionKey(language));
      this.synced.clear();
      const pending = pendingFromRecords(states);
      for (const language of LANGUAGES) {
        const captured = pending.get(language);
        this.freshState.set(language, {
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
    const state = await stateOf(options.runtime);
    return (await state.listNamed(options.scope ?? LOCAL_SCOPE)).map((m) => ({
      id: m.id,
      name: m.name,
      engine: m.engine,
      createdAt: m.createdAt,
      bytes: state.bytesOf(state.sandboxDir(options.scope ?? LOCAL_SCOPE, m.name)),
      limits: m.limits,
    }));
  }

  /** Deletes a named sandbox that is not open (an open one: `close({ delete: true })`). */
  static async deleteNamed(
    name: string,
    options: { runtime?: SandboxRuntime; scope?: string } = {},
  ): Promise<void> {
    const state = await stateOf(options.runtime);
    const scope = options.scope ?? LOCAL_SCOPE;
    const home = state.sandboxDir(scope, checkName(name));
    const meta = await state.readMeta(home);
    if (!meta) {
      throw new PolyboxError("SANDBOX_NOT_FOUND", `no sandbox named ${JSON.stringify(name)}`, {
        details: { name },
      });
    }
    await state.lock(home, name);
    try {
      await state.deleteNamed(scope, home, meta.id);
    } finally {
      await state.unlock(home);
    }
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
    const lang = this.checkEngineLanguage(language);
    this.checkCode(code);
    const request = this.buildRequest(code, options);
    checkWasmerPackage(lang, options);
    return this.exclusive(async () =>
      after(await this.execute(lang, request, options, this.sessionKey(lang))),
    );
  }

  /**
   * Installs Python packages (and their dependencies) into this sandbox's Python interpreter,
   * from the runtime's package sources. Returns the distribution names installed.
   */
  async installPackages(packages: string | string[]): Promise<string[]> {
    const requirements = packageRequirements(packages);
    return this.exclusive(async () => {
      const wheels = await this.runtime.packages.resolve(requirements, this.wheels, this.engine);
      if (wheels.length > 0) {
        const request = this.buildRequest("", {});
        const r = await this.execute("python", request, {}, this.sessionKey("python"), wheels);
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

  /** The wheels a Python run needs before it starts: PEP 723 requirements and matched imports. */
  private async wheelsFor(code: string, notes: string[]): Promise<Wheel[]> {
    const required = inlineDependencies(code);
    const requiredNames = new Set(required.map((r) => r.name));
    // Imports are matched against Pyodide's lock file, which says nothing of what the machine's
    // python3 has (Debian's numpy, say): a native sandbox installs only what it is asked for.
    const wished =
      this.engine === "native"
        ? []
        : this.runtime.packages
            .packagesForImports(code)
            .filter((n) => !this.wheels.has(n) && !requiredNames.has(n));
    const wheels = await this.runtime.packages.resolve(required, this.wheels, this.engine);
    for (const name of wished) {
      const installed = new Map([...this.wheels, ...wheels.map((w) => [w.name, w] as const)]);
      try {
        wheels.push(
          ...(await this.runtime.packages.resolve(
            [{ name, specifier: "", extras: [], text: name }],
            installed,
          )),
        );
      } catch (error) {
        if (!isPolyboxError(error)) throw error;
        notes.push(`the code imports ${name}, which was not installed: ${error.message}`);
      }
    }
    return wheels;
  }

  private checkCode(code: unknown): asserts code is string {
    if (typeof code !== "string") {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `code must be a string, got ${code === null ? "null" : typeof code}`,
      );
    }
    const codeBytes = Buffer.byteLength(code);
    if (codeBytes > this.limits.maxCodeBytes) {
      throw new PolyboxError(
        "CODE_TOO_LARGE",
        `code is ${codeBytes} bytes, over the limit ${describeLimit("maxCodeBytes", this.limits.maxCodeBytes)}`,
      );
    }
  }

  private checkEngineLanguage(language: unknown): Language {
    const lang = checkLanguage(language);
    if (this.engine === "native" && (WASM_ONLY_LANGUAGES as readonly string[]).includes(lang)) {
      throw new PolyboxError(
        "UNSUPPORTED_LANGUAGE",
        `${lang} runs only in the WebAssembly engines; this sandbox uses engine "native"`,
      );
    }
    return lang;
  }

  /** @internal Like `run`, in a fresh pool interpreter that is discarded afterwards (one-shot). */
  async runOnce(language: Language, code: string, options: RunOptions = {}): Promise<RunResult> {
    const lang = this.checkEngineLanguage(language);
    this.checkCode(code);
    const request = this.buildRequest(code, options);
    checkWasmerPackage(lang, options);
    return this.exclusive(() => this.execute(lang, request, options, null));
  }

  private buildRequest(code: string, options: RunOptions): Omit<RunRequest, "fullSync" | "sync"> {
    if (typeof options !== "object" || options === null)
      throw new PolyboxError("INVALID_ARGUMENT", "run options must be an object");
    for (const key of Object.keys(options)) {
      if (!RUN_OPTION_KEYS.has(key)) {
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `unknown run option "${key}"; known options: ${[...RUN_OPTION_KEYS].join(", ")}`,
        );
      }
    }
    const limits = resolveLimits(
      this.limits,
      {
        timeoutMs: options.timeoutMs,
        memoryMb: options.memoryMb,
        maxOutputBytes: options.maxOutputBytes,
      },
      this.runtime.maxLimits,
    );
    if (options.stdin !== undefined && typeof options.stdin !== "string") {
      throw new PolyboxError("INVALID_ARGUMENT", "stdin must be a string");
    }
    const args = options.args;
    if (
      args !== undefined &&
      (!Array.isArray(args) || args.some((a) => typeof a !== "string") || args.length > 1024)
    ) {
      throw new PolyboxError("INVALID_ARGUMENT", "args must be an array of at most 1024 strings");
    }
    const env = options.env ?? {};
    if (
      typeof env !== "object" ||
      env === null ||
      Object.values(env).some((v) => typeof v !== "string")
    ) {
      throw new PolyboxError("INVALID_ARGUMENT", "env must be an object of string values");
    }
    return {
      code,
      stdin: options.stdin ?? "",
      ...(args ? { args: [...args] } : {}),
      // The placeholders of the sandbox's secrets, unless the caller sets those names itself.
      env: { ...this.netSecrets.env(), ...env },
      limits: {
        timeoutMs: limits.timeoutMs,
        memoryMb: limits.memoryMb,
        maxOutputBytes: limits.maxOutputBytes,
        workspaceQuotaBytes: limits.workspaceQuotaBytes,
      },
    };
  }

  private async execute(
    language: Language,
    asked: Omit<RunRequest, "fullSync" | "sync">,
    options: RunOptions,
    session: string | null,
    extraWheels?: Wheel[],
  ): Promise<RunResult> {
    const started = performance.now();
    this.lastUsedAt = Date.now();
    if (options.signal?.aborted) return cancelledBeforeStart();
    const { limits } = asked;
    const notes: string[] = [];
    // What the run fetches before its guest starts (wheels, a Wasmer package) counts against its
    // timeout, and a cancel stops the wait: the guest gets what time is left.
    const preparing = new Preparation(limits.timeoutMs, options.signal);
    let newWheels: Wheel[] = extraWheels ?? [];
    let wasmerPackage: RunRequest["wasmerPackage"];
    try {
      if (language === "python" && !extraWheels) {
        try {
          newWheels = await preparing.wait(this.wheelsFor(asked.code, notes));
        } catch (error) {
          if (!isPolyboxError(error)) throw error;
          return notStarted(
            `the script's inline dependencies could not be installed: ${error.message}`,
          );
        }
      }
      // A Wasmer package comes from the cache or the registry before the run starts; what it
      // cannot fetch (unknown, refused, unreachable) is an error of the call, as a bad argument is.
      if (options.wasmerPackage !== undefined)
        wasmerPackage = await preparing.wait(
          this.runtime.wasmerPackages.fetch(parseWasmerPackage(options.wasmerPackage)),
        );
    } catch (error) {
      if (!(error instanceof Stopped)) throw error;
      return error.why === "cancelled"
        ? cancelledBeforeStart()
        : notStarted(
            limitMessage("timeout", limits, "fetching its packages took the whole time") ?? "",
            "timeout",
          );
    }
    const timeLeft = preparing.timeLeft();
    const base =
      timeLeft < limits.timeoutMs
        ? { ...asked, limits: { ...limits, timeoutMs: timeLeft } }
        : asked;
    const host = this.host;
    await host.start(language as EngineLanguage);
    let stateLost = this.noticeHostRestart().has(language);
    if (this.lossToRetell.delete(language)) stateLost = true;
    const fresh = session === null ? undefined : this.freshState.get(language);
    const freshNotes: string[] = [];
    let restoredWheels = false;
    if (fresh && session !== null) {
      this.freshState.delete(language);
      const back = fresh.state
        ? await this.restoreState(session, language, fresh.state, fresh.why)
        : null;
      if (back?.restored) {
        freshNotes.push(...back.notes);
        restoredWheels = language === "python";
      } else {
        stateLost = true;
        freshNotes.push(FRESH_NOTES[fresh.why], ...(back?.notes ?? []));
        if (fresh.reason && fresh.why !== "reopened")
          freshNotes.push(`the snapshot holds no ${language} state: ${fresh.reason}`);
      }
    }
    const since = session === null ? null : (this.synced.get(language) ?? null);
    // A fresh interpreter gets every package this sandbox installed before, then the new ones
    // (a restored Python interpreter got them with its state).
    const wheels =
      language === "python"
        ? [...(since === null && !restoredWheels ? this.wheels.values() : []), ...newWheels]
        : [];
    const request: RunRequest = {
      ...base,
      ...(wasmerPackage ? { wasmerPackage } : {}),
      fullSync: since === null,
      sync: await this.workspace.changesSince(since),
      ...(wheels.length > 0
        ? {
            wheels: wheels.map(({ fileName, data, installDir }) => ({
              fileName,
              data,
              installDir,
            })),
          }
        : {}),
    };
    this.runs++;
    // Storing what the run changed is part of the run: it ends by the same deadline (plus a
    // moment for the files of a run that used all its time).
    const deadline = Date.now() + base.limits.timeoutMs + STORE_GRACE_MS;
    let result: EngineResult;
    const net = this.runtime.netSession(
      this.netGrant,
      Date.now() + base.limits.timeoutMs,
      this.netSecrets,
    );
    try {
      result = await host.run(
        session,
        language as EngineLanguage,
        request,
        (stream, text) => options.onOutput?.(stream, text),
        options.signal,
        net,
      );
    } finally {
      this.runs--;
      net.close();
    }
    this.noticeHostRestart();
    stateLost ||= result.stateLost === true;
    if (stateLost && session !== null && options.signal?.aborted) this.lossToRetell.add(language);
    if (!stateLost && session !== null) for (const w of newWheels) this.wheels.set(w.name, w);
    const { status, message, filesChanged } = await this.storeChanges(
      language,
      session,
      result,
      stateLost,
      deadline,
      base.limits,
    );
    // The guest's share was cut by what fetching took; the limit named is the run's own.
    const said =
      status === "timeout" && base.limits.timeoutMs !== limits.timeoutMs
        ? limitMessage(
            "timeout",
            limits,
            `${Math.round(limits.timeoutMs - base.limits.timeoutMs)} ms of it went to fetching packages`,
          )
        : message;
    this.lastUsedAt = Date.now();
    const rich = await collectRichOutput(this.workspace, filesChanged, result.displays);
    // A package the code imports but no source had is worth a note only if the import failed:
    // the interpreter may have it already (native mode's python3 with Debian's numpy).
    if (!/\bNo module named\b/.test(result.stderr)) notes.length = 0;
    rich.notes.unshift(...notes, ...(result.notes ?? []), ...freshNotes);
    return {
      status,
      stdout: result.stdout,
      stderr: result.stderr,
      exitCode: exitCodeOf(status, result.exitCode),
      value: status === "ok" ? result.value : null,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      truncated: result.truncated,
      filesChanged,
      ...(said ? { message: said } : {}),
      ...(stateLost ? { stateLost: true } : {}),
      images: rich.images,
      displays: rich.displays,
      ...(rich.notes.length > 0 ? { notes: rich.notes } : {}),
      ...(net.record.length > 0 ? { network: net.record.map((entry) => ({ ...entry })) } : {}),
    };
  }

  /**
   * After an engine host restart every interpreter of this sandbox is gone; returns the
   * languages that had state, so their next result can say it was lost.
   */
  private noticeHostRestart(): Set<Language> {
    const host = this.host;
    if (host.generation === this.hostGeneration) return new Set();
    const lost = new Set([...this.synced.keys()]);
    this.synced.clear();
    this.hostGeneration = host.generation;
    return lost;
  }

  /**
   * Writes the run's file changes into the workspace, unless they break its quota (bytes or
   * entries), and records what the language's interpreter has now seen.
   */
  private async storeChanges(
    language: Language,
    session: string | null,
    result: EngineResult,
    stateLost: boolean,
    deadline: number,
    limits: RunRequest["limits"],
  ): Promise<{ status: RunResult["status"]; message: string | undefined; filesChanged: string[] }> {
    const quota = this.limits.workspaceQuotaBytes;
    const bytes = this.workspace.projectedBytes(result.changes);
    const entries = this.workspace.projectedEntries(result.changes);
    let refusal: string | undefined;
    if (bytes > quota) {
      refusal = `workspace quota exceeded: the run's files would take ${bytes} bytes, over ${describeLimit("workspaceQuotaBytes", quota)}; its file changes were discarded`;
    } else if (entries > MAX_WORKSPACE_ENTRIES) {
      refusal = `workspace quota exceeded: the run would leave ${entries} files and directories, over the limit of ${MAX_WORKSPACE_ENTRIES}; its file changes were discarded`;
    } else if (this.home !== null) {
      // A named workspace also counts against the data directory's quota.
      try {
        this.runtime.state.check(bytes - this.workspace.usedBytes);
      } catch (error) {
        if (!isPolyboxError(error, "QUOTA_EXCEEDED")) throw error;
        refusal = `${error.message}; the run's file changes were discarded`;
      }
    }
    if (refusal) {
      this.synced.set(language, null);
      return { status: "workspace_limit", message: refusal, filesChanged: [] };
    }
    if (result.status === "workspace_limit") {
      // The engine side already dropped the run's changes: its copy of the workspace is not ours.
      this.synced.set(language, null);
      return { status: result.status, message: result.message, filesChanged: [] };
    }
    try {
      // Files the host cannot store under the guest's names are dropped with a note.
      result.notes ??= [];
      const filesChanged = await this.workspace.apply(result.changes, deadline, result.notes);
      this.synced.set(language, stateLost || session === null ? null : this.workspace.generation);
      return { status: result.status, message: result.message, filesChanged };
    } catch (error) {
      this.synced.set(language, null);
      if (isPolyboxError(error) && error.code === "TIMEOUT") {
        return {
          status: "timeout",
          message: limitMessage(
            "timeout",
            limits,
            "storing the run's file changes passed the deadline; the rest of them were dropped",
          ),
          filesChanged: [],
        };
      }
      const why = error instanceof Error ? error.message : String(error);
      return {
        status: "error",
        message: `the run's files could not be stored: ${why}`,
        filesChanged: [],
      };
    }
  }

  /**
   * Each interpreter's state, as far as its engine captures it faithfully: languages that have an
   * interpreter now, and languages whose restored state is still waiting for their next run (that
   * state is still theirs). A refused or failed capture keeps nothing, and says why.
   */
  private async captureStates(): Promise<Map<Language, CapturedState>> {
    const out = new Map<Language, CapturedState>();
    for (const [language, entry] of this.freshState) {
      if (entry.state)
        out.set(language, { info: infoOfPending(entry.state), pending: entry.state });
    }
    // After a host restart no interpreter of before is left (the next run will say so).
    if (this.host.generation !== this.hostGeneration) return out;
    const maxBytes = this.limits.memoryMb * 1024 * 1024;
    for (const language of this.synced.keys()) {
      if (out.has(language)) continue;
      if (!this.host.captureState) {
        out.set(language, {
          info: { kept: "none", bytes: 0, reason: `${this.engine} interpreters are not captured` },
        });
        continue;
      }
      let answer: Awaited<ReturnType<NonNullable<RunHost["captureState"]>>>;
      try {
        answer = await this.host.captureState(this.sessionKey(language), maxBytes);
      } catch (error) {
        if (!isPolyboxError(error)) throw error;
        answer = { captured: false, reason: `the engine's answer was refused: ${error.message}` };
      }
      if (!answer.captured) {
        if (answer.reason !== NO_INTERPRETER)
          out.set(language, { info: { kept: "none", bytes: 0, reason: answer.reason } });
        continue;
      }
      const pending: PendingState = {
        kind: answer.kind,
        data: answer.data,
        bytes: answer.data.byteLength,
        notKept: answer.notKept,
      };
      out.set(language, { info: infoOfPending(pending), pending });
    }
    return out;
  }

  /** Puts a state into a new interpreter for `session`; says what came back, or why nothing. */
  private async restoreState(
    session: string,
    language: Language,
    state: PendingState,
    why: Fresh,
  ): Promise<{ restored: boolean; notes: string[] }> {
    const failed = (message: string) => ({
      restored: false,
      notes: [`the snapshot's ${language} state could not be restored: ${message}`],
    });
    if (!this.host.restoreState) return failed(`${this.engine} interpreters are not restored`);
    const maxBytes = this.limits.memoryMb * 1024 * 1024;
    try {
      const data = state.data ?? (await this.runtime.state.loadState(state.hash ?? "", maxBytes));
      const answer = await this.host.restoreState(
        session,
        language as EngineLanguage,
        { kind: state.kind, data },
        this.limits.memoryMb,
        language === "python"
          ? [...this.wheels.values()].map(({ fileName, data, installDir }) => ({
              fileName,
              data,
              installDir,
            }))
          : [],
      );
      if (!answer.restored) return failed(answer.message ?? "the engine refused it");
      const notKept = [...state.notKept, ...answer.notKept];
      return {
        restored: true,
        notes: [
          RESTORED_NOTES[state.kind](language, why),
          ...(notKept.length > 0 ? [`not kept: ${notKept.slice(0, 20).join("; ")}`] : []),
        ],
      };
    } catch (error) {
      if (!isPolyboxError(error) && !(error instanceof RangeError)) throw error;
      return failed(error.message);
    }
  }

  private sessionKey(language: Language): string {
    return `${this.id}:${language}`;
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
      lastUsedAt: this.lastUsedAt,
      languages: [...this.synced.keys()],
      engine: this.engine,
      fileCount: this.workspace.fileCount,
      bytes: this.workspace.usedBytes,
      running: this.runs > 0,
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

/** A named sandbox as the data directory holds it, open or not. */
export interface NamedSandboxInfo {
  id: string;
  name: string;
  engine: EngineKind;
  createdAt: number;
  /** What its workspace holds, as counted against `dataDirQuotaBytes`. */
  bytes: number;
  limits: Limits;
}

async function stateOf(runtime: SandboxRuntime | undefined): Promise<DataDir> {
  const state = (runtime ?? (await defaultRuntime())).state;
  await state.init();
  return state;
}

/** Limits a named sandbox was made with, lowered to ceilings that may have dropped since. */
function withinCeilings(limits: Limits, max: Readonly<Limits>): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const key of Object.keys(max) as (keyof Limits)[])
    if (typeof limits[key] === "number") out[key] = Math.min(limits[key], max[key]);
  return out;
}

/** A snapshot's states as states to restore (languages with none keep their reason). */
function pendingFromRecords(
  records: Partial<Record<Language, StateRecord>>,
): Map<Language, CapturedState> {
  const out = new Map<Language, CapturedState>();
  for (const [language, r] of Object.entries(records) as [Language, StateRecord][]) {
    const { hash, ...info } = r;
    out.set(
      language,
      r.kept !== "none" && hash
        ? {
            info,
            pending: { kind: r.kept, hash, bytes: r.bytes, notKept: r.notKept ?? [] },
          }
        : { info },
    );
  }
  return out;
}

function infoOfPending(p: PendingState): SnapshotStateInfo {
  return { kept: p.kind, bytes: p.bytes, ...(p.notKept.length > 0 ? { notKept: p.notKept } : {}) };
}

/** A hard link to `source` at `dest`, or a copy where the file system refuses links. */
async function linkOrCopy(source: string, dest: string, mtimeMs: number): Promise<void> {
  try {
    await fs.link(source, dest);
  } catch {
    await fs.copyFile(source, dest, C.COPYFILE_EXCL);
    const t = new Date(mtimeMs);
    await fs.utimes(dest, t, t).catch(() => undefined);
  }
}

function notStarted(message: string, status: RunResult["status"] = "error"): RunResult {
  return {
    status,
    stdout: "",
    stderr: "",
    exitCode: exitCodeOf(status, 1),
    value: null,
    durationMs: 0,
    truncated: false,
    filesChanged: [],
    message,
    images: [],
    displays: [],
  };
}

const cancelledBeforeStart = () => notStarted("cancelled before it started", "cancelled");

/** Why a run ended before its guest started. */
class Stopped extends Error {
  constructor(readonly why: "timeout" | "cancelled") {
    super(why);
  }
}

/**
 * The part of a run before its guest starts. `wait` bounds each step by the run's timeout (and
 * its cancel signal), counted from the start of the run; what a step left running (a download)
 * ends by its own timeouts, into the cache.
 */
class Preparation {
  private readonly startedAt = Date.now();

  constructor(
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  timeLeft(): number {
    return Math.max(1, this.timeoutMs - (Date.now() - this.startedAt));
  }

  async wait<T>(step: Promise<T>): Promise<T> {
    const left = this.timeoutMs - (Date.now() - this.startedAt);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Stopped("timeout")), Math.max(0, left));
      onAbort = () => reject(new Stopped("cancelled"));
      if (this.signal?.aborted) onAbort();
      else this.signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([step, stopped]);
    } finally {
      clearTimeout(timer);
      if (onAbort) this.signal?.removeEventListener("abort", onAbort);
    }
  }
}

export interface OneShotOptions extends RunOptions {
  language: Language;
  code: string;
  /** Files (path → text or bytes) put in the workspace before the run. */
  files?: Record<string, string | Uint8Array>;
  runtime?: SandboxRuntime;
  limits?: Partial<Limits>;
  engine?: EngineKind;
  /** Hosts the code may reach, within the runtime's grant (see SandboxOptions.net). */
  net?: string[];
  /** Secrets the code can use but never read (see SandboxOptions.secrets). */
  secrets?: NetSecret[];
  /**
   * Whose one-shot this is. One engine process serves all one-shot runs of a principal, each in
   * a fresh interpreter; two principals' runs never share a process. Name one per client of
   * yours that must be walled off from the others (default: one principal for the runtime).
   */
  principal?: string;
}

/** The principal of one-shot runs that name none. */
export const DEFAULT_PRINCIPAL = "default";

/** Creates a sandbox, runs one piece of code in it, and destroys it. */
export async function run(options: OneShotOptions): Promise<RunResult> {
  const { language, code, files, runtime, limits, engine, net, secrets, principal, ...runOptions } =
    options;
  if (principal !== undefined && (typeof principal !== "string" || principal.length === 0))
    throw new PolyboxError("INVALID_ARGUMENT", "principal must be a non-empty string");
  const sandbox = await Sandbox.oneShot(
    {
      ...(runtime ? { runtime } : {}),
      ...(limits ? { limits } : {}),
      ...(engine ? { engine } : {}),
      ...(net ? { net } : {}),
      ...(secrets ? { secrets } : {}),
    },
    principal ?? DEFAULT_PRINCIPAL,
  );
  try {
    for (const [path, data] of Object.entries(files ?? {})) await sandbox.files.write(path, data);
    return await sandbox.runOnce(language, code, runOptions);
  } finally {
    await sandbox.close();
  }
}

// Trusted side: everything a code-execution server offers its clients, as one object: sandboxes by
// id, runs through the scheduler (one-shot or in a sandbox, waited for or as jobs), files, and
// host uploads under the operator's --allow-read grants. Front ends (MCP, HTTP, CLI) translate
// their input into these calls and the results back; none of them holds sandbox logic.
//
// Tenants: every call names its Caller. A sandbox and a job belong to the owner that made them;
// another owner's are "not found", exactly as unknown ids are, and listings show only the caller's
// own. Per-client limits (sandboxes open, runs held, run time) count against the caller's account.
// Named sandboxes and snapshots live in the data directory under the caller's scope, a stable
// identity that outlives connections and server processes; a caller without one cannot name.

import { randomUUID } from "node:crypto";
import { isPolyboxError, PolyboxError } from "../errors.js";
import { allowedHostEnv } from "../host-env.js";
import { type Limits, resolveLimits } from "../limits.js";
import { sniff } from "../mime.js";
import type { NetSecret } from "../net-secrets.js";
import {
  checkCode,
  checkLanguage,
  type EngineKind,
  type NamedSandboxInfo,
  run,
  Sandbox,
} from "../sandbox/index.js";
import { resolveWorkspacePath } from "../sandbox/names.js";
import type { SandboxRuntime } from "../sandbox/run-host.js";
import type { SnapshotInfo } from "../sandbox/state.js";
import {
  type FileInfo,
  LANGUAGES,
  type Language,
  notStartedResult,
  type OutputStream,
  type RunResult,
} from "../types.js";
import { type JobInfo, type JobLogs, JobManager } from "./jobs.js";
import { checkInlineOutput, DEFAULT_INLINE_OUTPUT_BYTES, KeptOutputs } from "./kept-output.js";
import { type ManagedSandboxInfo, type SandboxEvents, SandboxManager } from "./registry.js";
import { type RateLimit, Scheduler } from "./scheduler.js";
import { HostFiles } from "./upload.js";

export interface ServiceOptions {
  runtime: SandboxRuntime;
  maxSandboxes?: number;
  /** Sandboxes one client (account) may have open at once (default: maxSandboxes). */
  maxSandboxesPerClient?: number;
  /** Named sandboxes one client (scope) may keep in the data directory, open or not (default 100). */
  maxNamedSandboxesPerClient?: number;
  /** Runs one client may have running or queued at once (default: the whole queue). */
  maxRunsPerClient?: number;
  idleTimeoutMs?: number;
  /** A sandbox open this long is closed (a named one unloaded) whatever it does (default: no limit). */
  maxLifetimeMs?: number;
  /**
   * Record the ephemeral sandboxes open in the data directory, so that after a restart their
   * ids are told apart from ones that never existed (SANDBOX_LOST). Default false.
   */
  recordLive?: boolean;
  /** Told of every sandbox opened and closed (see SandboxEvents). */
  onSandbox?: SandboxEvents;
  concurrency?: number;
  queueLimit?: number;
  rateLimit?: RateLimit | null;
  jobRetentionMs?: number;
  /**
   * Bytes of each output stream a result holds (default 32 KiB). A longer stream keeps its head
   * and tail, with a marker where the middle was cut, and is kept whole: in the sandbox's
   * workspace under .polybox/output/, or for a one-shot run for `jobRetentionMs`
   * (readRunOutput). See the result's `fullOutput`.
   */
  inlineOutputBytes?: number;
}

/**
 * Who is calling, as opaque strings the front end chooses. `owner`: whose sandboxes and jobs
 * these are; nobody else sees or uses them. `account`: whose per-client limits the call counts
 * against (sandboxes open, runs held, run time); default the owner. A front end that cannot tell
 * its clients apart by owner alone (sessions anyone may open) names a coarser account.
 */
import type { Caller, ExecuteRequest, ExecuteResult, ReadFileResult } from "./requests.js";

// What the service's callers pass and get back, kept importable from here.
export type { Caller, ExecuteRequest, ExecuteResult, ReadFileResult };

/** A file read answers in one message; bigger files are for the guest to process. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export class SandboxService {
  readonly runtime: SandboxRuntime;
  readonly sandboxes: SandboxManager;
  readonly scheduler: Scheduler;
  readonly jobs: JobManager;
  readonly inlineOutputBytes: number;
  private readonly keptOutputs: KeptOutputs;
  private readonly hostFiles: HostFiles;
  private readonly guestEnv: Record<string, string>;
  /** Settles once the data directory has been read (with `recordLive`), or at once without it. */
  readonly ready: Promise<void>;

  constructor(options: ServiceOptions) {
    this.runtime = options.runtime;
    this.ready = options.recordLive ? this.runtime.state.init() : Promise.resolve();
    // Awaited by whoever cares (a server before it serves); never an unhandled rejection.
    this.ready.catch(() => undefined);
    this.sandboxes = new SandboxManager({
      runtime: options.runtime,
      ...(options.recordLive ? { recordLive: true } : {}),
      ...(options.onSandbox ? { onSandbox: options.onSandbox } : {}),
      ...(options.maxLifetimeMs !== undefined ? { maxLifetimeMs: options.maxLifetimeMs } : {}),
      ...(options.maxSandboxes !== undefined ? { maxSandboxes: options.maxSandboxes } : {}),
      ...(options.maxSandboxesPerClient !== undefined
        ? { maxSandboxesPerClient: options.maxSandboxesPerClient }
        : {}),
      ...(options.maxNamedSandboxesPerClient !== undefined
        ? { maxNamedSandboxesPerClient: options.maxNamedSandboxesPerClient }
        : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    });
    this.scheduler = new Scheduler({
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.queueLimit !== undefined ? { queueLimit: options.queueLimit } : {}),
      rateLimit: options.rateLimit ?? null,
      ...(options.maxRunsPerClient !== undefined
        ? { maxRunsPerClient: options.maxRunsPerClient }
        : {}),
    });
    this.jobs = new JobManager(
      options.jobRetentionMs !== undefined ? { retentionMs: options.jobRetentionMs } : {},
    );
    this.inlineOutputBytes = checkInlineOutput(
      options.inlineOutputBytes ?? DEFAULT_INLINE_OUTPUT_BYTES,
    );
    this.keptOutputs = new KeptOutputs({ retentionMs: this.jobs.retentionMs });
    this.hostFiles = new HostFiles(this.runtime.permissions.read);
    this.guestEnv = allowedHostEnv(this.runtime.permissions.env);
  }

  /** Runs code and waits for the result. Admission errors (busy, rate limit) throw. */
  async execute(caller: Caller, request: ExecuteRequest): Promise<ExecuteResult> {
    const sandboxId = request.sandboxId ?? null;
    try {
      const result = await this.start(caller, request, {
        runId: randomUUID(),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onOutput ? { onOutput: request.onOutput } : {}),
      });
      return { ...result, sandboxId };
    } catch (error) {
      // Aborted while waiting in the queue: the run never started, which is a result, not a fault.
      if (!request.signal?.aborted) throw error;
      return {
        ...notStartedResult("cancelled while waiting in the queue; it never started", "cancelled"),
        sandboxId,
      };
    }
  }

  /** Starts a run as a job and returns at once with its id (status "queued"). */
  submit(caller: Caller, request: Omit<ExecuteRequest, "signal" | "onOutput">): JobInfo {
    this.validate(caller, request);
    return this.jobs.submit(
      { language: request.language, sandboxId: request.sandboxId ?? null, owner: caller.owner },
      (ctx) => this.start(caller, request, { ...ctx, runId: ctx.id }),
    );
  }

  /** The whole stream of a one-shot run of the caller's whose result held only its head and tail. */
  readRunOutput(caller: Caller, runId: string, stream: OutputStream): Promise<string> {
    if (stream !== "stdout" && stream !== "stderr")
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `stream must be stdout or stderr, got ${String(stream)}`,
      );
    return this.keptOutputs.read(caller.owner, runId, stream);
  }

  /** A job of the caller's; another owner's is JOB_NOT_FOUND, as an unknown id is. */
  jobStatus(caller: Caller, id: string): JobInfo {
    return this.jobs.status(id, caller.owner);
  }

  /** The caller's jobs, oldest first; never another owner's. */
  listJobs(caller: Caller): JobInfo[] {
    return this.jobs.list(caller.owner);
  }

  jobLogs(caller: Caller, id: string): JobLogs {
    return this.jobs.logs(id, caller.owner);
  }

  cancelJob(caller: Caller, id: string): Promise<JobInfo> {
    return this.jobs.cancel(id, { owner: caller.owner });
  }

  /**
   * An owner went away for good (e.g. its HTTP session ended and nobody else can reach what it
   * made): cancels its jobs and closes its sandboxes. Returns the ids of the sandboxes closed.
   */
  async releaseOwner(owner: string, reason: string): Promise<string[]> {
    await this.jobs.cancelOwner(owner);
    const closed = await this.sandboxes.closeOwner(owner, reason);
    // The owner's one-shot process goes with it.
    await this.runtime.releasePrincipal?.(owner);
    return closed;
  }

  /**
   * Validates, then schedules; a result's long output is kept under `runId` (see
   * shortened). Not async on purpose: admission errors must throw synchronously.
   */
  private start(caller: Caller, request: ExecuteRequest, how: StartOptions): Promise<RunResult> {
    const { language, code, files } = this.validate(caller, request);
    const sandbox =
      request.sandboxId === undefined ? null : this.sandbox(caller, request.sandboxId);
    const { signal, onOutput } = how;
    const options = {
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.args !== undefined ? { args: request.args } : {}),
      ...(request.wasmerPackage !== undefined ? { wasmerPackage: request.wasmerPackage } : {}),
      ...(signal ? { signal } : {}),
      ...(onOutput ? { onOutput } : {}),
      env: { ...this.guestEnv },
    };
    // Where a long stream of the run is kept, and how much of it the answer holds.
    const kept = (sandbox: Sandbox | null) => ({
      owner: caller.owner,
      sandbox,
      runId: how.runId,
      inlineBytes: this.inlineOutputBytes,
    });
    const task = async (): Promise<RunResult> => {
      how.started?.();
      if (!sandbox) {
        const result = await run({
          language,
          code,
          files,
          runtime: this.runtime,
          principal: caller.owner,
          ...options,
        });
        return this.keptOutputs.shorten(result, kept(null));
      }
      for (const [path, data] of Object.entries(files)) await sandbox.files.write(path, data);
      return sandbox.runThen(language, code, options, (result) =>
        this.keptOutputs.shorten(result, kept(sandbox)),
      );
    };
    // Queued or running, the run keeps its sandbox from counting as idle.
    const release = sandbox ? this.sandboxes.hold(sandbox.id, caller.owner) : () => undefined;
    try {
      const scheduled = this.scheduler.schedule(accountOf(caller), task, {
        ...(signal ? { signal } : {}),
        cost: (r) => r.durationMs,
      });
      scheduled.then(release, release);
      return scheduled;
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * The caller's open sandbox. An id it cannot use is SANDBOX_NOT_FOUND, or SANDBOX_EXPIRED
   * (the manager's), or SANDBOX_LOST when it was an ephemeral sandbox of this caller's in a
   * server process that is gone.
   */
  private sandbox(caller: Caller, id: string): Sandbox {
    try {
      return this.sandboxes.get(id, caller.owner);
    } catch (error) {
      if (
        isPolyboxError(error, "SANDBOX_NOT_FOUND") &&
        typeof id === "string" &&
        this.runtime.state.wasLost(id, scopeOf(caller))
      ) {
        throw new PolyboxError(
          "SANDBOX_LOST",
          `sandbox ${id} was lost: it was an ephemeral sandbox of an earlier server process, and its files and state went with that process; create a new one (a named sandbox keeps its files across restarts)`,
          { details: { sandboxId: id } },
        );
      }
      throw error;
    }
  }

  /** The manager's answer for `id`, with SANDBOX_LOST told apart as in `sandbox`. */
  private checked<T>(caller: Caller, id: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (isPolyboxError(error, "SANDBOX_NOT_FOUND")) this.sandbox(caller, id);
      throw error;
    }
  }

  /** Checks what can be checked before queueing, so that bad input fails at once, not as a job. */
  private validate(
    caller: Caller,
    request: ExecuteRequest,
  ): {
    language: Language;
    code: string;
    files: Record<string, string | Uint8Array>;
  } {
    const language = checkLanguage(request.language);
    const limits: Limits =
      request.sandboxId === undefined
        ? { ...this.runtime.limits }
        : { ...this.sandbox(caller, request.sandboxId).limits };
    checkCode(request.code, limits);
    if (request.timeoutMs !== undefined)
      resolveLimits(limits, { timeoutMs: request.timeoutMs }, this.runtime.maxLimits);
    const files = request.files ?? {};
    for (const [path, data] of Object.entries(files)) {
      resolveWorkspacePath(path);
      if (typeof data !== "string" && !(data instanceof Uint8Array))
        throw new PolyboxError("INVALID_ARGUMENT", `files["${path}"] must be text or bytes`);
    }
    return { language, code: request.code, files };
  }

  /**
   * A new ephemeral sandbox; or with `name`, the caller's named sandbox of that name, opened
   * from the data directory (files as they were, interpreters fresh) or made there.
   */
  async createSandbox(
    caller: Caller,
    options: {
      language?: Language;
      limits?: Partial<Limits>;
      engine?: EngineKind;
      name?: string;
      /** Hosts its guests may reach, within the runtime's grant. */
      net?: string[];
      /** Secrets its guests can use but never read, for hosts within the runtime's grant. */
      secrets?: NetSecret[];
    } = {},
  ): Promise<ManagedSandboxInfo> {
    const language = options.language === undefined ? undefined : checkLanguage(options.language);
    if (options.name !== undefined && caller.scope === undefined) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        "named sandboxes need a client identity that outlives a connection, and this client has none (an unauthenticated session); use an ephemeral sandbox",
      );
    }
    const by = { owner: caller.owner, account: accountOf(caller) };
    const sandbox = await this.sandboxes.create(by, {
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.engine ? { engine: options.engine } : {}),
      ...(language ? { defaultLanguage: language } : {}),
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.net ? { net: options.net } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
      scope: scopeOf(caller),
    });
    return this.sandboxes.info(sandbox.id, caller.owner);
  }

  /** Closes a sandbox: an ephemeral one is destroyed, a named one unloaded unless `delete`. */
  closeSandbox(caller: Caller, id: string, options: { delete?: boolean } = {}): Promise<void> {
    this.sandbox(caller, id);
    return this.sandboxes.close(id, caller.owner, options);
  }

  /** One of the caller's sandboxes, or all of them (never another owner's). */
  sandboxStatus(caller: Caller, id?: string): ManagedSandboxInfo[] {
    return id === undefined
      ? this.sandboxes.list(caller.owner)
      : [this.checked(caller, id, () => this.sandboxes.info(id, caller.owner))];
  }

  /** The caller's named sandboxes that are not open in this server (their files on disk). */
  async storedSandboxes(caller: Caller): Promise<NamedSandboxInfo[]> {
    if (caller.scope === undefined) return [];
    const open = new Set(this.sandboxes.list(caller.owner).map((s) => s.id));
    const all = await Sandbox.listNamed({ runtime: this.runtime, scope: caller.scope });
    return all.filter((s) => !open.has(s.id));
  }

  /** Records a sandbox's files as a snapshot of the caller's. */
  snapshotSandbox(caller: Caller, id: string, label?: string): Promise<SnapshotInfo> {
    return this.sandbox(caller, id).snapshot(label === undefined ? {} : { label });
  }

  /** Puts a sandbox's files back as one of the caller's snapshots has them. */
  restoreSandbox(caller: Caller, id: string, snapshotId: string): Promise<SnapshotInfo> {
    return this.sandbox(caller, id).restore(snapshotId);
  }

  /**
   * A new sandbox (named with `name`, else ephemeral) with the files of one of the caller's
   * sandboxes or snapshots; counted against the limits on open sandboxes like any other.
   */
  async forkSandbox(
    caller: Caller,
    source: { sandboxId?: string; snapshotId?: string },
    options: { name?: string; language?: Language } = {},
  ): Promise<ManagedSandboxInfo> {
    if ((source.sandboxId === undefined) === (source.snapshotId === undefined)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        "fork from exactly one of a sandbox or a snapshot",
      );
    }
    if (options.name !== undefined && caller.scope === undefined) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        "named sandboxes need a client identity that outlives a connection, and this client has none (an unauthenticated session); fork into an ephemeral sandbox",
      );
    }
    const language = options.language === undefined ? undefined : checkLanguage(options.language);
    const from =
      source.sandboxId !== undefined ? this.sandbox(caller, source.sandboxId) : source.snapshotId!;
    const by = { owner: caller.owner, account: accountOf(caller) };
    const scope = scopeOf(caller);
    const fork = () =>
      this.sandboxes.admit(by, language, () =>
        Sandbox.fork(from, {
          runtime: this.runtime,
          scope,
          ...(options.name !== undefined ? { name: options.name } : {}),
        }),
      );
    // A fork to a name is a new named sandbox: it counts against maxNamedSandboxesPerClient.
    const sandbox = await (options.name === undefined
      ? fork()
      : this.sandboxes.namedTurn(scope, options.name, fork));
    return this.sandboxes.info(sandbox.id, caller.owner);
  }

  /** The caller's snapshots (of one of its sandboxes, or all). */
  /**
   * The caller's snapshots, or one sandbox's. An id that is neither open, nor a named sandbox on
   * disk, nor the source of a snapshot is refused as any call on it would be (a typo'd id must
   * not read as "no snapshots").
   */
  async listSnapshots(caller: Caller, sandboxId?: string): Promise<SnapshotInfo[]> {
    const scope = scopeOf(caller);
    const list = await Sandbox.listSnapshots({
      runtime: this.runtime,
      scope,
      ...(sandboxId !== undefined ? { sandboxId } : {}),
    });
    if (sandboxId === undefined || list.length > 0) return list;
    const named = await this.runtime.state.listNamed(scope);
    if (!named.some((meta) => meta.id === sandboxId)) this.sandbox(caller, sandboxId);
    return list;
  }

  deleteSnapshot(caller: Caller, snapshotId: string): Promise<void> {
    return Sandbox.deleteSnapshot(snapshotId, { runtime: this.runtime, scope: scopeOf(caller) });
  }

  /** The language for a run in this sandbox: the one asked for, else the sandbox's default. */
  languageFor(caller: Caller, id: string, language: Language | undefined): Language {
    const chosen =
      language ?? this.checked(caller, id, () => this.sandboxes.defaultLanguage(id, caller.owner));
    if (chosen === null) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `sandbox ${id} has no default language; pass language (one of ${LANGUAGES.join(", ")})`,
      );
    }
    return chosen;
  }

  /** Installs Python packages into a sandbox from the runtime's package sources. */
  installPackages(caller: Caller, id: string, packages: string[]): Promise<string[]> {
    return this.sandbox(caller, id).installPackages(packages);
  }

  listFiles(caller: Caller, id: string, path?: string): Promise<FileInfo[]> {
    return this.sandbox(caller, id).files.list(path);
  }

  async readFile(caller: Caller, id: string, path: string): Promise<ReadFileResult> {
    const sandbox = this.sandbox(caller, id);
    const rel = resolveWorkspacePath(path);
    const size = sandbox.workspace.has(rel) ? sandbox.workspace.sizeOf(rel) : 0;
    if (size > MAX_READ_BYTES) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `${rel} is ${size} bytes; a file is read whole only up to ${MAX_READ_BYTES} bytes. Process it inside the sandbox (e.g. head, or Python) instead`,
      );
    }
    const bytes = await sandbox.files.read(rel);
    return { path: rel, size: bytes.byteLength, bytes, ...sniff(rel, bytes) };
  }

  async writeFile(
    caller: Caller,
    id: string,
    path: string,
    data: string | Uint8Array,
  ): Promise<{ path: string; size: number }> {
    const rel = resolveWorkspacePath(path, { file: true });
    await this.sandbox(caller, id).files.write(rel, data);
    return {
      path: rel,
      size: typeof data === "string" ? Buffer.byteLength(data) : data.byteLength,
    };
  }

  /** Copies a host file into a sandbox; only from under the operator's --allow-read paths. */
  async uploadFile(
    caller: Caller,
    id: string,
    localPath: string,
    path?: string,
  ): Promise<{ path: string; size: number }> {
    const sandbox = this.sandbox(caller, id);
    const dest = resolveWorkspacePath(path ?? this.hostFiles.basename(localPath));
    const bytes = await this.hostFiles.read(localPath, sandbox.limits.workspaceQuotaBytes);
    await sandbox.files.write(dest, bytes);
    return { path: dest, size: bytes.byteLength };
  }

  /** Cancels jobs, closes every sandbox. The runtime belongs to the caller and stays open. */
  async close(): Promise<void> {
    await this.jobs.close();
    await this.sandboxes.closeAll();
    await this.keptOutputs.close();
  }
}

/** How a run is started: as a job (with its hooks) or waited for. */
interface StartOptions {
  /** Names what the run leaves behind (its kept output): a job's id, or a fresh one. */
  runId: string;
  signal?: AbortSignal;
  onOutput?: (stream: OutputStream, text: string) => void;
  /** Called when the run leaves the queue. */
  started?: () => void;
}

function accountOf(caller: Caller): string {
  return caller.account ?? caller.owner;
}

/**
 * Where a caller's snapshots are kept: its scope, else a scope of the owner's own (snapshots of
 * ephemeral sandboxes only, which go with their sandboxes).
 */
function scopeOf(caller: Caller): string {
  return caller.scope ?? `owner:${caller.owner}`;
}

// Trusted side: everything a code-execution server offers its clients, as one object: sandboxes by
// id, runs through the scheduler (one-shot or in a sandbox, waited for or as jobs), files, and
// host uploads under the operator's --allow-read grants. Front ends (MCP, HTTP, CLI) translate
// their input into these calls and the results back; none of them holds sandbox logic.

import { PolyboxError } from "./errors.js";
import { type JobInfo, JobManager } from "./jobs.js";
import { describeLimit, type Limits, resolveLimits } from "./limits.js";
import { sniff } from "./mime.js";
import { type ManagedSandboxInfo, SandboxManager } from "./registry.js";
import type { Runtime } from "./runtime.js";
import { checkLanguage, type EngineKind, run } from "./sandbox.js";
import { type RateLimit, Scheduler } from "./scheduler.js";
import {
  type FileInfo,
  LANGUAGES,
  type Language,
  type OutputStream,
  type RunResult,
} from "./types.js";
import { HostFiles } from "./upload.js";
import { resolveWorkspacePath } from "./workspace.js";

export interface ServiceOptions {
  runtime: Runtime;
  maxSandboxes?: number;
  idleTimeoutMs?: number;
  concurrency?: number;
  queueLimit?: number;
  rateLimit?: RateLimit | null;
  jobRetentionMs?: number;
}

export interface ExecuteRequest {
  language: Language;
  code: string;
  /** Run in this sandbox (keeping state); without it the run is one-shot in a fresh sandbox. */
  sandboxId?: string;
  /** Text files written to the workspace before the run. */
  files?: Record<string, string>;
  /** Program arguments (`wasm` only: `code` is then the module's workspace path). */
  args?: string[];
  timeoutMs?: number;
  signal?: AbortSignal;
  onOutput?: (stream: OutputStream, text: string) => void;
}

export interface ExecuteResult extends RunResult {
  sandboxId: string | null;
}

export interface ReadFileResult {
  path: string;
  size: number;
  mimeType: string;
  /** The text when the file is UTF-8 text, else null (use `bytes`). */
  text: string | null;
  bytes: Uint8Array;
}

/** read_file answers in one message; bigger files are for the guest to process. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

const NOT_STARTED: RunResult = {
  status: "cancelled",
  stdout: "",
  stderr: "",
  exitCode: 130,
  value: null,
  durationMs: 0,
  truncated: false,
  filesChanged: [],
  images: [],
  displays: [],
};

export class SandboxService {
  readonly runtime: Runtime;
  readonly sandboxes: SandboxManager;
  readonly scheduler: Scheduler;
  readonly jobs: JobManager;
  private readonly hostFiles: HostFiles;
  private readonly guestEnv: Record<string, string>;

  constructor(options: ServiceOptions) {
    this.runtime = options.runtime;
    this.sandboxes = new SandboxManager({
      runtime: options.runtime,
      ...(options.maxSandboxes !== undefined ? { maxSandboxes: options.maxSandboxes } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    });
    this.scheduler = new Scheduler({
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.queueLimit !== undefined ? { queueLimit: options.queueLimit } : {}),
      rateLimit: options.rateLimit ?? null,
    });
    this.jobs = new JobManager(
      options.jobRetentionMs !== undefined ? { retentionMs: options.jobRetentionMs } : {},
    );
    this.hostFiles = new HostFiles(this.runtime.permissions.read);
    this.guestEnv = pickEnv(this.runtime.permissions.env);
  }

  /** Runs code and waits for the result. Admission errors (busy, rate limit) throw. */
  async execute(client: string, request: ExecuteRequest): Promise<ExecuteResult> {
    const sandboxId = request.sandboxId ?? null;
    try {
      const result = await this.start(client, request, request.signal, request.onOutput, () => {});
      return { ...result, sandboxId };
    } catch (error) {
      // Aborted while waiting in the queue: the run never started, which is a result, not a fault.
      if (!request.signal?.aborted) throw error;
      return {
        ...NOT_STARTED,
        message: "cancelled while waiting in the queue; it never started",
        sandboxId,
      };
    }
  }

  /** Starts a run as a job and returns at once with its id (status "queued"). */
  submit(client: string, request: Omit<ExecuteRequest, "signal" | "onOutput">): JobInfo {
    this.validate(request);
    return this.jobs.submit(
      { language: request.language, sandboxId: request.sandboxId ?? null },
      (ctx) => this.start(client, request, ctx.signal, ctx.onOutput, ctx.started),
    );
  }

  /** Validates, then schedules. Not async on purpose: admission errors must throw synchronously. */
  private start(
    client: string,
    request: ExecuteRequest,
    signal: AbortSignal | undefined,
    onOutput: ((stream: OutputStream, text: string) => void) | undefined,
    started: () => void,
  ): Promise<RunResult> {
    const { language, code, files } = this.validate(request);
    const sandbox = request.sandboxId === undefined ? null : this.sandboxes.get(request.sandboxId);
    const options = {
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.args !== undefined ? { args: request.args } : {}),
      ...(signal ? { signal } : {}),
      ...(onOutput ? { onOutput } : {}),
      env: { ...this.guestEnv },
    };
    const task = async (): Promise<RunResult> => {
      started();
      if (!sandbox) return run({ language, code, files, runtime: this.runtime, ...options });
      for (const [path, text] of Object.entries(files)) await sandbox.files.write(path, text);
      return sandbox.run(language, code, options);
    };
    return this.scheduler.schedule(client, task, {
      ...(signal ? { signal } : {}),
      cost: (r) => r.durationMs,
    });
  }

  /** Checks what can be checked before queueing, so that bad input fails at once, not as a job. */
  private validate(request: ExecuteRequest): {
    language: Language;
    code: string;
    files: Record<string, string>;
  } {
    const language = checkLanguage(request.language);
    if (typeof request.code !== "string")
      throw new PolyboxError("INVALID_ARGUMENT", "code must be a string");
    const limits: Limits =
      request.sandboxId === undefined
        ? { ...this.runtime.limits }
        : { ...this.sandboxes.get(request.sandboxId).limits };
    const codeBytes = Buffer.byteLength(request.code);
    if (codeBytes > limits.maxCodeBytes) {
      throw new PolyboxError(
        "CODE_TOO_LARGE",
        `code is ${codeBytes} bytes, over the limit ${describeLimit("maxCodeBytes", limits.maxCodeBytes)}; put large data in a file (files or write_file) and read it from the code`,
      );
    }
    if (request.timeoutMs !== undefined)
      resolveLimits(limits, { timeoutMs: request.timeoutMs }, this.runtime.maxLimits);
    const files = request.files ?? {};
    for (const [path, text] of Object.entries(files)) {
      resolveWorkspacePath(path);
      if (typeof text !== "string")
        throw new PolyboxError("INVALID_ARGUMENT", `files["${path}"] must be a string`);
    }
    return { language, code: request.code, files };
  }

  async createSandbox(
    options: { language?: Language; limits?: Partial<Limits>; engine?: EngineKind } = {},
  ): Promise<ManagedSandboxInfo> {
    const language = options.language === undefined ? undefined : checkLanguage(options.language);
    const sandbox = await this.sandboxes.create({
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.engine ? { engine: options.engine } : {}),
      ...(language ? { defaultLanguage: language } : {}),
    });
    return this.sandboxes.info(sandbox.id);
  }

  closeSandbox(id: string): Promise<void> {
    return this.sandboxes.close(id);
  }

  sandboxStatus(id?: string): ManagedSandboxInfo[] {
    return id === undefined ? this.sandboxes.list() : [this.sandboxes.info(id)];
  }

  /** The language for a run in this sandbox: the one asked for, else the sandbox's default. */
  languageFor(id: string, language: Language | undefined): Language {
    const chosen = language ?? this.sandboxes.defaultLanguage(id);
    if (chosen === null) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `sandbox ${id} has no default language; pass language (one of ${LANGUAGES.join(", ")})`,
      );
    }
    return chosen;
  }

  /** Installs Python packages into a sandbox from the runtime's package sources. */
  installPackages(id: string, packages: string[]): Promise<string[]> {
    return this.sandboxes.get(id).installPackages(packages);
  }

  listFiles(id: string, path?: string): Promise<FileInfo[]> {
    return this.sandboxes.get(id).files.list(path);
  }

  async readFile(id: string, path: string): Promise<ReadFileResult> {
    const sandbox = this.sandboxes.get(id);
    const rel = resolveWorkspacePath(path);
    const size = sandbox.workspace.has(rel) ? sandbox.workspace.sizeOf(rel) : 0;
    if (size > MAX_READ_BYTES) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `${rel} is ${size} bytes; read_file returns at most ${MAX_READ_BYTES} bytes. Process it inside the sandbox (e.g. head, or Python) instead`,
      );
    }
    const bytes = await sandbox.files.read(rel);
    return { path: rel, size: bytes.byteLength, bytes, ...sniff(rel, bytes) };
  }

  async writeFile(
    id: string,
    path: string,
    data: string | Uint8Array,
  ): Promise<{ path: string; size: number }> {
    const rel = resolveWorkspacePath(path);
    await this.sandboxes.get(id).files.write(rel, data);
    return {
      path: rel,
      size: typeof data === "string" ? Buffer.byteLength(data) : data.byteLength,
    };
  }

  /** Copies a host file into a sandbox; only from under the operator's --allow-read paths. */
  async uploadFile(
    id: string,
    localPath: string,
    path?: string,
  ): Promise<{ path: string; size: number }> {
    const sandbox = this.sandboxes.get(id);
    const dest = resolveWorkspacePath(path ?? this.hostFiles.basename(localPath));
    const bytes = await this.hostFiles.read(localPath, sandbox.limits.workspaceQuotaBytes);
    await sandbox.files.write(dest, bytes);
    return { path: dest, size: bytes.byteLength };
  }

  /** Cancels jobs, closes every sandbox. The runtime belongs to the caller and stays open. */
  async close(): Promise<void> {
    await this.jobs.close();
    await this.sandboxes.closeAll();
  }
}

/** The host's values of the environment variables the operator allowed ("*" = all of them). */
function pickEnv(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const all = names.includes("*");
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (all || names.includes(name))) out[name] = value;
  }
  return out;
}

// The public API of polybox. Every export here is public API: adding a line makes it part of
// what embedders may rely on, so keep this list short and deliberate.

export type {
  Isolation,
  NativeInterpreters,
  PoolSizes,
  RuntimeOptions,
} from "./core/config.js";
export { isPolyboxError, PolyboxError, type PolyboxErrorCode } from "./core/errors.js";
export { DEFAULT_LIMITS, DEFAULT_MAX_LIMITS, type Limits } from "./core/limits.js";
export { type LogFn, type LogLevel, silentLog, stderrLog } from "./core/log.js";
export type { NetSecret, SecretPlace } from "./core/net-secrets.js";
export {
  type EngineKind,
  type NamedSandboxInfo,
  type OneShotOptions,
  run,
  Sandbox,
  SandboxFiles,
  type SandboxInfo,
  type SandboxOptions,
} from "./core/sandbox/index.js";
export { defaultDataDir, type SnapshotInfo } from "./core/sandbox/state.js";
export { type JobInfo, type JobLogs, JobManager, type JobStatus } from "./core/server/jobs.js";
export {
  type ManagedSandboxInfo,
  type SandboxEvents,
  SandboxManager,
  type SandboxManagerOptions,
} from "./core/server/registry.js";
export {
  parseRateLimit,
  type RateLimit,
  Scheduler,
  type SchedulerOptions,
} from "./core/server/scheduler.js";
export {
  type Caller,
  type ExecuteRequest,
  type ExecuteResult,
  type ReadFileResult,
  SandboxService,
  type ServiceOptions,
} from "./core/server/service.js";
export {
  type FileInfo,
  type FullOutput,
  LANGUAGES,
  type Language,
  type OutputStream,
  type Permissions,
  RUN_EXIT_CODES,
  RUN_STATUSES,
  type RunDisplay,
  type RunImage,
  type RunOptions,
  type RunResult,
  type RunStatus,
} from "./core/types.js";
export { Runtime, shutdown } from "./runtime.js";

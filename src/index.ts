// The public API of polybox. Every export here is public API: adding a line makes it part of
// what embedders may rely on, so keep this list short and deliberate.

export type { RuntimeOptions, PoolSizes } from "./core/config.js";
export { PolyboxError, isPolyboxError, type PolyboxErrorCode } from "./core/errors.js";
export { DEFAULT_LIMITS, DEFAULT_MAX_LIMITS, type Limits } from "./core/limits.js";
export { Runtime, shutdown } from "./core/runtime.js";
export { run, Sandbox, SandboxFiles, type OneShotOptions, type SandboxInfo, type SandboxOptions } from "./core/sandbox.js";
export {
  LANGUAGES,
  type FileInfo,
  type Language,
  type OutputStream,
  type Permissions,
  type RunOptions,
  type RunDisplay,
  type RunImage,
  type RunResult,
  type RunStatus,
} from "./core/types.js";
export { JobManager, type JobInfo, type JobLogs, type JobStatus } from "./core/jobs.js";
export { SandboxManager, type ManagedSandboxInfo, type SandboxManagerOptions } from "./core/registry.js";
export { parseRateLimit, Scheduler, type RateLimit, type SchedulerOptions } from "./core/scheduler.js";
export { SandboxService, type ExecuteRequest, type ExecuteResult, type ReadFileResult, type ServiceOptions } from "./core/service.js";

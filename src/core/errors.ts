// Errors the library throws. What guest code did is a RunResult, never an exception; an exception
// means the host was asked something it cannot do (bad input, closed sandbox, quota) or failed.
// Every error carries a stable string `code` that callers may switch on.

export type PolyboxErrorCode =
  | "INVALID_ARGUMENT"
  | "UNSUPPORTED_LANGUAGE"
  | "CODE_TOO_LARGE"
  | "PATH_OUTSIDE_WORKSPACE"
  | "FILE_NOT_FOUND"
  | "NOT_A_FILE"
  | "QUOTA_EXCEEDED"
  | "SANDBOX_CLOSED"
  | "SANDBOX_NOT_FOUND"
  | "SANDBOX_EXPIRED"
  | "SANDBOX_LOST"
  | "SNAPSHOT_NOT_FOUND"
  | "SANDBOX_BUSY"
  | "TOO_MANY_SANDBOXES"
  | "SERVER_BUSY"
  | "RATE_LIMITED"
  | "JOB_NOT_FOUND"
  | "PERMISSION_DENIED"
  | "PACKAGE_NOT_FOUND"
  | "PACKAGE_HASH_MISMATCH"
  | "PACKAGE_NOT_CACHED"
  | "PACKAGE_REGISTRY_UNAVAILABLE"
  | "NOT_IMPLEMENTED"
  | "ISOLATION_UNAVAILABLE"
  /** An optional package a feature needs is not installed (the cluster's bullmq and ioredis). */
  | "DEPENDENCY_MISSING"
  | "ENGINE_FAILED"
  | "PROTOCOL_ERROR"
  | "TIMEOUT";

/**
 * What an error is about, for programs and for the adapters (MCP, CLI) that turn it into their
 * own advice: the library names its options, never a tool or a command-line flag.
 */
export interface PolyboxErrorDetails {
  /** The library option whose limit was reached or whose grant is missing, e.g. `maxSandboxes`. */
  limit?: string;
  /** That option's value. */
  value?: number | string;
  sandboxId?: string;
  /** A named sandbox's name. */
  name?: string;
  snapshotId?: string;
  jobId?: string;
  /** Network hosts that would have to be granted (`permissions.net`). */
  hosts?: string[];
  /** The package an error is about: a Python requirement or a Wasmer `namespace/name@version`. */
  package?: string;
  /** The dependency of `package` that could not be had, when that is what failed. */
  dependency?: string;
  /** When trying again may succeed. */
  retryAfterMs?: number;
}

export class PolyboxError extends Error {
  override readonly name = "PolyboxError";
  readonly code: PolyboxErrorCode;
  readonly details: Readonly<PolyboxErrorDetails>;

  constructor(
    code: PolyboxErrorCode,
    message: string,
    options?: { cause?: unknown; details?: PolyboxErrorDetails },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = { ...options?.details };
  }
}

export function isPolyboxError(e: unknown, code?: PolyboxErrorCode): e is PolyboxError {
  return e instanceof PolyboxError && (code === undefined || e.code === code);
}

// CLI: turns parsed flags into the library's options. A limit flag sets both the default and the
// ceiling: `--memory=256M` means no run gets more than 256 MiB, whatever a client asks for.
// Limits without a flag keep the library's defaults and ceilings (DEFAULT_LIMITS,
// DEFAULT_MAX_LIMITS).

import type { RuntimeOptions } from "../core/config.js";
import type { Limits } from "../core/limits.js";
import type { ServiceOptions } from "../core/service.js";
import type { Flags } from "./args.js";

export function limitFlags(flags: Flags): Partial<Limits> {
  const out: Partial<Limits> = {};
  if (flags.timeoutMs !== undefined) out.timeoutMs = flags.timeoutMs;
  if (flags.memoryMb !== undefined) out.memoryMb = flags.memoryMb;
  if (flags.maxOutputBytes !== undefined) out.maxOutputBytes = flags.maxOutputBytes;
  if (flags.workspaceQuotaBytes !== undefined) out.workspaceQuotaBytes = flags.workspaceQuotaBytes;
  if (flags.maxCodeBytes !== undefined) out.maxCodeBytes = flags.maxCodeBytes;
  return out;
}

export function runtimeOptions(flags: Flags): RuntimeOptions {
  const limits = limitFlags(flags);
  return {
    limits,
    maxLimits: limits,
    permissions: { read: flags.allowRead, net: flags.allowNet, env: flags.allowEnv },
    ...(flags.pythonPackages.length > 0 ? { pythonPackages: flags.pythonPackages } : {}),
    ...(flags.pool ? { pool: flags.pool } : {}),
    ...(flags.isolation ? { isolation: flags.isolation } : {}),
    ...(flags.nativePython || flags.nativeBash || flags.nativeNode
      ? {
          nativeInterpreters: {
            ...(flags.nativePython ? { python: flags.nativePython } : {}),
            ...(flags.nativeBash ? { bash: flags.nativeBash } : {}),
            ...(flags.nativeNode ? { node: flags.nativeNode } : {}),
          },
        }
      : {}),
  };
}

export function serviceOptions(flags: Flags): Omit<ServiceOptions, "runtime"> {
  return {
    ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
    ...(flags.maxSandboxes !== undefined ? { maxSandboxes: flags.maxSandboxes } : {}),
    ...(flags.idleTimeoutMs !== undefined ? { idleTimeoutMs: flags.idleTimeoutMs } : {}),
    ...(flags.rateLimit !== undefined ? { rateLimit: flags.rateLimit } : {}),
    ...(flags.jobRetentionMs !== undefined ? { jobRetentionMs: flags.jobRetentionMs } : {}),
  };
}

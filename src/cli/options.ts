// CLI: turns parsed flags into the library's options. A limit flag sets both the default and the
// ceiling: `--memory=256M` means no run gets more than 256 MiB, whatever a client asks for.
// Limits without a flag keep the library's defaults and ceilings (DEFAULT_LIMITS,
// DEFAULT_MAX_LIMITS).

import type { RuntimeOptions } from "../core/config.js";
import type { Limits } from "../core/limits.js";
import { stderrLog } from "../core/log.js";
import type { NetSecret } from "../core/net-secrets.js";
import { DEFAULT_MAX_SANDBOXES } from "../core/server/registry.js";
import { defaultConcurrency, defaultQueueLimit } from "../core/server/scheduler.js";
import type { ServiceOptions } from "../core/server/service.js";
import { type Flags, UsageError } from "./args.js";

export function limitFlags(flags: Flags): Partial<Limits> {
  const out: Partial<Limits> = {};
  if (flags.timeoutMs !== undefined) out.timeoutMs = flags.timeoutMs;
  if (flags.memoryMb !== undefined) out.memoryMb = flags.memoryMb;
  if (flags.maxOutputBytes !== undefined) out.maxOutputBytes = flags.maxOutputBytes;
  if (flags.workspaceQuotaBytes !== undefined) out.workspaceQuotaBytes = flags.workspaceQuotaBytes;
  if (flags.maxCodeBytes !== undefined) out.maxCodeBytes = flags.maxCodeBytes;
  return out;
}

/**
 * `--net-header` values, read from the server's environment now: a missing variable is a
 * mistake on the command line, not a header sent empty.
 */
function netHeaders(
  flags: Flags,
  env: NodeJS.ProcessEnv,
): { host: string; name: string; value: string }[] {
  return flags.netHeaders.map(({ host, name, env: variable }) => {
    const value = env[variable];
    if (value === undefined)
      throw new UsageError(
        `--net-header=${host}=${name}:${variable}: the environment variable ${variable} is not set`,
      );
    return { host, name, value };
  });
}

/** `--net-secret` values: given on the flag, or read from the server's environment now. */
function netSecrets(flags: Flags, env: NodeJS.ProcessEnv): NetSecret[] {
  return flags.netSecrets.map(({ name, value, hosts, in: places }) => {
    const resolved = value ?? env[name];
    if (resolved === undefined)
      throw new UsageError(
        `--net-secret=${name}@${hosts.join(",")}: the environment variable ${name} is not set (or give the value as ${name}=VALUE@…)`,
      );
    return {
      name,
      value: resolved,
      hosts,
      ...(places ? { in: places as NetSecret["in"] } : {}),
    };
  });
}

export function runtimeOptions(flags: Flags, env: NodeJS.ProcessEnv = process.env): RuntimeOptions {
  const limits = limitFlags(flags);
  const headers = netHeaders(flags, env);
  const secrets = netSecrets(flags, env);
  return {
    log: stderrLog,
    limits,
    maxLimits: limits,
    permissions: {
      read: flags.allowRead,
      net: flags.allowNet,
      denyNet: flags.denyNet,
      env: flags.allowEnv,
    },
    ...(headers.length > 0 || secrets.length > 0
      ? {
          net: {
            ...(headers.length > 0 ? { headers } : {}),
            ...(secrets.length > 0 ? { secrets } : {}),
          },
        }
      : {}),
    ...(flags.pythonPackages.length > 0 ? { pythonPackages: flags.pythonPackages } : {}),
    ...(flags.cachedOnly ? { cachedOnly: true } : {}),
    ...(flags.pyodideCdn !== undefined ? { pyodideCdn: flags.pyodideCdn } : {}),
    ...(flags.wasmerRegistry !== undefined ? { wasmerRegistry: flags.wasmerRegistry } : {}),
    ...(flags.wasmerDownloadHosts !== undefined
      ? { wasmerDownloadHosts: flags.wasmerDownloadHosts }
      : {}),
    ...(flags.allowPrivateIndex ? { allowPrivateIndex: true } : {}),
    ...(flags.pool ? { pool: flags.pool } : {}),
    ...(flags.isolation ? { isolation: flags.isolation } : {}),
    ...(flags.dataDir !== undefined ? { dataDir: flags.dataDir } : {}),
    ...(flags.dataDirQuotaBytes !== undefined
      ? { dataDirQuotaBytes: flags.dataDirQuotaBytes }
      : {}),
    ...(flags.maxSnapshotsPerSandbox !== undefined
      ? { maxSnapshotsPerSandbox: flags.maxSnapshotsPerSandbox }
      : {}),
    ...(flags.maxSnapshotBytesPerSandbox !== undefined
      ? { maxSnapshotBytesPerSandbox: flags.maxSnapshotBytesPerSandbox }
      : {}),
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

/**
 * One client's share of a global limit when the operator sets none: over HTTP, where clients
 * compete, a quarter (so one cannot lock the others out); over stdio, whose one client is the
 * only one, all of it.
 */
function share(command: "mcp" | "serve", total: number): number {
  return command === "serve" ? Math.max(1, Math.ceil(total / 4)) : total;
}

export function serviceOptions(
  flags: Flags,
  command: "mcp" | "serve",
): Omit<ServiceOptions, "runtime"> {
  const concurrency = flags.concurrency ?? defaultConcurrency();
  const maxSandboxes = flags.maxSandboxes ?? DEFAULT_MAX_SANDBOXES;
  return {
    ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
    ...(flags.maxSandboxes !== undefined ? { maxSandboxes: flags.maxSandboxes } : {}),
    maxSandboxesPerClient: flags.maxSandboxesPerClient ?? share(command, maxSandboxes),
    ...(flags.maxNamedSandboxesPerClient !== undefined
      ? { maxNamedSandboxesPerClient: flags.maxNamedSandboxesPerClient }
      : {}),
    maxRunsPerClient:
      flags.maxRunsPerClient ?? share(command, concurrency + defaultQueueLimit(concurrency)),
    ...(flags.idleTimeoutMs !== undefined ? { idleTimeoutMs: flags.idleTimeoutMs } : {}),
    ...(flags.maxLifetimeMs !== undefined ? { maxLifetimeMs: flags.maxLifetimeMs } : {}),
    // A server records its ephemeral sandboxes, so that its successor can say they were lost.
    recordLive: true,
    ...(flags.rateLimit !== undefined ? { rateLimit: flags.rateLimit } : {}),
    ...(flags.jobRetentionMs !== undefined ? { jobRetentionMs: flags.jobRetentionMs } : {}),
    ...(flags.inlineOutputBytes !== undefined
      ? { inlineOutputBytes: flags.inlineOutputBytes }
      : {}),
  };
}

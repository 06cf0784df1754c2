// The one place where limits are defined, defaulted, bounded and named. Every limit has a name
// that appears verbatim in the message of the result or error it causes, so that a user who hits
// one knows which knob to turn (`timeoutMs`, `memoryMb`, ...).

import { PolyboxError } from "./errors.js";

export interface Limits {
  /** Wall-clock time per run; the interpreter is killed, not asked, when it passes. */
  timeoutMs: number;
  /** Memory per interpreter (WASM linear memory plus the worker's JS heap). */
  memoryMb: number;
  /** Bytes kept per output stream (stdout, stderr); the run is stopped past it. */
  maxOutputBytes: number;
  /** Bytes of files one sandbox's workspace may hold. */
  workspaceQuotaBytes: number;
  /** Bytes of source code accepted per run. */
  maxCodeBytes: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: 30_000,
  memoryMb: 512,
  maxOutputBytes: 1024 * 1024,
  workspaceQuotaBytes: 100 * 1024 * 1024,
  maxCodeBytes: 1024 * 1024,
});

/**
 * Images and displays returned with a result: each image at most `maxImageBytes`, at most
 * `maxImages` of them, and everything rich a run returns (image bytes, display text and data)
 * at most `maxRichBytes` in all, so that one answer stays within what MCP clients accept.
 */
export const IMAGE_LIMITS = Object.freeze({
  maxImageBytes: 5 * 1024 * 1024,
  maxImages: 10,
  maxRichBytes: 8 * 1024 * 1024,
});

/** Files and directories one workspace may hold, whatever their size (each costs an inode). */
export const MAX_WORKSPACE_ENTRIES = 10_000;

/**
 * Python requirements read from guest code (a PEP 723 block) or from a caller: the block at most
 * this big, and at most this many requirements in it or in one install call. They bound what the
 * server's main thread parses before a run; real scripts need a few hundred bytes.
 */
export const PACKAGE_LIMITS = Object.freeze({
  maxScriptMetadataBytes: 64 * 1024,
  maxRequirements: 256,
});

/**
 * A run's network use (the guest's own requests, through the trusted side): each name appears in
 * the error that ends a request past it. The per-request time is also cut to what is left of the
 * run's `timeoutMs`.
 */
export interface NetLimits {
  /** Requests per run (each redirect hop counts toward the bytes, not the count). */
  maxRequests: number;
  /** Bytes the guest may send per run (request bodies). */
  maxBytesOut: number;
  /** Bytes the guest may receive per run (response bodies). */
  maxBytesIn: number;
  /** Bytes of one response body. */
  maxResponseBytes: number;
  /** Time per request, from the first connection to the last byte of its answer. */
  requestTimeoutMs: number;
}

export const DEFAULT_NET_LIMITS: Readonly<NetLimits> = Object.freeze({
  maxRequests: 100,
  maxBytesOut: 10 * 1024 * 1024,
  maxBytesIn: 50 * 1024 * 1024,
  maxResponseBytes: 20 * 1024 * 1024,
  requestTimeoutMs: 30_000,
});

/** The largest value a caller may ask for unless the operator raises it. */
export const DEFAULT_MAX_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: 15 * 60_000,
  memoryMb: 4096,
  maxOutputBytes: 64 * 1024 * 1024,
  workspaceQuotaBytes: 4 * 1024 * 1024 * 1024,
  maxCodeBytes: 16 * 1024 * 1024,
});

const MINIMUMS: Readonly<Limits> = Object.freeze({
  timeoutMs: 1,
  memoryMb: 32,
  maxOutputBytes: 1,
  workspaceQuotaBytes: 0,
  maxCodeBytes: 1,
});

export const LIMIT_NAMES = Object.keys(DEFAULT_LIMITS) as (keyof Limits)[];

/**
 * Merges overrides over a base, checking each against the allowed maximum. A value above the
 * maximum is an error rather than silently clamped: the caller asked for something the operator
 * did not allow, and should hear so.
 */
export function resolveLimits(
  base: Readonly<Limits>,
  overrides: Partial<Limits> | undefined,
  max: Readonly<Limits> = DEFAULT_MAX_LIMITS,
): Limits {
  const out: Limits = { ...base };
  if (!overrides) return out;
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(LIMIT_NAMES as string[]).includes(key)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `unknown limit "${key}"; known limits: ${LIMIT_NAMES.join(", ")}`,
      );
    }
    const name = key as keyof Limits;
    if (typeof value !== "number" || !Number.isFinite(value) || !Number.isInteger(value)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `limit ${name} must be an integer, got ${String(value)}`,
      );
    }
    if (value < MINIMUMS[name] || value > max[name]) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `limit ${name}=${value} is outside the allowed range ${MINIMUMS[name]}..${max[name]}`,
      );
    }
    out[name] = value;
  }
  return out;
}

/** Human form of a limit for messages: `timeoutMs=30000 (30 s)`. */
export function describeLimit(name: keyof Limits, value: number): string {
  switch (name) {
    case "timeoutMs":
      return `${name}=${value} (${formatDuration(value)})`;
    case "memoryMb":
      return `${name}=${value} (${value} MiB)`;
    default:
      return `${name}=${value} (${formatBytes(value)})`;
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${+(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${+(n / 1024 ** 3).toFixed(1)} GiB`;
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${+(ms / 1000).toFixed(1)} s`;
}

/** Parses CLI sizes such as `512M`, `1G`, `100k`, `2048` (bytes). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(text.trim());
  if (!m)
    throw new PolyboxError("INVALID_ARGUMENT", `cannot read "${text}" as a size (e.g. 512M, 1G)`);
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[m[2]!.toLowerCase()]!;
  return Math.round(Number(m[1]) * unit);
}

/** Parses CLI durations such as `300s`, `5m`, `1500ms`, `30` (seconds). */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(text.trim());
  if (!m)
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `cannot read "${text}" as a duration (e.g. 30s, 5m)`,
    );
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s").toLowerCase()]!;
  return Math.round(Number(m[1]) * unit);
}

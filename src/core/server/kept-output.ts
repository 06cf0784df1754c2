// Trusted side: output too long to hand back whole. A result keeps the head and the tail of such
// a stream, with a marker where the middle was cut, and the whole stream is kept where the caller
// can read it later: in a sandbox run's own workspace (under .polybox/output/), or, for a one-shot
// run, whose sandbox is gone, in a store of the service's that forgets it after the job
// retention time. An answer a model reads stays short; nothing the program printed is lost.

import { isPolyboxError, PolyboxError } from "../errors.js";
import { humanDuration } from "../human.js";
import { formatBytes } from "../limits.js";
import type { Sandbox } from "../sandbox/index.js";
import { Workspace } from "../sandbox/workspace.js";
import type { FullOutput, OutputStream, RunResult } from "../types.js";

/** Bytes of each stream a result holds before its middle is cut (the service's default). */
export const DEFAULT_INLINE_OUTPUT_BYTES = 32 * 1024;
/** Below this a head and a tail are too short to read. */
export const MIN_INLINE_OUTPUT_BYTES = 1024;
/** Where a sandbox keeps the whole output of its runs, in its own workspace. */
export const OUTPUT_DIR = ".polybox/output";
/** Kept output files per sandbox: the newest stay, older ones go, so they cannot fill its quota. */
export const MAX_OUTPUT_FILES_PER_SANDBOX = 20;
/** Bytes of one-shot runs' output the service keeps in all; the oldest go first past it. */
export const MAX_KEPT_ONE_SHOT_BYTES = 256 * 1024 * 1024;

/**
 * `text` within `maxBytes` (UTF-8): its head and its tail, cut at line ends where one is near,
 * with `marker(cutBytes)` on a line of its own in place of the middle.
 */
export function headAndTail(
  text: string,
  maxBytes: number,
  marker: (cutBytes: number) => string,
): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  // The marker's length barely depends on the number in it; room for two more digits suffices.
  const half = Math.max(
    0,
    Math.floor((maxBytes - Buffer.byteLength(marker(bytes.length)) - 8) / 2),
  );
  const headEnd = lineEndBefore(bytes, charStart(bytes, half, -1), half);
  const tailStart = lineStartAfter(bytes, charStart(bytes, bytes.length - half, 1), half);
  const head = bytes.subarray(0, headEnd).toString();
  const line = `${head === "" || head.endsWith("\n") ? "" : "\n"}${marker(tailStart - headEnd)}\n`;
  return `${head}${line}${bytes.subarray(tailStart).toString()}`;
}

/** The nearest UTF-8 character start at or from `i`, moving in `direction`. */
function charStart(bytes: Buffer, i: number, direction: 1 | -1): number {
  let at = i;
  while (at > 0 && at < bytes.length && (bytes[at]! & 0xc0) === 0x80) at += direction;
  return at;
}

/** Just past the last newline in the final eighth of `bytes[0, end)`, else `end`. */
function lineEndBefore(bytes: Buffer, end: number, span: number): number {
  const nl = end > 0 ? bytes.lastIndexOf(0x0a, end - 1) : -1;
  return nl >= 0 && nl >= end - span / 8 ? nl + 1 : end;
}

/** Just past the first newline in the first eighth of `bytes[start, …)`, else `start`. */
function lineStartAfter(bytes: Buffer, start: number, span: number): number {
  const nl = bytes.indexOf(0x0a, start);
  return nl >= 0 && nl < start + span / 8 && nl + 1 < bytes.length ? nl + 1 : start;
}

/** The marker a result carries in place of a stream's middle. */
export function cutMarker(
  stream: OutputStream,
  totalBytes: number,
  where: string,
): (cutBytes: number) => string {
  return (cut) =>
    `[… polybox cut ${formatBytes(cut)} of ${stream} here; ${formatBytes(totalBytes)} in all, ${where} …]`;
}

interface Kept {
  owner: string;
  expiresAt: number;
}

/**
 * The whole output of one-shot runs, on disk in a private directory, for `retentionMs` after each
 * run and `maxBytes` in all (the oldest go first). A copy belongs to the owner of its run: asked
 * by anyone else it is "not found", as an unknown run is.
 */
export class KeptOutputs {
  readonly retentionMs: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private readonly files: Workspace;
  /** By file name, oldest first. */
  private readonly kept = new Map<string, Kept>();
  /** Keeps and evictions one at a time, so that two of them never count the same free room. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(options: { retentionMs: number; maxBytes?: number; now?: () => number }) {
    this.retentionMs = options.retentionMs;
    this.maxBytes = options.maxBytes ?? MAX_KEPT_ONE_SHOT_BYTES;
    this.now = options.now ?? Date.now;
    this.files = new Workspace(this.maxBytes);
    this.timer = setInterval(
      () => void this.serial(() => this.prune()),
      Math.min(60_000, Math.max(1000, this.retentionMs)),
    );
    this.timer.unref();
  }

  /** Keeps `data` (UTF-8 text) as the run's `stream`; returns when it will be forgotten. */
  keep(owner: string, runId: string, stream: OutputStream, data: Buffer): Promise<number> {
    return this.serial(async () => {
      if (data.length > this.maxBytes) {
        throw new PolyboxError(
          "QUOTA_EXCEEDED",
          `it is ${formatBytes(data.length)}, more than the ${formatBytes(this.maxBytes)} kept of one-shot runs' output in all`,
        );
      }
      await this.prune();
      for (const name of this.kept.keys()) {
        if (this.files.usedBytes + data.length <= this.maxBytes) break;
        await this.forget(name);
      }
      const name = fileName(runId, stream);
      await this.files.write(name, data);
      const expiresAt = this.now() + this.retentionMs;
      this.kept.set(name, { owner, expiresAt });
      return expiresAt;
    });
  }

  /**
   * `result` with each stream cut to `run.inlineBytes`: a longer one keeps its head and tail,
   * and the whole of it is kept where `fullOutput` says (in the run's sandbox if it has one with
   * room, else here). Each long stream is encoded once.
   */
  async shorten(
    result: RunResult,
    run: { owner: string; sandbox: Sandbox | null; runId: string; inlineBytes: number },
  ): Promise<RunResult> {
    const long = (["stdout", "stderr"] as const).filter(
      (stream) => Buffer.byteLength(result[stream]) > run.inlineBytes,
    );
    if (long.length === 0) return result;
    const out: RunResult = { ...result };
    const fullOutput: Partial<Record<OutputStream, FullOutput>> = { ...result.fullOutput };
    const notes = [...(result.notes ?? [])];
    for (const stream of long) {
      const whole = result[stream];
      const data = Buffer.from(whole);
      let where: string;
      try {
        const stored = await this.keepStream(run, stream, data, notes);
        fullOutput[stream] = stored;
        where =
          stored.path !== null
            ? `the whole of it is in the workspace at ${stored.path}`
            : `the whole of it is kept for ${humanDuration(this.retentionMs)} as ${stream} of run ${run.runId}`;
      } catch (error) {
        if (!isPolyboxError(error)) throw error;
        where = "the rest could not be kept";
        notes.push(
          `the whole ${stream} (${data.length} bytes) could not be kept: ${error.message}`,
        );
      }
      out[stream] = headAndTail(whole, run.inlineBytes, cutMarker(stream, data.length, where));
    }
    if (Object.keys(fullOutput).length > 0) out.fullOutput = fullOutput;
    if (notes.length > 0) out.notes = notes;
    return out;
  }

  /**
   * Keeps a whole stream: in the run's sandbox if it has one and room, else here. Called inside
   * the sandbox's exclusive section (Sandbox.runThen), hence `workspace`.
   */
  private async keepStream(
    run: { owner: string; sandbox: Sandbox | null; runId: string },
    stream: OutputStream,
    data: Buffer,
    notes: string[],
  ): Promise<FullOutput> {
    const { owner, sandbox, runId } = run;
    const bytes = data.length;
    if (sandbox !== null) {
      const path = `${OUTPUT_DIR}/${runId}.${stream}`;
      try {
        await sandbox.workspace.write(path, data);
        // The copy is kept: failing to tidy older ones (the guest may have moved them) is no
        // reason to say otherwise.
        await pruneKeptFiles(sandbox).catch(() => undefined);
        return { bytes, runId, sandboxId: sandbox.id, path, expiresAt: null };
      } catch (error) {
        if (!isPolyboxError(error)) throw error;
        notes.push(
          `the whole ${stream} could not be put in the sandbox's workspace (${error.message}); it is kept for ${humanDuration(this.retentionMs)} instead`,
        );
      }
    }
    const expiresAt = await this.keep(owner, runId, stream, data);
    return { bytes, runId, sandboxId: null, path: null, expiresAt };
  }

  /** The kept `stream` of a run of `owner`'s. */
  async read(owner: string, runId: string, stream: OutputStream): Promise<string> {
    const name = typeof runId === "string" ? fileName(runId, stream) : "";
    const entry = this.kept.get(name);
    if (!entry || entry.owner !== owner || entry.expiresAt <= this.now()) {
      throw new PolyboxError(
        "FILE_NOT_FOUND",
        `no kept ${stream} of a run ${JSON.stringify(runId)}: the output of a one-shot run is kept for ${humanDuration(this.retentionMs)} after it (retentionMs), at most ${formatBytes(this.maxBytes)} in all`,
        { details: { limit: "retentionMs" } },
      );
    }
    return Buffer.from(await this.files.read(name)).toString();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.serial(() => this.files.destroy());
    this.kept.clear();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async prune(): Promise<void> {
    const now = this.now();
    for (const [name, entry] of this.kept) if (entry.expiresAt <= now) await this.forget(name);
  }

  private async forget(name: string): Promise<void> {
    this.kept.delete(name);
    await this.files.remove(name).catch(() => undefined);
  }
}

/** Run ids are the service's own (UUIDs), so the name needs no escaping. */
function fileName(runId: string, stream: OutputStream): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(runId))
    throw new PolyboxError("INVALID_ARGUMENT", `${JSON.stringify(runId)} is not a run id`);
  return `${runId}.${stream}`;
}

/** Removes the oldest kept output files of a sandbox past MAX_OUTPUT_FILES_PER_SANDBOX. */
async function pruneKeptFiles(sandbox: Sandbox): Promise<void> {
  const files = sandbox.workspace
    .list(OUTPUT_DIR)
    .filter((f) => f.type === "file")
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of files.slice(MAX_OUTPUT_FILES_PER_SANDBOX)) {
    await sandbox.workspace.remove(old.path);
  }
}

/** Checks an inline output limit (inlineOutputBytes), so that a bad one fails at start-up. */
export function checkInlineOutput(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < MIN_INLINE_OUTPUT_BYTES) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the inline output limit (inlineOutputBytes) must be a whole number of bytes, at least ${MIN_INLINE_OUTPUT_BYTES}, got ${bytes}`,
      { details: { limit: "inlineOutputBytes", value: bytes } },
    );
  }
  return bytes;
}

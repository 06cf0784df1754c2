// Trusted side's gate for everything the engine host sends. The host runs next to guest code, so
// a message from it is treated like input from the network: shape, types and sizes are checked,
// and anything that does not fit is dropped or turned into an error result, never acted on.

import { limitMessage } from "./limit-messages.js";
import {
  type Display,
  type EngineResult,
  type EngineStatus,
  type FileBlob,
  type FileSync,
  type HostEvent,
  RUN_STATUSES,
  type RunLimits,
} from "./messages.js";

const STATUSES = new Set<EngineStatus>(RUN_STATUSES);
const MAX_VALUE_CHARS = 1024 * 1024;
const MAX_MESSAGE_CHARS = 4096;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isString = (v: unknown): v is string => typeof v === "string";
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

export function validateHostEvent(raw: unknown): HostEvent | null {
  if (!isObject(raw) || !isString(raw.type)) return null;
  switch (raw.type) {
    case "ready":
      return isInt(raw.pid) && isString(raw.node) ? (raw as HostEvent) : null;
    case "output":
      return isInt(raw.id) &&
        (raw.stream === "stdout" || raw.stream === "stderr") &&
        isString(raw.text)
        ? (raw as HostEvent)
        : null;
    case "result":
      return isInt(raw.id) && isObject(raw.result) ? (raw as HostEvent) : null;
    case "failed":
      return isInt(raw.id) && isString(raw.message)
        ? { type: "failed", id: raw.id, message: raw.message.slice(0, MAX_MESSAGE_CHARS) }
        : null;
    case "pong":
      return isInt(raw.id) ? (raw as HostEvent) : null;
    case "stats":
      return isInt(raw.id) && isObject(raw.stats) ? (raw as HostEvent) : null;
    case "log":
      return isString(raw.message)
        ? { type: "log", level: "warn", message: raw.message.slice(0, MAX_MESSAGE_CHARS) }
        : null;
    default:
      return null;
  }
}

/** Longest file name a host file system takes (bytes per path component). */
export const MAX_NAME_BYTES = 255;
/** The range a JavaScript Date (and so `fs.utimes`) accepts. */
const MAX_TIME_MS = 8.64e15;

/** A workspace-relative path as engines report it: no absolute paths, no `..`, no NUL, names a host can store. */
export function isSafeRelativePath(p: unknown): p is string {
  if (!isString(p) || p.length === 0 || p.length > 4096 || p.includes("\0") || p.includes("\\"))
    return false;
  if (p.startsWith("/")) return false;
  return p
    .split("/")
    .every(
      (part) =>
        part !== "" && part !== "." && part !== ".." && Buffer.byteLength(part) <= MAX_NAME_BYTES,
    );
}

function validateChanges(raw: unknown): FileSync | null {
  if (
    !isObject(raw) ||
    !Array.isArray(raw.files) ||
    !Array.isArray(raw.dirs) ||
    !Array.isArray(raw.removed)
  )
    return null;
  const files: FileBlob[] = [];
  for (const f of raw.files as unknown[]) {
    if (!isObject(f) || !isSafeRelativePath(f.path) || !(f.data instanceof Uint8Array)) return null;
    if (
      typeof f.mtimeMs !== "number" ||
      !Number.isFinite(f.mtimeMs) ||
      Math.abs(f.mtimeMs) > MAX_TIME_MS
    )
      return null;
    files.push({ path: f.path, data: f.data, mtimeMs: f.mtimeMs });
  }
  if (!raw.dirs.every(isSafeRelativePath) || !raw.removed.every(isSafeRelativePath)) return null;
  return { files, dirs: raw.dirs as string[], removed: raw.removed as string[] };
}

function capText(text: string, maxBytes: number): { text: string; cut: boolean } {
  if (text.length <= maxBytes / 4 || Buffer.byteLength(text) <= maxBytes)
    return { text, cut: false };
  // A character cut in half decodes as one U+FFFD at the end: drop it. (A check of the last
  // character, not a regex: the text is the guest's and this runs on the server's main thread.)
  const cut = Buffer.from(text).subarray(0, maxBytes).toString("utf8");
  return { text: cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut, cut: true };
}

/**
 * The result of a run that the engine side could not deliver (it died, stopped answering, or sent
 * something invalid): an error whose message says what happened, with the interpreter's state gone.
 */
export function failedResult(message: string): EngineResult {
  return {
    status: "error",
    stdout: "",
    stderr: "",
    exitCode: 1,
    value: null,
    truncated: false,
    message,
    stateLost: true,
    changes: { files: [], dirs: [], removed: [] },
    displays: [],
  };
}

/**
 * Checks a run result and enforces the run's limits again on this side: output past
 * `limits.maxOutputBytes` is cut, and file changes larger in all than the workspace quota are
 * dropped (the run ends `workspace_limit`) before anything holds on to them.
 */
export function validateResult(
  raw: unknown,
  runLimits: number | Pick<RunLimits, "maxOutputBytes" | "workspaceQuotaBytes">,
): EngineResult {
  const limits =
    typeof runLimits === "number"
      ? { maxOutputBytes: runLimits, workspaceQuotaBytes: Number.POSITIVE_INFINITY }
      : runLimits;
  const { maxOutputBytes } = limits;
  const bad = (why: string): EngineResult =>
    failedResult(`the engine sent an invalid result (${why}); it was discarded`);
  if (!isObject(raw)) return bad("not an object");
  const { status, stdout, stderr, exitCode, value, truncated, message, stateLost } = raw;
  if (!isString(status) || !STATUSES.has(status as EngineStatus)) return bad("unknown status");
  if (!isString(stdout) || !isString(stderr)) return bad("output is not text");
  if (!isInt(exitCode)) return bad("exit code is not an integer");
  if (value !== null && !isString(value)) return bad("value is not text");
  let changes = validateChanges(raw.changes);
  if (!changes) return bad("file changes are malformed");
  let over: string | undefined;
  const changedBytes = changes.files.reduce((sum, f) => sum + f.data.length, 0);
  if (changedBytes > limits.workspaceQuotaBytes) {
    over = limitMessage(
      "workspace_limit",
      limits as RunLimits,
      `the run's files came to ${changedBytes} bytes; its file changes were discarded`,
    );
    changes = { files: [], dirs: [], removed: [] };
  }
  const displays = validateDisplays(raw.displays);
  if (!displays) return bad("displays are malformed");
  const out = capText(stdout, maxOutputBytes);
  const err = capText(stderr, maxOutputBytes);
  return {
    status: over ? "workspace_limit" : (status as EngineStatus),
    stdout: out.text,
    stderr: err.text,
    exitCode: over && exitCode === 0 ? 1 : exitCode,
    value: over || value === null ? null : (value as string).slice(0, MAX_VALUE_CHARS),
    truncated: truncated === true || out.cut || err.cut,
    ...(over
      ? { message: over }
      : isString(message)
        ? { message: message.slice(0, MAX_MESSAGE_CHARS) }
        : {}),
    ...(stateLost === true ? { stateLost: true } : {}),
    changes,
    displays,
  };
}

const MAX_DISPLAY_TEXT = 64 * 1024;
/** Bytes of display data one run may send at all; the trusted side's budget is smaller still. */
const MAX_DISPLAY_DATA_TOTAL = 16 * 1024 * 1024;

function validateDisplays(raw: unknown): Display[] | null {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 100) return null;
  const out: Display[] = [];
  let dataBytes = 0;
  for (const d of raw as unknown[]) {
    if (
      !isObject(d) ||
      !isString(d.mimeType) ||
      !/^[\w.+-]+\/[\w.+-]+$/.test(d.mimeType) ||
      !isString(d.text)
    )
      return null;
    if (d.data !== undefined && !isString(d.data) && !(d.data instanceof Uint8Array)) return null;
    dataBytes += d.data === undefined ? 0 : d.data.length;
    if (dataBytes > MAX_DISPLAY_DATA_TOTAL) return null;
    out.push({
      mimeType: d.mimeType,
      text: d.text.slice(0, MAX_DISPLAY_TEXT),
      ...(d.data !== undefined ? { data: d.data } : {}),
    });
  }
  return out;
}

// Trusted side's gate for everything the untrusted side sends: the engine host's events, the
// native agent's, and the results both carry. Such a message is treated like input from the
// network: its shape is checked against the schemas in schemas.ts, then the run's own limits are
// applied again (output, file changes, displays), and anything that does not fit is dropped or
// turned into an error result, never acted on.

import type { z } from "zod";
import { limitMessage } from "./limit-messages.js";
import type { RunLimits } from "./messages.js";
import { isUnstorablePath } from "./paths.js";
import {
  type AgentEvent,
  AgentEventSchema,
  type Display,
  type EngineResult,
  EngineResultSchema,
  type FileSync,
  type HostEvent,
  HostEventSchema,
  type HostStats,
  HostStatsSchema,
  type RestoreAnswer,
  RestoreAnswerSchema,
  type StateAnswer,
  StateAnswerSchema,
} from "./schemas.js";

export { isSafeRelativePath, MAX_NAME_BYTES } from "./paths.js";

const MAX_VALUE_CHARS = 1024 * 1024;
const MAX_MESSAGE_CHARS = 4096;
const MAX_DISPLAY_TEXT = 64 * 1024;
/** Bytes of display data one run may send at all; the trusted side's budget is smaller still. */
const MAX_DISPLAY_DATA_TOTAL = 16 * 1024 * 1024;

function parsed<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> | null {
  const r = schema.safeParse(raw);
  return r.success ? r.data : null;
}

/** An engine host event of a known shape, or null. */
export function validateHostEvent(raw: unknown): HostEvent | null {
  const event = parsed(HostEventSchema, raw);
  if (event?.type === "log" || event?.type === "failed")
    return { ...event, message: event.message.slice(0, MAX_MESSAGE_CHARS) };
  return event;
}

/** A native agent event of a known shape, or null. */
export function validateAgentEvent(raw: unknown): AgentEvent | null {
  const event = parsed(AgentEventSchema, raw);
  if (event?.type === "log")
    return { ...event, message: event.message.slice(0, MAX_MESSAGE_CHARS) };
  return event;
}

/** An engine host's answer to `stats`, or null. */
export function validateStats(raw: unknown): HostStats | null {
  return parsed(HostStatsSchema, raw);
}

/**
 * An answer to "capture the state of a session", or null: a captured state is at most `maxBytes`
 * (the sandbox's memory limit: no interpreter holds more), whatever the far side claims.
 */
export function validateStateAnswer(raw: unknown, maxBytes: number): StateAnswer | null {
  const answer = parsed(StateAnswerSchema, raw);
  if (answer?.captured && answer.data.byteLength > maxBytes) return null;
  return answer;
}

/** An answer to "restore this state into a session", or null. */
export function validateRestoreAnswer(raw: unknown): RestoreAnswer | null {
  return parsed(RestoreAnswerSchema, raw);
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
  const checked = EngineResultSchema.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue?.path.length ? issue.path.slice(0, 4).join(".") : "the result";
    return failedResult(
      `the engine sent an invalid result (${where}: ${issue?.code ?? "malformed"}); it was discarded`,
    );
  }
  const result = checked.data;
  const { changes: storable, notes: own } = withoutUnstorable(result.changes);
  // Notes an engine host made when it checked its own worker's result (as this function does).
  const notes = [
    ...(result.notes ?? []).slice(0, 4).map((n) => n.slice(0, MAX_MESSAGE_CHARS)),
    ...own,
  ];
  let changes = storable;
  let over: string | undefined;
  const changedBytes = changes.files.reduce((sum, f) => sum + f.data.length, 0);
  if (changedBytes > limits.workspaceQuotaBytes) {
    over = limitMessage(
      "workspace_limit",
      { timeoutMs: 0, memoryMb: 0, ...limits },
      `the run's files came to ${changedBytes} bytes; its file changes were discarded`,
    );
    changes = { files: [], dirs: [], removed: [] };
  }
  const displays = capDisplays(result.displays);
  if (!displays)
    return failedResult("the engine sent an invalid result (displays too large); it was discarded");
  const out = capText(result.stdout, limits.maxOutputBytes);
  const err = capText(result.stderr, limits.maxOutputBytes);
  return {
    status: over ? "workspace_limit" : result.status,
    stdout: out.text,
    stderr: err.text,
    exitCode: over && result.exitCode === 0 ? 1 : result.exitCode,
    value: over || result.value === null ? null : result.value.slice(0, MAX_VALUE_CHARS),
    truncated: result.truncated || out.cut || err.cut,
    ...(over
      ? { message: over }
      : result.message !== undefined
        ? { message: result.message.slice(0, MAX_MESSAGE_CHARS) }
        : {}),
    ...(result.stateLost === true ? { stateLost: true } : {}),
    ...(notes.length > 0 ? { notes } : {}),
    changes,
    displays,
  };
}

const MAX_NOTED_NAMES = 5;

/** The changes without paths the workspace cannot store, and a note naming what was left out. */
function withoutUnstorable(changes: FileSync): { changes: FileSync; notes: string[] } {
  const dropped: string[] = [];
  const keep = (p: string) => {
    if (!isUnstorablePath(p)) return true;
    dropped.push(p);
    return false;
  };
  const kept = {
    files: changes.files.filter((f) => keep(f.path)),
    dirs: changes.dirs.filter(keep),
    removed: changes.removed.filter((p) => !isUnstorablePath(p)),
  };
  if (dropped.length === 0) return { changes, notes: [] };
  const names = dropped
    .slice(0, MAX_NOTED_NAMES)
    // JSON.stringify writes a lone surrogate as its escape.
    .map((p) => JSON.stringify(p.length > 200 ? `${p.slice(0, 200)}…` : p))
    .join(", ");
  const more =
    dropped.length > MAX_NOTED_NAMES ? ` and ${dropped.length - MAX_NOTED_NAMES} more` : "";
  return {
    changes: kept,
    notes: [
      `not kept in the workspace: ${names}${more} (a name with a backslash, a name longer than 255 bytes, or one that is not valid UTF-8 cannot be stored)`,
    ],
  };
}

/** Display texts cut to size; null when their data is more than any run may send. */
function capDisplays(displays: readonly Display[]): Display[] | null {
  let dataBytes = 0;
  const out: Display[] = [];
  for (const d of displays) {
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

// The messages the untrusted side may send to the trusted side, as zod schemas: the engine host's
// events, the native agent's, and the run result both carry. Their TypeScript types are inferred
// from these schemas (messages.ts re-exports them), so the type a trusted module holds is the
// shape that was checked. Sizes are not checked here: a run's caps depend on its limits and are
// applied afterwards, in validate.ts.
//
// Only the trusted side (and the engine host, which checks its own workers) loads this module;
// guest-side engines import the types alone.

import { z } from "zod";
import { RUN_STATUSES } from "./endings.js";
import { LANGUAGES } from "./languages.js";
import { TunnelFrameSchema } from "./net.js";
import { isForgedPath } from "./paths.js";

/** The range a JavaScript Date (and so `fs.utimes`) accepts. */
const MAX_TIME_MS = 8.64e15;

const id = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, "not bytes");
/** Forged paths fail the schema; unstorable ones pass it and are dropped by validateResult. */
const safePath = z.string().refine((p) => !isForgedPath(p), "not a workspace-relative path");
const stream = z.enum(["stdout", "stderr"]);

export const FileBlobSchema = z.object({
  path: safePath,
  data: bytes,
  // A guest may set any time on its file, past what a Date holds (an engine then reports NaN
  // or an infinity): it is kept within the range a JavaScript Date takes, and 0 for no number.
  mtimeMs: z
    .custom<number>((t) => typeof t === "number", "not a number")
    .transform((t) => (Number.isNaN(t) ? 0 : Math.max(-MAX_TIME_MS, Math.min(MAX_TIME_MS, t)))),
});

export const FileSyncSchema = z.object({
  files: z.array(FileBlobSchema),
  dirs: z.array(safePath),
  removed: z.array(safePath),
});

export const DisplaySchema = z.object({
  mimeType: z.string().regex(/^[\w.+-]{1,127}\/[\w.+-]{1,127}$/),
  text: z.string(),
  data: z.union([z.string(), bytes]).optional(),
});

export const EngineResultSchema = z.object({
  status: z.enum(RUN_STATUSES),
  stdout: z.string(),
  stderr: z.string(),
  // Whatever a guest passed to exit(), as its engine reports it.
  exitCode: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
  value: z.string().nullable(),
  truncated: z.boolean(),
  message: z.string().optional(),
  /** Set by the engine host when the interpreter was replaced and its state is gone. */
  stateLost: z.boolean().optional(),
  /** Set on the trusted side: what the caller should know, e.g. files that were not kept. */
  notes: z.array(z.string()).max(16).optional(),
  changes: FileSyncSchema,
  /** Rich values the guest passed to `display()`, in order. */
  displays: z.array(DisplaySchema).max(100).default([]),
});

/**
 * What a restore of a captured interpreter brings back: `memory`, the whole interpreter (its
 * WebAssembly memory); `globals`, the values of its global names that could be serialized and
 * the modules they named. The bytes are the engine's own format: only that engine reads them.
 */
export const STATE_KINDS = ["memory", "globals"] as const;
export type StateKind = (typeof STATE_KINDS)[number];
/** A name (or other item) a capture or a restore reports as not kept, and how many at most. */
const MAX_NOT_KEPT = 1000;
const notKept = z.array(z.string().max(300)).max(MAX_NOT_KEPT);

/** An engine host's answer to "capture the state of session S" (sizes checked in validate.ts). */
export const StateAnswerSchema = z.discriminatedUnion("captured", [
  z.object({ captured: z.literal(true), kind: z.enum(STATE_KINDS), data: bytes, notKept }),
  z.object({ captured: z.literal(false), reason: z.string().max(1000) }),
]);

/** An engine host's answer to "restore this state into session S". */
export const RestoreAnswerSchema = z.object({
  restored: z.boolean(),
  notKept,
  message: z.string().max(1000).optional(),
});

const counts = z.partialRecord(z.enum(LANGUAGES), z.number().int().nonnegative());

export const HostStatsSchema = z.object({
  workers: z.number().int().nonnegative(),
  pooled: counts,
  sessions: z.number().int().nonnegative(),
  rssBytes: z.number().nonnegative(),
  heapUsedBytes: z.number().nonnegative(),
});

const output = z.object({ type: z.literal("output"), id, stream, text: z.string() });
/** The result itself is checked apart (validateResult), so a bad one still ends its run. */
const result = z.object({
  type: z.literal("result"),
  id,
  result: z.unknown(),
  // The host asks to be replaced (forged, it only costs its own tenant a new host).
  retire: z.literal(true).optional(),
});
const log = z.object({
  type: z.literal("log"),
  level: z.enum(["info", "warn", "error"]).optional(),
  message: z.string(),
});

/** A guest's network request for run `id`; `request` is checked by the broker (protocol/net.ts). */
const net = z.object({ type: z.literal("net"), id, req: id, request: z.unknown() });

/** A frame of a CONNECT tunnel `tun` of run `id` (native mode's proxy), checked here. */
const tunnel = z.object({ type: z.literal("tunnel"), id, tun: id, frame: TunnelFrameSchema });

/** What the WASM engine host sends over its IPC channel. */
export const HostEventSchema = z.discriminatedUnion("type", [
  net,
  z.object({ type: z.literal("ready"), pid: z.number().int(), node: z.string() }),
  output,
  result,
  z.object({ type: z.literal("failed"), id, message: z.string() }),
  z.object({ type: z.literal("pong"), id }),
  z.object({ type: z.literal("stats"), id, stats: z.unknown() }),
  // Answers to capture and restore, checked apart by the asker (StateAnswerSchema and
  // RestoreAnswerSchema, with the request's size bound).
  z.object({ type: z.literal("state"), id, answer: z.unknown() }),
  z.object({ type: z.literal("restored"), id, answer: z.unknown() }),
  log,
]);

/** What the agent in a native jail sends, one JSON line each. */
export const AgentEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  net,
  tunnel,
  output,
  result,
  log,
]);

export type FileBlob = z.infer<typeof FileBlobSchema>;
export type FileSync = z.infer<typeof FileSyncSchema>;
export type Display = z.infer<typeof DisplaySchema>;
export type EngineResult = z.output<typeof EngineResultSchema>;
export type HostStats = z.infer<typeof HostStatsSchema>;
export type HostEvent = z.infer<typeof HostEventSchema>;
export type AgentEvent = z.infer<typeof AgentEventSchema>;
export type StateAnswer = z.infer<typeof StateAnswerSchema>;
export type RestoreAnswer = z.infer<typeof RestoreAnswerSchema>;

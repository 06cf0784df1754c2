// MCP adapter: the zod pieces the tools share — argument schemas (with descriptions an LLM reads
// to decide what to send) and the structured output of a run. Argument objects are strict: an
// unknown argument is an error that lists the accepted ones, because a misspelled
// `timeout` silently ignored would be worse than a clear refusal.

import { z } from "zod";
import { LANGUAGES, type Limits, PolyboxError, RUN_STATUSES } from "../index.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Base64 (whitespace ignored) to bytes; anything else is refused, naming `what`. */
export function decodeBase64(text: string, what: string): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `${what} is not valid base64 (A-Z, a-z, 0-9, +, /, padded with = to a multiple of 4)`,
    );
  }
  return new Uint8Array(Buffer.from(compact, "base64"));
}

/** `files` as the tools take them: text, or { base64 } for binary content. */
export type FilesArg = Record<string, string | { base64: string }>;

/** `files` as the library takes them: text stays text, base64 becomes bytes. */
export function decodeFiles(files: FilesArg): Record<string, string | Uint8Array> {
  const out: Record<string, string | Uint8Array> = {};
  for (const [path, content] of Object.entries(files)) {
    out[path] =
      typeof content === "string"
        ? content
        : decodeBase64(content.base64, `files[${JSON.stringify(path)}].base64`);
  }
  return out;
}

/** A strict object schema whose "unknown argument" error names the arguments the tool accepts. */
export function strictArgs<S extends z.ZodRawShape>(shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}; this tool accepts: ${known.join(", ") || "no arguments"}`
        : undefined,
  });
}

/** Argument schemas that depend on the server's limits, so the schema states the real maximum. */
export function argSchemas(max: Readonly<Limits>) {
  return {
    code: z
      .string()
      .describe(
        "The source code to run. Print results (print / console.log / puts / echo) to see them. For language wasm: the workspace path of a WASI .wasm module.",
      ),
    args: z
      .array(z.string())
      .max(1024)
      .describe(
        "Program arguments, for languages wasm and wasix only: the module (or the Wasmer package's command) runs with these after its own name.",
      ),
    wasmerPackage: z
      .string()
      .max(300)
      .describe(
        "For language wasix only: a Wasmer registry package as namespace/name@version (an exact version, e.g. sharrattj/coreutils@1.0.16); code names one of its commands (empty: its entrypoint) and args follow. The server fetches it from its Wasmer registry, checks its sha256 and caches it.",
      ),
    language: z
      .enum(LANGUAGES)
      .describe(`Programming language of the code: one of ${LANGUAGES.join(", ")}.`),
    sandboxId: z
      .string()
      .describe(
        "Id of a sandbox from create_sandbox. Its files and interpreter state persist between calls.",
      )
      // The routing key: a client may mirror it into an Mcp-Param-Sandbox-Id header, so a proxy
      // (polybox router, a load balancer) can route the call without parsing the body.
      .meta({ "x-mcp-header": "Sandbox-Id" }),
    timeoutSeconds: z
      .number()
      .positive()
      .max(max.timeoutMs / 1000)
      .describe(
        `Wall-clock limit for this run in seconds (at most ${max.timeoutMs / 1000}); the run is killed past it.`,
      ),
    files: z
      .record(
        z.string(),
        z.union([
          z.string(),
          z.strictObject({ base64: z.string().describe("The file's bytes, base64-encoded") }),
        ]),
      )
      .describe(
        'Files to put in the workspace before the run, as { "path": "text content" }, or { "path": { "base64": "..." } } for binary files (e.g. a .wasm module); paths are relative to /workspace, the working directory.',
      ),
    async: z
      .boolean()
      .describe(
        'If true, return { job_id, status: "queued" } at once; poll check_job_status and get_job_logs, stop with cancel_job.',
      ),
  };
}

export const JOB_STATUSES = [
  "queued",
  "running",
  "completed",
  "failed",
  "timeout",
  "cancelled",
] as const;

/** Where a stream the answer holds only the head and tail of can be read whole. */
const fullOutputShape = z.object({
  uri: z.string().describe("The whole stream, for resources/read"),
  bytes: z.number().describe("Its size in bytes"),
  path: z
    .string()
    .nullable()
    .describe("Its workspace path in the run's sandbox (read_file), or null for a one-shot run"),
  expires_at: z
    .string()
    .nullable()
    .describe("When a one-shot run's copy is forgotten; null for a file in a sandbox"),
});

/** The structured result of a run, in the snake_case of the tool arguments. */
export const runResultShape = {
  status: z
    .enum(RUN_STATUSES)
    .describe(
      "ok: exit code 0; error: the code failed; the others name the limit or cancellation that stopped it",
    ),
  exit_code: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  value: z
    .string()
    .nullable()
    .describe("Text form of the last expression's value (Python / JavaScript), if any"),
  duration_ms: z.number(),
  truncated: z.boolean().describe("True when output past the output limit was dropped"),
  files_changed: z.array(z.string()),
  message: z.string().optional(),
  state_lost: z
    .boolean()
    .optional()
    .describe(
      "True when the interpreter was replaced, so earlier variables are gone (files are kept)",
    ),
  images: z
    .array(z.object({ mime_type: z.string(), path: z.string().nullable(), size: z.number() }))
    .describe(
      "Images the run wrote or displayed; PNG, JPEG, GIF and WebP are attached as image content",
    ),
  displays: z
    .array(z.object({ mime_type: z.string(), text: z.string(), data: z.string().optional() }))
    .describe("Values passed to display(): a readable text and, for HTML/JSON, the rich form"),
  notes: z
    .array(z.string())
    .optional()
    .describe("Things worth knowing that are not errors (e.g. an image dropped for size)"),
  network: z
    .array(
      z.object({
        method: z.string(),
        host: z.string(),
        status: z.number().int().nullable(),
        bytes_out: z.number().int(),
        bytes_in: z.number().int(),
        denied: z.string().optional(),
      }),
    )
    .optional()
    .describe(
      "The code's network requests, in order: host, HTTP status (null: no answer), bytes each way, and why one was refused or stopped",
    ),
  full_output: z
    .object({ stdout: fullOutputShape.optional(), stderr: fullOutputShape.optional() })
    .optional()
    .describe(
      "For each stream longer than the inline limit: stdout/stderr above hold its first and last part, with a marker where the middle was cut, and the whole of it is here",
    ),
  sandbox_id: z
    .string()
    .nullable()
    .describe("The sandbox the code ran in; null for a one-shot run"),
};

/** What execute_* answers: a run result, or with async a job id. */
export const executeOutputShape = {
  ...z.object(runResultShape).partial().shape,
  // A run's status; with async, the job's (queued or running, or already finished).
  status: z.enum([...new Set([...RUN_STATUSES, ...JOB_STATUSES])]),
  job_id: z.string().optional().describe("With async: the job to poll with check_job_status"),
};

/** An async job as the job tools describe it. */
export const jobShape = {
  job_id: z.string(),
  status: z
    .enum(JOB_STATUSES)
    .describe("completed: exit code 0; failed: the code or the host failed; timeout; cancelled"),
  language: z.string(),
  sandbox_id: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  queued_ms: z.number().describe("Time spent waiting for a free slot"),
  duration_ms: z.number().nullable().describe("Time spent running (so far)"),
  result: z.object(runResultShape).optional().describe("The run's result, once finished"),
  error: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .describe("Why it failed without a result"),
};

/**
 * A tool's `timeout_seconds` as the library's `timeoutMs`: the one conversion every tool uses.
 * Positive seconds (the schema's check) never round down to no time at all.
 */
export function secondsToMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}

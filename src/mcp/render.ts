// MCP adapter: turns library results into CallToolResults — structuredContent for programs, and a
// compact text for the model that leads with what matters (status, exit code, duration), then the
// output. Errors become `isError: true` with the library's message, which says what was wrong and
// what is allowed; the error code leads so a model can branch on it.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type ExecuteResult,
  type FullOutput,
  isPolyboxError,
  type JobInfo,
  type OutputStream,
  type RunImage,
} from "../index.js";
import type { Answer, StructuredOf } from "./answer.js";
import { fitRun, formatBytes } from "./budget.js";
import { toolHint } from "./hints.js";
import type { executeOutputShape, jobShape, runResultShape } from "./schemas.js";
import { fullOutputUri } from "./uris.js";

export type Structured = Record<string, unknown>;

export function result<T extends Structured>(
  structured: T,
  text: string,
  more: CallToolResult["content"] = [],
): Answer<T> {
  return { content: [{ type: "text", text }, ...more], structuredContent: structured };
}

export function errorResult(error: unknown): CallToolResult {
  let text: string;
  if (isPolyboxError(error)) {
    const hint = toolHint(error);
    text = `${error.code}: ${error.message}${hint ? ` (${hint})` : ""}`;
  } else {
    // Not a refusal the library foresaw: keep the details for the operator, tell the client less.
    process.stderr.write(
      `polybox: internal error in a tool call: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    text = `INTERNAL_ERROR: ${error instanceof Error ? error.message : String(error)}`;
  }
  return { content: [{ type: "text", text }], isError: true };
}

export function runStructured(r: ExecuteResult): StructuredOf<typeof runResultShape> {
  return {
    status: r.status,
    exit_code: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    value: r.value,
    duration_ms: r.durationMs,
    truncated: r.truncated,
    files_changed: r.filesChanged,
    ...(r.message !== undefined ? { message: r.message } : {}),
    ...(r.stateLost ? { state_lost: true } : {}),
    images: r.images.map((i) => ({ mime_type: i.mimeType, path: i.path, size: i.data.byteLength })),
    displays: r.displays.map((d) => ({
      mime_type: d.mimeType,
      text: d.text,
      ...(d.data !== undefined ? { data: d.data } : {}),
    })),
    ...(r.notes?.length ? { notes: r.notes } : {}),
    ...(r.network?.length
      ? {
          network: r.network.map((n) => ({
            method: n.method,
            host: n.host,
            status: n.status,
            bytes_out: n.bytesOut,
            bytes_in: n.bytesIn,
            ...(n.denied !== undefined ? { denied: n.denied } : {}),
          })),
        }
      : {}),
    ...(r.fullOutput ? { full_output: fullOutputStructured(r.fullOutput) } : {}),
    sandbox_id: r.sandboxId,
  };
}

/** Each kept stream of a run, with what a client needs to read it. */
function keptStreams(full: ExecuteResult["fullOutput"]): [OutputStream, FullOutput][] {
  return (["stdout", "stderr"] as const).flatMap((stream) => {
    const kept = full?.[stream];
    return kept ? [[stream, kept] as [OutputStream, FullOutput]] : [];
  });
}

type FullOutputStructured = NonNullable<StructuredOf<typeof runResultShape>["full_output"]>;

function fullOutputStructured(
  full: NonNullable<ExecuteResult["fullOutput"]>,
): FullOutputStructured {
  const out: FullOutputStructured = {};
  for (const [stream, kept] of keptStreams(full)) {
    out[stream] = {
      uri: fullOutputUri(stream, kept),
      bytes: kept.bytes,
      path: kept.path,
      expires_at: iso(kept.expiresAt),
    };
  }
  return out;
}

/**
 * What comes with a run's text: a resource link to each stream the answer holds only the head
 * and tail of (first, so the response budget drops images before them), then the images.
 */
export function runContent(
  r: ExecuteResult,
  attached: readonly RunImage[],
): CallToolResult["content"] {
  const links = keptStreams(r.fullOutput).map(([stream, kept]) => ({
    type: "resource_link" as const,
    uri: fullOutputUri(stream, kept),
    name: kept.path ?? `${stream} of run ${kept.runId}`,
    title: `The whole ${stream} (${formatBytes(kept.bytes)})`,
    description: `The run's whole ${stream}; the answer holds its first and last part.`,
    mimeType: "text/plain",
    size: kept.bytes,
  }));
  return [...links, ...imageContent(attached)];
}

/** Image types MCP clients render; others (SVG) stay files the model can read_file. */
const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The images of a run that can be attached as image content. */
export function inlineImages(images: readonly RunImage[]): RunImage[] {
  return images.filter((i) => INLINE_IMAGES.has(i.mimeType));
}

/** Base64 of each image, made once: fitting an answer to its budget renders it several times. */
const encoded = new WeakMap<RunImage, string>();

export function imageContent(images: readonly RunImage[]): CallToolResult["content"] {
  return inlineImages(images).map((i) => {
    let data = encoded.get(i);
    if (data === undefined) {
      data = Buffer.from(i.data).toString("base64");
      encoded.set(i, data);
    }
    return { type: "image" as const, data, mimeType: i.mimeType };
  });
}

/** A run's answer as every run tool gives it: within the response budget, images attached. */
export function runAnswer(
  r: ExecuteResult,
  maxResponseBytes: number,
): Answer<StructuredOf<typeof executeOutputShape>> {
  return fitRun(r, inlineImages(r.images), maxResponseBytes, (view, attached) =>
    result(runStructured(view), runText(view, attached), runContent(view, attached)),
  );
}

export function ms(n: number): string {
  return n < 1000 ? `${Math.round(n)} ms` : `${+(n / 1000).toFixed(2)} s`;
}

/**
 * The text form of a run. Output streams sit in labelled blocks; when output was cut, the cut is
 * announced in the first line and again, on its own line, right after the output, so it is not
 * mistaken for the program's last words.
 */
export function runText(r: ExecuteResult, attached: readonly RunImage[] = r.images): string {
  const head = [`status: ${r.status}`, `exit code ${r.exitCode}`, ms(r.durationMs)];
  if (r.truncated) head.push("OUTPUT TRUNCATED");
  if (r.sandboxId) head.push(`sandbox ${r.sandboxId}`);
  const lines = [head.join(" · ")];
  if (r.message) lines.push(`message: ${r.message}`);
  if (r.stateLost)
    lines.push(
      "note: the interpreter was restarted; variables from earlier runs are gone (files are kept)",
    );
  if (r.value !== null) lines.push(`value: ${r.value}`);
  for (const stream of ["stdout", "stderr"] as const) {
    const text = r[stream];
    if (text === "") continue;
    lines.push(`--- ${stream} ---`, text.endsWith("\n") ? text.slice(0, -1) : text);
  }
  for (const d of r.displays) lines.push(`--- display ${d.mimeType} ---`, d.text);
  if (r.stdout === "" && r.stderr === "" && r.value === null && r.displays.length === 0)
    lines.push("(no output)");
  if (r.truncated) {
    lines.push(
      "--- [output truncated: the output limit was reached and the rest was dropped; print less, or write to a file and read parts of it] ---",
    );
  }
  if (r.filesChanged.length > 0) lines.push(`files changed: ${r.filesChanged.join(", ")}`);
  for (const i of r.images)
    lines.push(
      `image: ${i.path ?? "(displayed)"} ${i.mimeType}, ${i.data.byteLength} bytes${INLINE_IMAGES.has(i.mimeType) && attached.includes(i) ? " (attached)" : ""}`,
    );
  for (const n of r.network ?? [])
    lines.push(
      `network: ${n.method} ${n.host} → ${n.denied !== undefined ? `refused: ${n.denied}` : `${n.status}, ${n.bytesOut} bytes out, ${n.bytesIn} in`}`,
    );
  for (const [stream, kept] of keptStreams(r.fullOutput)) lines.push(wholeStreamLine(stream, kept));
  for (const note of r.notes ?? []) lines.push(`note: ${note}`);
  return lines.join("\n");
}

function wholeStreamLine(stream: OutputStream, kept: FullOutput): string {
  const how = kept.path !== null ? `resources/read, or read_file ${kept.path}` : "resources/read";
  const until = kept.expiresAt !== null ? `; kept until ${iso(kept.expiresAt)}` : "";
  return `whole ${stream} (${formatBytes(kept.bytes)}, cut above): ${fullOutputUri(stream, kept)} (${how})${until}`;
}

export function iso(t: number): string;
export function iso(t: number | null): string | null;
export function iso(t: number | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}

export function jobStructured(job: JobInfo): StructuredOf<typeof jobShape> {
  return {
    job_id: job.id,
    status: job.status,
    language: job.language,
    sandbox_id: job.sandboxId,
    created_at: iso(job.createdAt),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    queued_ms: job.queuedMs,
    duration_ms: job.durationMs,
    ...(job.result ? { result: runStructured({ ...job.result, sandboxId: job.sandboxId }) } : {}),
    ...(job.error ? { error: job.error } : {}),
  };
}

export function jobText(job: JobInfo, attached?: readonly RunImage[]): string {
  const head = [`job ${job.id}: ${job.status}`, `queued ${ms(job.queuedMs)}`];
  if (job.durationMs !== null) head.push(`ran ${ms(job.durationMs)}`);
  const lines = [head.join(" · ")];
  if (job.error) lines.push(`error: ${job.error.code}: ${job.error.message}`);
  if (job.result) lines.push(runText({ ...job.result, sandboxId: job.sandboxId }, attached));
  else if (job.status === "queued" || job.status === "running") {
    lines.push(
      "not finished: poll check_job_status again, read output so far with get_job_logs, stop it with cancel_job",
    );
  }
  return lines.join("\n");
}

/** A job's logs when it printed nothing: "yet" only while it may still print. */
export function noOutput(status: string): string {
  return status === "queued" || status === "running" ? "(no output yet)" : "(no output)";
}

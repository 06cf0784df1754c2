// MCP adapter: a sandbox's files, and the kept whole output of one-shot runs, as resources
// through the templates in uris.ts. resources/read answers text as text and anything else as
// base64, with the mime type polybox sniffs, for the caller's own sandboxes and runs only
// (another client's is "not found", as an unknown id is) and within the response limit.
// resources/list lists the files of the caller's open sandboxes, a page at a time; kept run
// output is not listed (it is linked from the answer that cut it, and soon forgotten).
//
// The handlers sit on the low-level Server rather than McpServer.registerResource: McpServer
// parses the URI with `new URL`, which folds `..` segments away before any template sees them
// and answers every failure alike. Parsing the URI here keeps a path that leaves the workspace a
// refusal that says so, and every error carries polybox's code.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  type ListResourcesResult,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { isPolyboxError, PolyboxError, type PolyboxErrorCode } from "../index.js";
import { formatBytes } from "./budget.js";
import type { ToolContext } from "./tool.js";
import {
  parseResourceUri,
  RUN_OUTPUT_TEMPLATE,
  SANDBOX_FILE_TEMPLATE,
  sandboxFileUri,
} from "./uris.js";

/** Files per resources/list page. */
const LIST_PAGE = 100;
/** What the JSON-RPC envelope around a result takes (see budget.ts). */
const ENVELOPE_BYTES = 1024;
/** JSON-RPC's code for a resource that does not exist, as the MCP specification names it. */
const RESOURCE_NOT_FOUND = -32002;

/** Declares the resources capability and answers its three requests. */
export function registerResources(server: McpServer, ctx: ToolContext): void {
  const low = server.server;
  low.registerCapabilities({ resources: {} });
  low.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: SANDBOX_FILE_TEMPLATE,
        name: "sandbox-file",
        title: "A file in a sandbox's workspace",
        description:
          "A file in one of your sandboxes (from create_sandbox), by workspace path (relative to /workspace). Text comes back as text, other files as base64 with their mime type.",
      },
      {
        uriTemplate: RUN_OUTPUT_TEMPLATE,
        name: "run-output",
        title: "The whole output of a one-shot run",
        description:
          "The whole stdout or stderr of a run without a sandbox whose answer held only its head and tail (the answer links it). Kept for a while after the run (--job-retention), then forgotten.",
        mimeType: "text/plain",
      },
    ],
  }));
  low.setRequestHandler(ListResourcesRequestSchema, (request) =>
    answering(() => listFiles(ctx, request.params?.cursor)),
  );
  low.setRequestHandler(ReadResourceRequestSchema, (request) =>
    answering(() => readResource(ctx, request.params.uri)),
  );
}

async function readResource(ctx: ToolContext, uri: string): Promise<ReadResourceResult> {
  const ref = parseResourceUri(uri);
  if (ref.kind === "output") {
    const text = await ctx.service.readRunOutput(ctx.caller, ref.runId, ref.stream);
    const answer = { contents: [{ uri, mimeType: "text/plain", text }] };
    return withinLimit(
      ctx,
      answer,
      `${ref.stream} of run ${ref.runId}`,
      Buffer.byteLength(text),
      "run the code in a sandbox (create_sandbox), where its whole output is a file to read parts of (head, tail, sed -n)",
    );
  }
  const file = await ctx.service.readFile(ctx.caller, ref.sandboxId, ref.path);
  const content =
    file.text !== null
      ? { uri, mimeType: file.mimeType, text: file.text }
      : { uri, mimeType: file.mimeType, blob: Buffer.from(file.bytes).toString("base64") };
  return withinLimit(
    ctx,
    { contents: [content] },
    file.path,
    file.size,
    "read parts of it inside the sandbox (head, tail, sed -n, split) instead",
  );
}

/** The answer, if it fits the response limit; else a refusal that says what to do instead. */
function withinLimit(
  ctx: ToolContext,
  answer: ReadResourceResult,
  what: string,
  size: number,
  instead: string,
): ReadResourceResult {
  const bytes = Buffer.byteLength(JSON.stringify(answer)) + ENVELOPE_BYTES;
  if (bytes <= ctx.maxResponseBytes) return answer;
  throw new PolyboxError(
    "INVALID_ARGUMENT",
    `${what} is ${formatBytes(size)}, ${formatBytes(bytes)} as an answer, over the response limit of ${formatBytes(ctx.maxResponseBytes)} (--max-response); ${instead}`,
  );
}

/**
 * The files of the caller's open sandboxes, by sandbox id then path, a page at a time. The
 * cursor is where the last page stopped (a sandbox id and a path), so a page costs at most one
 * listing per sandbox and files added or removed between pages do not shift the rest.
 */
async function listFiles(
  ctx: ToolContext,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  const from = cursor === undefined ? null : readCursor(cursor);
  const ids = ctx.service
    .sandboxStatus(ctx.caller)
    .map((s) => s.id)
    .filter((id) => from === null || id >= from.sandboxId)
    .sort();
  const resources: Resource[] = [];
  for (const id of ids) {
    const files = await filesOf(ctx, id);
    for (const f of files) {
      if (from && id === from.sandboxId && f.path <= from.path) continue;
      if (resources.length === LIST_PAGE)
        return { resources, nextCursor: writeCursor(id, resources.at(-1)!.name) };
      resources.push({ uri: sandboxFileUri(id, f.path), name: f.path, size: f.size });
    }
  }
  return { resources };
}

/** A sandbox's files sorted by path; none if it closed since it was listed. */
async function filesOf(ctx: ToolContext, id: string): Promise<{ path: string; size: number }[]> {
  try {
    const all = await ctx.service.listFiles(ctx.caller, id);
    return all.filter((f) => f.type === "file").sort((a, b) => (a.path < b.path ? -1 : 1));
  } catch (error) {
    if (isPolyboxError(error, "SANDBOX_NOT_FOUND") || isPolyboxError(error, "SANDBOX_CLOSED"))
      return [];
    throw error;
  }
}

function writeCursor(sandboxId: string, path: string): string {
  return Buffer.from(JSON.stringify([sandboxId, path])).toString("base64url");
}

function readCursor(cursor: string): { sandboxId: string; path: string } {
  try {
    const [sandboxId, path] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown[];
    if (typeof sandboxId === "string" && typeof path === "string") return { sandboxId, path };
  } catch {
    // Falls through to the refusal below.
  }
  throw new PolyboxError(
    "INVALID_ARGUMENT",
    "the cursor is not one resources/list gave; start again without a cursor",
  );
}

/**
 * A JSON-RPC error as the SDK sends it (code, message, data). Not an McpError, whose message
 * already carries an "MCP error <code>:" prefix that the client would add a second time.
 */
export class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { code: string },
  ) {
    super(message);
  }
}

/** Runs a resource request; a failure becomes a JSON-RPC error that leads with polybox's code. */
async function answering<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw resourceError(error);
  }
}

const NOT_FOUND: readonly PolyboxErrorCode[] = [
  "SANDBOX_NOT_FOUND",
  "SANDBOX_CLOSED",
  "FILE_NOT_FOUND",
];
const BAD_REQUEST: readonly PolyboxErrorCode[] = [
  "INVALID_ARGUMENT",
  "PATH_OUTSIDE_WORKSPACE",
  "NOT_A_FILE",
];

function resourceError(error: unknown): ResourceError {
  if (!isPolyboxError(error)) {
    // Not a refusal the library foresaw: keep the details for the operator, tell the client less.
    process.stderr.write(
      `polybox: internal error in a resource request: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    const why = error instanceof Error ? error.message : String(error);
    return new ResourceError(ErrorCode.InternalError, `INTERNAL_ERROR: ${why}`, {
      code: "INTERNAL_ERROR",
    });
  }
  const code = NOT_FOUND.includes(error.code)
    ? RESOURCE_NOT_FOUND
    : BAD_REQUEST.includes(error.code)
      ? ErrorCode.InvalidParams
      : ErrorCode.InternalError;
  return new ResourceError(code, `${error.code}: ${error.message}`, { code: error.code });
}

// MCP adapter: one McpServer (one client connection) over a shared SandboxService. Registers the
// tools, optionally only those the operator listed with --tools. Sandboxes, jobs and the queue
// live in the service, so every connection of an HTTP server sees the same ones.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type Caller, LANGUAGES, PolyboxError, type SandboxService } from "../index.js";
import { LANGUAGE_INFO } from "../protocol/languages.js";
import { DEFAULT_MAX_RESPONSE_BYTES, MIN_RESPONSE_BYTES } from "./budget.js";
import { registerResources } from "./resources.js";
import { JobTaskStore } from "./tasks.js";
import { register, type ToolContext, type ToolDef } from "./tool.js";
import { TOOL_NAMES } from "./tool-names.js";
import { fileTools } from "./tools/files.js";
import { jobTools } from "./tools/jobs.js";
import { runTools } from "./tools/run.js";
import { sandboxTools } from "./tools/sandboxes.js";
import { stateTools } from "./tools/state.js";

export interface McpServerOptions {
  service: SandboxService;
  /** Who is calling: whose sandboxes and jobs these are, and whose limits they count against. */
  caller: Caller;
  /** Only these tools (default: all). */
  tools?: readonly string[];
  /** Largest answer in bytes (default DEFAULT_MAX_RESPONSE_BYTES; see budget.ts). */
  maxResponseBytes?: number;
  version: string;
}

const INSTRUCTIONS = `polybox runs untrusted code in sandboxes (network only to the hosts the server grants, if any; the run tools' descriptions say which); languages: ${LANGUAGES.map((l) => `${l} (${LANGUAGE_INFO[l].engine})`).join(", ")}.
Quick runs: execute_python / execute_javascript / execute_bash with just code (a fresh sandbox each time).
To keep state and files across calls: create_sandbox, then pass its sandbox_id to execute_* / execute_code and the file tools; close_sandbox when done. create_sandbox with a name keeps the files on disk across restarts; snapshot_sandbox / restore_sandbox / fork_sandbox save, roll back and branch a sandbox's files.
Long runs: pass async: true, then check_job_status / get_job_logs / cancel_job with the job_id (or, where the client supports MCP tasks, call a run tool as a task: its task id is the job id).
Long output comes back as its first and last part, with a resource link to the whole of it (resources/read). A sandbox's files are resources too: polybox://sandbox/{sandbox_id}/{+path}.`;

/** Run tools may be called as tasks, which can be listed and cancelled (tasks.ts). */
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** Checks a --tools list, so a typo fails at start-up rather than hiding a tool. */
export function checkToolNames(names: readonly string[]): void {
  const unknown = names.filter((n) => !(TOOL_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `unknown tool${unknown.length > 1 ? "s" : ""} in --tools: ${unknown.join(", ")}; known tools: ${TOOL_NAMES.join(", ")}`,
    );
  }
}

/** Checks a --max-response value, so a bad one fails at start-up, not at the first session. */
export function checkResponseLimit(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < MIN_RESPONSE_BYTES) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the response limit (--max-response) must be at least ${MIN_RESPONSE_BYTES} bytes, got ${bytes}`,
    );
  }
  return bytes;
}

export function createMcpServer(options: McpServerOptions): McpServer {
  const maxResponseBytes = checkResponseLimit(
    options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  );
  const ctx: ToolContext = { service: options.service, caller: options.caller, maxResponseBytes };
  const server = new McpServer(
    { name: "polybox", version: options.version },
    {
      instructions: INSTRUCTIONS,
      capabilities: { tools: {}, tasks: TASKS_CAPABILITY },
      taskStore: new JobTaskStore(ctx),
    },
  );
  const all: ToolDef[] = inToolOrder([
    ...runTools(ctx),
    ...jobTools(ctx),
    ...sandboxTools(ctx),
    ...fileTools(ctx),
    ...stateTools(ctx),
  ]);
  if (options.tools) checkToolNames(options.tools);
  const wanted = new Set(options.tools ?? TOOL_NAMES);
  for (const def of all) if (wanted.has(def.name)) register(server, def, maxResponseBytes);
  registerResources(server, ctx);
  cacheToolList(server);
  plainParamErrors(server);
  return server;
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK turns every tool's zod schemas into JSON Schema on each tools/list (69 KB for the full
 * set: 0.1-0.4 s of this thread on a small machine, every time a client lists). polybox's tools
 * never change after start, so the answer is made once. Reached through the SDK's handler map;
 * if that ever moves, lists are simply not cached.
 */
function requestHandlers(server: McpServer): Map<string, Handler> | undefined {
  return (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
}

/**
 * A tools/call whose params are not the shape MCP defines (arguments an array or a string, a
 * name that is a number, no params at all) failed the SDK's request schema with -32603 and a raw
 * zod dump; it is the caller's mistake, so it answers -32602 with one line saying what is wrong.
 */
function plainParamErrors(server: McpServer): void {
  const handlers = requestHandlers(server);
  const call = handlers?.get("tools/call");
  if (!handlers || !call) return;
  handlers.set("tools/call", async (request, extra) => {
    try {
      return await call(request, extra);
    } catch (error) {
      const issues = (error as { issues?: { path?: PropertyKey[]; message?: string }[] }).issues;
      // The SDK's request schema failed (a zod error, whichever zod build made it).
      if (!(error instanceof Error) || !Array.isArray(issues) || error instanceof McpError)
        throw error;
      const first = issues[0];
      const where = (first?.path ?? []).map(String).join(".") || "params";
      throw new McpError(
        ErrorCode.InvalidParams,
        `invalid tools/call request: ${where}: ${first?.message ?? "not valid"} (params must be { name: string, arguments?: object })`,
      );
    }
  });
}

function cacheToolList(server: McpServer): void {
  const handlers = requestHandlers(server);
  const list = handlers?.get("tools/list");
  if (!handlers || !list) return;
  let cached: Promise<unknown> | null = null;
  handlers.set("tools/list", (request, extra) => {
    cached ??= list(request, extra).catch((error: unknown) => {
      cached = null;
      throw error;
    });
    return cached;
  });
}

/** The tools in TOOL_NAMES order: the SDK lists tools in the order they were registered. */
function inToolOrder(defs: ToolDef[]): ToolDef[] {
  const rank = (def: ToolDef) => (TOOL_NAMES as readonly string[]).indexOf(def.name);
  return [...defs].sort((a, b) => rank(a) - rank(b));
}

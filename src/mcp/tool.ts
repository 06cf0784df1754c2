// MCP adapter: how a tool is declared and registered. Every handler runs inside one catch that
// turns any failure into an `isError` result, so bad input (or a bug) answers the one call and
// never takes the server down. Tools that declare a `job` may also run as MCP tasks (tasks.ts).

import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  ErrorCode,
  type ServerNotification,
  type ServerRequest,
  type ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Caller, JobInfo, SandboxService } from "../index.js";
import type { Answer, StructuredOf } from "./answer.js";
import { capResponse } from "./budget.js";
import { errorResult } from "./render.js";
import { strictArgs } from "./schemas.js";
import { planOptions } from "./task-plan.js";
import type { ToolName } from "./tool-names.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every tool handler may use: the service, who is calling, and the response budget. */
export interface ToolContext {
  service: SandboxService;
  caller: Caller;
  /** No answer is larger than this, in bytes as sent (see budget.ts). */
  maxResponseBytes: number;
}

/**
 * All four behaviour hints, each chosen for the tool (README's tool table gives them). Required
 * because an absent hint means the spec's default, and the defaults (destructive, open world)
 * are the worst case: a client would warn before every read.
 */
export type Hints = Required<
  Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">
>;

/** The hints of a tool that reads what the caller already has, and changes nothing. */
export const READS: Hints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** The hints of a tool that replaces or removes something of the caller's, alike each time. */
export const REPLACES: Hints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};

/** The hints of a tool that makes something new of the caller's (another each time). */
export const CREATES: Hints = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

export interface ToolDef<
  S extends z.ZodRawShape = z.ZodRawShape,
  O extends z.ZodRawShape = z.ZodRawShape,
> {
  name: ToolName;
  title: string;
  description: string;
  input: S;
  output: O;
  annotations: Hints;
  run: (args: z.output<z.ZodObject<S>>, extra: Extra) => Promise<Answer<StructuredOf<O>>>;
  /**
   * For a tool that may run as an MCP task: starts the call's work as a job, which is the task
   * (tasks.ts). A call that asks for no task still goes through `run`.
   */
  job?: (args: z.output<z.ZodObject<S>>) => JobInfo;
}

/**
 * Declares a tool; exists so TypeScript infers `args` from `input` and checks what `run` answers
 * against `output`.
 */
export function tool<S extends z.ZodRawShape, O extends z.ZodRawShape>(
  def: ToolDef<S, O>,
): ToolDef {
  return def as unknown as ToolDef;
}

/** Registers a tool whose every answer, error or not, is held within `maxResponseBytes`. */
export function register(server: McpServer, def: ToolDef, maxResponseBytes: number): void {
  const config = {
    title: def.title,
    description: def.description,
    inputSchema: strictArgs(def.input),
    outputSchema: def.output,
    // The title again in the annotations: clients of the 2025-03-26 protocol look for it there.
    annotations: { title: def.title, ...def.annotations },
  };
  const answer = (args: Args, extra: Extra) => answered(def, args, extra, maxResponseBytes);
  const { job } = def;
  if (!job) {
    server.registerTool(def.name, config, (args: unknown, extra: Extra) =>
      answer(args as Args, extra),
    );
  } else {
    // A task-capable tool: the store decides from the request whether the call asked for a task.
    server.experimental.tasks.registerToolTask(
      def.name,
      { ...config, execution: { taskSupport: "optional" } },
      {
        createTask: async (args: unknown, extra: CreateTaskRequestHandlerExtra) => {
          const plan = { job: () => job(args as Args), answer: () => answer(args as Args, extra) };
          return { task: await extra.taskStore.createTask(planOptions(plan)) };
        },
        // Required by the SDK's type; tasks/get and tasks/result are answered from the store.
        getTask: (_args: unknown, extra: TaskRequestHandlerExtra) =>
          extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args: unknown, extra: TaskRequestHandlerExtra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  }
  refuseUnknownTools(server);
}

type CallHandler = (request: { params?: { name?: unknown } }, extra: Extra) => Promise<unknown>;
/** SDK 1.x internals (pinned version): its request handlers, and McpServer's table of tools. */
type ProtocolInternals = { _requestHandlers: Map<string, CallHandler> };
type McpServerInternals = { _registeredTools: Record<string, unknown> };

const guarded = new WeakSet<McpServer>();

/**
 * A tools/call naming a tool this server does not have gets JSON-RPC error -32602: the spec's
 * tools page counts an unknown tool as a protocol error, not a tool result. The SDK's McpServer
 * folds it into an isError result, which a client cannot tell from a tool that ran and failed;
 * so its tools/call handler is wrapped once, after it exists (it is installed with the first
 * tool), and every known tool goes on to it unchanged.
 */
function refuseUnknownTools(server: McpServer): void {
  if (guarded.has(server)) return;
  const handlers = (server.server as unknown as ProtocolInternals)._requestHandlers;
  const sdkCall = handlers.get("tools/call");
  if (!sdkCall) return;
  guarded.add(server);
  handlers.set("tools/call", async (request, extra) => {
    const tools = (server as unknown as McpServerInternals)._registeredTools;
    const name = request.params?.name;
    if (typeof name === "string" && !Object.hasOwn(tools, name)) {
      // A plain Error with a code: the SDK sends its message as it is, where an McpError's
      // would carry an "MCP error -32602:" prefix that the client's McpError adds again.
      throw Object.assign(
        new Error(`unknown tool "${name}"; this server's tools: ${Object.keys(tools).join(", ")}`),
        { code: ErrorCode.InvalidParams },
      );
    }
    return sdkCall(request, extra);
  });
}

type Args = z.output<z.ZodObject<z.ZodRawShape>>;

/** Runs a tool's call; a failure becomes an `isError` answer, and no answer passes the budget. */
async function answered(
  def: ToolDef,
  args: Args,
  extra: Extra,
  maxResponseBytes: number,
): Promise<CallToolResult> {
  let answer: CallToolResult;
  try {
    answer = await def.run(args, extra);
  } catch (error) {
    answer = errorResult(error);
  }
  return capResponse(answer, maxResponseBytes);
}

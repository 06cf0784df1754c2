// MCP adapter: how a tool is declared and registered. Every handler runs inside one catch that
// turns any failure into an `isError` result, so bad input (or a bug) answers the one call and
// never takes the server down.

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
import type { Caller, SandboxService } from "../index.js";
import { capResponse } from "./budget.js";
import { errorResult } from "./render.js";
import { strictArgs } from "./schemas.js";

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

export interface ToolDef<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: S;
  output: z.ZodRawShape;
  annotations: Hints;
  run: (args: z.output<z.ZodObject<S>>, extra: Extra) => Promise<CallToolResult>;
}

/** Declares a tool; exists so TypeScript infers `args` from `input`. */
export function tool<S extends z.ZodRawShape>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

/** Registers a tool whose every answer, error or not, is held within `maxResponseBytes`. */
export function register(server: McpServer, def: ToolDef, maxResponseBytes: number): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: strictArgs(def.input),
      outputSchema: def.output,
      // The title again in the annotations: clients of the 2025-03-26 protocol look for it there.
      annotations: { title: def.title, ...def.annotations },
    },
    async (args: unknown, extra: Extra) => {
      let answer: CallToolResult;
      try {
        answer = await def.run(args as z.output<z.ZodObject<z.ZodRawShape>>, extra);
      } catch (error) {
        answer = errorResult(error);
      }
      return capResponse(answer, maxResponseBytes);
    },
  );
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

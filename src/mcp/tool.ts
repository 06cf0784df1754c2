// MCP adapter: how a tool is declared and registered. Every handler runs inside one catch that
// turns any failure into an `isError` result, so bad input (or a bug) answers the one call and
// never takes the server down.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { SandboxService } from "../index.js";
import { errorResult } from "./render.js";
import { strictArgs } from "./schemas.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every tool handler may use: the service, and who is calling (for the rate limit). */
export interface ToolContext {
  service: SandboxService;
  client: string;
}

export interface ToolDef<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: S;
  output: z.ZodRawShape;
  annotations?: ToolAnnotations;
  run: (args: z.output<z.ZodObject<S>>, extra: Extra) => Promise<CallToolResult>;
}

/** Declares a tool; exists so TypeScript infers `args` from `input`. */
export function tool<S extends z.ZodRawShape>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

export function register(server: McpServer, def: ToolDef): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: strictArgs(def.input),
      outputSchema: def.output,
      ...(def.annotations ? { annotations: def.annotations } : {}),
    },
    async (args: unknown, extra: Extra) => {
      try {
        return await def.run(args as z.output<z.ZodObject<z.ZodRawShape>>, extra);
      } catch (error) {
        return errorResult(error);
      }
    },
  );
}

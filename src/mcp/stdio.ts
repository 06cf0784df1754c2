// MCP over stdio: the transport Claude Desktop and most clients start. stdout carries protocol
// and nothing else (logs go to stderr); the server ends when the client closes stdin.

import { randomUUID } from "node:crypto";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxService } from "../index.js";
import { createMcpServer } from "./server.js";

export interface StdioOptions {
  service: SandboxService;
  tools?: readonly string[];
  maxResponseBytes?: number;
  version: string;
}

/** Serves until stdin ends or the client disconnects; resolves then. */
export async function serveStdio(options: StdioOptions): Promise<void> {
  // One stdio connection is one client: it owns every sandbox and job made over it.
  // Its named sandboxes are the local user's, the same for every stdio server on this data dir.
  const server = createMcpServer({
    ...options,
    caller: { owner: `stdio:${randomUUID()}`, scope: "local" },
  });
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
  });
  await server.connect(transport);
  answerUnreadableLines(transport);
  await ended;
  await server.close().catch(() => {});
}

/**
 * A line that is not JSON, or JSON that is not a JSON-RPC message, got no answer over stdio (the
 * SDK reports it to `onerror` only), so a client waited forever; HTTP answers it with -32700.
 * Over stdio it is answered too, with id null (there is no id to read), and the server goes on.
 */
function answerUnreadableLines(transport: StdioServerTransport): void {
  const previous = transport.onerror;
  transport.onerror = (error: Error) => {
    previous?.(error);
    const notJson = error instanceof SyntaxError;
    const notRpc = error.name === "ZodError";
    if (!notJson && !notRpc) return;
    void transport
      .send({
        jsonrpc: "2.0",
        id: null,
        error: notJson
          ? { code: -32700, message: "parse error: the line is not JSON" }
          : { code: -32600, message: "invalid request: the line is not a JSON-RPC 2.0 message" },
      } as unknown as JSONRPCMessage)
      .catch(() => undefined);
  };
}

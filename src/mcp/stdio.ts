// MCP over stdio: the transport Claude Desktop and most clients start. stdout carries protocol
// and nothing else (logs go to stderr); the server ends when the client closes stdin.

import { randomUUID } from "node:crypto";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
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
  await ended;
  await server.close().catch(() => {});
}

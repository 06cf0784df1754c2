// Test helpers for the MCP server: start the BUILT CLI as a real child process and connect the
// SDK's real Client to it, over stdio or Streamable HTTP. Each handle's close() shuts the client
// and the process down and resolves with how the process exited, so tests can assert it ended.

import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export const CLI = path.resolve(import.meta.dirname, "../../dist/cli/main.js");

export interface McpHandle {
  client: Client;
  /** The server process's pid (stdio). */
  pid?: number;
  /** Everything the server wrote to stderr so far. */
  stderr: () => string;
  /** Closes the client and waits for the server process to exit; returns its exit code/signal. */
  close: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read structured results whose shape the output schema already checked
export type ToolResult = CallToolResult & { structuredContent?: Record<string, any> };

export async function stdioServer(
  args: string[] = [],
  env?: Record<string, string>,
): Promise<McpHandle> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...args],
    stderr: "pipe",
    // The SDK passes only a few variables on (PATH, HOME, …); a test adds what it needs.
    ...(env ? { env: { ...getDefaultEnvironment(), ...env } } : {}),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "polybox-test", version: "0.0.0" });
  await client.connect(transport);
  // As real clients do: with the tools listed, the SDK checks every result against its tool's
  // output schema, so an answer a client would reject fails the test.
  await client.listTools();
  const pid = transport.pid!;
  return {
    client,
    pid,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      return waitForPid(pid);
    },
  };
}

/** Polls until the process is gone: the stdio transport owns the ChildProcess and hides it. */
async function waitForPid(
  pid: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return { code: 0, signal: null };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server process ${pid} did not exit`);
}

export interface HttpHandle extends McpHandle {
  url: string;
  child: ChildProcess;
  /** Connects one more client (another session) to the same server. */
  connect: (token?: string) => Promise<Client>;
}

export async function httpServer(
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<HttpHandle> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  let stdout = "";
  child.stdout!.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (c: Buffer) => {
      stderr += c.toString();
      const m = /MCP server on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`serve exited (${code}) before listening: ${stderr}`)),
    );
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const clients: Client[] = [];
  const connect = async (token?: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
    });
    const client = new Client({ name: "polybox-test", version: "0.0.0" });
    await client.connect(transport);
    // Listed first, as real clients do, so that every result is checked against its schema.
    await client.listTools();
    clients.push(client);
    return client;
  };
  // With several tokens (--token=A,B) the first client uses the first.
  const token = (env.POLYBOX_TOKEN ?? /--token[= ](\S+)/.exec(args.join(" "))?.[1])?.split(",")[0];
  const client = await connect(token);
  return {
    url,
    child,
    client,
    connect,
    stderr: () => stderr + (stdout ? `\n[stdout: ${stdout}]` : ""),
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      child.kill("SIGTERM");
      return exited;
    },
  };
}

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 120_000,
  })) as ToolResult;
}

/** The text of a result's first text block. */
export function text(result: ToolResult): string {
  const block = result.content.find((c) => c.type === "text");
  return block && block.type === "text" ? block.text : "";
}

/** A raw MCP `initialize` request, as a client opens a session with (`name`: the client's). */
export function initializeRequest(name = "raw") {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name, version: "0" },
    },
  };
}

/** `initializeRequest()` as a request body. */
export const INITIALIZE = JSON.stringify(initializeRequest());

/**
 * A raw MCP `initialize` POST to `url` with the headers given (Host, Origin…), for tests of an
 * HTTP front's guards; answers the status code.
 */
export function postInitialize(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Bytes of body the client had written when the answer arrived. */
  sent: number;
}

/**
 * A raw POST over node:http, so the test controls every header (fetch may not set Host). `body`
 * is sent whole; `streamBytes` instead streams that many bytes in 1 MiB chunks, as fast as the
 * server takes them, and stops once an answer arrives (a server that refuses a body early closes
 * the connection under a sender still writing, so an error after the answer is not a failure).
 */
export function rawPost(
  url: string,
  headers: Record<string, string>,
  send: { body: string } | { streamBytes: number },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: "POST", headers }, (res) => {
      answered = true;
      const at = sent;
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        data += c;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data, sent: at }),
      );
      res.on("error", reject);
    });
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    if ("body" in send) {
      req.end(send.body);
      return;
    }
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const pump = () => {
      while (!answered && sent < send.streamBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

// MCP over Streamable HTTP (`polybox serve`). One endpoint, /mcp, with stateful sessions: each
// session is its own McpServer over the shared SandboxService. Trust: the network is hostile.
// Requests are refused before any MCP handling when the bearer token is wrong (401), the body is
// too big (413) or the Host header is not this server's when bound to loopback (DNS rebinding).
// The rate-limit identity is the client's address: sessions do not reset a client's budget.

import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxService } from "../index.js";
import { createMcpServer } from "./server.js";

export interface HttpOptions {
  service: SandboxService;
  tools?: readonly string[];
  version: string;
  port: number;
  host: string;
  /** Bearer token every request must carry; none = no authentication (loopback use). */
  token?: string;
  /** Sessions open at once (default 256). */
  maxSessions?: number;
  /** A session unused this long is closed (default 30 min). */
  sessionIdleMs?: number;
}

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** Largest request body: code and base64 file content arrive in it. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

interface Session {
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
}

export async function serveHttp(options: HttpOptions): Promise<HttpServer> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? 256;
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
  const tokenDigest = options.token ? sha256(options.token) : null;
  let allowedHosts: string[] | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp")
      return reply(res, 404, { error: "not found: the MCP endpoint is /mcp" });
    if (tokenDigest && !authorized(req, tokenDigest)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="polybox"');
      return reply(res, 401, {
        error:
          "unauthorized: send Authorization: Bearer <token> (the server's --token or POLYBOX_TOKEN)",
      });
    }
    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req);
      if (raw === null) {
        res.setHeader("connection", "close"); // the rest of the body is left unread
        return reply(res, 413, { error: `request body over ${MAX_BODY_BYTES} bytes` });
      }
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return reply(res, 400, {
          jsonrpc: "2.0",
          error: { code: -32700, message: "parse error: the body is not JSON" },
          id: null,
        });
      }
    }
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (existing) {
      existing.lastSeen = Date.now();
      return existing.transport.handleRequest(req, res, body);
    }
    if (sessionId !== undefined) {
      return reply(res, 404, {
        jsonrpc: "2.0",
        error: { code: -32001, message: "unknown or expired session; initialize a new one" },
        id: null,
      });
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return reply(res, 400, {
        jsonrpc: "2.0",
        error: { code: -32000, message: "no session: start with an initialize request" },
        id: null,
      });
    }
    if (sessions.size >= maxSessions) {
      return reply(res, 503, {
        jsonrpc: "2.0",
        error: { code: -32000, message: `server busy: ${maxSessions} sessions are open` },
        id: null,
      });
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, lastSeen: Date.now() });
      },
      ...(allowedHosts ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = createMcpServer({ ...options, client: `http:${clientAddress(req)}` });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(
        `polybox: HTTP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      if (!res.headersSent) reply(res, 500, { error: "internal error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  if (LOOPBACK.has(options.host))
    allowedHosts = ["127.0.0.1", "localhost", "[::1]"].map((h) => `${h}:${port}`);

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        if (now - s.lastSeen >= sessionIdleMs) {
          sessions.delete(id);
          void s.transport.close();
        }
      }
    },
    Math.min(60_000, sessionIdleMs),
  );
  sweeper.unref();

  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/mcp`,
    close: async () => {
      clearInterval(sweeper);
      await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Compares digests in constant time, so response timing does not leak the token. */
function authorized(req: IncomingMessage, digest: Buffer): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  return m !== null && timingSafeEqual(sha256(m[1]!.trim()), digest);
}

function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? "unknown";
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

// MCP over Streamable HTTP (`polybox serve`). One endpoint, /mcp, with stateful sessions: each
// session is its own McpServer over the shared SandboxService. Trust: the network is hostile.
// Requests are refused before any MCP handling when the Host or Origin header is not one this
// server answers to (403: DNS rebinding and cross-site requests, on every bind), the bearer token
// is wrong (401) or the body is too big (413): http-guard.ts, which the cluster's router shares.
// Streams are resumable: a client that lost one mid-run reconnects with Last-Event-ID and gets
// the rest of its own session's events (event-log.ts).
//
// Who the client is (see docs/security.md, "Tenants"): with tokens, the token. Every session that
// presents it is the same client: it owns the same sandboxes and jobs, and they outlive its
// sessions (the idle timeout closes them). Without tokens, the session: it alone owns what it made,
// and when it ends (closed by the client, idle-expired, server shut down) its jobs are cancelled
// and its sandboxes closed, since nobody could reach them again. Sessions cost nothing to open, so
// without tokens the per-client limits count per remote address instead.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Caller, SandboxService } from "../index.js";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./budget.js";
import { EventLog } from "./event-log.js";
import { httpGuard, readJsonBody, sendJson } from "./http-guard.js";
import { createMcpServer } from "./server.js";

export interface HttpOptions {
  service: SandboxService;
  tools?: readonly string[];
  maxResponseBytes?: number;
  version: string;
  port: number;
  host: string;
  /**
   * Bearer tokens; every request must carry one of them, and each token is one client. None = no
   * authentication (loopback use), and each session is its own client.
   */
  tokens?: readonly string[];
  /** More names clients reach this server by, beyond its bind address (--allow-host). */
  allowedHosts?: readonly string[];
  /** Sessions open at once (default 256). */
  maxSessions?: number;
  /** A session unused this long, with no request being answered, is closed (default 30 min). */
  sessionIdleMs?: number;
  /**
   * One more path, handed its requests whole and before the token check: its handler does its own
   * authentication (a cluster node's endpoint for routers, which presents the cluster secret).
   */
  internal?: { path: string; handle(req: IncomingMessage, res: ServerResponse): Promise<void> };
}

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** How long a client whose stream dropped waits before it reconnects (the SSE retry field). */
const RETRY_MS = 1000;
/** How long sent events stay replayable (see event-log.ts). */
const EVENT_MAX_AGE_MS = 5 * 60_000;
/** Bytes of sent events kept, all sessions together: at least two answers of the largest size. */
const EVENT_MIN_BYTES = 64 * 1024 * 1024;

interface Session {
  transport: StreamableHTTPServerTransport;
  /** When a request of it last arrived or was last answered. */
  lastSeen: number;
  /**
   * Its POST responses still open: a session is in use while a request is answered (a long
   * tools/call, a tasks/result that waits for its task), however long that takes.
   */
  busy: number;
  /** The token client that opened it: a session answers only requests of the same one. */
  client: string | null;
}

export async function serveHttp(options: HttpOptions): Promise<HttpServer> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? 256;
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
  const guard = httpGuard({
    bind: options.host,
    names: options.allowedHosts ?? [],
    tokens: options.tokens ?? [],
  });
  const events = new EventLog({
    maxBytes: Math.max(
      EVENT_MIN_BYTES,
      2 * (options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES),
    ),
    maxAgeMs: EVENT_MAX_AGE_MS,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (options.internal && url.pathname === options.internal.path)
      return options.internal.handle(req, res);
    if (url.pathname !== "/mcp")
      return sendJson(res, 404, { error: "not found: the MCP endpoint is /mcp" });
    const admitted = guard(req, res);
    if (admitted === null) return;
    const { client } = admitted;
    const read = await readJsonBody(req, res);
    if (read === null) return;
    const { body } = read;
    const sessionId = req.headers["mcp-session-id"];
    const found = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    // Another token's session is unknown to this caller, as a made-up id is.
    const existing =
      found && (found.client === null || found.client === client) ? found : undefined;
    if (existing) {
      existing.lastSeen = Date.now();
      if (req.method === "POST") inUse(existing, res);
      return existing.transport.handleRequest(req, res, body);
    }
    if (sessionId !== undefined) {
      return sendJson(res, 404, {
        jsonrpc: "2.0",
        error: { code: -32001, message: "unknown or expired session; initialize a new one" },
        id: null,
      });
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return sendJson(res, 400, {
        jsonrpc: "2.0",
        error: { code: -32000, message: "no session: start with an initialize request" },
        id: null,
      });
    }
    if (sessions.size >= maxSessions) {
      return sendJson(res, 503, {
        jsonrpc: "2.0",
        error: { code: -32000, message: `server busy: ${maxSessions} sessions are open` },
        id: null,
      });
    }
    const newId = randomUUID();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => newId,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, lastSeen: Date.now(), busy: 0, client });
      },
      // Resumability: a stream that drops mid-run can be resumed with Last-Event-ID.
      eventStore: events.forSession(newId),
      retryInterval: RETRY_MS,
    });
    const caller: Caller =
      client !== null
        ? // A token's client is the same after a restart: it keeps its named sandboxes.
          { owner: client, scope: client }
        : { owner: `session:${newId}`, account: `address:${clientAddress(req)}` };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      events.forget(newId);
      // A session-owned client is gone for good: free what only it could reach.
      if (client === null) {
        options.service
          .releaseOwner(
            caller.owner,
            "its HTTP session ended, and a session's sandboxes end with it",
          )
          .catch((error: unknown) =>
            process.stderr.write(
              `polybox: closing an ended session's sandboxes failed: ${error instanceof Error ? error.message : String(error)}\n`,
            ),
          );
      }
    };
    const mcp = createMcpServer({ ...options, caller });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(
        `polybox: HTTP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        if (s.busy === 0 && now - s.lastSeen >= sessionIdleMs) {
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

/** Counts a response as the session's use until it is closed, answered or not. */
function inUse(session: Session, res: ServerResponse): void {
  session.busy++;
  res.once("close", () => {
    session.busy--;
    session.lastSeen = Date.now();
  });
}

function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? "unknown";
}

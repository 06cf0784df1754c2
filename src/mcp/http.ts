// MCP over Streamable HTTP (`polybox serve`). One endpoint, /mcp, with stateful sessions: each
// session is its own McpServer over the shared SandboxService. Trust: the network is hostile.
// Requests are refused before any MCP handling when the bearer token is wrong (401), the body is
// too big (413), or the Host or Origin header is not one this server answers to (403: see
// http-guard.ts; DNS rebinding and cross-site requests, on every bind).
// Streams are resumable: a client that lost one mid-run reconnects with Last-Event-ID and gets
// the rest of its own session's events (event-log.ts).
//
// Who the client is (see docs/security.md, "Tenants"): with tokens, the token. Every session that
// presents it is the same client: it owns the same sandboxes and jobs, and they outlive its
// sessions (the idle timeout closes them). Without tokens, the session: it alone owns what it made,
// and when it ends (closed by the client, idle-expired, server shut down) its jobs are cancelled
// and its sandboxes closed, since nobody could reach them again. Sessions cost nothing to open, so
// without tokens the per-client limits count per remote address instead.

import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Caller, SandboxService } from "../index.js";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./budget.js";
import { EventLog } from "./event-log.js";
import { type HostGuard, hostGuard } from "./http-guard.js";
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

/** Largest request body: code and base64 file content arrive in it. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
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
  /** The token that opened it: a session answers only requests that present the same one. */
  token: Buffer | null;
}

export async function serveHttp(options: HttpOptions): Promise<HttpServer> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? 256;
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
  const tokenDigests = (options.tokens ?? []).filter((t) => t !== "").map(sha256);
  let guard: HostGuard | null = null;
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
      return reply(res, 404, { error: "not found: the MCP endpoint is /mcp" });
    // Before anything else: a page on another site reaching this server (DNS rebinding, or a
    // cross-site request) is refused whatever it sends.
    const refused = guard?.({
      host: req.headers.host,
      origin: typeof req.headers.origin === "string" ? req.headers.origin : undefined,
    });
    if (refused) return reply(res, 403, { error: `forbidden: ${refused}` });
    const token = tokenDigests.length > 0 ? presentedToken(req, tokenDigests) : null;
    if (tokenDigests.length > 0 && token === null) {
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
    const found = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    // Another token's session is unknown to this caller, as a made-up id is.
    const existing = found && (found.token === null || found.token === token) ? found : undefined;
    if (existing) {
      existing.lastSeen = Date.now();
      if (req.method === "POST") inUse(existing, res);
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
    const newId = randomUUID();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => newId,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, lastSeen: Date.now(), busy: 0, token });
      },
      // Resumability: a stream that drops mid-run can be resumed with Last-Event-ID.
      eventStore: events.forSession(newId),
      retryInterval: RETRY_MS,
    });
    const caller: Caller =
      token !== null
        ? // A token's digest is the same after a restart: it keeps the client's named sandboxes.
          { owner: `token:${token.toString("hex")}`, scope: `token:${token.toString("hex")}` }
        : { owner: `session:${newId}`, account: `address:${clientAddress(req)}` };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      events.forget(newId);
      // A session-owned client is gone for good: free what only it could reach.
      if (token === null) {
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
      if (!res.headersSent) reply(res, 500, { error: "internal error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  guard = hostGuard({ bind: options.host, port, names: options.allowedHosts ?? [] });

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

/** @internal A token's digest, as `presentedToken` compares them. */
export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/**
 * The digest of the configured token the request presents, or null. Digests are compared in
 * constant time, each of them, so response timing does not leak a token or which one matched.
 */
export function presentedToken(req: IncomingMessage, digests: readonly Buffer[]): Buffer | null {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (m === null) return null;
  const presented = sha256(m[1]!.trim());
  let match: Buffer | null = null;
  for (const digest of digests) if (timingSafeEqual(presented, digest)) match = digest;
  return match;
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

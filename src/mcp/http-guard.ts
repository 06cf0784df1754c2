// Trusted side: the HTTP guard, one for `serve` (http.ts) and the cluster's router, so that both
// refuse the same requests with the same answers, in the same order:
//
// 1. Host and Origin (403). A browser page on another site can reach a server on this machine or
//    its network (DNS rebinding gives it a name that resolves here; a plain cross-site POST needs
//    none), so every bind gets a Host allow-list: the bind address itself, the loopback names for
//    a loopback bind, the machine's addresses for a wildcard bind, and the names the operator
//    lists (--allow-host). A request that carries an Origin (browsers do; MCP clients do not) must
//    come from one of those same places. This runs before the token check, so a page that cannot
//    read the answer learns nothing about the token either.
// 2. The bearer token (401 with a Bearer challenge), when the server has tokens.
// 3. The body (413), read only once 1 and 2 passed, and never more of it than the limit.

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import os from "node:os";

export interface HostGuardOptions {
  /** The address the server is bound to (--host). */
  bind: string;
  port: number;
  /**
   * More names clients reach the server by (a DNS name, a proxy's): --allow-host. A name with a
   * port (`proxy.example:8000`) is answered on that port only, for a proxy that passes its own
   * Host on; a bare name on the server's own port.
   */
  names?: readonly string[];
}

/** Answers null for a request to let through, or why it is refused (the 403's message). */
export type HostGuard = (headers: {
  host?: string | undefined;
  origin?: string | undefined;
}) => string | null;

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

function isLoopback(address: string): boolean {
  return address === "localhost" || address === "::1" || /^127\./.test(address);
}

function isWildcard(address: string): boolean {
  return address === "0.0.0.0" || address === "::" || address === "";
}

/** A host name or address as a Host header spells it, lower case, IPv6 unbracketed. */
function bare(name: string): string {
  const lower = name.trim().toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

/** Splits a Host header into name and port (the port is absent for a default one). */
function splitHost(value: string): { name: string; port: number | null } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return null;
  return { name: bare(m[1]!), port: m[2] === undefined ? null : Number(m[2]) };
}

export function hostGuard(options: HostGuardOptions): HostGuard {
  const names = new Set<string>();
  /** `name port` pairs listed with a port of their own. */
  const elsewhere = new Set<string>();
  for (const given of options.names ?? []) {
    const withPort = splitHost(given);
    if (withPort !== null && withPort.port !== null)
      elsewhere.add(`${withPort.name} ${withPort.port}`);
    else names.add(bare(given));
  }
  const bind = bare(options.bind);
  if (isWildcard(bind)) {
    for (const name of LOOPBACK_NAMES) names.add(name);
    for (const list of Object.values(os.networkInterfaces()))
      for (const entry of list ?? []) names.add(bare(entry.address.replace(/%.*$/, "")));
  } else {
    names.add(bind);
    if (isLoopback(bind)) for (const name of LOOPBACK_NAMES) names.add(name);
  }
  const allowed = (value: string, defaultPort: number): boolean => {
    const host = splitHost(value);
    if (host === null) return false;
    const port = host.port ?? defaultPort;
    return (names.has(host.name) && port === options.port) || elsewhere.has(`${host.name} ${port}`);
  };
  const listed = () =>
    [...names]
      .slice(0, 8)
      .map((n) => (isIP(n) === 6 ? `[${n}]` : n))
      .join(", ");
  return ({ host, origin }) => {
    if (host === undefined || !allowed(host, 80))
      return `Host "${String(host ?? "").slice(0, 100)}" is not one this server answers to (${listed()}; add names with --allow-host)`;
    if (origin !== undefined) {
      let url: URL | null = null;
      try {
        url = new URL(origin);
      } catch {
        url = null;
      }
      const defaultPort = url?.protocol === "https:" ? 443 : 80;
      if (!url || !/^https?:$/.test(url.protocol) || !allowed(url.host, defaultPort))
        return `Origin "${origin.slice(0, 100)}" may not call this server (only pages served from ${listed()} may)`;
    }
    return null;
  };
}

/** Largest request body: code and base64 file content arrive in it. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface HttpGuardOptions {
  /** The address the server is bound to (--host). */
  bind: string;
  /** More names clients reach the server by (--allow-host), as `HostGuardOptions.names`. */
  names?: readonly string[];
  /** Bearer tokens; each is one client. None: no authentication. */
  tokens?: readonly string[];
}

/** A request the guard let through, and who sent it. */
export interface Admitted {
  /**
   * The client the presented token names (`token:` and the hex of its SHA-256: the same after a
   * restart, and on every server given the token), or null when the server has no tokens.
   */
  client: string | null;
}

/** Answers a refused request itself (403, 401) and returns null, or lets it through. */
export type HttpGuard = (req: IncomingMessage, res: ServerResponse) => Admitted | null;

export function httpGuard(options: HttpGuardOptions): HttpGuard {
  const digests = (options.tokens ?? []).filter((t) => t !== "").map(sha256);
  // Host headers name the server's port, which a server on port 0 learns only once it listens;
  // the port a request arrived on is that port, so the host guard is made for it on first use.
  const byPort = new Map<number, HostGuard>();
  const hostsFor = (port: number): HostGuard => {
    let guard = byPort.get(port);
    if (!guard) {
      guard = hostGuard({ bind: options.bind, port, names: options.names ?? [] });
      byPort.set(port, guard);
    }
    return guard;
  };
  return (req, res) => {
    const refused = hostsFor(req.socket.localPort ?? 0)({
      host: req.headers.host,
      origin: typeof req.headers.origin === "string" ? req.headers.origin : undefined,
    });
    if (refused !== null) {
      sendJson(res, 403, { error: `forbidden: ${refused}` });
      return null;
    }
    if (digests.length === 0) return { client: null };
    const token = presentedToken(req, digests);
    if (token === null) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="polybox"');
      sendJson(res, 401, {
        error:
          "unauthorized: send Authorization: Bearer <token> (the server's --token or POLYBOX_TOKEN)",
      });
      return null;
    }
    return { client: `token:${token.toString("hex")}` };
  };
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/**
 * The digest of the configured token the request presents, or null. Digests, not tokens, are
 * compared: they are all 32 bytes, so `timingSafeEqual` applies to a token of any length and the
 * time taken says nothing of a token's length or content. Every digest is compared, so neither
 * does it say which one matched.
 */
function presentedToken(req: IncomingMessage, digests: readonly Buffer[]): Buffer | null {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (m === null) return null;
  const presented = sha256(m[1]!.trim());
  let match: Buffer | null = null;
  for (const digest of digests) if (timingSafeEqual(presented, digest)) match = digest;
  return match;
}

/**
 * The request's body, or null as soon as it is over `max` bytes: one whose Content-Length says so
 * is refused unread, and otherwise reading stops at the chunk that passes the limit, so no more
 * than `max` bytes are ever held. The rest is left unread: the caller answers and closes.
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  if (Number(req.headers["content-length"]) > max) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    // A request whose client already went away would emit nothing more: waiting would be forever.
    if (req.destroyed) {
      reject(new Error("the client closed the request before sending all its body"));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (settleWith: () => void) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      settleWith();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      // Paused, not destroyed: the socket must stay open for the 413.
      req.pause();
      settle(() => resolve(null));
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks)));
    const onError = (error: Error) => settle(() => reject(error));
    const onClose = () =>
      settle(() => reject(new Error("the client closed the request before sending all its body")));
    req.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose);
  });
}

/** The request's body; or null, once it has answered 413 because the body is over `max` bytes. */
export async function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  max: number,
): Promise<Buffer | null> {
  const raw = await readBody(req, max);
  if (raw === null) {
    // The rest of the body is never read: the connection ends once the answer is out.
    res.setHeader("connection", "close");
    sendJson(res, 413, { error: `request body over ${max} bytes` });
  }
  return raw;
}

/**
 * A POST's body as JSON (undefined for any other method, which has none); or null, once it has
 * answered 413 (too big) or 400 (not JSON: a JSON-RPC parse error, as MCP clients expect).
 */
export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ body: unknown } | null> {
  if (req.method !== "POST") return { body: undefined };
  const raw = await readBoundedBody(req, res, MAX_BODY_BYTES);
  if (raw === null) return null;
  try {
    return { body: JSON.parse(raw.toString("utf8")) };
  } catch {
    sendJson(res, 400, {
      jsonrpc: "2.0",
      error: { code: -32700, message: "parse error: the body is not JSON" },
      id: null,
    });
    return null;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // With its length the answer is complete on its own: a 413 is read whole even where the
  // connection then closes under a client still sending.
  res
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    })
    .end(text);
}

// Trusted side: which Host and Origin headers an HTTP endpoint answers. A browser page on another
// site can reach a server on this machine or its network (DNS rebinding gives it a name that
// resolves here; a plain cross-site POST needs none), so every bind gets a Host allow-list: the
// bind address itself, the loopback names for a loopback bind, the machine's addresses for a
// wildcard bind, and the names the operator lists (--allow-host). A request that carries an
// Origin (browsers do; MCP clients do not) must come from one of those same places. Shared by
// `serve` (http.ts) and the cluster's router.

import type { IncomingMessage } from "node:http";
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

/** Why a request's Host or Origin is refused by `guard`, or null to let it through. */
export function refusedByGuard(guard: HostGuard | null, req: IncomingMessage): string | null {
  return (
    guard?.({
      host: req.headers.host,
      origin: typeof req.headers.origin === "string" ? req.headers.origin : undefined,
    }) ?? null
  );
}

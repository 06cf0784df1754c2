// Trusted side: which hosts a guest may reach. Grants are `host`, `host:port`, `[v6]:port` or `*`
// (everything), as `--allow-net` writes them; `--deny-net` entries use the same form and win. An
// address in a private, loopback, link-local, metadata or unique-local range is refused unless
// the grant names that address literally: granting a *name* never grants what it resolves to
// inside the machine or its network, so a DNS answer cannot turn a public grant into a LAN one.
// Names are compared in one form (`canonicalHost`), the same for grants, denials, request and
// redirect hosts: a resolver looks up `Example.COM.`, `bücher.de` and `xn--bcher-kva.de` as the
// lower-case ASCII name without the final dot, so a deny of one spelling refuses all of them.

import { isIP } from "node:net";
import { PolyboxError } from "../../core/errors.js";
import {
  canonicalHost,
  hostPort,
  isInternalAddress,
  normalizeAddress,
} from "../../core/net-addresses.js";

// The address classifier is shared with the trusted side's own downloads
// (core/packages/download-policy.ts).
export { canonicalHost, hostPort, isInternalAddress, normalizeAddress };

export interface Grant {
  /** Lower-case host name or IP literal (IPv6 without brackets); "*" for every host. */
  host: string;
  /** null: any port. */
  port: number | null;
}

/** Parses one `--allow-net` / `--deny-net` entry. */
export function parseGrant(entry: string): Grant {
  const text = entry.trim();
  const bad = (why: string): never => {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `network grant "${entry}": ${why}; write HOST, HOST:PORT, [IPv6]:PORT or *`,
    );
  };
  if (text === "*") return { host: "*", port: null };
  if (text.includes("/")) bad("a host, not a URL");
  if (isIP(text) === 6) return { host: normalizeAddress(text), port: null };
  let host = text;
  let port: number | null = null;
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(text);
  if (v6) {
    host = v6[1]!;
    if (isIP(host) !== 6) bad("not an IPv6 address");
    if (v6[2] !== undefined) port = Number(v6[2]);
  } else {
    const m = /^([^:\s]+)(?::(\d+))?$/.exec(text);
    if (!m) return bad("not a host name");
    host = m[1]!;
    if (m[2] !== undefined) port = Number(m[2]);
  }
  if (host.includes("*")) bad("only * alone is a wildcard (every host); name each host");
  const canonical = canonicalHost(host);
  if (canonical === null) return bad("not a host name");
  if (port !== null && !(port >= 1 && port <= 65535)) bad("port must be 1 to 65535");
  return { host: canonical, port };
}

export function parseGrants(entries: readonly string[]): Grant[] {
  return entries.map(parseGrant);
}

function matches(grant: Grant, host: string, port: number): boolean {
  return (
    (grant.host === "*" || grant.host === host) && (grant.port === null || grant.port === port)
  );
}

export type Verdict = { ok: true } | { ok: false; why: string };

export class NetPolicy {
  constructor(
    readonly allow: readonly Grant[],
    readonly deny: readonly Grant[],
  ) {}

  get grantsAnything(): boolean {
    return this.allow.length > 0;
  }

  /** The host as the URL names it: granted, and not denied? */
  checkHost(host: string, port: number): Verdict {
    const h = canonicalHost(host);
    if (h === null)
      return {
        ok: false,
        why: `${JSON.stringify(host.slice(0, 260))} is not a host name (more than one final dot, an empty label or a character no name has)`,
      };
    if (this.deny.some((g) => matches(g, h, port)))
      return { ok: false, why: `${hostPort(h, port)} is denied by the server (--deny-net)` };
    if (!this.allow.some((g) => matches(g, h, port)))
      return {
        ok: false,
        why: `network access to ${hostPort(h, port)} is not granted; the server grants it with --allow-net=${isIP(h) === 6 ? `[${h}]` : h} (permissions.net in the library)`,
      };
    return { ok: true };
  }

  /** One address the host resolved to (or the host itself, for a literal): may we connect? */
  checkAddress(host: string, address: string, port: number): Verdict {
    const a = normalizeAddress(address);
    if (this.deny.some((g) => g.host !== "*" && matches(g, a, port)))
      return { ok: false, why: `${host} resolves to ${a}, which is denied (--deny-net)` };
    if (!isInternalAddress(a)) return { ok: true };
    // Granted by name only where the grant is the address itself.
    if (this.allow.some((g) => g.host === a && (g.port === null || g.port === port)))
      return { ok: true };
    const named = normalizeAddress(host) === a ? `${a} is` : `${host} resolves to ${a},`;
    return {
      ok: false,
      why: `${named} a private, loopback, link-local or metadata address, reachable only when granted literally (--allow-net=${hostPort(a, port)})`,
    };
  }

  /** A narrower policy for one sandbox: every entry must lie within this one's grant. */
  narrow(entries: readonly string[]): NetPolicy {
    const grants = parseGrants(entries);
    const wider = grants.filter(
      (g) =>
        !this.allow.some(
          (s) =>
            (s.host === "*" || (s.host === g.host && g.host !== "*")) &&
            (s.port === null || s.port === g.port),
        ),
    );
    if (wider.length > 0) {
      const names = wider.map((g) =>
        g.host === "*" ? "*" : g.port === null ? g.host : hostPort(g.host, g.port),
      );
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `a sandbox's network grant must lie within the runtime's; ${names.join(", ")} ${wider.length === 1 ? "is" : "are"} not within it (granted: ${this.allow.length === 0 ? "nothing" : this.allow.map((g) => (g.host === "*" ? "*" : g.port === null ? g.host : hostPort(g.host, g.port))).join(", ")})`,
        { details: { limit: "permissions.net", hosts: names } },
      );
    }
    return new NetPolicy(grants, this.deny);
  }
}

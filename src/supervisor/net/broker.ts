// Trusted side: makes a guest's HTTP(S) requests on its behalf. For each hop (the request and
// every redirect it follows) the broker checks the URL's host against the policy, resolves the
// name itself, checks every address the name resolves to, and connects to the checked address
// (the socket's lookup returns it, so no second resolution can rebind the name). Headers the
// operator configured for a host (`--net-header`) are added here and only here: their values
// never cross to the guest. So are secrets (`--net-secret`, core/net-secrets.ts): a placeholder
// the guest sends becomes the value only on a hop to the secret's hosts, a placeholder headed
// anywhere else stops the request, and those hosts' answers come back with the value replaced
// by the placeholder. A session is one run's: it counts requests and bytes against the
// run's limits and keeps the record the run's result carries.

import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import type { NetHeader } from "../../core/config.js";
import type { NetLimits } from "../../core/limits.js";
import { pinnedLookup } from "../../core/net-addresses.js";
import { NetSecrets, SecretRefusal } from "../../core/net-secrets.js";
import {
  type NetRecordEntry,
  type NetReply,
  type NetRequest,
  NetRequestSchema,
  type TunnelFrame,
  type TunnelReply,
} from "../../protocol/net.js";
import { type InterceptAuthority, terminateTls } from "./intercept.js";
import { canonicalHost, hostPort, type NetPolicy, normalizeAddress, parseGrant } from "./policy.js";
import { TunnelRefusal, type TunnelSession, Tunnels } from "./tunnel.js";

export interface BrokerOptions {
  headers?: readonly NetHeader[];
  /**
   * The authority whose certificates end native mode's tunnels to hosts the boundary adds
   * headers or secrets to (intercept.ts), made at first need. Without one such tunnels are
   * refused.
   */
  authority?: () => Promise<InterceptAuthority>;
  /** Extra certificate authorities trusted for HTTPS (PEM), besides the system's. */
  ca?: string | readonly string[];
  limits: NetLimits;
}

/** Redirect hops one request may follow. */
export const MAX_REDIRECTS = 10;
/** Records kept per run (requests past maxRequests are recorded up to this many). */
const MAX_RECORD = 200;
/** Bytes of response headers passed to the guest. */
const MAX_RESPONSE_HEADER_BYTES = 64 * 1024;

/** Headers the broker sets itself; a guest's values for them are dropped. */
const HOP_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "accept-encoding",
]);
/** Credentials a redirect to another origin must not carry. */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie"]);
/**
 * Methods whose answer is the request itself (`TRACE`, and IIS's `TRACK`): sent to a host that
 * gets `--net-header` headers, they would hand the header's value back to the guest.
 */
const REFLECTING_METHODS = new Set(["TRACE", "TRACK"]);

class Stop extends Error {
  constructor(
    readonly kind: "denied" | "limit" | "failed",
    message: string,
  ) {
    super(message);
  }
}

export class NetBroker {
  private readonly ca: string[] | undefined;

  constructor(private readonly options: BrokerOptions) {
    const ca = options.ca;
    this.ca = ca === undefined ? undefined : typeof ca === "string" ? [ca] : [...ca];
  }

  /** A session for one run, under `policy` (the runtime's, or a sandbox's narrower one). */
  session(policy: NetPolicy, deadline: number, secrets = NetSecrets.none): NetSession {
    return new NetSession(this.options, this.ca, policy, deadline, secrets);
  }
}

export class NetSession implements TunnelSession {
  readonly record: NetRecordEntry[] = [];
  private requests = 0;
  private bytesOut = 0;
  private bytesIn = 0;
  private readonly aborts = new Set<AbortController>();
  private readonly tunnels = new Tunnels(this);

  /** @internal Made by NetBroker.session. */
  constructor(
    private readonly options: BrokerOptions,
    private readonly ca: string[] | undefined,
    readonly policy: NetPolicy,
    readonly deadline: number,
    private readonly secrets: NetSecrets,
  ) {}

  closed = false;

  get limits(): NetLimits {
    return this.options.limits;
  }

  /** Ends every request and tunnel in flight (the run is over); later ones are refused. */
  close(): void {
    this.closed = true;
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
    this.tunnels.closeAll();
  }

  /** A frame of a CONNECT tunnel (native mode's proxy); see tunnel.ts. Never throws. */
  tunnel(tun: number, frame: TunnelFrame, send: (reply: TunnelReply) => void): boolean {
    return this.tunnels.frame(tun, frame, send);
  }

  /** @internal For tunnels: counts one against maxRequests and records it. */
  admit(entry: NetRecordEntry): string | null {
    if (this.record.length < MAX_RECORD) this.record.push(entry);
    if (++this.requests > this.limits.maxRequests)
      return `network request limit reached: at most ${this.limits.maxRequests} requests per run (maxRequests)`;
    return null;
  }

  /** @internal For tunnels: counts bytes the guest sends. */
  spendOut(n: number, entry: NetRecordEntry): string | null {
    if (this.bytesOut + n > this.limits.maxBytesOut)
      return `network bytes out limit reached: at most ${this.limits.maxBytesOut} bytes per run (maxBytesOut)`;
    this.bytesOut += n;
    entry.bytesOut += n;
    return null;
  }

  /** @internal For tunnels: counts bytes the guest receives. */
  spendIn(n: number, entry: NetRecordEntry): string | null {
    if (this.bytesIn + n > this.limits.maxBytesIn)
      return `network bytes in limit reached: at most ${this.limits.maxBytesIn} bytes per run (maxBytesIn)`;
    if (entry.bytesIn + n > this.limits.maxResponseBytes)
      return `the tunnel received more than ${this.limits.maxResponseBytes} bytes (maxResponseBytes)`;
    this.bytesIn += n;
    entry.bytesIn += n;
    return null;
  }

  /**
   * @internal What the boundary adds to this host's requests (`--net-header`, `--net-secret`),
   * or null: a request that could reflect them, or a tunnel that cannot carry them, is refused.
   */
  addsTo(host: string, port: number): string | null {
    const goesTo = (grant: string) => headerApplies(grant, host, port);
    const headers = (this.options.headers ?? []).some((h) => goesTo(h.host));
    const secrets = this.secrets.anyFor(goesTo);
    if (headers && secrets) return "headers (--net-header) and secrets (--net-secret)";
    if (headers) return "headers (--net-header)";
    if (secrets) return "secrets (--net-secret)";
    return null;
  }

  /**
   * @internal For tunnels to a host the boundary adds to: this side's end of the guest's TLS,
   * whose requests are made as this session's. Null where no authority is configured.
   */
  terminate(host: string, port: number): Promise<Duplex> | null {
    const authority = this.options.authority;
    if (!authority) return null;
    return authority().then((a) =>
      terminateTls({
        context: a.contextFor(host),
        origin: hostPort(host, port),
        maxBodyBytes: this.limits.maxBytesOut,
        forward: (request) => this.request(request),
      }),
    );
  }

  /** Handles one request as the untrusted side sent it: never throws, always a reply. */
  async request(raw: unknown): Promise<NetReply> {
    const parsed = NetRequestSchema.safeParse(raw);
    if (!parsed.success)
      return { ok: false, kind: "failed", message: "polybox: malformed network request" };
    const request = parsed.data;
    let host = "?";
    try {
      host = hostOf(new URL(request.url));
    } catch {
      // Judged below, with a message.
    }
    const entry: NetRecordEntry = {
      method: request.method,
      host,
      status: null,
      bytesOut: 0,
      bytesIn: 0,
    };
    if (this.record.length < MAX_RECORD) this.record.push(entry);
    try {
      return await this.perform(request, entry);
    } catch (error) {
      const stop =
        error instanceof Stop
          ? error
          : new Stop("failed", `request failed: ${(error as Error)?.message ?? String(error)}`);
      entry.denied = stop.message;
      return { ok: false, kind: stop.kind, message: stop.message };
    }
  }

  private async perform(request: NetRequest, entry: NetRecordEntry): Promise<NetReply> {
    const limits = this.options.limits;
    if (this.closed) throw new Stop("failed", "the run has ended");
    if (++this.requests > limits.maxRequests)
      throw new Stop(
        "limit",
        `network request limit reached: at most ${limits.maxRequests} requests per run (maxRequests)`,
      );
    let url = parseUrl(request.url);
    let method = request.method;
    // A CONNECT asks the server for a raw tunnel, which this path does not relay: native mode's
    // proxy sends its CONNECTs as tunnels (tunnel.ts), checked there.
    if (method === "CONNECT")
      throw new Stop(
        "denied",
        "method CONNECT is refused here: a tunnel is opened only by native mode's proxy (https:// through HTTPS_PROXY), never as a plain request",
      );
    let body = request.body;
    let headers = guestHeaders(request.headers);
    const timeLeft = this.deadline - Date.now();
    const budget = Math.min(limits.requestTimeoutMs, timeLeft);
    if (budget <= 0)
      throw new Stop("limit", "the run's time is up: no time is left for a network request");
    const abort = new AbortController();
    this.aborts.add(abort);
    const timer = setTimeout(() => abort.abort(), budget);
    try {
      for (let hop = 0; ; hop++) {
        const sent = body?.length ?? 0;
        if (this.bytesOut + sent > limits.maxBytesOut)
          throw new Stop(
            "limit",
            `network bytes out limit reached: at most ${limits.maxBytesOut} bytes per run (maxBytesOut)`,
          );
        this.bytesOut += sent;
        entry.bytesOut += sent;
        const answer = await this.hop(url, method, headers, body, abort.signal, entry);
        entry.status = answer.status;
        const location = answer.headers.find(([k]) => k === "location")?.[1];
        if (
          request.redirect !== "manual" &&
          [301, 302, 303, 307, 308].includes(answer.status) &&
          location !== undefined
        ) {
          if (hop >= MAX_REDIRECTS)
            throw new Stop("failed", `too many redirects (more than ${MAX_REDIRECTS})`);
          const next = parseUrl(location, url);
          if (next.origin !== url.origin)
            headers = headers.filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase()));
          if (
            answer.status === 303 ||
            ((answer.status === 301 || answer.status === 302) && method === "POST")
          ) {
            if (method !== "HEAD") method = "GET";
            body = undefined;
            headers = headers.filter(([k]) => !/^content-/i.test(k));
          }
          url = next;
          continue;
        }
        return {
          ok: true,
          status: answer.status,
          statusText: answer.statusText,
          url: url.href,
          headers: answer.headers,
          body: answer.body,
          redirected: hop > 0,
        };
      }
    } catch (error) {
      if (abort.signal.aborted && !(error instanceof Stop) && this.closed)
        throw new Stop("failed", "the run ended before the answer came");
      if (abort.signal.aborted && !(error instanceof Stop))
        throw new Stop(
          "limit",
          budget < limits.requestTimeoutMs
            ? "the network request passed the run's deadline (timeoutMs)"
            : `the network request took longer than ${limits.requestTimeoutMs} ms (requestTimeoutMs)`,
        );
      throw error;
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
    }
  }

  /** One HTTP exchange with a checked address. */
  private async hop(
    url: URL,
    method: string,
    guest: [string, string][],
    body: Uint8Array | undefined,
    signal: AbortSignal,
    entry: NetRecordEntry,
  ): Promise<{
    status: number;
    statusText: string;
    headers: [string, string][];
    body: Uint8Array;
  }> {
    // The host in the form the policy compares, for this hop as for the first: the name checked
    // is the name resolved and the name `--net-header` entries are matched against.
    const named = url.hostname.replace(/^\[|\]$/g, "");
    const port = portOf(url);
    const verdict = this.policy.checkHost(named, port);
    if (!verdict.ok) throw new Stop("denied", deniedMessage(entry, url, verdict.why));
    const host = canonicalHost(named)!;
    const adds = REFLECTING_METHODS.has(method) ? this.addsTo(host, port) : null;
    if (adds)
      throw new Stop(
        "denied",
        deniedMessage(
          entry,
          url,
          `method ${method} to ${hostPort(host, port)} is refused: the server adds ${adds} to this host's requests, and a ${method} answer reflects the request back, secret values included`,
        ),
      );
    let filled: ReturnType<NetSecrets["fill"]>;
    try {
      filled = this.secrets.fill(
        (grant) => headerApplies(grant, host, port),
        { headers: guest, path: `${url.pathname}${url.search}`, body },
        hostPort(host, port),
      );
    } catch (error) {
      if (error instanceof SecretRefusal)
        throw new Stop("denied", deniedMessage(entry, url, error.message));
      throw error;
    }
    const address = await this.resolve(host, port, signal, (kind, why) =>
      kind === "denied" ? new Stop("denied", deniedMessage(entry, url, why)) : new Stop(kind, why),
    );
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of filled.headers) {
      const key = k.toLowerCase();
      const old = headers[key];
      headers[key] = old === undefined ? v : Array.isArray(old) ? [...old, v] : [old, v];
    }
    for (const extra of this.options.headers ?? []) {
      if (headerApplies(extra.host, host, port)) headers[extra.name.toLowerCase()] = extra.value;
    }
    headers.host = url.host;
    headers["accept-encoding"] = "identity";
    const sent = filled.body;
    if (sent !== undefined) headers["content-length"] = String(sent.length);
    // The socket connects to the address checked above, whatever the name resolves to now.
    const lookup = pinnedLookup(address);
    const secure = url.protocol === "https:";
    const limits = this.options.limits;
    const room = Math.min(limits.maxResponseBytes, limits.maxBytesIn - this.bytesIn);
    return await new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(
        {
          protocol: url.protocol,
          hostname: host,
          port,
          path: filled.path,
          method,
          headers,
          lookup,
          agent: false,
          signal,
          ...(secure ? { servername: isIP(host) ? undefined : host } : {}),
          ...(secure && this.ca ? { ca: [...tlsRootCertificates(), ...this.ca] } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          let over = false;
          res.on("data", (chunk: Buffer) => {
            if (over) return;
            size += chunk.length;
            if (size > room) {
              over = true;
              const which =
                room < limits.maxResponseBytes
                  ? `network bytes in limit reached: at most ${limits.maxBytesIn} bytes per run (maxBytesIn)`
                  : `the response is larger than ${limits.maxResponseBytes} bytes (maxResponseBytes)`;
              res.destroy();
              req.destroy();
              reject(new Stop("limit", which));
              return;
            }
            // Counted as it arrives: what was received is used, whether or not it is delivered.
            this.bytesIn += chunk.length;
            entry.bytesIn += chunk.length;
            chunks.push(chunk);
          });
          res.on("end", () => {
            if (over) return;
            const out: [string, string][] = [];
            let headerBytes = 0;
            const raw = res.rawHeaders;
            for (let i = 0; i + 1 < raw.length; i += 2) {
              headerBytes += raw[i]!.length + raw[i + 1]!.length;
              if (headerBytes > MAX_RESPONSE_HEADER_BYTES) break;
              out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
            }
            const data = Buffer.concat(chunks);
            const answer = {
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? "",
              headers: out,
              body: new Uint8Array(data.buffer, data.byteOffset, data.length),
            };
            // A host that got a secret may echo it (a debugging endpoint, an error page): the
            // guest gets the placeholder back instead.
            resolve(filled.used ? this.scrubbed(answer) : answer);
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(sent === undefined ? undefined : Buffer.from(sent));
    });
  }

  private scrubbed<A extends { statusText: string; headers: [string, string][]; body: Uint8Array }>(
    answer: A,
  ): A {
    return {
      ...answer,
      statusText: this.secrets.scrubText(answer.statusText),
      headers: answer.headers.map(([k, v]) => [k, this.secrets.scrubText(v)]),
      body: this.secrets.scrubBytes(answer.body),
    };
  }

  /**
   * The address to connect to: the literal itself, or the first of the name's, all checked.
   * `fail` makes the error thrown (by default a tunnel's refusal).
   */
  async resolve(
    host: string,
    port: number,
    signal: AbortSignal,
    fail: (kind: "denied" | "failed", why: string) => Error = (kind, why) =>
      new TunnelRefusal(kind, why),
  ): Promise<string> {
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        const found = await dnsLookup(host, { all: true, verbatim: true });
        addresses = found.map((a) => a.address);
      } catch (error) {
        throw fail(
          "failed",
          `cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        );
      }
      if (signal.aborted) throw new Error("aborted");
    }
    if (addresses.length === 0) throw fail("failed", `cannot resolve ${host}`);
    for (const address of addresses) {
      const verdict = this.policy.checkAddress(host, address, port);
      if (!verdict.ok) throw fail("denied", verdict.why);
    }
    return normalizeAddress(addresses[0]!);
  }
}

/** The system's roots, kept when extra CAs are given (Node's `ca` option replaces them). */
function tlsRootCertificates(): readonly string[] {
  return tls.rootCertificates;
}

function deniedMessage(entry: NetRecordEntry, url: URL, why: string): string {
  const first = entry.host;
  const here = hostOf(url);
  return first === here ? why : `redirect from ${first} to ${here} refused: ${why}`;
}

/** `host:port` of a URL, the host in the policy's form where it has one. */
function hostOf(url: URL): string {
  const named = url.hostname.replace(/^\[|\]$/g, "");
  return hostPort(canonicalHost(named) ?? named, portOf(url));
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new Stop("failed", `not a URL: ${text.slice(0, 200)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Stop("denied", `only http and https URLs are supported, not ${url.protocol}`);
  if (url.username || url.password)
    throw new Stop("failed", "credentials in the URL are not supported; send a header instead");
  return url;
}

function guestHeaders(headers: [string, string][]): [string, string][] {
  return headers.filter(([k]) => !HOP_HEADERS.has(k.toLowerCase()));
}

/** Whether a `--net-header` entry's host (`host`, `host:port`, as a grant) names `host`/`port`. */
function headerApplies(grant: string, host: string, port: number): boolean {
  const target = canonicalHost(host);
  if (target === null) return false;
  let named: { host: string; port: number | null };
  try {
    named = parseGrant(grant);
  } catch {
    return false;
  }
  return (
    named.host !== "*" && named.host === target && (named.port === null || named.port === port)
  );
}

// Trusted side: every request the server makes to bring a package a guest named (Python index
// pages and wheels, Pyodide's lock-file packages, the Wasmer registry and its files). The guest
// picks the package and an index or registry picks the URLs, so none of them may pick where the
// server connects inside its own network: each hop (the request and every redirect) is resolved
// here, every address it resolves to is checked with the classifier guest egress uses
// (net-addresses.ts), and the socket connects to the checked address (its `lookup` returns it,
// so no second resolution can rebind the name between check and connect).
//
// What is trusted: a public address, always (packages come from the internet by default). A
// private, loopback or link-local one only when the operator allowed a package source on a
// private network (`allowPrivateIndex`), and then only on the host and port of a source the
// operator configured (an index URL, the Pyodide CDN, the Wasmer registry; a Wasmer download
// host, which names no port, at http's and https's default ports). "Same host" is the host
// name as the URL parser writes it and the same port: another port of the same machine is
// another service, and another spelling of its address is not what the operator wrote.
//
// What is not here: which hosts a Wasmer package may come from at all (wasmer-packages.ts), and
// the guest's own network (supervisor/net/, which shares only the classifier).

import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { PolyboxError } from "../errors.js";
import {
  canonicalHost,
  hostPort,
  isInternalAddress,
  normalizeAddress,
  pinnedLookup,
} from "../net-addresses.js";

/** Redirect hops one download may follow. */
export const MAX_DOWNLOAD_REDIRECTS = 10;

export interface DownloadPolicyOptions {
  /** URLs the operator configured: index URLs, the Pyodide CDN, the Wasmer registry. */
  origins: readonly string[];
  /** Host names granted without a port (`wasmerDownloadHosts`): their default ports. */
  hosts?: readonly string[] | undefined;
  /** Whether the configured sources may be on a private network (`allowPrivateIndex`). */
  allowPrivate?: boolean | undefined;
}

/** What a download is for, for messages and error details. */
export interface DownloadLabel {
  /** In words, e.g. `Python package "numpy"`. */
  what: string;
  /** The package as error details name it. */
  package: string;
}

export interface DownloadRequest {
  method?: "GET" | "POST";
  headers?: Readonly<Record<string, string>>;
  body?: string;
  /** Follow redirects, each hop checked again, or fail on one. */
  redirects: "follow" | "refuse";
  /** The largest body read; a longer one fails while it streams. */
  maxBytes: number;
  signal: AbortSignal;
}

export interface Downloaded {
  status: number;
  /** The URL of the last hop. */
  url: string;
  /** The body of a 2xx answer; empty for any other. */
  body: Uint8Array;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80);
const bare = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

export class DownloadPolicy {
  /** `host:port` of each configured source, host in canonical form. */
  private readonly configured = new Set<string>();
  readonly allowPrivate: boolean;

  constructor(options: DownloadPolicyOptions) {
    this.allowPrivate = options.allowPrivate === true;
    for (const origin of options.origins) {
      if (!URL.canParse(origin)) continue;
      const url = new URL(origin);
      const host = canonicalHost(bare(url));
      if (host !== null) this.configured.add(hostPort(host, portOf(url)));
    }
    for (const name of options.hosts ?? []) {
      const host = canonicalHost(name);
      if (host !== null) for (const port of [80, 443]) this.configured.add(hostPort(host, port));
    }
  }

  /**
   * The address to connect to for `url`: the literal, or the first its name resolves to, after
   * every one of them passed. Refusals are PERMISSION_DENIED errors; a name that does not
   * resolve is a plain Error (the network's failure, which callers report as theirs).
   */
  async address(url: URL, label: DownloadLabel, signal: AbortSignal): Promise<string> {
    const host = canonicalHost(bare(url));
    if (host === null) throw new Error(`${JSON.stringify(url.hostname)} is not a host name`);
    const port = portOf(url);
    const where = hostPort(host, port);
    const isConfigured = this.configured.has(where);
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      const found = await abortable(dnsLookup(host, { all: true, verbatim: true }), signal);
      addresses = found.map((a) => a.address);
      if (addresses.length === 0) throw new Error(`cannot resolve ${host}`);
    }
    // The operator's own source, on the network the operator said it is on.
    if (this.allowPrivate && isConfigured) return normalizeAddress(addresses[0]!);
    for (const raw of addresses) {
      const a = normalizeAddress(raw);
      if (!isInternalAddress(a)) continue;
      const named = host === a ? `${a} is` : `${host} resolves to ${a},`;
      const internal = `${named} a private, loopback, link-local or metadata address`;
      if (isConfigured)
        throw new PolyboxError(
          "PERMISSION_DENIED",
          `refusing to fetch ${label.what} from ${where}: ${internal}, and a package source on a private network is used only when the operator allows it (allowPrivateIndex)`,
          { details: { limit: "allowPrivateIndex", package: label.package } },
        );
      const sources = [...this.configured].join(", ");
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `refusing to fetch ${label.what} from ${where}: ${internal}; on a private network packages come only from the host and port of a package source the operator configured${this.allowPrivate ? ` (${sources})` : ", and only when the operator allows it (allowPrivateIndex)"}, whatever an index, registry or redirect names`,
        { details: { package: label.package } },
      );
    }
    return normalizeAddress(addresses[0]!);
  }

  /**
   * One download, every hop through `address`. Fails with the policy's PolyboxError, or with a
   * plain Error for what the network did (refused, timed out, too large, a refused redirect).
   */
  async fetch(
    start: string | URL,
    label: DownloadLabel,
    request: DownloadRequest,
  ): Promise<Downloaded> {
    let url = httpUrl(String(start));
    for (let hop = 0; ; hop++) {
      const answer = await this.exchange(url, label, request);
      const location = answer.location;
      if (!REDIRECTS.has(answer.status) || location === undefined)
        return { status: answer.status, url: url.href, body: answer.body };
      if (request.redirects === "refuse")
        throw new Error(`HTTP ${answer.status}: a redirect, which is not followed here`);
      if (hop >= MAX_DOWNLOAD_REDIRECTS)
        throw new Error(`too many redirects (more than ${MAX_DOWNLOAD_REDIRECTS})`);
      url = httpUrl(location, url);
    }
  }

  /** One HTTP exchange with a checked address. */
  private async exchange(
    url: URL,
    label: DownloadLabel,
    request: DownloadRequest,
  ): Promise<{ status: number; location: string | undefined; body: Uint8Array }> {
    const address = await this.address(url, label, request.signal);
    // The socket connects to the address checked above, whatever the name resolves to now.
    const lookup = pinnedLookup(address);
    const host = bare(url);
    const secure = url.protocol === "https:";
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const max = request.maxBytes;
    return await new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(
        {
          protocol: url.protocol,
          hostname: host,
          port: portOf(url),
          path: `${url.pathname}${url.search}`,
          method: request.method ?? "GET",
          headers: {
            ...request.headers,
            host: url.host,
            "accept-encoding": "identity",
            ...(body ? { "content-length": String(body.length) } : {}),
          },
          lookup,
          agent: false,
          signal: request.signal,
          ...(secure ? { servername: isIP(host) ? undefined : host } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          if (status < 200 || status > 299) {
            // Only the status and a redirect's target are used: the body is not read.
            res.destroy();
            resolve({ status, location, body: new Uint8Array(0) });
            return;
          }
          const declared = Number(res.headers["content-length"] ?? "0");
          if (declared > max) {
            res.destroy();
            reject(new Error(`${declared} bytes is over the ${max}-byte limit`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > max) {
              res.destroy();
              reject(new Error(`the body is over the ${max}-byte limit`));
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () => {
            const data = Buffer.concat(chunks);
            resolve({
              status,
              location,
              body: new Uint8Array(data.buffer, data.byteOffset, data.length),
            });
          });
          res.on("error", reject);
          res.on("close", () => {
            if (!res.complete) reject(new Error("the answer was cut short"));
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** An http(s) URL without credentials, or a plain Error saying why not. */
function httpUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`only http and https URLs are fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new Error("credentials in a URL are not supported");
  return url;
}

/** `promise`, or the signal's reason once it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", stop);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(e);
      },
    );
  });
}

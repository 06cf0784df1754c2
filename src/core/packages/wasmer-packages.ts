// Trusted side: brings Wasmer registry packages (`namespace/name@version`) to this side as bytes,
// for the `wasix` engine, whose sdk gets them as WEBC bytes and never reaches the network. The
// rule is the Python packages' (packages.ts): the registry the operator names is allowed by being
// named, whatever `permissions.net` grants the guest; the package bytes are downloaded only from
// that registry's host or from download hosts granted with it (the public registry's CDN by
// default), checked against the sha256 the registry gives, and cached per user. The first
// download pins the version to its sha256 in the cache: later runs use the pinned bytes without
// asking the registry (a changed registry answer cannot change what a pinned name runs), and
// `cachedOnly` refuses every request to the registry. A pin is the registry's: kept under a key
// of the registry's URL and naming it inside, so a name pinned while the user's server asked one
// registry is never what that name runs with another (which is asked, or under `cachedOnly`
// refuses as not cached). Every request goes through the download policy (download-policy.ts):
// neither the registry nor the download URL it gives may be a private address, unless the
// operator allowed a registry on a private network (`allowPrivateIndex`), and then only the
// registry's own host and port (and the granted download hosts at their default ports).
//
// The registry answers GraphQL: `getPackageVersion(name, version)` and, of that version, the
// WEBC distributions (`distribution(version: V3 | V2)`: `piritaDownloadUrl`,
// `piritaSha256Hash`), the query @wasmer/sdk itself makes for a package, asked for one version.

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isPolyboxError, PolyboxError } from "../errors.js";
import { sha256Hex, storeCacheFile } from "./cache-file.js";
import { type Downloaded, type DownloadLabel, DownloadPolicy } from "./download-policy.js";

/** The public Wasmer registry's GraphQL endpoint. */
export const WASMER_REGISTRY = "https://registry.wasmer.io/graphql";
/** Where the public registry's package files are served from. */
export const WASMER_CDN_HOSTS = ["cdn.wasmer.io"] as const;

/** How long one request (the query or the download) may take before it is abandoned. */
const REQUEST_TIMEOUT_MS = 5 * 60_000;
/** The largest package accepted (the registry's language runtimes are tens of MiB). */
export const MAX_WASMER_PACKAGE_BYTES = 512 * 1024 * 1024;
/** The largest registry answer read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface WasmerPackageOptions {
  /** The registry's GraphQL endpoint (default: the public registry). */
  registry?: string | undefined;
  /**
   * Hosts package files may be downloaded from besides the registry's own (default: the public
   * registry's CDN when the registry is the public one, none otherwise).
   */
  downloadHosts?: readonly string[] | undefined;
  cacheDir: string;
  /** Refuse every request to the registry: the package cache only. */
  cachedOnly?: boolean | undefined;
  /**
   * Whether the registry (and the download hosts granted with it) may be on a private or
   * loopback network; only the registry's own host and port are trusted there.
   */
  allowPrivateIndex?: boolean | undefined;
  /** Called before each request to the registry's hosts (what was asked, for tests and logs). */
  onRequest?: ((url: string) => void) | undefined;
}

export interface WasmerPackageSpec {
  /** `namespace/name`. */
  name: string;
  version: string;
}

export interface WasmerPackage extends WasmerPackageSpec {
  sha256: string;
  data: Uint8Array;
}

interface Pin extends WasmerPackageSpec {
  /** The registry (its normalised URL) whose answer this pin records. */
  registry: string;
  sha256: string;
  /** Where the bytes were downloaded from. */
  url: string;
}

const SEGMENT = /^[a-z0-9][a-z0-9_.-]{0,99}$/i;
/** An exact version (semver, optionally with pre-release and build parts). */
const VERSION = /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:[-+][0-9A-Za-z.+-]{1,100})?$/;

/** `namespace/name@version` (an exact version: what runs is pinned), or an INVALID_ARGUMENT. */
export function parseWasmerPackage(spec: unknown): WasmerPackageSpec {
  const text = typeof spec === "string" ? spec : "";
  const at = text.lastIndexOf("@");
  const name = at > 0 ? text.slice(0, at) : text;
  const version = at > 0 ? text.slice(at + 1) : "";
  const parts = name.split("/");
  if (
    parts.length !== 2 ||
    !parts.every((p) => SEGMENT.test(p)) ||
    !VERSION.test(version.replace(/^=/, ""))
  )
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `wasmerPackage must name a Wasmer registry package as namespace/name@version with an exact version (e.g. "sharrattj/coreutils@1.0.16"), got ${JSON.stringify(typeof spec === "string" ? spec.slice(0, 200) : spec)}`,
      { details: { limit: "wasmerPackage" } },
    );
  return { name, version: version.replace(/^=/, "") };
}

/** A host as the grant compares it: lower case, IPv6 without brackets. */
const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[|\]$/g, "");

function httpUrl(value: string, what: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // Reported below.
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `${what} must be an http(s) URL, got ${JSON.stringify(value)}`,
      {
        details: { limit: what, value },
      },
    );
  return url;
}

export class WasmerPackageResolver {
  /** The registry's URL as the URL parser normalises it (scheme and host case, default port). */
  readonly registry: string;
  /** The cache's directory name for this registry's pins: the start of its URL's sha256. */
  private readonly registryKey: string;
  private readonly grantedHosts: ReadonlySet<string>;
  /** Where requests may connect: public addresses, and the registry's own with the opt-in. */
  private readonly policy: DownloadPolicy;

  constructor(private readonly options: WasmerPackageOptions) {
    const registry = httpUrl(options.registry ?? WASMER_REGISTRY, "wasmerRegistry");
    registry.hash = "";
    this.registry = registry.href;
    this.registryKey = sha256Hex(new TextEncoder().encode(this.registry)).slice(0, 32);
    const extra =
      options.downloadHosts ?? (this.registry === WASMER_REGISTRY ? WASMER_CDN_HOSTS : []);
    this.grantedHosts = new Set([
      hostOf(new URL(this.registry)),
      ...extra.map((h) => h.toLowerCase().replace(/^\[|\]$/g, "")),
    ]);
    this.policy = new DownloadPolicy({
      origins: [this.registry],
      hosts: extra,
      allowPrivate: options.allowPrivateIndex,
    });
  }

  /** Hosts package files may come from: the registry's and the download hosts granted with it. */
  get hosts(): string[] {
    return [...this.grantedHosts];
  }

  /** Whether fetching a package may reach the network (MCP's openWorldHint). */
  mayUseNetwork(): boolean {
    return this.options.cachedOnly !== true;
  }

  /**
   * The per-user cache: `pins/<registry key>/<namespace>/<name>/<version>.json` and
   * `blobs/<sha256>.webc` (bytes named by their hash, the same whichever registry vouched for them).
   */
  get cacheDir(): string {
    return path.join(this.options.cacheDir, "wasmer");
  }

  private pinFile(spec: WasmerPackageSpec): string {
    const [namespace, name] = spec.name.split("/") as [string, string];
    return path.join(
      this.cacheDir,
      "pins",
      this.registryKey,
      namespace,
      name,
      `${spec.version}.json`,
    );
  }

  private blobFile(hash: string): string {
    return path.join(this.cacheDir, "blobs", `${hash}.webc`);
  }

  /** The package's bytes: from the cache when pinned there, else from the registry (then pinned). */
  async fetch(spec: WasmerPackageSpec): Promise<WasmerPackage> {
    const cached = await this.fromCache(spec);
    if (cached) return cached;
    const label = `${spec.name}@${spec.version}`;
    if (this.options.cachedOnly)
      throw new PolyboxError(
        "PACKAGE_NOT_CACHED",
        `Wasmer package "${label}" is not in the package cache (${this.cacheDir}) and downloads are off (cachedOnly); run it once while online to fill the cache, or turn cachedOnly off`,
        { details: { limit: "cachedOnly", package: label } },
      );
    const { url, hash } = await this.lookUp(spec);
    const data = await this.download(url, label);
    const actual = sha256Hex(data);
    if (actual !== hash)
      throw new PolyboxError(
        "PACKAGE_HASH_MISMATCH",
        `refusing Wasmer package "${label}": ${url.href} served bytes with sha256 ${actual}, but the registry gives ${hash}`,
        { details: { package: label } },
      );
    await storeCacheFile(this.blobFile(hash), data);
    const pin: Pin = { ...spec, registry: this.registry, sha256: hash, url: url.href };
    await storeCacheFile(this.pinFile(spec), new TextEncoder().encode(`${JSON.stringify(pin)}\n`));
    return { ...spec, sha256: hash, data };
  }

  /** A pinned package whose cached bytes still have the pinned hash; null otherwise. */
  private async fromCache(spec: WasmerPackageSpec): Promise<WasmerPackage | null> {
    const pinFile = this.pinFile(spec);
    if (!existsSync(pinFile)) return null;
    let pin: Pin;
    try {
      pin = JSON.parse(await readFile(pinFile, "utf8")) as Pin;
    } catch {
      return null;
    }
    // A pin is used only for the registry, name and version it records.
    if (
      pin?.registry !== this.registry ||
      pin.name !== spec.name ||
      pin.version !== spec.version ||
      typeof pin.sha256 !== "string" ||
      !/^[0-9a-f]{64}$/.test(pin.sha256)
    )
      return null;
    const blob = this.blobFile(pin.sha256);
    if (!existsSync(blob)) return null;
    const data = new Uint8Array(await readFile(blob));
    // A cache file changed on disk is not the pinned package: fetched again (or refused).
    if (sha256Hex(data) !== pin.sha256) return null;
    return { ...spec, sha256: pin.sha256, data };
  }

  /** Asks the registry for the version's WEBC file: its URL (on a granted host) and sha256. */
  private async lookUp(spec: WasmerPackageSpec): Promise<{ url: URL; hash: string }> {
    const label = `${spec.name}@${spec.version}`;
    const query = `query ($name: String!, $version: String!) {
  getPackageVersion(name: $name, version: $version) {
    version
    v3: distribution(version: V3) { piritaDownloadUrl piritaSha256Hash }
    v2: distribution(version: V2) { piritaDownloadUrl piritaSha256Hash }
  }
}`;
    const unavailable = (why: string, cause?: unknown) =>
      new PolyboxError(
        "PACKAGE_REGISTRY_UNAVAILABLE",
        `could not look up Wasmer package "${label}" at ${this.registry}: ${why}`,
        { ...(cause === undefined ? {} : { cause }), details: { package: label } },
      );
    this.options.onRequest?.(this.registry);
    let response: Downloaded;
    try {
      response = await this.policy.fetch(this.registry, wasmerLabel(label), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query, variables: { name: spec.name, version: spec.version } }),
        redirects: "refuse",
        maxBytes: MAX_ANSWER_BYTES,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      if (isPolyboxError(error)) throw error;
      throw unavailable(String(error), error);
    }
    if (response.status < 200 || response.status > 299)
      throw unavailable(`HTTP ${response.status}`);
    const text = response.body;
    let answer: unknown;
    try {
      answer = JSON.parse(new TextDecoder().decode(text));
    } catch {
      throw unavailable("the answer is not JSON");
    }
    const version = (answer as { data?: { getPackageVersion?: unknown } } | null)?.data
      ?.getPackageVersion;
    const notFound = () =>
      new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `Wasmer package "${label}" was not found at ${this.registry}`,
        { details: { limit: "wasmerPackage", package: label } },
      );
    if (version === null || version === undefined) {
      // GraphQL reports an unknown package as an error with null data, or as null.
      if ((answer as { errors?: unknown } | null)?.errors || version === null) throw notFound();
      throw unavailable("the answer has no getPackageVersion");
    }
    const pick = (d: unknown) => {
      const dist = d as { piritaDownloadUrl?: unknown; piritaSha256Hash?: unknown } | null;
      return typeof dist?.piritaDownloadUrl === "string" &&
        dist.piritaDownloadUrl !== "" &&
        typeof dist.piritaSha256Hash === "string"
        ? { url: dist.piritaDownloadUrl, hash: dist.piritaSha256Hash.toLowerCase() }
        : null;
    };
    const v = version as { v3?: unknown; v2?: unknown };
    const dist = pick(v.v3) ?? pick(v.v2);
    if (!dist) throw notFound();
    if (!/^[0-9a-f]{64}$/.test(dist.hash))
      throw unavailable(
        `the sha256 it gives is not one (${JSON.stringify(dist.hash.slice(0, 80))})`,
      );
    let url: URL;
    try {
      url = new URL(dist.url, this.registry);
    } catch {
      throw unavailable(`the download URL it gives is not one`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:")
      throw unavailable(`the download URL is not http(s): ${url.protocol}`);
    if (!this.grantedHosts.has(hostOf(url)))
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `refusing to download Wasmer package "${label}" from ${url.host}: packages come only from the registry's host and the download hosts granted with it (${this.hosts.join(", ")})`,
        { details: { limit: "wasmerDownloadHosts", hosts: [hostOf(url)], package: label } },
      );
    return { url, hash: dist.hash };
  }

  private async download(url: URL, label: string): Promise<Uint8Array> {
    this.options.onRequest?.(url.href);
    const failed = (why: string, cause?: unknown) =>
      new PolyboxError(
        "PACKAGE_REGISTRY_UNAVAILABLE",
        `could not download Wasmer package "${label}" from ${url.href}: ${why}`,
        { ...(cause === undefined ? {} : { cause }), details: { package: label } },
      );
    let response: Downloaded;
    try {
      // No redirects: a redirect could leave the granted hosts.
      response = await this.policy.fetch(url, wasmerLabel(label), {
        redirects: "refuse",
        maxBytes: MAX_WASMER_PACKAGE_BYTES,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      if (isPolyboxError(error)) throw error;
      throw failed(String(error), error);
    }
    if (response.status < 200 || response.status > 299) throw failed(`HTTP ${response.status}`);
    return response.body;
  }
}

/** A Wasmer package as the download policy's messages and errors name it. */
function wasmerLabel(label: string): DownloadLabel {
  return { what: `Wasmer package "${label}"`, package: label };
}

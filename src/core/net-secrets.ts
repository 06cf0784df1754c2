// Secrets a guest can use but never read (`--net-secret`, `net.secrets`, a sandbox's `secrets`).
// The guest's environment holds a placeholder, POLYBOX_SECRET_<NAME>_<random>; the trusted side
// puts the value in place of the placeholder only in requests to the hosts the secret belongs
// to, hop by hop, after each hop's host check, and takes it out again (the placeholder back) of
// those hosts' answers. A request that carries a placeholder anywhere else is refused. The value
// lives here and in the request being sent, nowhere else: not in a guest's memory, a workspace
// file, a snapshot, a log, a result.
//
// Every scan is a substring search per secret over text or bytes the run already bounds
// (headers, URL, body: maxBytesOut; answers: maxResponseBytes), so linear in what is scanned.

import { randomBytes } from "node:crypto";
import { PolyboxError } from "./errors.js";

/** Where in a request the value is put in place of its placeholder. */
export type SecretPlace = "headers" | "url" | "body";
const PLACES: readonly SecretPlace[] = ["headers", "url", "body"];

export interface NetSecret {
  /** The environment variable the guest sees, holding the placeholder: `[A-Za-z_][A-Za-z0-9_]*`. */
  name: string;
  /** The value sent in its place. */
  value: string;
  /** The hosts it is sent to, as grants name them: `host` or `host:port`. */
  hosts: string[];
  /** Where it is put in (default: headers only); the URL means its path and query. */
  in?: SecretPlace[];
}

/** Secrets per runtime or sandbox: enough for any set of API keys, few enough to scan cheaply. */
export const MAX_SECRETS = 32;
/** A value longer than this is not a credential. */
const MAX_VALUE_BYTES = 16 * 1024;
/**
 * A value shorter than this would be found by chance in answers (which are scrubbed of it) and
 * guessed from a few tries.
 */
const MIN_VALUE_BYTES = 8;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

interface Entry {
  readonly name: string;
  readonly value: string;
  readonly valueBytes: Buffer;
  readonly placeholder: string;
  readonly placeholderBytes: Buffer;
  readonly hosts: readonly string[];
  readonly places: ReadonlySet<SecretPlace>;
}

/** A placeholder was headed for a host its secret does not go to; the message names no value. */
export class SecretRefusal extends Error {}

/** A request's parts, as the guest wrote them or with values put in. */
export interface SecretRequest {
  headers: [string, string][];
  /** The URL's path and query. */
  path: string;
  body: Uint8Array | undefined;
}

export class NetSecrets {
  static readonly none = new NetSecrets([]);

  private constructor(private readonly entries: readonly Entry[]) {}

  /**
   * Checks `secrets` and gives each a placeholder of its own. `checkHost` vets a host as a grant
   * names it (it throws for one that is malformed or, for a sandbox, outside the server's grant);
   * `what` names the option in errors.
   */
  static create(
    secrets: readonly NetSecret[],
    what: string,
    checkHost: (host: string) => void,
  ): NetSecrets {
    if (!Array.isArray(secrets))
      throw new PolyboxError("INVALID_ARGUMENT", `${what} must be an array of secrets`);
    if (secrets.length > MAX_SECRETS)
      throw new PolyboxError("INVALID_ARGUMENT", `${what}: at most ${MAX_SECRETS} secrets`);
    const names = new Set<string>();
    const entries = secrets.map((secret, i): Entry => {
      const at = `${what}[${i}]`;
      if (typeof secret !== "object" || secret === null)
        throw new PolyboxError("INVALID_ARGUMENT", `${at} must be an object`);
      const { name, value, hosts } = secret;
      if (typeof name !== "string" || !NAME.test(name))
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `${at}.name must be an environment variable name (letters, digits and _, not starting with a digit, at most 64)`,
        );
      if (names.has(name))
        throw new PolyboxError("INVALID_ARGUMENT", `${what}: ${name} is named twice`);
      names.add(name);
      if (typeof value !== "string")
        throw new PolyboxError("INVALID_ARGUMENT", `${at}.value (${name}) must be a string`);
      const valueBytes = Buffer.from(value);
      if (valueBytes.length < MIN_VALUE_BYTES || valueBytes.length > MAX_VALUE_BYTES)
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `${at}.value (${name}) must be ${MIN_VALUE_BYTES} to ${MAX_VALUE_BYTES} bytes`,
        );
      // A value that could end a header line would let it add headers of its own.
      if (/[\r\n\0]/.test(value))
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `${at}.value (${name}) must not hold CR, LF or NUL`,
        );
      if (!Array.isArray(hosts) || hosts.length === 0 || hosts.length > 64)
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `${at}.hosts (${name}) must name 1 to 64 hosts it is sent to`,
        );
      for (const host of hosts) {
        if (typeof host !== "string" || host.includes("*"))
          throw new PolyboxError(
            "INVALID_ARGUMENT",
            `${at}.hosts (${name}): each must be a host or host:port, without wildcards`,
          );
        checkHost(host);
      }
      const places = secret.in ?? ["headers"];
      if (!Array.isArray(places) || places.some((p) => !PLACES.includes(p)))
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `${at}.in (${name}) lists places among ${PLACES.join(", ")}`,
        );
      const placeholder = `POLYBOX_SECRET_${name.toUpperCase()}_${randomBytes(16).toString("hex")}`;
      return {
        name,
        value,
        valueBytes,
        placeholder,
        placeholderBytes: Buffer.from(placeholder),
        hosts: [...hosts],
        places: new Set(places),
      };
    });
    return new NetSecrets(entries);
  }

  /** These and `more`; one of `more` replaces one of these with the same name. */
  with(more: NetSecrets): NetSecrets {
    if (more.entries.length === 0) return this;
    const replaced = new Set(more.entries.map((e) => e.name));
    return new NetSecrets([...this.entries.filter((e) => !replaced.has(e.name)), ...more.entries]);
  }

  get size(): number {
    return this.entries.length;
  }

  /** What the guest's environment holds: each name with its placeholder. */
  env(): Record<string, string> {
    return Object.fromEntries(this.entries.map((e) => [e.name, e.placeholder]));
  }

  /** Names and hosts, for status answers and logs; never a value. */
  describe(): { name: string; hosts: string[] }[] {
    return this.entries.map((e) => ({ name: e.name, hosts: [...e.hosts] }));
  }

  /** Whether some secret goes to the host `goesTo` accepts (given each secret's host grants). */
  anyFor(goesTo: (grant: string) => boolean): boolean {
    return this.entries.some((e) => e.hosts.some(goesTo));
  }

  /**
   * One hop's request with each placeholder of a secret that goes to this host replaced by its
   * value, in the places that secret allows. Throws SecretRefusal if the request carries (in any
   * place) the placeholder of a secret that does not go to this host. `used` says whether any
   * value went in: that hop's answer is to be scrubbed.
   */
  fill(
    goesTo: (grant: string) => boolean,
    request: SecretRequest,
    hostName: string,
  ): SecretRequest & { used: boolean } {
    let { headers, path, body } = request;
    let used = false;
    for (const e of this.entries) {
      const inHeaders = headers.some(
        ([k, v]) => k.includes(e.placeholder) || v.includes(e.placeholder),
      );
      const inPath = path.includes(e.placeholder);
      const inBody =
        body !== undefined &&
        Buffer.from(body.buffer, body.byteOffset, body.byteLength).includes(e.placeholderBytes);
      if (!inHeaders && !inPath && !inBody) continue;
      if (!e.hosts.some(goesTo))
        throw new SecretRefusal(
          `the request to ${hostName} carries the placeholder of secret ${e.name}, which is sent only to ${e.hosts.join(", ")}: refused`,
        );
      if (inHeaders && e.places.has("headers")) {
        headers = headers.map(([k, v]) => [k, v.split(e.placeholder).join(e.value)]);
        used = true;
      }
      if (inPath && e.places.has("url")) {
        path = path.split(e.placeholder).join(encodeURIComponent(e.value));
        used = true;
      }
      if (inBody && body !== undefined && e.places.has("body")) {
        body = replaceBytes(body, e.placeholderBytes, e.valueBytes);
        used = true;
      }
    }
    return { headers, path, body, used };
  }

  /** `text` with each value (and its URL-encoded form) replaced by its placeholder. */
  scrubText(text: string): string {
    let out = text;
    for (const e of this.entries) {
      if (out.includes(e.value)) out = out.split(e.value).join(e.placeholder);
      const encoded = encodeURIComponent(e.value);
      if (encoded !== e.value && out.includes(encoded))
        out = out.split(encoded).join(e.placeholder);
    }
    return out;
  }

  /** `bytes` with each value replaced by its placeholder (the same array if none is there). */
  scrubBytes(bytes: Uint8Array): Uint8Array {
    let out = bytes;
    for (const e of this.entries) out = replaceBytes(out, e.valueBytes, e.placeholderBytes);
    return out;
  }
}

/** `bytes` with every `from` replaced by `to`, in one pass; the same array if `from` is absent. */
function replaceBytes(bytes: Uint8Array, from: Buffer, to: Buffer): Uint8Array {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = source.indexOf(from);
  if (at < 0) return bytes;
  const parts: Buffer[] = [];
  let start = 0;
  while (at >= 0) {
    parts.push(source.subarray(start, at), to);
    start = at + from.length;
    at = source.indexOf(from, start);
  }
  parts.push(source.subarray(start));
  const out = Buffer.concat(parts);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

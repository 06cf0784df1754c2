// Cluster: what makes a message between cluster members believable when Redis and the network in
// between are not. The cluster secret never leaves the process that was given it: two keys are
// derived from it (HKDF-SHA256), one that signs what nodes write into Redis (their records, their
// sandboxes' entries, the tool catalogue) and one that signs what routers send nodes (routed calls
// over HTTP, runs through the queues). A Redis writer without the secret can delete or reorder
// these but cannot make one a member would accept (docs/security.md, "Cluster").
//
// A signature is an HMAC-SHA256 over a canonical serialization: the JSON text of an array whose
// first element names the kind of message (so one kind can never pass for another) and whose
// other elements are the message's fields in a fixed order.

import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

export interface ClusterKeys {
  /** Signs what nodes write into Redis: records, sandbox entries, the catalogue, run answers. */
  readonly records: Buffer;
  /** Signs what routers send nodes (routed calls, queued runs) and their job references. */
  readonly requests: Buffer;
}

const SALT = "polybox cluster v1";

export function clusterKeys(secret: string): ClusterKeys {
  const derive = (info: string) =>
    Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), SALT, info, 32));
  return { records: derive("node records"), requests: derive("router requests") };
}

/** What one kind of signed message is called inside its signature (never shared by two kinds). */
export type SignedKind =
  | "node-record"
  | "sandbox-entry"
  | "catalogue"
  | "request"
  | "run-job"
  | "job-ref"
  | "run-answer"
  | "run-logs";

export function sign(key: Buffer, kind: SignedKind, fields: readonly unknown[]): string {
  return createHmac("sha256", key)
    .update(JSON.stringify([`polybox/${kind}/1`, ...fields]))
    .digest("base64url");
}

/** Whether `signature` is `sign(key, kind, fields)`; compared in constant time. */
export function verify(
  key: Buffer,
  kind: SignedKind,
  fields: readonly unknown[],
  signature: unknown,
): boolean {
  if (typeof signature !== "string" || signature.length > 64) return false;
  const expected = Buffer.from(sign(key, kind, fields), "base64url");
  const presented = Buffer.from(signature, "base64url");
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

export function sha256Hex(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The headers a signed router→node request carries. */
export const REQUEST_HEADERS = {
  time: "x-polybox-cluster-time",
  nonce: "x-polybox-cluster-nonce",
  body: "x-polybox-cluster-body-sha256",
  signature: "x-polybox-cluster-signature",
} as const;

/**
 * How far a request's timestamp may be from the node's clock, either way. Members' clocks must
 * agree to within this (NTP does far better); a request older than this is refused, so a nonce
 * need be remembered no longer than twice this.
 */
export const REQUEST_WINDOW_MS = 60_000;

/**
 * What a request's signature covers: the node it is for (so it cannot be replayed to another),
 * method, path, time, nonce and the body's SHA-256 (the body holds the caller: owner and scope).
 */
function requestFields(
  nodeId: string,
  method: string,
  path: string,
  time: string,
  nonce: string,
  bodyDigest: string,
): unknown[] {
  return [nodeId, method.toUpperCase(), path, time, nonce, bodyDigest];
}

/** The headers that sign `body` for node `nodeId`; a fresh nonce each call. */
export function signRequest(
  key: Buffer,
  nodeId: string,
  method: string,
  path: string,
  body: string,
  now = Date.now(),
): Record<string, string> {
  const time = String(now);
  const nonce = randomBytes(16).toString("base64url");
  const bodyDigest = sha256Hex(body);
  return {
    [REQUEST_HEADERS.time]: time,
    [REQUEST_HEADERS.nonce]: nonce,
    [REQUEST_HEADERS.body]: bodyDigest,
    [REQUEST_HEADERS.signature]: sign(
      key,
      "request",
      requestFields(nodeId, method, path, time, nonce, bodyDigest),
    ),
  };
}

/** A request whose headers passed: its body must still hash to `bodyDigest`. */
export interface CheckedRequest {
  bodyDigest: string;
  nonce: string;
  time: number;
}

/**
 * Checks a request's signed headers before its body is read: present, well formed, in the time
 * window, signed for this node, and its nonce not seen before (it is remembered if so). Answers
 * the checked request, or why it is refused.
 */
export function checkRequest(
  key: Buffer,
  nodeId: string,
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  nonces: NonceCache,
  now = Date.now(),
): CheckedRequest | { refused: string } {
  const get = (name: string) => {
    const v = headers[name];
    return typeof v === "string" ? v : undefined;
  };
  const time = get(REQUEST_HEADERS.time);
  const nonce = get(REQUEST_HEADERS.nonce);
  const bodyDigest = get(REQUEST_HEADERS.body);
  const signature = get(REQUEST_HEADERS.signature);
  if (
    time === undefined ||
    !/^\d{1,16}$/.test(time) ||
    nonce === undefined ||
    !/^[A-Za-z0-9_-]{16,64}$/.test(nonce) ||
    bodyDigest === undefined ||
    !/^[0-9a-f]{64}$/.test(bodyDigest) ||
    signature === undefined
  )
    return { refused: "unsigned: not a request from a router of this cluster" };
  if (
    !verify(key, "request", requestFields(nodeId, method, path, time, nonce, bodyDigest), signature)
  )
    return { refused: "bad signature: not a request from a router of this cluster" };
  const at = Number(time);
  if (Math.abs(now - at) > REQUEST_WINDOW_MS)
    return {
      refused: `stale: signed ${Math.round((now - at) / 1000)} s from this node's clock (at most ${REQUEST_WINDOW_MS / 1000} s either way)`,
    };
  const seen = nonces.claim(nonce, at + REQUEST_WINDOW_MS, now);
  if (seen === "seen") return { refused: "replayed: this request's nonce was used before" };
  if (seen === "full") return { refused: "busy: too many requests in the replay window" };
  return { bodyDigest, nonce, time: at };
}

/**
 * Nonces seen within the window, each until its request could no longer pass the time check.
 * Bounded: when full of live nonces it refuses new ones rather than forget one (forgetting would
 * let that request be replayed).
 */
export class NonceCache {
  private readonly until = new Map<string, number>();
  private sweptAt = 0;

  constructor(readonly max = 200_000) {}

  get size(): number {
    return this.until.size;
  }

  claim(nonce: string, expiresAt: number, now = Date.now()): "new" | "seen" | "full" {
    const known = this.until.get(nonce);
    if (known !== undefined && known >= now) return "seen";
    // Nonces arrive roughly in the order they expire: drop the expired ones at the front.
    for (const [old, until] of this.until) {
      if (until >= now) break;
      this.until.delete(old);
    }
    if (this.until.size >= this.max && now - this.sweptAt >= 1000) {
      this.sweptAt = now;
      for (const [old, until] of this.until) if (until < now) this.until.delete(old);
    }
    if (this.until.size >= this.max) return "full";
    this.until.set(nonce, expiresAt);
    return "new";
  }
}

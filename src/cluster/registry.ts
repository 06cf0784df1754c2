// Cluster: the shared state in Redis that nodes and routers agree on. Redis is the registry, not
// us: a node's record is a key with a TTL that its heartbeat refreshes, so a node that stops
// heartbeating drops out by itself; the sandbox→node catalogue is one key per sandbox. Redis is
// not trusted with routing: every record, sandbox entry and the tool catalogue is signed with a key
// derived from the cluster secret (auth.ts), and a reader uses only what verifies. What fails is
// treated as absent and said in the log once; a Redis writer can delete or replay, never forge
// (docs/security.md, "Cluster").

import { randomUUID } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { z } from "zod";
import { type LogFn, PolyboxError, silentLog } from "../index.js";
import { type ClusterKeys, REQUEST_WINDOW_MS, sign, verify } from "./auth.js";
import { type RunJobData, runJobFields } from "./wire.js";

/** Node ids appear in keys and queue names: letters, digits, dot, dash, underscore. */
export const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** What a node says about itself; the router picks nodes and addresses by it. */
export interface NodeRecord {
  id: string;
  /** Base URL routers reach the node's HTTP server at, e.g. http://10.0.0.5:8765. */
  address: string;
  /** Sandboxes it may hold. */
  capacity: number;
  /** Sandboxes open plus runs in progress. */
  load: number;
  /** Runs it took from the queues since it started. */
  runs: number;
  /** Draining: it takes no new sandboxes and no new runs. */
  draining: boolean;
  startedAt: number;
  heartbeatAt: number;
  /** How long the record lives without a heartbeat: past it (and the clock window) it is stale. */
  ttlMs: number;
}

/** A record as Redis holds it: its fields and their signature. */
const storedRecord = z.object({
  id: z.string().regex(NODE_ID),
  address: z.string().regex(/^https?:\/\/[^\s]{1,2000}$/),
  capacity: z.number().int().nonnegative(),
  load: z.number().int().nonnegative(),
  runs: z.number().int().nonnegative(),
  draining: z.boolean(),
  startedAt: z.number().int().nonnegative(),
  heartbeatAt: z.number().int().nonnegative(),
  ttlMs: z.number().int().positive(),
  sig: z.string().max(64),
});

/** Every field a router acts on, in a fixed order: what a record's signature covers. */
function recordFields(r: NodeRecord): unknown[] {
  return [
    r.id,
    r.address,
    r.capacity,
    r.load,
    r.runs,
    r.draining,
    r.startedAt,
    r.heartbeatAt,
    r.ttlMs,
  ];
}

/** A run's answer in BullMQ: its JSON text, signed by the node that ran it. */
export interface SealedAnswer {
  answer: string;
  sig: string;
}

/** What reading a node's record found. */
export type NodeLookup =
  | { state: "live"; record: NodeRecord }
  | { state: "absent" }
  /** Present but not usable: not signed with this cluster's key, or replayed after its time. */
  | { state: "refused"; why: string };

/** What reading a sandbox's entry found. */
export type SandboxLookup =
  | { state: "found"; nodeId: string }
  | { state: "absent" }
  | { state: "refused"; why: string };

/** The tools and instructions a node serves: a router answers tools/list with them. */
export interface Catalogue {
  instructions: string;
  version: string;
  tools: unknown[];
}

const PREFIX = "polybox:";
/** @internal Exported for tests that write into Redis what an attacker would. */
export const key = {
  node: (id: string) => `${PREFIX}node:${id}`,
  /** id → the last heartbeat time, kept after the node's record expires (for SANDBOX_LOST). */
  seen: `${PREFIX}nodes:seen`,
  sandbox: (id: string) => `${PREFIX}sandbox:${id}`,
  job: (id: string) => `${PREFIX}job:${id}`,
  logs: (id: string) => `${PREFIX}job-logs:${id}`,
  catalogue: `${PREFIX}catalogue`,
};
/** Pub/sub channel: a job id to cancel, whichever node runs it. */
export const CANCEL_CHANNEL = `${PREFIX}cancel`;
/** The queue every node takes one-shot and async runs from. */
export const SHARED_QUEUE = "polybox-runs";
/** A node's own queue: async runs in one of its sandboxes. */
export const nodeQueue = (nodeId: string) => `polybox-runs-node-${nodeId}`;
/** How long a sandbox's catalogue entry outlives its node (so its id answers SANDBOX_LOST). */
const SANDBOX_ENTRY_TTL_S = 7 * 24 * 3600;
/** How long a closed sandbox's entry stays (its node remembers why it closed). */
const CLOSED_SANDBOX_ENTRY_TTL_S = 3600;
/** Largest logs a running routed job keeps in Redis per stream. */
export const MAX_LOG_BYTES = 256 * 1024;

export function newNodeId(): string {
  return `node-${randomUUID().slice(0, 8)}`;
}

/** `redis://[:password@]host:port[/db]` as ioredis options; BullMQ needs no retry limit. */
export function redisOptions(url: string): RedisOptions {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the cluster address must be redis://HOST:PORT[/DB], got ${JSON.stringify(url)}`,
    );
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the cluster address must be redis://HOST:PORT[/DB], got ${JSON.stringify(url)}`,
    );
  }
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db)) {
    throw new PolyboxError("INVALID_ARGUMENT", `the Redis database must be a number, got "${db}"`);
  }
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port === "" ? 6379 : Number(u.port),
    ...(db !== "" ? { db: Number(db) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === "rediss:" ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    lazyConnect: false,
  };
}

/** Where the job of a routed async run lives and whose it is. */
export interface JobRef {
  queue: string;
  owner: string;
  tool: string;
  language: string;
  sandboxId: string | null;
  createdAt: number;
  /** Set when it was cancelled before any node took it (the job itself is then gone). */
  cancelledAt?: number;
}

/** How long closing a registry waits for Redis to acknowledge before it drops the connection. */
export const CLOSE_MS = 3000;
/** Distinct refused entries said in the log before the list of those said is started over. */
const MAX_LOGGED = 1024;

export class Registry {
  readonly redis: Redis;
  private readonly logged = new Set<string>();

  constructor(
    readonly options: RedisOptions,
    private readonly keys: ClusterKeys,
    private readonly log: LogFn = silentLog,
  ) {
    this.redis = new Redis(options);
    // ioredis reconnects by itself; an error event without a listener would crash the process.
    this.redis.on("error", () => {});
  }

  async heartbeat(record: NodeRecord, ttlMs: number): Promise<void> {
    const stored = { ...record, sig: sign(this.keys.records, "node-record", recordFields(record)) };
    await this.redis
      .multi()
      .set(key.node(record.id), JSON.stringify(stored), "PX", ttlMs)
      .hset(key.seen, record.id, String(record.heartbeatAt))
      .exec();
  }

  async leave(id: string): Promise<void> {
    await this.redis.multi().del(key.node(id)).hdel(key.seen, id).exec();
  }

  /** The live nodes whose records verify, and how many present records did not. */
  async nodes(): Promise<{ live: NodeRecord[]; refused: number }> {
    const ids = await this.redis.hkeys(key.seen);
    if (ids.length === 0) return { live: [], refused: 0 };
    const values = await this.redis.mget(ids.map(key.node));
    const live: NodeRecord[] = [];
    let refused = 0;
    values.forEach((v, i) => {
      const found = this.checkRecord(ids[i]!, v);
      if (found.state === "live") live.push(found.record);
      else if (found.state === "refused") refused++;
    });
    return { live, refused };
  }

  async node(id: string): Promise<NodeLookup> {
    return this.checkRecord(id, await this.redis.get(key.node(id)));
  }

  /** A record as read from Redis, used only if its signature and its time hold. */
  private checkRecord(id: string, value: string | null, now = Date.now()): NodeLookup {
    if (value === null) return { state: "absent" };
    let parsed: ReturnType<typeof storedRecord.safeParse>;
    try {
      parsed = storedRecord.safeParse(JSON.parse(value));
    } catch {
      return this.refuse(`node ${id}`, value, "it is not JSON");
    }
    if (!parsed.success) return this.refuse(`node ${id}`, value, "it is not a node record");
    const { sig, ...record } = parsed.data;
    if (record.id !== id)
      return this.refuse(`node ${id}`, value, `it names another node (${record.id})`);
    if (!verify(this.keys.records, "node-record", recordFields(record), sig))
      return this.refuse(`node ${id}`, value, "its signature does not match its fields");
    // A node rewrites its record every third of its TTL; an older one was put back by someone.
    if (now - record.heartbeatAt > record.ttlMs + REQUEST_WINDOW_MS)
      return this.refuse(`node ${id}`, value, "it is an old record written back");
    return { state: "live", record };
  }

  private refuse(what: string, value: string, why: string): { state: "refused"; why: string } {
    const said = `${what}\n${value}`;
    if (!this.logged.has(said)) {
      if (this.logged.size >= MAX_LOGGED) this.logged.clear();
      this.logged.add(said);
      this.log(
        "warn",
        `cluster: ignoring the Redis entry of ${what}: ${why}; it was not written by a member of this cluster (or the cluster secrets differ)`,
        value.slice(0, 500),
      );
    }
    return { state: "refused", why };
  }

  /** When a node last heartbeated, live or not; null if it never did (or left cleanly). */
  async lastSeen(id: string): Promise<number | null> {
    const v = await this.redis.hget(key.seen, id);
    return v === null || !/^\d{1,16}$/.test(v) ? null : Number(v);
  }

  async recordSandbox(sandboxId: string, nodeId: string): Promise<void> {
    const entry = {
      node: nodeId,
      sig: sign(this.keys.records, "sandbox-entry", [sandboxId, nodeId]),
    };
    await this.redis.set(key.sandbox(sandboxId), JSON.stringify(entry), "EX", SANDBOX_ENTRY_TTL_S);
  }

  /**
   * A closed sandbox's entry stays a while, so a call for it still reaches its node, which tells
   * why it is gone (closed, expired) rather than that it never existed.
   */
  async forgetSandbox(sandboxId: string): Promise<void> {
    await this.redis.expire(key.sandbox(sandboxId), CLOSED_SANDBOX_ENTRY_TTL_S);
  }

  /** The node a sandbox is on, if a node of this cluster wrote that entry for this very sandbox. */
  async ownerOf(sandboxId: string): Promise<SandboxLookup> {
    const v = await this.redis.get(key.sandbox(sandboxId));
    if (v === null) return { state: "absent" };
    let entry: { node?: unknown; sig?: unknown } | null = null;
    try {
      entry = JSON.parse(v) as { node?: unknown; sig?: unknown };
    } catch {
      entry = null;
    }
    const node = entry?.node;
    if (
      typeof node !== "string" ||
      !NODE_ID.test(node) ||
      !verify(this.keys.records, "sandbox-entry", [sandboxId, node], entry?.sig)
    )
      return this.refuse(`sandbox ${sandboxId}`, v, "its signature does not match");
    return { state: "found", nodeId: node };
  }

  async publishCatalogue(catalogue: Catalogue): Promise<void> {
    const text = JSON.stringify(catalogue);
    await this.redis.set(
      key.catalogue,
      JSON.stringify({ catalogue: text, sig: sign(this.keys.records, "catalogue", [text]) }),
    );
  }

  /** The tool list a node published; what fails its signature is as if none were published. */
  async catalogue(): Promise<Catalogue | null> {
    const v = await this.redis.get(key.catalogue);
    if (v === null) return null;
    try {
      const { catalogue, sig } = JSON.parse(v) as { catalogue?: unknown; sig?: unknown };
      if (typeof catalogue === "string" && verify(this.keys.records, "catalogue", [catalogue], sig))
        return JSON.parse(catalogue) as Catalogue;
    } catch {
      // Refused below, as a forged one is.
    }
    this.refuse("the tool catalogue", v, "its signature does not match");
    return null;
  }

  async recordJob(id: string, ref: JobRef, ttlMs: number): Promise<void> {
    const text = JSON.stringify(ref);
    const sig = sign(this.keys.requests, "job-ref", [id, text]);
    await this.redis.set(key.job(id), JSON.stringify({ ref: text, sig }), "PX", ttlMs);
  }

  /** Whose a routed job is and where it waits, as a router recorded it (else as if unknown). */
  async job(id: string): Promise<JobRef | null> {
    const v = await this.redis.get(key.job(id));
    if (v === null) return null;
    try {
      const { ref, sig } = JSON.parse(v) as { ref?: unknown; sig?: unknown };
      if (typeof ref === "string" && verify(this.keys.requests, "job-ref", [id, ref], sig))
        return JSON.parse(ref) as JobRef;
    } catch {
      // Refused below.
    }
    this.refuse(`job ${id}`, v, "its signature does not match");
    return null;
  }

  async writeLogs(id: string, logs: { stdout: string; stderr: string }, ttlMs: number) {
    const sig = sign(this.keys.records, "run-logs", [id, logs.stdout, logs.stderr]);
    await this.redis.set(key.logs(id), JSON.stringify({ ...logs, sig }), "PX", ttlMs);
  }

  /** A running job's output so far, as its node wrote it (anything else is as if none were). */
  async logs(id: string): Promise<{ stdout: string; stderr: string } | null> {
    const v = await this.redis.get(key.logs(id));
    if (v === null) return null;
    try {
      const { stdout, stderr, sig } = JSON.parse(v) as Record<string, unknown>;
      if (
        typeof stdout === "string" &&
        typeof stderr === "string" &&
        verify(this.keys.records, "run-logs", [id, stdout, stderr], sig)
      )
        return { stdout, stderr };
    } catch {
      // Refused below.
    }
    this.refuse(`the logs of job ${id}`, v, "their signature does not match");
    return null;
  }

  /** A queued run's data, signed by this router for `queue` under `jobId`. */
  signJob(jobId: string, queue: string, data: RunJobData): RunJobData {
    return { ...data, sig: sign(this.keys.requests, "run-job", runJobFields(jobId, queue, data)) };
  }

  /** Whether a job taken from `queue` is one a router of this cluster queued there as it is. */
  jobSigned(jobId: string, queue: string, data: RunJobData): boolean {
    return verify(this.keys.requests, "run-job", runJobFields(jobId, queue, data), data.sig);
  }

  /** A run's answer as its node returns it to BullMQ: the JSON text and the node's signature. */
  sealAnswer(jobId: string, answer: unknown): SealedAnswer {
    const text = JSON.stringify(answer ?? null);
    return { answer: text, sig: sign(this.keys.records, "run-answer", [jobId, text]) };
  }

  /** A finished job's answer, if a node of this cluster gave it for this job; null if not. */
  openAnswer(jobId: string, value: unknown): { value: unknown } | null {
    const sealed = value as Partial<SealedAnswer> | null | undefined;
    if (
      typeof sealed?.answer === "string" &&
      verify(this.keys.records, "run-answer", [jobId, sealed.answer], sealed.sig)
    )
      return { value: JSON.parse(sealed.answer) };
    this.refuse(`the answer of job ${jobId}`, JSON.stringify(value ?? null), "it is not signed");
    return null;
  }

  /**
   * Quits, and drops the connection if Redis has not answered within `ms`: ioredis queues a
   * command while it reconnects and retries for ever, so a quit to a Redis that is down never
   * returns.
   */
  async close(ms = CLOSE_MS): Promise<void> {
    await settleWithin(this.redis.quit(), ms, () => this.redis.disconnect());
  }
}

/**
 * Waits for `p` at most `ms`; if it has not settled by then (or failed), calls `otherwise`.
 * Answers whether `p` succeeded in time.
 */
export async function settleWithin(
  p: Promise<unknown>,
  ms: number,
  otherwise: () => void,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const ok = await Promise.race([
    p.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  if (!ok) otherwise();
  return ok;
}

/** The tail of a stream that fits in `max` bytes (logs of a running job are its latest output). */
export function tail(text: string, max = MAX_LOG_BYTES): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

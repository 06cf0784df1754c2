// Cluster: the shared state in Redis that nodes and routers agree on. Redis is the registry, not
// us: a node's record is a key with a TTL that its heartbeat refreshes, so a node that stops
// heartbeating drops out by itself; the sandbox→node catalogue is one key per sandbox. What a node
// writes here is trusted only as far as the cluster secret is: anyone who can write to this Redis
// can redirect routed calls, so Redis must be reachable by the cluster alone (docs/security.md).

import { randomUUID } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { PolyboxError } from "../index.js";

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
}

/** The tools and instructions a node serves: a router answers tools/list with them. */
export interface Catalogue {
  instructions: string;
  version: string;
  tools: unknown[];
}

const PREFIX = "polybox:";
const key = {
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

/** Node ids appear in keys and queue names: letters, digits, dot, dash, underscore. */
export const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

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

export class Registry {
  readonly redis: Redis;

  constructor(readonly options: RedisOptions) {
    this.redis = new Redis(options);
    // ioredis reconnects by itself; an error event without a listener would crash the process.
    this.redis.on("error", () => {});
  }

  async heartbeat(record: NodeRecord, ttlMs: number): Promise<void> {
    await this.redis
      .multi()
      .set(key.node(record.id), JSON.stringify(record), "PX", ttlMs)
      .hset(key.seen, record.id, String(record.heartbeatAt))
      .exec();
  }

  async leave(id: string): Promise<void> {
    await this.redis.multi().del(key.node(id)).hdel(key.seen, id).exec();
  }

  /** The live nodes: those whose record has not expired. */
  async nodes(): Promise<NodeRecord[]> {
    const ids = await this.redis.hkeys(key.seen);
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map(key.node));
    return values.flatMap((v) => (v === null ? [] : [JSON.parse(v) as NodeRecord]));
  }

  async node(id: string): Promise<NodeRecord | null> {
    const v = await this.redis.get(key.node(id));
    return v === null ? null : (JSON.parse(v) as NodeRecord);
  }

  /** When a node last heartbeated, live or not; null if it never did (or left cleanly). */
  async lastSeen(id: string): Promise<number | null> {
    const v = await this.redis.hget(key.seen, id);
    return v === null ? null : Number(v);
  }

  async recordSandbox(sandboxId: string, nodeId: string): Promise<void> {
    await this.redis.set(key.sandbox(sandboxId), nodeId, "EX", SANDBOX_ENTRY_TTL_S);
  }

  /**
   * A closed sandbox's entry stays a while, so a call for it still reaches its node, which tells
   * why it is gone (closed, expired) rather than that it never existed.
   */
  async forgetSandbox(sandboxId: string): Promise<void> {
    await this.redis.expire(key.sandbox(sandboxId), CLOSED_SANDBOX_ENTRY_TTL_S);
  }

  async ownerOf(sandboxId: string): Promise<string | null> {
    return this.redis.get(key.sandbox(sandboxId));
  }

  async publishCatalogue(catalogue: Catalogue): Promise<void> {
    await this.redis.set(key.catalogue, JSON.stringify(catalogue));
  }

  async catalogue(): Promise<Catalogue | null> {
    const v = await this.redis.get(key.catalogue);
    return v === null ? null : (JSON.parse(v) as Catalogue);
  }

  async recordJob(id: string, ref: JobRef, ttlMs: number): Promise<void> {
    await this.redis.set(key.job(id), JSON.stringify(ref), "PX", ttlMs);
  }

  async job(id: string): Promise<JobRef | null> {
    const v = await this.redis.get(key.job(id));
    return v === null ? null : (JSON.parse(v) as JobRef);
  }

  async writeLogs(id: string, logs: { stdout: string; stderr: string }, ttlMs: number) {
    await this.redis.set(key.logs(id), JSON.stringify(logs), "PX", ttlMs);
  }

  async logs(id: string): Promise<{ stdout: string; stderr: string } | null> {
    const v = await this.redis.get(key.logs(id));
    return v === null ? null : (JSON.parse(v) as { stdout: string; stderr: string });
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** The tail of a stream that fits in `max` bytes (logs of a running job are its latest output). */
export function tail(text: string, max = MAX_LOG_BYTES): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

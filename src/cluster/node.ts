// Cluster: a polybox server as a cluster node. It registers itself in Redis (address, capacity,
// load) under a key whose TTL its heartbeat refreshes, records each sandbox it opens (both signed,
// see auth.ts), answers calls a router forwards (only signed ones, each once, within the time
// window), and takes one-shot and async runs from BullMQ: the shared queue, and its own queue for
// async runs in its sandboxes; it runs only jobs a router signed, and signs their answers.
// Draining (SIGTERM) it takes nothing new and finishes what it has within a grace period.
//
// A run a node started is marked with the node's id. If the node dies, BullMQ's stalled-job check
// puts its jobs back in the queue once their lock expires; a job that had not started runs on the
// next node that takes it, and one that had started is failed there with the lost node's id and
// last heartbeat, since its effects so far are unknown.

import type { IncomingMessage, ServerResponse } from "node:http";
import { hostname } from "node:os";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type ConnectionOptions, type Job, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import {
  type Caller,
  type LogFn,
  PolyboxError,
  type SandboxEvents,
  type SandboxService,
} from "../index.js";
import { readBoundedBody, sendJson } from "../mcp/http-guard.js";
import { type ClusterKeys, checkRequest, clusterKeys, NonceCache, sha256Hex } from "./auth.js";
import { LocalClients } from "./local.js";
import {
  CANCEL_CHANNEL,
  type Catalogue,
  NODE_ID,
  type NodeRecord,
  nodeQueue,
  Registry,
  redisOptions,
  SHARED_QUEUE,
  tail,
} from "./registry.js";
import {
  type ForwardAnswer,
  forwardSchema,
  LOST_PREFIX,
  lostReason,
  MAX_FORWARD_BYTES,
  NODE_PATH,
  type RunJobData,
} from "./wire.js";

export interface ClusterOptions {
  /** The Redis that holds the cluster: redis://HOST:PORT[/DB]. */
  url: string;
  /**
   * Shared by every node and router, and never sent: keys derived from it sign what members
   * write into Redis and what routers send nodes; anything else is refused.
   */
  secret: string;
  /** This node's id (default: a random one). */
  nodeId?: string;
  /** Its record's lifetime without a heartbeat; also how long a dead node's jobs stay locked (default 10 s). */
  ttlMs?: number;
  /** Where the node says what went wrong while it stops (default: the service's runtime's log). */
  log?: LogFn;
}

export const DEFAULT_TTL_MS = 10_000;
/** How long a routed call may take on the node: past any run's own limit, so that limit decides. */
const CALL_TIMEOUT_MS = 24 * 3600_000;
/** How often a running async job's output is copied to Redis for get_job_logs on any router. */
const LOG_EVERY_MS = 500;
/** How long a routed job's logs and reference are kept after it ends. */
export const JOB_KEEP_MS = 3600_000;
/**
 * How long one Redis call may take while the node stops. ioredis queues a command while it
 * reconnects, and retries for ever: without a bound, a node whose Redis is gone never stops.
 */
const STOP_CALL_MS = 3000;
/** Ids of ended jobs a node remembers, to refuse one put back into a queue. */
const MAX_FINISHED = 100_000;

export class ClusterNode {
  readonly id: string;
  readonly ttlMs: number;
  readonly registry: Registry;
  private readonly keys: ClusterKeys;
  /** Nonces of the routed calls of the last two minutes: a replayed call is refused. */
  private readonly nonces = new NonceCache();
  /** Ids of jobs that ended here, latest last: a job put back into a queue is not run twice. */
  private readonly finished = new Set<string>();
  private readonly open = new Set<string>();
  private readonly running = new Map<string, AbortController>();
  private service: SandboxService | null = null;
  private clients: LocalClients | null = null;
  private workers: Worker[] = [];
  private subscriber: Redis | null = null;
  private heart: NodeJS.Timeout | null = null;
  private address = "";
  private startedAt = Date.now();
  private draining = false;
  private closed = false;
  private slotsFree = 0;
  private runs = 0;
  private readonly slotWaiters: (() => void)[] = [];
  /** Jobs taken from the queues and not yet done with here (waiting for a slot, or running). */
  private taken = 0;
  /** Set once a Redis call made while stopping went unanswered: the rest do without Redis. */
  private redisLost = false;
  /** Where Redis is, for what the node says about it (never the password). */
  private readonly redisAt: string;
  private log: LogFn | undefined;

  constructor(options: ClusterOptions) {
    if (options.secret === "") {
      throw new PolyboxError("INVALID_ARGUMENT", "a cluster needs a cluster secret");
    }
    this.id = options.nodeId ?? defaultNodeId();
    if (!NODE_ID.test(this.id)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `a node id is 1 to 64 letters, digits, dots, dashes or underscores, got ${JSON.stringify(this.id)}`,
      );
    }
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.keys = clusterKeys(options.secret);
    const redis = redisOptions(options.url);
    this.redisAt = `${redis.host}:${redis.port}`;
    this.registry = new Registry(redis, this.keys, (level, message, untrusted) =>
      this.log?.(level, message, untrusted),
    );
    this.log = options.log;
  }

  /** What the service must be told: sandboxes this node opens are recorded before they answer. */
  readonly sandboxEvents: SandboxEvents = {
    opened: async (id) => {
      this.open.add(id);
      await this.registry.recordSandbox(id, this.id);
      this.beat();
    },
    closed: (id) => {
      this.open.delete(id);
      this.registry.forgetSandbox(id).catch(() => {});
      this.beat();
    },
  };

  /** The internal endpoint routers call, for serveHttp's `internal` option. */
  readonly endpoint = {
    path: NODE_PATH,
    handle: (req: IncomingMessage, res: ServerResponse) => this.handle(req, res),
  };

  /**
   * Joins: publishes the tool list, registers with a heartbeat and starts taking runs.
   * `address` is where routers reach this node's HTTP server.
   */
  async start(
    service: SandboxService,
    makeServer: (caller: Caller) => McpServer,
    address: string,
    version: string,
  ): Promise<void> {
    this.service = service;
    // A Runtime has a log (the CLI's writes to stderr); the node speaks through it unless told.
    this.log ??= (service.runtime as { log?: LogFn }).log;
    this.address = address.replace(/\/mcp$/, "").replace(/\/$/, "");
    this.clients = new LocalClients(makeServer);
    this.startedAt = Date.now();
    await this.publishCatalogue(version);
    await this.beatNow();
    this.heart = setInterval(() => this.beat(), Math.max(200, Math.floor(this.ttlMs / 3)));
    this.heart.unref();
    this.subscriber = this.registry.redis.duplicate();
    this.subscriber.on("error", () => {});
    this.subscriber.on("message", (_channel, jobId: string) => this.running.get(jobId)?.abort());
    await this.subscriber.subscribe(CANCEL_CHANNEL);
    const slots = service.scheduler.concurrency;
    this.slotsFree = slots;
    const workerOptions = {
      connection: this.registry.options as ConnectionOptions,
      // A node takes a few more runs than it runs at once, so the queue drains without a gap;
      // those wait here, unstarted, and go back to the queue if this node dies.
      concurrency: slots * 2,
      lockDuration: this.ttlMs,
      stalledInterval: Math.max(1000, Math.floor(this.ttlMs / 2)),
      maxStalledCount: 1,
    };
    const run = (job: Job<RunJobData>) => this.process(job);
    this.workers = [
      new Worker(SHARED_QUEUE, run, workerOptions),
      new Worker(nodeQueue(this.id), run, workerOptions),
    ];
    for (const w of this.workers) w.on("error", () => {});
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /**
   * Stops taking work and lets what it has finish, for at most `graceMs`: runs in progress,
   * and sandboxes still open (their clients may finish with them). Routers stop sending new
   * sandboxes as soon as the record says draining. Without Redis it still returns within
   * `graceMs`: its own runs end here whether or not their results can be written there.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const deadline = Date.now() + graceMs;
    const left = () => Math.max(0, deadline - Date.now());
    await this.redisCall(
      this.beatNow(),
      "marking this node draining",
      Math.min(STOP_CALL_MS, left()),
    );
    // Takes no new job; the jobs taken run to their end, and (with Redis) their results are written.
    let closed = false;
    void Promise.allSettled(this.workers.map((w) => w.close())).then(() => {
      closed = true;
    });
    while (!closed && left() > 0) {
      // A worker's close waits on Redis. Without Redis, the runs taken ending here is all there is.
      if (this.taken === 0 && !this.redisUp()) {
        const ms = Math.min(STOP_CALL_MS, left());
        if (
          this.redisLost ||
          !(await this.redisCall(this.registry.redis.ping(), "closing the job queues", ms))
        )
          break;
      }
      await delay(Math.min(100, left()));
    }
    while (this.open.size > 0 && left() > 0) await delay(Math.min(250, left()));
  }

  /**
   * Leaves the cluster: aborts what still runs, closes the queues and the Redis connections.
   * Each Redis call is bounded; when Redis does not answer, its connections are dropped instead,
   * and the node's record and its jobs' locks expire by themselves.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.heart) clearInterval(this.heart);
    for (const c of this.running.values()) c.abort();
    // A worker closed by drain() keeps that close (BullMQ answers a later close with it), which
    // waits for the runs just aborted to end and be written to Redis.
    const closing = Promise.allSettled(this.workers.map((w) => w.close(true)));
    const workersClosed =
      !this.redisLost &&
      (await Promise.race([closing.then(() => true), delay(STOP_CALL_MS).then(() => false)]));
    await this.clients?.close();
    if (!workersClosed) this.dropWorkers();
    const subscriber = this.subscriber;
    if (
      subscriber &&
      (this.redisLost || !(await this.redisCall(subscriber.quit(), "unsubscribing")))
    )
      subscriber.disconnect();
    const left =
      !this.redisLost &&
      (await this.redisCall(this.registry.leave(this.id), "leaving the cluster"));
    if (!left || !(await this.redisCall(this.registry.close(), "disconnecting")))
      this.registry.redis.disconnect();
  }

  /** Whether the registry's connection to Redis is up now. */
  private redisUp(): boolean {
    return this.registry.redis.status === "ready";
  }

  /**
   * Waits for a Redis call made while stopping, at most `ms`: true if it was answered, false if
   * it failed or Redis did not answer in time (then Redis counts as lost, and says so once).
   */
  private async redisCall(
    call: Promise<unknown>,
    what: string,
    ms = STOP_CALL_MS,
  ): Promise<boolean> {
    const failure = await Promise.race([
      call.then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      delay(ms).then(() => `no answer within ${ms / 1000} s`),
    ]);
    if (failure !== null) this.lostRedis(`${what}: ${failure}`);
    return failure === null;
  }

  private lostRedis(why: string): void {
    if (this.redisLost) return;
    this.redisLost = true;
    this.log?.(
      "warn",
      `cluster node ${this.id}: Redis at ${this.redisAt} is unreachable (${why}); stopping without it: routers may not see this node draining, and its record and the locks of the jobs it took expire by themselves`,
    );
  }

  /** Drops the queues' Redis connections, without waiting for Redis to answer. */
  private dropWorkers(): void {
    for (const w of this.workers) {
      const backend = w.getBackend();
      for (const client of [backend.client, backend.blockingClient]) {
        // Resolved long ago for a worker that started; one that did not has nothing to drop.
        void client?.then((c) => c.disconnect()).catch(() => {});
      }
    }
  }

  private record(): NodeRecord {
    return {
      id: this.id,
      address: this.address,
      capacity: this.service?.sandboxes.maxSandboxes ?? 0,
      load: this.open.size + this.running.size,
      runs: this.runs,
      draining: this.draining,
      startedAt: this.startedAt,
      heartbeatAt: Date.now(),
      ttlMs: this.ttlMs,
    };
  }

  private beatNow(): Promise<void> {
    return this.registry.heartbeat(this.record(), this.ttlMs);
  }

  private beat(): void {
    if (!this.closed && this.address !== "") this.beatNow().catch(() => {});
  }

  private async publishCatalogue(version: string): Promise<void> {
    const client = await this.clients!.get({ owner: "cluster:catalogue" });
    const { tools } = await client.listTools();
    const catalogue: Catalogue = {
      instructions: client.getInstructions() ?? "",
      version,
      tools,
    };
    await this.registry.publishCatalogue(catalogue);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => sendJson(res, status, body);
    // Before the body is read: only a router of this cluster gets that far, and each request once.
    const checked = checkRequest(
      this.keys.requests,
      this.id,
      req.method ?? "",
      new URL(req.url ?? "/", "http://node").pathname,
      req.headers,
      this.nonces,
    );
    if ("refused" in checked) {
      res.setHeader("connection", "close");
      return send(401, { error: `unauthorized: ${checked.refused}` });
    }
    if (req.method !== "POST") return send(405, { error: "POST only" });
    const raw = await readBoundedBody(req, res, MAX_FORWARD_BYTES);
    if (raw === null) return;
    if (sha256Hex(raw) !== checked.bodyDigest)
      return send(401, { error: "unauthorized: the body is not the one the router signed" });
    let parsed: ReturnType<typeof forwardSchema.safeParse>;
    try {
      parsed = forwardSchema.safeParse(JSON.parse(raw.toString("utf8")));
    } catch {
      return send(400, { error: "the body is not JSON" });
    }
    if (!parsed.success) return send(400, { error: "not a forwarded call" });
    const { owner, scope, method, params } = parsed.data;
    const caller: Caller = { owner, ...(scope !== undefined ? { scope } : {}) };
    const name = params.name;
    if (this.draining && (name === "create_sandbox" || name === "fork_sandbox")) {
      return send(200, {
        error: { code: -32000, message: `node ${this.id} is draining and opens no sandboxes` },
      });
    }
    const abort = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    let answer: ForwardAnswer;
    try {
      const client = await this.clients!.get(caller);
      const options = { signal: abort.signal, timeout: CALL_TIMEOUT_MS };
      const result =
        method === "tools/call"
          ? await client.callTool(
              params as { name: string; arguments?: Record<string, unknown> },
              undefined,
              options,
            )
          : await client.readResource(params as { uri: string }, options);
      answer = { result: result as Record<string, unknown> };
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      answer = {
        error: {
          code: typeof e.code === "number" ? e.code : -32603,
          message: String(e.message ?? error).replace(/^MCP error -?\d+: /, ""),
        },
      };
    }
    send(200, answer);
  }

  private async process(job: Job<RunJobData>): Promise<unknown> {
    const id = job.id!;
    if (!this.registry.jobSigned(id, job.queueName, job.data)) {
      this.log?.(
        "warn",
        `cluster node ${this.id}: refused job ${id} of queue ${job.queueName}: it was not queued there by a router of this cluster (not signed, or changed since)`,
      );
      throw new UnrecoverableError("refused: the job is not signed by a router of this cluster");
    }
    if (this.finished.has(id)) {
      this.log?.("warn", `cluster node ${this.id}: refused job ${id}: it already ran here`);
      throw new UnrecoverableError("refused: this job already ran");
    }
    this.taken++;
    try {
      return this.registry.sealAnswer(id, await this.processTaken(job));
    } finally {
      this.taken--;
      this.finished.add(id);
      if (this.finished.size > MAX_FINISHED) {
        const [oldest] = this.finished;
        this.finished.delete(oldest!);
      }
    }
  }

  private async processTaken(job: Job<RunJobData>): Promise<unknown> {
    const data = job.data;
    if (data.startedBy !== undefined && data.startedBy !== this.id) {
      // It was running on a node that stopped; what it did there is unknown, so it is not rerun.
      const seen = await this.registry.lastSeen(data.startedBy);
      throw new UnrecoverableError(`${LOST_PREFIX}${lostReason(data.startedBy, seen)}`);
    }
    await this.slot();
    const id = job.id!;
    const abort = new AbortController();
    this.running.set(id, abort);
    this.runs++;
    try {
      await job.updateData({ ...data, startedBy: this.id });
      this.beat();
      const caller: Caller = {
        owner: data.owner,
        ...(data.scope !== undefined ? { scope: data.scope } : {}),
      };
      const client = await this.clients!.get(caller);
      const options = { signal: abort.signal, timeout: CALL_TIMEOUT_MS };
      if (!data.async) {
        return await client.callTool(
          { name: data.tool, arguments: data.arguments },
          undefined,
          options,
        );
      }
      return await this.runAsync(id, client, caller, data, abort.signal);
    } finally {
      this.running.delete(id);
      this.release();
      this.beat();
    }
  }

  /**
   * An async run: started as this node's own job, its output copied to Redis while it runs
   * (get_job_logs from any router), and its final status is the job's result.
   */
  private async runAsync(
    id: string,
    client: Awaited<ReturnType<LocalClients["get"]>>,
    caller: Caller,
    data: RunJobData,
    signal: AbortSignal,
  ): Promise<unknown> {
    const started = (await client.callTool(
      { name: data.tool, arguments: { ...data.arguments, async: true } },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    )) as { isError?: boolean; structuredContent?: { job_id?: string } };
    const localId = started.structuredContent?.job_id;
    if (started.isError || typeof localId !== "string") return started;
    const service = this.service!;
    const onAbort = () => void service.cancelJob(caller, localId).catch(() => {});
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const status = service.jobStatus(caller, localId);
        const logs = service.jobLogs(caller, localId);
        await this.registry
          .writeLogs(id, { stdout: tail(logs.stdout), stderr: tail(logs.stderr) }, JOB_KEEP_MS)
          .catch(() => {});
        if (status.finishedAt !== null) break;
        await delay(LOG_EVERY_MS);
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    const final = (await client.callTool(
      { name: "check_job_status", arguments: { job_id: localId } },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    )) as { content: { type: string; text?: string }[]; structuredContent?: object };
    // The job is known by its cluster id everywhere; the node's own id is an internal detail.
    return {
      ...final,
      content: final.content.map((c) =>
        c.type === "text" && c.text ? { ...c, text: c.text.replaceAll(localId, id) } : c,
      ),
      structuredContent: { ...final.structuredContent, job_id: id },
    };
  }

  private async slot(): Promise<void> {
    if (this.slotsFree > 0) {
      this.slotsFree--;
      return;
    }
    await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private release(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.slotsFree++;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The node id a process gets by default: readable in logs, unique per process. */
export function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, "")
      .slice(0, 40) || "node";
  return `${host}-${process.pid}`;
}

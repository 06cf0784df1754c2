// Cluster: `polybox router`, a stateless MCP Streamable HTTP front for nodes. Every request is
// answered on its own (no MCP session), so any router can answer any request and a router that
// restarts loses nothing: initialize and tools/list from the catalogue a node published; a call
// that names a sandbox (argument sandbox_id, or the Mcp-Param-Sandbox-Id header) goes to the node
// that owns it; create_sandbox to the least-loaded live node; one-shot and async runs onto BullMQ;
// job status, logs and cancellation from BullMQ and Redis. Trust: clients as `serve` trusts them,
// through the same HTTP guard (Host/Origin, bearer tokens, body limit: mcp/http-guard.ts); Redis
// not at all for routing: only node records and sandbox entries signed with the cluster's key are
// used (registry.ts), and every request to a node is signed (auth.ts), never carrying the secret
// itself.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server as McpProtocolServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type ConnectionOptions, Queue, QueueEvents } from "bullmq";
import { type LogFn, PolyboxError, silentLog } from "../index.js";
import { httpGuard, readJsonBody, sendJson } from "../mcp/http-guard.js";
import { errorResult } from "../mcp/render.js";
import { TOOLS } from "../mcp/tool-names.js";
import { clusterKeys, signRequest } from "./auth.js";
import { JOB_KEEP_MS } from "./node.js";
import {
  type Catalogue,
  CLOSE_MS,
  type JobRef,
  type NodeRecord,
  nodeQueue,
  Registry,
  redisOptions,
  SHARED_QUEUE,
  settleWithin,
} from "./registry.js";
import { RouterJobs } from "./router-jobs.js";
import { type ForwardAnswer, lostReason, NODE_PATH, type RunJobData } from "./wire.js";

export interface RouterOptions {
  url: string;
  secret: string;
  host: string;
  port: number;
  version: string;
  /** Bearer tokens, as `serve --token`: each token is one client. None: one shared client. */
  tokens?: readonly string[];
  /**
   * More Host names clients reach the router by, beyond its bind address, as `serve`'s
   * `allowedHosts`; `NAME:PORT` for a name on another port (a load balancer's).
   */
  allowedHosts?: readonly string[];
  /** Where the router says what it refused or what failed (default: nowhere). */
  log?: LogFn;
}

export interface RouterServer {
  url: string;
  close(): Promise<void>;
}

/** The tools that run code: without a sandbox, or with async, they go through the queue. */
const RUN_TOOLS = new Set<string>(TOOLS.run);
const JOB_TOOLS = new Set<string>(TOOLS.job);
/** How long a router reuses the catalogue it read before reading it again. */
const CATALOGUE_MS = 5000;
const SANDBOX_URI = /^polybox:\/\/sandbox\/([^/]+)\//;

export interface RoutedCaller {
  owner: string;
  scope?: string;
}

export async function serveRouter(options: RouterOptions): Promise<RouterServer> {
  if (options.secret === "")
    throw new PolyboxError("INVALID_ARGUMENT", "a cluster needs a cluster secret");
  const log = options.log ?? silentLog;
  const keys = clusterKeys(options.secret);
  const registry = new Registry(redisOptions(options.url), keys, log);
  const connection = registry.options as ConnectionOptions;
  const queues = new Map<string, Queue>();
  const queueOf = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection });
      q.on("error", () => {});
      queues.set(name, q);
    }
    return q;
  };
  const events = new QueueEvents(SHARED_QUEUE, { connection });
  events.on("error", () => {});
  await events.waitUntilReady();
  const jobs = new RouterJobs(registry, queueOf);
  const guard = httpGuard({
    bind: options.host,
    names: options.allowedHosts ?? [],
    tokens: options.tokens ?? [],
  });

  let cached: { at: number; catalogue: Catalogue | null } = { at: 0, catalogue: null };
  const catalogue = async (): Promise<Catalogue | null> => {
    if (cached.catalogue === null || Date.now() - cached.at > CATALOGUE_MS)
      cached = { at: Date.now(), catalogue: await registry.catalogue() };
    return cached.catalogue;
  };

  const forward = async (
    node: NodeRecord,
    caller: RoutedCaller,
    method: "tools/call" | "resources/read",
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> => {
    let answer: ForwardAnswer;
    try {
      // The caller (owner, scope) is in the body, which the signature covers by its digest.
      const body = JSON.stringify({ ...caller, method, params });
      const res = await fetch(`${node.address}${NODE_PATH}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...signRequest(keys.requests, node.id, "POST", NODE_PATH, body),
        },
        body,
        ...(signal ? { signal } : {}),
      });
      if (res.status === 401) {
        const why = (await res.json().catch(() => ({}))) as { error?: unknown };
        throw new PolyboxError(
          "PERMISSION_DENIED",
          `node ${node.id} refused this router's signed request${typeof why.error === "string" ? ` (${why.error})` : ""}: are both given the same cluster secret, and do their clocks agree?`,
        );
      }
      if (res.status !== 200) {
        // The node is there but refused the request itself (too big, malformed): not a lost node.
        const why = (await res.json().catch(() => ({}))) as { error?: unknown };
        throw new PolyboxError(
          res.status === 413 ? "INVALID_ARGUMENT" : "PROTOCOL_ERROR",
          `node ${node.id} refused the call (HTTP ${res.status}${typeof why.error === "string" ? `: ${why.error}` : ""})`,
        );
      }
      answer = (await res.json()) as ForwardAnswer;
    } catch (error) {
      if (error instanceof PolyboxError || signal?.aborted) throw error;
      // Its record has not expired yet, but it does not answer: it is gone.
      throw new PolyboxError(
        "SANDBOX_LOST",
        `node ${node.id} does not answer (${error instanceof Error ? error.message : String(error)}); its sandboxes are lost`,
      );
    }
    if ("error" in answer) throw new McpError(answer.error.code, answer.error.message);
    return answer.result;
  };

  /** The live node that owns a sandbox, or why there is none. */
  const ownerNode = async (sandboxId: string): Promise<NodeRecord> => {
    const entry = await registry.ownerOf(sandboxId);
    if (entry.state === "absent") {
      throw new PolyboxError(
        "SANDBOX_NOT_FOUND",
        `no sandbox with id ${JSON.stringify(sandboxId)}`,
        {
          details: { sandboxId },
        },
      );
    }
    if (entry.state === "refused") {
      throw new PolyboxError(
        "PROTOCOL_ERROR",
        `sandbox ${sandboxId}: its entry in the cluster's Redis was not written by a node of this cluster (${entry.why}); the call was sent nowhere`,
        { details: { sandboxId } },
      );
    }
    const nodeId = entry.nodeId;
    const node = await registry.node(nodeId);
    if (node.state === "live") return node.record;
    if (node.state === "refused") {
      throw new PolyboxError(
        "PROTOCOL_ERROR",
        `sandbox ${sandboxId} is on node ${nodeId}, whose record in the cluster's Redis was not written by it (${node.why}); the call was sent nowhere`,
        { details: { sandboxId } },
      );
    }
    throw new PolyboxError(
      "SANDBOX_LOST",
      `sandbox ${sandboxId} was lost: ${lostReason(nodeId, await registry.lastSeen(nodeId))}; create a new one`,
      { details: { sandboxId } },
    );
  };

  const pickNode = async (): Promise<NodeRecord> => {
    const nodes = await registry.nodes();
    const live = nodes.live.filter((n) => !n.draining && n.load < n.capacity);
    if (live.length === 0 && nodes.live.length === 0 && nodes.refused > 0) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `no node record in the cluster's Redis passes this router's signature check (${nodes.refused} refused): is this router given the nodes' cluster secret?`,
      );
    }
    if (live.length === 0) {
      throw new PolyboxError(
        "SERVER_BUSY",
        "no live cluster node has room for a sandbox; try again later",
        {
          details: { retryAfterMs: 1000 },
        },
      );
    }
    const share = (n: NodeRecord) => n.load / Math.max(1, n.capacity);
    const least = Math.min(...live.map(share));
    const best = live.filter((n) => share(n) === least);
    return best[Math.floor(Math.random() * best.length)]!;
  };

  const enqueue = async (
    caller: RoutedCaller,
    name: string,
    args: Record<string, unknown>,
    sandboxId: string | undefined,
    async: boolean,
  ) => {
    const queue =
      sandboxId === undefined ? SHARED_QUEUE : nodeQueue((await ownerNode(sandboxId)).id);
    const { async: _drop, ...rest } = args;
    const language =
      name.startsWith("execute_") && name !== "execute_code"
        ? name.slice("execute_".length)
        : typeof args.language === "string"
          ? args.language
          : "unknown";
    const id = randomUUID();
    const data: RunJobData = {
      tool: name,
      arguments: rest,
      owner: caller.owner,
      ...(caller.scope !== undefined ? { scope: caller.scope } : {}),
      async,
      language,
    };
    const ref: JobRef = {
      queue,
      owner: caller.owner,
      tool: name,
      language,
      sandboxId: sandboxId ?? null,
      createdAt: Date.now(),
    };
    if (async) await registry.recordJob(id, ref, JOB_KEEP_MS);
    // An awaited run's job is kept a minute: removed at once, a router that checks it just after
    // it finished would find no job and no result.
    const keep = { age: Math.round((async ? JOB_KEEP_MS : 60_000) / 1000) };
    const job = await queueOf(queue).add(name, registry.signJob(id, queue, data), {
      jobId: id,
      removeOnComplete: keep,
      removeOnFail: keep,
    });
    return job;
  };

  const call = async (
    caller: RoutedCaller,
    params: { name: string; arguments?: Record<string, unknown> },
    headerSandbox: string | undefined,
    signal: AbortSignal,
  ): Promise<CallToolResult> => {
    const name = params.name;
    const cat = await catalogue();
    const tool = cat?.tools.find((t) => (t as { name: string }).name === name) as
      | { inputSchema?: { properties?: Record<string, unknown> } }
      | undefined;
    if (cat === null) {
      return errorResult(
        new PolyboxError(
          "SERVER_BUSY",
          "this router has no tool list: no node has published one in the cluster's Redis, or the one there fails this router's signature check (is it given the nodes' cluster secret?)",
          { details: { retryAfterMs: 1000 } },
        ),
      );
    }
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"`);
    }
    const args = { ...(params.arguments ?? {}) };
    // The header mirrors the argument; where only the header names the sandbox, it counts.
    if (
      args.sandbox_id === undefined &&
      headerSandbox !== undefined &&
      tool.inputSchema?.properties?.sandbox_id
    )
      args.sandbox_id = headerSandbox;
    const sandboxId = typeof args.sandbox_id === "string" ? args.sandbox_id : undefined;
    try {
      if (JOB_TOOLS.has(name)) return await jobs.answer(caller, name, args);
      if (RUN_TOOLS.has(name) && args.async === true) {
        const job = await enqueue(caller, name, args, sandboxId, true);
        return {
          content: [
            {
              type: "text",
              text: `job ${job.id}: queued. Poll check_job_status with this job_id; get_job_logs shows output so far; cancel_job stops it.`,
            },
          ],
          structuredContent: { job_id: job.id!, status: "queued", sandbox_id: sandboxId ?? null },
        };
      }
      if (RUN_TOOLS.has(name) && sandboxId === undefined) {
        const job = await enqueue(caller, name, args, undefined, false);
        const stop = () => void jobs.cancelQueued(job.id!, SHARED_QUEUE);
        signal.addEventListener("abort", stop, { once: true });
        let sealed: unknown;
        try {
          sealed = await job.waitUntilFinished(events);
        } catch (error) {
          throw jobs.failure(error instanceof Error ? error.message : String(error));
        } finally {
          signal.removeEventListener("abort", stop);
        }
        const answer = registry.openAnswer(job.id!, sealed);
        if (answer === null)
          throw new PolyboxError(
            "PROTOCOL_ERROR",
            `the answer of run ${job.id} in the cluster's Redis was not written by a node of this cluster; it is not shown`,
            { details: { jobId: job.id! } },
          );
        return answer.value as CallToolResult;
      }
      const node = sandboxId !== undefined ? await ownerNode(sandboxId) : await pickNode();
      return (await forward(
        node,
        caller,
        "tools/call",
        { ...params, arguments: args },
        signal,
      )) as CallToolResult;
    } catch (error) {
      if (error instanceof McpError) throw error;
      return errorResult(error);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const json = (status: number, body: unknown) => sendJson(res, status, body);
    if (url.pathname === "/healthz" && req.method === "GET") {
      // For load balancers: this router can reach Redis, and how many nodes are live.
      // Commands wait for Redis to come back, so the check gives up after a while.
      const nodes = await Promise.race([
        registry
          .nodes()
          .then((n) => n.live)
          .catch(() => null),
        new Promise<null>((r) => setTimeout(() => r(null), 2000).unref()),
      ]);
      return nodes === null
        ? json(503, { ok: false, error: "Redis is unreachable" })
        : json(200, { ok: true, nodes: nodes.length });
    }
    if (url.pathname !== "/mcp") return json(404, { error: "not found: the MCP endpoint is /mcp" });
    const admitted = guard(req, res);
    if (admitted === null) return;
    // A token's client owns the same sandboxes here as on a node it reaches directly.
    const caller: RoutedCaller =
      admitted.client !== null
        ? { owner: admitted.client, scope: admitted.client }
        : { owner: "cluster:anonymous" };
    const read = await readJsonBody(req, res);
    if (read === null) return;
    const { body } = read;
    const header = req.headers["mcp-param-sandbox-id"];
    const headerSandbox = typeof header === "string" && header !== "" ? header : undefined;
    const cat = await catalogue();
    const server = new McpProtocolServer(
      { name: "polybox", version: cat?.version ?? options.version },
      {
        capabilities: { tools: {}, resources: {} },
        ...(cat?.instructions ? { instructions: cat.instructions } : {}),
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      // Tasks are a node's own: through a router, async: true is the way to run in the background.
      tools: ((await catalogue())?.tools ?? []).map((t) => {
        const { execution: _e, ...rest } = t as Record<string, unknown>;
        return rest as never;
      }),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      call(caller, request.params, headerSandbox, extra.signal),
    );
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      const m = SANDBOX_URI.exec(request.params.uri);
      if (!m)
        throw new McpError(ErrorCode.InvalidParams, `no such resource: ${request.params.uri}`);
      const node = await ownerNode(decodeURIComponent(m[1]!)).catch((e: unknown) => {
        throw new McpError(ErrorCode.InvalidParams, e instanceof Error ? e.message : String(e));
      });
      return (await forward(node, caller, "resources/read", request.params, extra.signal)) as never;
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.once("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(
        "error",
        `router request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/mcp`,
    // Bounded: each Redis connection gets CLOSE_MS to say goodbye and is dropped if Redis does
    // not answer (ioredis and BullMQ would otherwise wait for a Redis that is gone, for ever).
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      const drop = (q: Queue | QueueEvents) => () => void q.disconnect().catch(() => {});
      await Promise.all([
        settleWithin(events.close(), CLOSE_MS, drop(events)),
        ...[...queues.values()].map((q) => settleWithin(q.close(), CLOSE_MS, drop(q))),
        registry.close(),
      ]);
    },
  };
}

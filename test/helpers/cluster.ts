// Test helpers for a polybox cluster on loopback: a real redis-server on a free port, nodes
// (`polybox serve --cluster`) and routers (`polybox router`) as real processes of the built CLI,
// and the SDK's real client against a router. Everything a helper starts, its stop() ends.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI } from "./mcp-client.js";

/** Why cluster tests cannot run here, or null when redis-server is installed. */
export function redisMissing(): string | null {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return null;
  } catch {
    return "redis-server is not installed (Debian: apt-get install redis-server)";
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop: (
    signal?: NodeJS.Signals,
  ) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(
  command: string,
  args: string[],
  ready: RegExp,
  env = {},
): Promise<Proc & { match: RegExpExecArray }> {
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, output: () => out, exited, stop, match: m });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((e) =>
      reject(new Error(`${args.join(" ")} exited (${e.code ?? e.signal}): ${out}`)),
    );
  });
}

export interface Cluster {
  redisUrl: string;
  secret: string;
  nodes: Map<string, Proc & { url: string }>;
  routers: (Proc & { url: string })[];
  startNode(id: string, extra?: string[]): Promise<Proc & { url: string }>;
  startRouter(extra?: string[]): Promise<Proc & { url: string }>;
  stop(): Promise<void>;
}

export async function startCluster(options: {
  nodes: number;
  routers: number;
  token?: string;
  ttl?: string;
  nodeArgs?: string[];
}): Promise<Cluster> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "polybox-cluster-"));
  const redis = await start(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    /Ready to accept connections/,
  );
  const redisUrl = `redis://127.0.0.1:${port}/0`;
  const secret = "cluster-secret-for-tests";
  const token = options.token ? [`--token=${options.token}`] : [];
  const nodes = new Map<string, Proc & { url: string }>();
  const routers: (Proc & { url: string })[] = [];
  const cluster: Cluster = {
    redisUrl,
    secret,
    nodes,
    routers,
    startNode: async (id, extra = []) => {
      const p = await start(
        process.execPath,
        [
          CLI,
          "serve",
          "--port=0",
          `--cluster=${redisUrl}`,
          `--cluster-secret=${secret}`,
          `--node-id=${id}`,
          `--cluster-ttl=${options.ttl ?? "3s"}`,
          `--data-dir=${path.join(dir, id)}`,
          ...token,
          ...(options.nodeArgs ?? []),
          ...extra,
        ],
        /MCP server on (http:\/\/\S+\/mcp)[\s\S]*cluster node \S+ joined/,
      );
      const node = { ...p, url: p.match[1]! };
      nodes.set(id, node);
      return node;
    },
    startRouter: async (extra = []) => {
      const p = await start(
        process.execPath,
        [
          CLI,
          "router",
          "--port=0",
          `--cluster=${redisUrl}`,
          `--cluster-secret=${secret}`,
          ...token,
          ...extra,
        ],
        /router on (http:\/\/\S+\/mcp)/,
      );
      const router = { ...p, url: p.match[1]! };
      routers.push(router);
      return router;
    },
    stop: async () => {
      await Promise.allSettled([...routers, ...nodes.values()].map((p) => p.stop("SIGKILL")));
      await redis.stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(
      Array.from({ length: options.nodes }, (_, i) => cluster.startNode(`n${i + 1}`)),
    );
    for (let i = 0; i < options.routers; i++) await cluster.startRouter();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** A real MCP client of a router (or a node), tools listed so answers are schema-checked. */
export async function connect(
  url: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: {
      headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    },
  });
  const client = new Client({ name: "polybox-cluster-test", version: "0.0.0" });
  await client.connect(transport);
  await client.listTools();
  return client;
}

/** One HTTP request as a recording server saw it. */
export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Recorder {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  seen: Seen[];
  /** Where requests are passed on to (a tap), or undefined (a trap); may be set later. */
  forwardTo: string | undefined;
  /** A tap that changes what it passes on: the body it forwards instead (it records the original). */
  rewrite: ((body: string) => string) | undefined;
  close(): Promise<void>;
}

/**
 * An HTTP server on loopback that records every request whole. With `forwardTo`, it passes each
 * one on (headers and body unchanged) and answers what that server answered: a tap on the wire
 * between a router and a node. Without, it answers as a node would, so that a router that sent it
 * a call does not notice.
 */
export async function recorder(forwardTo?: string): Promise<Recorder> {
  const seen: Seen[] = [];
  // Assigned once the server listens; the handler reads it per request.
  let self: Recorder;
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const target = self.forwardTo;
      if (target === undefined) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ result: { content: [{ type: "text", text: "from the trap" }] } }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
      fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(req.method === "POST" ? { body: self.rewrite ? self.rewrite(body) : body } : {}),
      }).then(
        async (r) => {
          res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "" });
          res.end(Buffer.from(await r.arrayBuffer()));
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  self = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    forwardTo,
    rewrite: undefined,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return self;
}

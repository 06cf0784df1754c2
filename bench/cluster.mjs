// `node bench/cluster.mjs` (after `npm run build`): what the cluster's router hop costs on this
// machine. Starts its own redis-server on a free loopback port, then for 1, 2 and 3 nodes:
// one-shot runs per second through a router (BullMQ) next to the same runs sent straight to one
// node; and the round trip of a stateful call (a sandbox that exists) through the router next to
// the same call made directly to its node. All nodes share this machine's cores, so the figures
// show the router's per-run overhead, not scaling. BENCH_SECONDS sets each throughput phase
// (default 20); BENCH_CALLS the stateful calls per side (default 100). Needs redis-server.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { now, round, summarize, throughput } from "./lib/stats.mjs";

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/cli/main.js");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const WORKERS = 6;
const SECRET = "bench-secret";
// With a token the router and a node see the same client, so a direct call reaches the sandbox.
const TOKEN = "bench-token";
const note = (msg) => process.stderr.write(`bench: ${msg}\n`);

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

function start(command, args, ready) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (c) => {
      out += c.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, url: m[1] });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${out}`)));
  });
}

const stop = (p) =>
  new Promise((resolve) => {
    if (p.child.exitCode !== null) return resolve();
    p.child.once("exit", () => resolve());
    p.child.kill("SIGKILL");
  });

async function connect(url) {
  const client = new Client({ name: "polybox-bench", version: "1" });
  const headers = { Authorization: `Bearer ${TOKEN}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  await client.listTools();
  return client;
}

const oneShot = (client) => async () => {
  const r = await client.callTool({
    name: "execute_javascript",
    arguments: { code: "console.log(1)" },
  });
  if (r.isError) throw new Error(JSON.stringify(r.content));
};

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), "polybox-bench-cluster-"));
  const port = await freePort();
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
    /(Ready to accept connections)/,
  );
  const cluster = `redis://127.0.0.1:${port}/0`;
  const nodes = [];
  const results = { oneShotPerSecond: {}, statefulCallMs: {} };
  try {
    const router = await start(
      process.execPath,
      [
        CLI,
        "router",
        "--port=0",
        `--cluster=${cluster}`,
        `--cluster-secret=${SECRET}`,
        `--token=${TOKEN}`,
      ],
      /router on (http:\/\/\S+\/mcp)/,
    );
    nodes.push(router);
    const routed = await connect(router.url);
    for (let n = 1; n <= 3; n++) {
      const node = await start(
        process.execPath,
        [
          CLI,
          "serve",
          "--port=0",
          `--cluster=${cluster}`,
          `--cluster-secret=${SECRET}`,
          `--node-id=bench${n}`,
          `--token=${TOKEN}`,
          "--max-runs-per-client=64",
          `--data-dir=${path.join(dir, `n${n}`)}`,
        ],
        /MCP server on (http:\/\/\S+\/mcp)[\s\S]*joined/,
      );
      nodes.push(node);
      await new Promise((r) => setTimeout(r, 3000)); // the new node's warm hosts
      note(`${n} node(s): one-shot runs for ${SECONDS} s through the router`);
      const viaRouter = await throughput(oneShot(routed), SECONDS, WORKERS);
      note(`${n} node(s): one-shot runs for ${SECONDS} s straight to node 1`);
      const direct = await connect(nodes[1].url);
      const straight = await throughput(oneShot(direct), SECONDS, WORKERS);
      await direct.close();
      results.oneShotPerSecond[`${n} node${n > 1 ? "s" : ""}`] = {
        router: viaRouter,
        directToOneNode: straight,
      };
    }
    // A stateful call: the sandbox lives on one node; the router looks its owner up in Redis.
    note(`stateful calls: ${CALLS} through the router, ${CALLS} direct`);
    const created = await routed.callTool({ name: "create_sandbox", arguments: {} });
    const id = created.structuredContent.sandbox_id;
    const owner = await connectOwner(nodes.slice(1), id);
    const samples = { router: [], direct: [] };
    const stateful = (client) => () =>
      client.callTool({ name: "execute_python", arguments: { code: "x = 1", sandbox_id: id } });
    await stateful(routed)();
    for (let i = 0; i < CALLS; i++) {
      for (const [side, client] of [
        ["router", routed],
        ["direct", owner],
      ]) {
        const t = now();
        await stateful(client)();
        samples[side].push(now() - t);
      }
    }
    const r = summarize(samples.router);
    const d = summarize(samples.direct);
    results.statefulCallMs = {
      router: r,
      direct: d,
      addedMedianMs: round(r.median_ms - d.median_ms),
    };
    await owner.close();
    await routed.close();
  } finally {
    await Promise.all(nodes.map(stop));
    await stop(redis);
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

/** A direct client of the node that owns the sandbox: the one whose client sees it. */
async function connectOwner(nodes, id) {
  for (const n of nodes) {
    const c = await connect(n.url);
    const r = await c.callTool({ name: "get_sandbox_status", arguments: { sandbox_id: id } });
    if (!r.isError) return c;
    await c.close();
  }
  throw new Error("no node answers for the sandbox");
}

await main();

// Cluster: an attacker who can write to the cluster's Redis, or who taps the wire between a router
// and a node, cannot redirect calls, learn the cluster secret or act as a router toward a node
// (docs/security.md, "Cluster: nodes, routers and Redis"). Every part is real: redis-server on a
// free loopback port, a node and a router as processes of the built CLI, the node reached through
// a recording tap (its advertised address), a trap listener at the forged address that records any
// request, and the MCP SDK's client against the router.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkRequest,
  clusterKeys,
  NonceCache,
  REQUEST_WINDOW_MS,
  signRequest,
} from "../../dist/cluster/auth.js";
import {
  type Cluster,
  connect,
  type Recorder,
  recorder,
  redisMissing,
  type Seen,
  startCluster,
} from "../helpers/cluster.js";
import { call, text } from "../helpers/mcp-client.js";

const missing = redisMissing();
const TOKEN = "signed-test-token";

describe.skipIf(missing !== null)(
  `a cluster whose Redis and wire are hostile (${missing ?? "redis-server found"})`,
  () => {
    let cluster: Cluster;
    let redis: Redis;
    let client: Client;
    /** Between the router and node n1: records what travels, passes it on. */
    let tap: Recorder;
    /** Where forged records point: records any request, answers like a node. */
    let trap: Recorder;
    /** n1's own HTTP base, where the tap forwards to (and where replays are sent). */
    let n1: string;

    const create = async (): Promise<string> => {
      const r = await call(client, "create_sandbox", {});
      expect(r.isError, text(r)).toBeFalsy();
      return r.structuredContent!.sandbox_id as string;
    };
    const routerLog = () => cluster.routers[0]!.output();
    const leaksSecret = (s: Seen) =>
      JSON.stringify(s.headers).includes(cluster.secret) || s.body.includes(cluster.secret);

    beforeAll(async () => {
      tap = await recorder();
      trap = await recorder();
      cluster = await startCluster({ nodes: 0, routers: 0, token: TOKEN, ttl: "3s" });
      const node = await cluster.startNode("n1", [`--advertise=${tap.url}`]);
      n1 = node.url.replace(/\/mcp$/, "");
      tap.forwardTo = n1;
      await cluster.startRouter();
      redis = new Redis(cluster.redisUrl);
      client = await connect(cluster.routers[0]!.url, TOKEN);
    }, 120_000);

    afterAll(async () => {
      await client?.close().catch(() => {});
      redis?.disconnect();
      await cluster?.stop();
      await tap?.close();
      await trap?.close();
    });

    it("sends the secret nowhere: requests to nodes are signed, and carry no secret", async () => {
      const id = await create();
      await call(client, "close_sandbox", { sandbox_id: id });
      expect(tap.seen.length).toBeGreaterThan(0);
      for (const s of tap.seen) {
        expect(leaksSecret(s)).toBe(false);
        expect(s.headers["x-polybox-cluster-signature"]).toEqual(expect.any(String));
      }
    }, 60_000);

    it("ignores a node record written straight into Redis: its address gets nothing", async () => {
      const now = Date.now();
      const forged = {
        id: "evil",
        address: trap.url,
        capacity: 1000,
        load: 0,
        runs: 0,
        draining: false,
        startedAt: now,
        heartbeatAt: now,
        ttlMs: 600_000,
        sig: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      };
      await redis.set("polybox:node:evil", JSON.stringify(forged), "PX", 600_000);
      await redis.hset("polybox:nodes:seen", "evil", String(now));
      // Both records are as attractive (no load): before signing, about half went to the trap.
      const ids: string[] = [];
      try {
        for (let i = 0; i < 8; i++) ids.push(await create());
      } finally {
        await redis.del("polybox:node:evil");
        await redis.hdel("polybox:nodes:seen", "evil");
      }
      for (const id of ids) await call(client, "close_sandbox", { sandbox_id: id });
      expect(trap.seen).toEqual([]);
      expect(routerLog()).toMatch(/ignoring the Redis entry of node evil/);
    }, 90_000);

    it("refuses a sandbox key that routes to the forged node, or was copied, with a clear error", async () => {
      const real = await create();
      const entry = await redis.get(`polybox:sandbox:${real}`);
      const forgedKeys: [string, string][] = [
        ["forged-plain", "evil"],
        ["forged-json", JSON.stringify({ node: "evil", sig: "AAAA" })],
        // A genuine entry of another sandbox, copied: the signature names the sandbox it is for.
        ["forged-copy", entry!],
      ];
      for (const [sandbox, value] of forgedKeys) {
        await redis.set(`polybox:sandbox:${sandbox}`, value, "EX", 600);
        const r = await call(client, "execute_python", { code: "print(1)", sandbox_id: sandbox });
        expect(r.isError, `${sandbox}: ${text(r)}`).toBe(true);
        expect(text(r)).toMatch(
          new RegExp(
            `PROTOCOL_ERROR: sandbox ${sandbox}: its entry in the cluster's Redis was not written by a node of this cluster`,
          ),
        );
      }
      expect(trap.seen).toEqual([]);
      await call(client, "close_sandbox", { sandbox_id: real });
    }, 60_000);

    it("refuses a captured signed request replayed to the node", async () => {
      const id = await create();
      const before = tap.seen.length;
      const r = await call(client, "execute_python", { code: "print('once')", sandbox_id: id });
      expect(r.structuredContent?.stdout, text(r)).toBe("once\n");
      const captured = tap.seen.slice(before).find((s) => s.body.includes("print('once')"));
      expect(captured).toBeDefined();
      const replay = await fetch(`${n1}${captured!.url}`, {
        method: "POST",
        headers: replayable(captured!),
        body: captured!.body,
      });
      expect(replay.status).toBe(401);
      expect(((await replay.json()) as { error: string }).error).toMatch(/replayed/);
      await call(client, "close_sandbox", { sandbox_id: id });
    }, 60_000);

    it("refuses a request whose signature does not match: changed body, forged or missing signature", async () => {
      // On the wire, another client's owner put into the body of a real call: the node refuses it.
      const id = await create();
      tap.rewrite = (body) => body.replace(/"owner":"[^"]*"/, '"owner":"token:someone-else"');
      let changed: Awaited<ReturnType<typeof call>>;
      try {
        changed = await call(client, "execute_python", { code: "print(1)", sandbox_id: id });
      } finally {
        tap.rewrite = undefined;
      }
      expect(changed.isError).toBe(true);
      expect(text(changed)).toMatch(
        /PERMISSION_DENIED: node n1 refused this router's signed request \(unauthorized: the body is not the one the router signed\)/,
      );
      await call(client, "close_sandbox", { sandbox_id: id });

      const captured = tap.seen.find((s) => s.body.includes('"tools/call"'));
      expect(captured).toBeDefined();
      const send = (h: Record<string, string>) =>
        fetch(`${n1}/cluster`, { method: "POST", headers: h, body: captured!.body });
      // The router's headers with a new time and nonce, so that only the signature is wrong.
      const forgedSig = await send({
        ...replayable(captured!),
        "x-polybox-cluster-time": String(Date.now()),
        "x-polybox-cluster-nonce": "a-nonce-never-used-before-0123456789",
      });
      expect(forgedSig.status).toBe(401);
      expect(((await forgedSig.json()) as { error: string }).error).toMatch(/bad signature/);
      const unsigned = await send({ "content-type": "application/json" });
      expect(unsigned.status).toBe(401);
      // The header the cluster used to send, with the secret itself: no longer a credential.
      const withSecret = await send({
        "content-type": "application/json",
        "x-polybox-cluster-secret": cluster.secret,
      });
      expect(withSecret.status).toBe(401);
    }, 60_000);

    it("ignores a genuine node record whose address was changed after signing", async () => {
      const id = await create();
      let tampering = true;
      const tamper = (async () => {
        while (tampering) {
          const v = await redis.get("polybox:node:n1");
          if (v !== null) {
            const record = JSON.parse(v) as { address: string };
            if (record.address !== trap.url)
              await redis.set(
                "polybox:node:n1",
                JSON.stringify({ ...record, address: trap.url }),
                "PX",
                3000,
              );
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const answers: string[] = [];
      try {
        for (let i = 0; i < 6; i++) {
          const r = await call(client, "execute_python", { code: "print(2)", sandbox_id: id });
          answers.push(r.isError ? text(r) : "ok");
        }
      } finally {
        tampering = false;
        await tamper;
      }
      expect(trap.seen).toEqual([]);
      // Between the node's own heartbeat and the next rewrite a call may get through; the others
      // are refused, saying why.
      const refused = answers.filter((a) => a !== "ok");
      expect(refused.length, answers.join("\n")).toBeGreaterThan(0);
      for (const a of refused)
        expect(a).toMatch(/node n1, whose record in the cluster's Redis was not written by it/);
      expect(routerLog()).toMatch(/ignoring the Redis entry of node n1: its signature/);
      // The node's next heartbeat puts its signed record back.
      await new Promise((r) => setTimeout(r, 1500));
      const r = await call(client, "execute_python", { code: "print(3)", sandbox_id: id });
      expect(r.structuredContent?.stdout, text(r)).toBe("3\n");
      await call(client, "close_sandbox", { sandbox_id: id });
    }, 60_000);

    it("does not run a job written into a queue by hand", async () => {
      const connection = { host: "127.0.0.1", port: Number(new URL(cluster.redisUrl).port) };
      const queue = new Queue("polybox-runs", { connection });
      const events = new QueueEvents("polybox-runs", { connection });
      try {
        await events.waitUntilReady();
        const job = await queue.add("execute_bash", {
          tool: "execute_bash",
          arguments: { code: "echo forged-run" },
          owner: "token:victim",
          async: false,
          language: "bash",
        });
        const outcome = await job.waitUntilFinished(events).then(
          (value: unknown) => `ran: ${JSON.stringify(value)}`,
          (error: Error) => `refused: ${error.message}`,
        );
        expect(outcome).toMatch(/^refused: .*not signed by a router of this cluster/);
        expect(cluster.nodes.get("n1")!.output()).toMatch(/refused job \S+ of queue polybox-runs/);
      } finally {
        await events.close();
        await queue.close();
      }
    }, 60_000);
  },
);

/** A recorded request's headers, as a client would send them again. */
function replayable(s: Seen): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.headers))
    if (typeof v === "string" && k !== "host" && k !== "content-length" && k !== "connection")
      out[k] = v;
  return out;
}

describe("signed router requests, as a node checks them", () => {
  const keys = clusterKeys("unit-secret");
  const body = JSON.stringify({ owner: "token:a", method: "tools/call", params: { name: "x" } });
  const check = (h: Record<string, string>, nonces = new NonceCache(), now = Date.now()) =>
    checkRequest(keys.requests, "n1", "POST", "/cluster", h, nonces, now);

  it(`accepts a request signed within ±${REQUEST_WINDOW_MS / 1000} s, once`, () => {
    const nonces = new NonceCache();
    const h = signRequest(keys.requests, "n1", "POST", "/cluster", body);
    expect(check(h, nonces)).toMatchObject({ nonce: h["x-polybox-cluster-nonce"] });
    expect(check(h, nonces)).toEqual({
      refused: "replayed: this request's nonce was used before",
    });
  });

  it("refuses a timestamp outside the window, either way", () => {
    const now = Date.now();
    for (const at of [now - REQUEST_WINDOW_MS - 1000, now + REQUEST_WINDOW_MS + 1000]) {
      const h = signRequest(keys.requests, "n1", "POST", "/cluster", body, at);
      expect(check(h, new NonceCache(), now)).toMatchObject({ refused: /^stale/ });
    }
  });

  it("refuses a request signed for another node, path or method, or with another secret", () => {
    const others = [
      signRequest(keys.requests, "n2", "POST", "/cluster", body),
      signRequest(keys.requests, "n1", "POST", "/other", body),
      signRequest(keys.requests, "n1", "GET", "/cluster", body),
      signRequest(clusterKeys("another-secret").requests, "n1", "POST", "/cluster", body),
      // The record key is not the request key.
      signRequest(keys.records, "n1", "POST", "/cluster", body),
    ];
    for (const h of others) expect(check(h)).toMatchObject({ refused: /^bad signature/ });
  });

  it("remembers a bounded number of nonces, and refuses rather than forgets a live one", () => {
    const nonces = new NonceCache(3);
    const now = Date.now();
    for (const n of ["a", "b", "c"]) expect(nonces.claim(n, now + 1000, now)).toBe("new");
    expect(nonces.claim("d", now + 1000, now)).toBe("full");
    expect(nonces.claim("a", now + 1000, now)).toBe("seen");
    // Once they could no longer pass the time check, they make room.
    expect(nonces.claim("d", now + 5000, now + 2000)).toBe("new");
    expect(nonces.size).toBe(1);
  });
});

// A polybox cluster on one machine, every part real: redis-server on a free loopback port, three
// nodes (`polybox serve --cluster`) and two routers (`polybox router`) as processes of the built
// CLI, and the MCP SDK's client against the routers (tools listed first, so every answer is
// checked against its output schema). The tests share the cluster and run in order: the last
// ones drain one node (SIGTERM) and kill another (SIGKILL).

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, connect, freePort, redisMissing, startCluster } from "../helpers/cluster.js";
import { call, initializeRequest, type ToolResult, text } from "../helpers/mcp-client.js";

const missing = redisMissing();
const TOKEN = "router-test-token";
const haproxy = (() => {
  try {
    execFileSync("haproxy", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

interface NodeRecord {
  id: string;
  runs: number;
  load: number;
  draining: boolean;
}

describe.skipIf(missing !== null)(`cluster (${missing ?? "redis-server found"})`, () => {
  let cluster: Cluster;
  let redis: Redis;
  let a: Client;
  let b: Client;
  const clients = () => [a, b];

  // A sandbox's entry names its node (and carries the node's signature, see signed.test.ts).
  const ownerOf = async (sandboxId: string) => {
    const v = await redis.get(`polybox:sandbox:${sandboxId}`);
    return v === null ? null : (JSON.parse(v) as { node: string }).node;
  };
  const record = async (id: string): Promise<NodeRecord | null> => {
    const v = await redis.get(`polybox:node:${id}`);
    return v === null ? null : (JSON.parse(v) as NodeRecord);
  };
  const create = async (client: Client): Promise<string> => {
    const r = await call(client, "create_sandbox", {});
    expect(r.isError, text(r)).toBeFalsy();
    return r.structuredContent!.sandbox_id as string;
  };
  const until = async <T>(fn: () => Promise<T | undefined>, ms: number): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  beforeAll(async () => {
    cluster = await startCluster({
      nodes: 3,
      routers: 2,
      token: TOKEN,
      ttl: "3s",
      // Three nodes share two cores. What is tested is routing, which does not depend on the
      // engine: the WASM default, whose one-shots run in the caller's engine host on each node
      // (a native one-shot starts a jailed interpreter, ten times the CPU of one).
      nodeArgs: ["--concurrency=2", "--pool=typescript=0"],
    });
    redis = new Redis(cluster.redisUrl);
    a = await connect(cluster.routers[0]!.url, TOKEN);
    b = await connect(cluster.routers[1]!.url, TOKEN);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    redis?.disconnect();
    await cluster?.stop();
  });

  it("lists a node's tools, each sandbox_id marked as the Sandbox-Id routing header", async () => {
    const node = await connect(cluster.nodes.get("n1")!.url, TOKEN);
    const direct = (await node.listTools()).tools;
    await node.close();
    const routed = (await a.listTools()).tools;
    expect(routed.map((t) => t.name)).toEqual(direct.map((t) => t.name));
    const withSandbox = routed.filter((t) => t.inputSchema.properties?.sandbox_id);
    expect(withSandbox.length).toBeGreaterThan(10);
    for (const t of withSandbox) {
      expect(t.inputSchema.properties!.sandbox_id, t.name).toMatchObject({
        "x-mcp-header": "Sandbox-Id",
      });
    }
  });

  it("spreads sandboxes over the nodes", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await create(clients()[i % 2]!));
    const owners = await Promise.all(ids.map(ownerOf));
    expect(new Set(owners)).toEqual(new Set(["n1", "n2", "n3"]));
    for (const id of ids)
      expect((await call(a, "close_sandbox", { sandbox_id: id })).isError).toBeFalsy();
    // Its node still answers for a closed one, with why it is gone.
    const gone = await call(b, "execute_python", { code: "1", sandbox_id: ids[0] });
    expect(gone.isError).toBe(true);
    expect(text(gone)).toMatch(/SANDBOX_NOT_FOUND: sandbox \S+ no longer exists/);
    const never = await call(b, "get_sandbox_status", { sandbox_id: "never-made" });
    expect(text(never)).toMatch(/SANDBOX_NOT_FOUND: no sandbox with id "never-made"/);
  });

  it("keeps a sandbox's state across 100 calls through alternating routers", async () => {
    const id = await create(a);
    await call(a, "execute_python", { code: "n = 0", sandbox_id: id });
    for (let i = 1; i <= 100; i++) {
      const r = await call(clients()[i % 2]!, "execute_python", {
        code: "n += 1\nprint(n)",
        sandbox_id: id,
      });
      expect(r.structuredContent?.stdout, text(r)).toBe(`${i}\n`);
    }
    // The header alone routes too: a proxy-friendly client mirrors sandbox_id into it.
    const viaHeader = await connect(cluster.routers[1]!.url, TOKEN, {
      "Mcp-Param-Sandbox-Id": id,
    });
    const r = await call(viaHeader, "execute_code", { code: "print(n)", language: "python" });
    expect(r.structuredContent?.stdout, text(r)).toBe("100\n");
    await viaHeader.close();
    await call(b, "close_sandbox", { sandbox_id: id });
  }, 120_000);

  it("spreads 200 one-shot runs over all nodes", async () => {
    const before = await Promise.all(["n1", "n2", "n3"].map(record));
    const results: ToolResult[] = [];
    for (let batch = 0; batch < 10; batch++) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, j) => {
            const i = batch * 20 + j;
            return call(clients()[i % 2]!, "execute_javascript", { code: `console.log(${i} * 2)` });
          }),
        )),
      );
    }
    results.forEach((r, i) => {
      expect(r.structuredContent?.stdout, text(r)).toBe(`${i * 2}\n`);
    });
    const after = await Promise.all(["n1", "n2", "n3"].map(record));
    const taken = after.map((n, i) => n!.runs - before[i]!.runs);
    expect(taken.reduce((x, y) => x + y, 0)).toBe(200);
    for (const t of taken) expect(t).toBeGreaterThan(0);
  }, 150_000);

  it("shows async jobs, their logs and their cancellation from any router", async () => {
    const started = await call(a, "execute_bash", {
      code: "echo first; sleep 1; echo second",
      async: true,
    });
    const jobId = started.structuredContent?.job_id as string;
    expect(started.structuredContent?.status).toBe("queued");
    const done = await until(async () => {
      const s = await call(b, "check_job_status", { job_id: jobId });
      return s.structuredContent?.status === "completed" ? s : undefined;
    }, 60_000);
    expect(done.structuredContent?.result?.stdout).toBe("first\nsecond\n");
    const logs = await call(a, "get_job_logs", { job_id: jobId });
    expect(logs.structuredContent).toMatchObject({
      status: "completed",
      stdout: "first\nsecond\n",
    });

    // Output so far, from the other router, while the run goes on: an async run in a sandbox
    // (its node's own queue), on the WASM engine, which streams output as it comes.
    const made = await call(b, "create_sandbox", { engine: "wasm" });
    const sandboxId = made.structuredContent?.sandbox_id as string;
    const long = await call(b, "execute_python", {
      code: "import time\nprint('started', flush=True)\ntime.sleep(60)",
      sandbox_id: sandboxId,
      async: true,
    });
    const longId = long.structuredContent?.job_id as string;
    await until(async () => {
      const l = await call(a, "get_job_logs", { job_id: longId });
      return l.structuredContent?.status === "running" &&
        l.structuredContent?.stdout === "started\n"
        ? l
        : undefined;
    }, 60_000);
    const cancelled = await call(a, "cancel_job", { job_id: longId });
    expect(cancelled.structuredContent?.cancelled).toBe(true);
    const final = await until(async () => {
      const s = await call(b, "check_job_status", { job_id: longId });
      return s.structuredContent?.status === "cancelled" ? s : undefined;
    }, 30_000);
    expect(final.structuredContent?.finished_at).not.toBeNull();
    await call(a, "close_sandbox", { sandbox_id: sandboxId });

    // Another client (another token) does not see the job.
    const other = await call(a, "check_job_status", { job_id: "no-such-job" });
    expect(other.isError).toBe(true);
    expect(text(other)).toMatch(/JOB_NOT_FOUND/);
  }, 150_000);

  it("refuses a wrong token at the router and a wrong cluster secret at the node", async () => {
    const router = cluster.routers[0]!.url;
    const init = initializeRequest("t");
    const post = (url: string, headers: Record<string, string>, body: unknown) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(body),
      });
    expect((await post(router, { authorization: "Bearer wrong" }, init)).status).toBe(401);
    expect((await post(router, {}, init)).status).toBe(401);
    expect((await post(router, { authorization: `Bearer ${TOKEN}` }, init)).status).toBe(200);

    const node = cluster.nodes.get("n1")!.url.replace(/\/mcp$/, "/cluster");
    const forwarded = {
      owner: "token:x",
      method: "tools/call",
      params: { name: "create_sandbox", arguments: {} },
    };
    const bogus = {
      "x-polybox-cluster-time": String(Date.now()),
      "x-polybox-cluster-nonce": "0123456789abcdef0123",
      "x-polybox-cluster-body-sha256": "0".repeat(64),
      "x-polybox-cluster-signature": "wrong",
    };
    expect((await post(node, bogus, forwarded)).status).toBe(401);
    expect((await post(node, {}, forwarded)).status).toBe(401);

    // A router with the wrong secret trusts no node's record, so it sends nothing anywhere.
    const rogue = await cluster.startRouter([`--cluster-secret=not-the-secret`]);
    cluster.routers.pop();
    const client = await connect(rogue.url, TOKEN);
    const r = await call(client, "create_sandbox", {});
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/fails this router's signature check/);
    await client.close();
    await rogue.stop();
  });

  it("loses nothing when a router restarts", async () => {
    const id = await create(a);
    await call(a, "execute_python", { code: "kept = 'still here'", sandbox_id: id });
    const job = await call(a, "execute_python", { code: "print('from before')", async: true });
    await a.close();
    await cluster.routers[0]!.stop("SIGKILL");
    cluster.routers[0] = await cluster.startRouter();
    cluster.routers.pop();
    a = await connect(cluster.routers[0]!.url, TOKEN);
    const r = await call(a, "execute_python", { code: "print(kept)", sandbox_id: id });
    expect(r.structuredContent?.stdout, text(r)).toBe("still here\n");
    const done = await until(async () => {
      const s = await call(a, "check_job_status", { job_id: job.structuredContent?.job_id });
      return s.structuredContent?.status === "completed" ? s : undefined;
    }, 60_000);
    expect(done.structuredContent?.result?.stdout).toBe("from before\n");
    await call(a, "close_sandbox", { sandbox_id: id });
  }, 120_000);

  it.skipIf(!haproxy)(
    "works behind HAProxy, as README's example configures it",
    async () => {
      const port = await freePort();
      const dir = mkdtempSync(path.join(tmpdir(), "polybox-haproxy-"));
      // HAProxy passes the client's Host on (its own address): the routers are told to answer it.
      const behind = [];
      for (let i = 0; i < 2; i++) {
        behind.push(await cluster.startRouter([`--allow-host=127.0.0.1:${port}`]));
        cluster.routers.pop();
      }
      const servers = behind
        .map((r, i) => `  server router${i + 1} ${new URL(r.url).host} check`)
        .join("\n");
      const config = `defaults
  mode http
  timeout connect 5s
  timeout client 15m
  timeout server 15m

frontend polybox
  bind 127.0.0.1:${port}
  default_backend routers

backend routers
  balance roundrobin
  option httpchk GET /healthz
${servers}
`;
      writeFileSync(path.join(dir, "haproxy.cfg"), config);
      const proxy = spawn("haproxy", ["-db", "-f", path.join(dir, "haproxy.cfg")], {
        stdio: "ignore",
      });
      try {
        const base = `http://127.0.0.1:${port}`;
        await until(async () => {
          const r = await fetch(`${base}/healthz`).catch(() => null);
          return r?.status === 200 ? true : undefined;
        }, 20_000);
        const client = await connect(`${base}/mcp`, TOKEN);
        const id = await create(client);
        for (let i = 1; i <= 6; i++) {
          const r = await call(client, "execute_python", {
            code: i === 1 ? "k = 1\nprint(k)" : "k += 1\nprint(k)",
            sandbox_id: id,
          });
          expect(r.structuredContent?.stdout, text(r)).toBe(`${i}\n`);
        }
        const once = await call(client, "execute_bash", { code: "echo via-haproxy" });
        expect(once.structuredContent?.stdout).toBe("via-haproxy\n");
        await call(client, "close_sandbox", { sandbox_id: id });
        await client.close();
      } finally {
        proxy.kill("SIGKILL");
        await Promise.all(behind.map((r) => r.stop()));
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it("drains a node on SIGTERM: it finishes its run, takes no new sandbox, and exits", async () => {
    let onN2: string | undefined;
    const others: string[] = [];
    for (let i = 0; i < 9 && onN2 === undefined; i++) {
      const id = await create(a);
      if ((await ownerOf(id)) === "n2") onN2 = id;
      else others.push(id);
    }
    expect(onN2).toBeDefined();
    const running = call(b, "execute_bash", {
      code: "sleep 2; echo finished",
      sandbox_id: onN2,
    });
    await new Promise((r) => setTimeout(r, 500));
    const n2 = cluster.nodes.get("n2")!;
    n2.child.kill("SIGTERM");
    await until(async () => ((await record("n2"))?.draining ? true : undefined), 10_000);
    for (let i = 0; i < 4; i++) {
      const id = await create(a);
      expect(await ownerOf(id)).not.toBe("n2");
      others.push(id);
    }
    const r = await running;
    expect(r.structuredContent?.stdout, text(r)).toBe("finished\n");
    expect(n2.child.exitCode).toBeNull(); // its sandbox is still open: it waits for it
    await call(a, "close_sandbox", { sandbox_id: onN2 });
    expect(await n2.exited).toEqual({ code: 0, signal: null });
    cluster.nodes.delete("n2");
    for (const id of others) await call(a, "close_sandbox", { sandbox_id: id });
  }, 120_000);

  it("SIGKILL of a node: its sandboxes answer SANDBOX_LOST, its queued runs finish elsewhere", async () => {
    let onN3: string | undefined;
    const others: string[] = [];
    for (let i = 0; i < 9 && onN3 === undefined; i++) {
      const id = await create(a);
      if ((await ownerOf(id)) === "n3") onN3 = id;
      else others.push(id);
    }
    expect(onN3).toBeDefined();
    // More runs than the two live nodes (2 at once each, 2 more taken ahead) hold at once.
    const jobs: string[] = [];
    for (let i = 0; i < 12; i++) {
      const j = await call(clients()[i % 2]!, "execute_bash", {
        code: `sleep 1; echo job${i}`,
        async: true,
      });
      jobs.push(j.structuredContent?.job_id as string);
    }
    await until(async () => ((await record("n3"))!.load >= 3 ? true : undefined), 20_000);
    const killedAt = Date.now();
    await cluster.nodes.get("n3")!.stop("SIGKILL");
    cluster.nodes.delete("n3");

    const lost = await until(async () => {
      const r = await call(b, "execute_python", { code: "print(1)", sandbox_id: onN3 });
      return r.isError && /SANDBOX_LOST/.test(text(r)) ? r : undefined;
    }, 3000 + 10_000);
    expect(Date.now() - killedAt).toBeLessThan(3000 + 10_000);
    expect(text(lost)).toMatch(/node n3/);
    // Once its record expired, the answer names its last heartbeat.
    await until(async () => ((await record("n3")) === null ? true : undefined), 15_000);
    const later = await call(a, "get_sandbox_status", { sandbox_id: onN3 });
    expect(text(later)).toMatch(
      /SANDBOX_LOST: sandbox \S+ was lost: node n3 stopped heartbeating \(last heartbeat at \d{4}-/,
    );

    const outcomes = await Promise.all(
      jobs.map((id) =>
        until(async () => {
          const s = await call(a, "check_job_status", { job_id: id });
          const status = s.structuredContent?.status as string | undefined;
          // A job the dead node held may be unreadable for a moment, until its record says
          // what became of it: ask again.
          if (status === undefined) return undefined;
          return status === "queued" || status === "running" ? undefined : s;
        }, 90_000),
      ),
    );
    const failed = outcomes.filter((s) => s.structuredContent?.status !== "completed");
    // Only runs n3 had started are failed, with the lost node named; the rest ran elsewhere.
    // Started means two running and, on a loaded machine, up to two more that n3 took ahead and
    // began, or finished without having recorded their result, in the moment before the kill.
    expect(failed.length).toBeLessThanOrEqual(4);
    for (const f of failed) {
      expect(f.structuredContent?.error, JSON.stringify(f.structuredContent?.error)).toMatchObject({
        code: "SANDBOX_LOST",
      });
      expect(f.structuredContent?.error?.message).toMatch(/node n3 stopped heartbeating/);
    }
    outcomes.forEach((s, i) => {
      if (s.structuredContent?.status === "completed")
        expect(s.structuredContent?.result?.stdout).toBe(`job${i}\n`);
    });
    expect(outcomes.length - failed.length).toBeGreaterThanOrEqual(8);
    for (const id of others) await call(a, "close_sandbox", { sandbox_id: id });
  }, 150_000);
});

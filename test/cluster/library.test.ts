// The library joins a cluster (`polybox/cluster`): an embedder's own process, with its own HTTP
// server, becomes a node next to a router run in-process too, all against a real redis-server on
// a free loopback port, and a real MCP client of the router.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClusterMember,
  joinCluster,
  type RouterServer,
  serveRouter,
} from "../../dist/cluster/index.js";
import { connect, freePort, redisMissing } from "../helpers/cluster.js";
import { call, text } from "../helpers/mcp-client.js";
import { type Runtime, testRuntime } from "../helpers/runtime.js";

const missing = redisMissing();
const SECRET = "library-cluster-secret";
const TOKEN = "library-token";

describe.skipIf(missing !== null)(
  `library cluster node (${missing ?? "redis-server found"})`,
  () => {
    let redis: ReturnType<typeof spawn>;
    let runtime: Runtime;
    let http: Server;
    let member: ClusterMember;
    let router: RouterServer;

    beforeAll(async () => {
      const port = await freePort();
      redis = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: ["ignore", "pipe", "ignore"],
        },
      );
      await new Promise<void>((resolve) => {
        let out = "";
        redis.stdout!.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("Ready to accept connections")) resolve();
        });
      });
      const url = `redis://127.0.0.1:${port}/0`;
      runtime = await testRuntime();
      let endpoint: ClusterMember["endpoint"] | null = null;
      // The embedder's own front: it mounts the node's endpoint and serves nothing else here.
      http = createServer((req, res) => {
        if (endpoint && req.url === endpoint.path) void endpoint.handle(req, res);
        else res.writeHead(404).end();
      });
      await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
      const address = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      member = await joinCluster({
        runtime,
        cluster: { url, secret: SECRET, nodeId: "embedded", ttlMs: 3000 },
        address,
      });
      endpoint = member.endpoint;
      router = await serveRouter({
        url,
        secret: SECRET,
        host: "127.0.0.1",
        port: 0,
        version: "test",
        tokens: [TOKEN],
      });
    }, 120_000);

    afterAll(async () => {
      await router?.close();
      await member?.close();
      await new Promise((r) => http?.close(r));
      await runtime?.close();
      redis?.kill("SIGKILL");
    });

    it("serves routed sandboxes and queued runs from the embedder's process", async () => {
      const client = await connect(router.url, TOKEN);
      const created = await call(client, "create_sandbox", {});
      expect(created.isError, text(created)).toBeFalsy();
      const id = created.structuredContent!.sandbox_id as string;
      // The sandbox lives in the embedder's own service.
      const owner = `token:${createHash("sha256").update(TOKEN).digest("hex")}`;
      expect(member.service.sandboxStatus({ owner }, id).map((s) => s.id)).toEqual([id]);
      await call(client, "execute_javascript", { code: "globalThis.v = 20", sandbox_id: id });
      const r = await call(client, "execute_javascript", {
        code: "console.log(v + 1)",
        sandbox_id: id,
      });
      expect(r.structuredContent?.stdout, text(r)).toBe("21\n");
      const once = await call(client, "execute_bash", { code: "echo queued" });
      expect(once.structuredContent?.stdout, text(once)).toBe("queued\n");
      await call(client, "close_sandbox", { sandbox_id: id });
      await client.close();
    }, 90_000);
  },
);

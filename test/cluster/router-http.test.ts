// The router as an HTTP front: it answers only Host and Origin headers it knows, as `serve` does
// (the same guard, src/mcp/http-guard.ts: DNS rebinding and cross-site requests), and it stops
// within a stated bound when its Redis is gone (ioredis and BullMQ wait for a Redis that is down
// for ever). A real redis-server on a free loopback port and the router run in-process.

import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { type RouterServer, serveRouter } from "../../dist/cluster/index.js";
import { freePort, redisMissing } from "../helpers/cluster.js";
import { postInitialize } from "../helpers/mcp-client.js";

const missing = redisMissing();
/** Stopping waits at most 3 s per Redis connection, all at once; the rest is margin for load. */
const CLOSE_BOUND_MS = 15_000;

async function startRedis(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", () => reject(new Error(`redis-server exited: ${out}`)));
  });
  return { child, url: `redis://127.0.0.1:${port}/0` };
}

describe.skipIf(missing !== null)(`router over HTTP (${missing ?? "redis-server found"})`, () => {
  const redises: ChildProcess[] = [];
  const routers: RouterServer[] = [];

  afterEach(async () => {
    await Promise.all(routers.splice(0).map((r) => r.close()));
    for (const r of redises.splice(0)) r.kill("SIGKILL");
  });

  it("refuses a foreign Host or Origin with 403, before the token; answers its own", async () => {
    const redis = await startRedis();
    redises.push(redis.child);
    const router = await serveRouter({
      url: redis.url,
      secret: "guard-secret",
      host: "127.0.0.1",
      port: 0,
      version: "test",
      allowedHosts: ["proxy.test:8000"],
    });
    routers.push(router);
    const port = new URL(router.url).port;
    expect(await postInitialize(router.url, {})).toBe(200);
    expect(await postInitialize(router.url, { host: `localhost:${port}` })).toBe(200);
    // DNS rebinding: a name that resolves here, which the router was never told it has.
    expect(await postInitialize(router.url, { host: `evil.example:${port}` })).toBe(403);
    // A cross-site request from a page served elsewhere.
    expect(await postInitialize(router.url, { origin: "http://evil.example" })).toBe(403);
    // A load balancer's name on its own port, as listed; not on another port.
    expect(await postInitialize(router.url, { host: "proxy.test:8000" })).toBe(200);
    expect(await postInitialize(router.url, { host: "proxy.test:8001" })).toBe(403);
  }, 30_000);

  it(`closes within ${CLOSE_BOUND_MS / 1000} s while Redis is down`, async () => {
    const redis = await startRedis();
    redises.push(redis.child);
    const router = await serveRouter({
      url: redis.url,
      secret: "close-secret",
      host: "127.0.0.1",
      port: 0,
      version: "test",
    });
    // Its connections are up: the registry's, and the shared queue's events (a blocking read).
    expect(await postInitialize(router.url, {})).toBe(200);
    redis.child.kill("SIGKILL");
    await new Promise((r) => redis.child.once("exit", r));
    // Let the connections notice: they are reconnecting, not merely idle.
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    const outcome = await Promise.race([
      router.close().then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still closing"), CLOSE_BOUND_MS + 5000).unref()),
    ]);
    expect(outcome).toBe("closed");
    expect(Date.now() - started).toBeLessThan(CLOSE_BOUND_MS);
  }, 60_000);
});

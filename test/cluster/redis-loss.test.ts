// A cluster node whose Redis went away must still stop when asked: SIGTERM drains its own runs
// and exits within the grace it states, saying that Redis was unreachable, rather than waiting
// forever on a Redis call (ioredis retries forever, and BullMQ's worker close waits on it).
// Real processes: a redis-server on a free loopback port and `polybox serve --cluster`.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, redisMissing } from "../helpers/cluster.js";
import { CLI } from "../helpers/mcp-client.js";

const missing = redisMissing();
const GRACE_S = 5;
/** Past the drain grace, what closing the service and the engines may take. */
const MARGIN_S = 15;

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(command: string, args: string[], ready: RegExp): Promise<Proc> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      if (ready.test(out)) resolve({ child, output: () => out, exited });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((e) => reject(new Error(`${command} exited (${e.code ?? e.signal}): ${out}`)));
  });
}

describe.skipIf(missing !== null)(
  `a node that lost Redis (${missing ?? "redis-server found"})`,
  () => {
    const started: Proc[] = [];
    const dirs: string[] = [];

    afterEach(() => {
      for (const p of started.splice(0))
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    it(`drains and exits 0 within --drain-grace + ${MARGIN_S} s, saying Redis was unreachable`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "polybox-redis-loss-"));
      dirs.push(dir);
      const port = await freePort();
      const redis = await start(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        /Ready to accept connections/,
      );
      started.push(redis);
      const node = await start(
        process.execPath,
        [
          CLI,
          "serve",
          "--port=0",
          `--cluster=redis://127.0.0.1:${port}/0`,
          "--cluster-secret=redis-loss-secret",
          "--node-id=lonely",
          "--cluster-ttl=3s",
          `--drain-grace=${GRACE_S}s`,
          `--data-dir=${path.join(dir, "data")}`,
        ],
        /cluster node \S+ joined/,
      );
      started.push(node);

      redis.child.kill("SIGKILL");
      await redis.exited;
      // Let the node's connections notice: they are reconnecting, not merely idle.
      await new Promise((r) => setTimeout(r, 500));
      const signalled = Date.now();
      node.child.kill("SIGTERM");
      const outcome = await Promise.race([
        node.exited,
        new Promise<"still running">((r) =>
          setTimeout(() => r("still running"), (GRACE_S + MARGIN_S) * 1000).unref(),
        ),
      ]);
      const seconds = (Date.now() - signalled) / 1000;
      expect(outcome, node.output()).toEqual({ code: 0, signal: null });
      expect(seconds).toBeLessThan(GRACE_S + MARGIN_S);
      expect(node.output()).toMatch(/draining: no new work/);
      expect(node.output()).toMatch(/Redis at 127\.0\.0\.1:\d+ is unreachable/);
    }, 60_000);
  },
);

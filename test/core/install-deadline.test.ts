// `timeoutMs` bounds everything a run does, fetching its packages included: a run whose PEP 723
// dependency sits on an index that never answers ends as `timeout` by its own limit, and a cancel
// stops the wait too. The index is a loopback stand-in that accepts the request and stalls.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
let server: http.Server;
let asked = 0;
const held: http.ServerResponse[] = [];

const CODE = ["# /// script", '# dependencies = ["stalled-dist"]', "# ///", "print('never')"].join(
  "\n",
);

/** Past the timeout: the call's own timers on a loaded machine. */
const SLACK_MS = 5_000;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    asked++;
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  runtime = await testRuntime({
    pythonPackages: [`http://127.0.0.1:${port}/simple/`],
    allowPrivateIndex: true,
  } as Parameters<typeof testRuntime>[0]);
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  server.close();
  await runtime?.close();
});

describe("a run that fetches packages", () => {
  it("ends as timeout by its timeoutMs when the index stalls", async () => {
    await using sb = await Sandbox.create({ runtime, limits: { timeoutMs: 2_000 } });
    const before = asked;
    const started = Date.now();
    const r = await sb.run("python", CODE);
    const took = Date.now() - started;
    expect(asked).toBeGreaterThan(before);
    expect(r.status).toBe("timeout");
    expect(r.exitCode).toBe(124);
    expect(r.message).toMatch(/^timed out: timeoutMs=2000; fetching its packages/);
    expect(r.stdout).toBe("");
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(2_000 + SLACK_MS);
    // The sandbox is usable afterwards.
    expect((await sb.run("python", "print(6 * 7)")).stdout).toBe("42\n");
  });

  it("ends as cancelled when its signal fires while it waits", async () => {
    await using sb = await Sandbox.create({ runtime, limits: { timeoutMs: 60_000 } });
    const controller = new AbortController();
    const later = setTimeout(() => controller.abort(), 1_000);
    const started = Date.now();
    const r = await sb.run("python", CODE, { signal: controller.signal });
    clearTimeout(later);
    expect(r.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(1_000 + SLACK_MS);
  });
});

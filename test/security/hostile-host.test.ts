// T19 a hostile engine host: the trusted side treats everything its engine host sends as forged.
// A fake host (fixtures/hostile-host.mjs) floods a run with output for its own and others' ids,
// sends malformed, unknown, duplicate and oversized messages, never ends a run, and never answers
// stats(). The server side must stay up, hold no more than each run may cost, answer with
// results or typed errors, and leave real sandboxes working.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  FIXTURES_DIR,
  REPO_DIR,
  type Runtime,
  securityRuntime,
} from "../helpers/security-env.js";

type EngineHostModule = typeof import("../../dist/supervisor/wasm-host.js");

let rt: Runtime;
let WasmHost: EngineHostModule["WasmHost"];
let RUN_GRACE_MS: number;
const logged: string[] = [];

beforeAll(async () => {
  rt = await securityRuntime({ pool: { python: 0, javascript: 1, bash: 0 } });
  ({ WasmHost } = (await import(
    path.join(REPO_DIR, "dist", "supervisor", "wasm-host.js")
  )) as EngineHostModule);
  ({ RUN_GRACE_MS } = (await import(path.join(REPO_DIR, "dist", "protocol", "deadlines.js"))) as {
    RUN_GRACE_MS: number;
  });
});

afterAll(async () => {
  await rt?.close();
});

function hostileHost() {
  return new WasmHost({
    pool: {},
    memoryMb: 128,
    pythonSnapshot: null,
    wrap: () => [process.execPath, [path.join(FIXTURES_DIR, "hostile-host.mjs")]],
    log: (level, message, untrusted) => logged.push(`${level} ${message} ${untrusted ?? ""}`),
  });
}

const limits = (over: Partial<Record<string, number>> = {}) => ({
  timeoutMs: 2_000,
  memoryMb: 128,
  maxOutputBytes: 64 * 1024,
  workspaceQuotaBytes: 1024 * 1024,
  ...over,
});

const request = (code: string, over: Partial<Record<string, number>> = {}) => ({
  code,
  stdin: "",
  env: {},
  limits: limits(over),
  fullSync: true,
  sync: { files: [], dirs: [], removed: [] },
});

describe("T19 hostile engine host", () => {
  it("T19 a flood of forged, oversized and malformed messages is bounded and attributed", async () => {
    const host = hostileHost();
    try {
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      const seen = { stdout: 0, stderr: 0 };
      const r = await host.run({
        session: null,
        language: "javascript",
        request: request("flood"),
        output: (stream, text) => {
          seen[stream] += text.length;
        },
      });
      // Output past the cap is a lie no honest host tells: the run ends output_limit, the host dies.
      expect(r.status).toBe("output_limit");
      expect(seen.stdout).toBeLessThanOrEqual(64 * 1024);
      expect(seen.stderr).toBeLessThanOrEqual(64 * 1024);
      expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(64 * 1024);
      expect(r.value?.length ?? 0).toBeLessThanOrEqual(1024 * 1024);
      expect(r.truncated).toBe(true);
      global.gc?.();
      const grew = process.memoryUsage().rss - rssBefore;
      expect(grew, `the trusted side grew by ${grew >> 20} MiB`).toBeLessThan(64 * 1024 * 1024);
      // Its log lines are quoted as untrusted and capped, never lines of their own.
      const forged = logged.filter((l) => l.includes("forged"));
      for (const line of forged) {
        expect(line).not.toContain("\npolybox");
        expect(line.length).toBeLessThan(4096 + 200);
      }
    } finally {
      await host.close();
    }
  });

  it("T19 file changes that escape the workspace or exceed its quota are refused", async () => {
    const host = hostileHost();
    try {
      const r = await host.run({
        session: null,
        language: "javascript",
        request: request("files"),
        output: () => undefined,
      });
      expect(r.status).toBe("error");
      expect(r.message).toMatch(/invalid result/);
      expect(r.changes.files).toEqual([]);
      const malformed = await host.run({
        session: null,
        language: "javascript",
        request: request("malformed"),
        output: () => undefined,
      });
      expect(malformed.status).toBe("error");
      expect(malformed.message).toMatch(/invalid result/);
    } finally {
      await host.close();
    }
  });

  it("T19 forged interpreter state (oversized, malformed, a flood of names) is refused with a typed error", async () => {
    const host = hostileHost();
    try {
      await host.start();
      const max = 4 * 1024 * 1024;
      for (const session of ["oversized", "malformed", "flood-names"]) {
        await expect(host.captureState(session, max), session).rejects.toMatchObject({
          code: "PROTOCOL_ERROR",
        });
      }
      await expect(
        host.restoreState("s", "javascript", { kind: "memory", data: new Uint8Array(16) }, 128),
      ).rejects.toMatchObject({ code: "PROTOCOL_ERROR" });
      // The channel still serves honest answers afterwards.
      expect(await host.captureState("honest", max)).toEqual({
        captured: false,
        reason: "honest: nothing here",
      });
    } finally {
      await host.close();
    }
  });

  it("T19 a host that never ends a run or answers stats() is killed in time, with typed errors", async () => {
    const host = hostileHost();
    try {
      const started = Date.now();
      const r = await host.run({
        session: null,
        language: "javascript",
        request: request("silent"),
        output: () => undefined,
      });
      // The run's 2 s, then the stated grace for starting it: the caller gets `timeout` then,
      // whatever the host does; the host, which never stops the run, is killed 3 s later.
      expect(r.status).toBe("timeout");
      expect(r.message).toMatch(/timeoutMs=2000/);
      expect(Date.now() - started).toBeLessThan(2_000 + RUN_GRACE_MS + 10_000);
      const restarts = host.restarts;
      const deadline = Date.now() + 20_000;
      while (host.restarts === restarts && Date.now() < deadline)
        await new Promise((res) => setTimeout(res, 100));
      expect(host.restarts, "the host that never stopped the run was not killed").toBe(
        restarts + 1,
      );
      await expect(host.stats()).rejects.toMatchObject({ code: "TIMEOUT" });
    } finally {
      await host.close();
    }
    await expectRuntimeAnswers(rt);
  }, 60_000);
});

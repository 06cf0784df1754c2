// One deadline per run (src/protocol/deadlines.ts): the trusted side sets `deadlineAt` as the run
// leaves for its engine host, and the host's layers (the worker's engine, the host's kill timer)
// arm their timers from it rather than from their own clocks' view of `timeoutMs`. A real engine
// host, run directly: a run whose deadline was set for it earlier than its timeoutMs ends then.
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { REPO_DIR } from "../helpers/security-env.js";

type WasmHostModule = typeof import("../../dist/supervisor/wasm-host.js");
const { WasmHost } = (await import(
  path.join(REPO_DIR, "dist", "supervisor", "wasm-host.js")
)) as WasmHostModule;

const host = new WasmHost({
  pool: { javascript: 1 },
  memoryMb: 256,
  pythonSnapshot: null,
  wrap: (command, args) => [command, args],
});
afterAll(() => host.close());

const request = (code: string, timeoutMs: number, deadlineAt?: number) => ({
  code,
  stdin: "",
  env: {},
  limits: { timeoutMs, memoryMb: 256, maxOutputBytes: 64 * 1024, workspaceQuotaBytes: 1 << 20 },
  fullSync: true,
  sync: { files: [], dirs: [], removed: [] },
  ...(deadlineAt === undefined ? {} : { deadlineAt }),
});

it("a run ends at its deadlineAt, not timeoutMs after it reached the engine", async () => {
  let out = "";
  const first = await host.run({
    session: null,
    language: "javascript",
    request: request("console.log('up')", 60_000),
    output: (_stream, text) => {
      out += text;
    },
  });
  expect(first.status).toBe("ok");
  expect(out).toBe("up\n");
  const started = Date.now();
  // timeoutMs alone would let this loop run a minute; its deadline is two seconds away.
  const r = await host.run({
    session: null,
    language: "javascript",
    request: request("for (;;) {}", 60_000, Date.now() + 2_000),
    output: () => undefined,
  });
  expect(r.status).toBe("timeout");
  // Stopped by the engine itself at the deadline, not by the trusted side's backstop after it.
  expect(r.stderr).not.toMatch(/did not stop in time/);
  expect(Date.now() - started).toBeLessThan(40_000);
}, 90_000);

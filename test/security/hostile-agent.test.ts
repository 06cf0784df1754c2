// T20 a hostile native agent: the trusted side treats everything a jail's agent sends as forged.
// A fake agent (fixtures/hostile-agent.mjs), run in a real jail, floods a run with output for its
// own and others' ids, sends lines that are not JSON and messages of unknown shapes, a line that
// never ends, invalid results, and never ends a run. The server must stay up and bounded, answer
// with results that say what happened, and leave the next native sandbox working.
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FIXTURES_DIR, REPO_DIR } from "../helpers/security-env.js";
import { usable } from "../native/helpers.js";

type NativeModule = typeof import("../../dist/supervisor/native-host.js");
type RuntimeModule = typeof import("../../dist/index.js");

let NativeHost: NativeModule["NativeHost"];
let Runtime: RuntimeModule["Runtime"];
const logged: string[] = [];

beforeAll(async () => {
  ({ NativeHost } = (await import(
    path.join(REPO_DIR, "dist", "supervisor", "native-host.js")
  )) as NativeModule);
  ({ Runtime } = (await import(path.join(REPO_DIR, "dist", "index.js"))) as RuntimeModule);
});

const MIB = 1024 * 1024;
const host = () =>
  new NativeHost(
    {},
    (level, message, untrusted) => logged.push(`${level} ${message} ${untrusted ?? ""}`),
    path.join(FIXTURES_DIR, "hostile-agent.mjs"),
  );

const request = (code: string) => ({
  code,
  stdin: "",
  env: {},
  limits: { timeoutMs: 2_000, memoryMb: 128, maxOutputBytes: 64 * 1024, workspaceQuotaBytes: MIB },
  fullSync: true,
  sync: { files: [], dirs: [], removed: [] },
});

describe.runIf(usable)("T20 hostile native agent", () => {
  let before = process.memoryUsage();
  beforeAll(async () => {
    // A first jail warms what every jail shares (modules, buffers), so the figure below is growth.
    const native = host();
    await native.forSandbox("warm", MIB).run({
      session: null,
      language: "python",
      request: request("malformed"),
      output: () => undefined,
    });
    await native.close();
    global.gc?.();
    before = process.memoryUsage();
  });

  it("T20 a flood of forged and malformed lines is bounded and attributed; the jail is killed", async () => {
    const native = host();
    try {
      const sandbox = native.forSandbox("flood", MIB);
      const seen = { stdout: 0, stderr: 0 };
      const r = await sandbox.run({
        session: null,
        language: "python",
        request: request("flood"),
        output: (stream, text) => {
          seen[stream] += text.length;
        },
      });
      expect(r.status).toBe("output_limit");
      expect(seen.stdout).toBeLessThanOrEqual(64 * 1024);
      expect(seen.stderr).toBeLessThanOrEqual(64 * 1024);
      expect(logged.some((l) => /was killed/.test(l))).toBe(true);
      // Log lines of the agent reach the log quoted, cut, and few.
      expect(logged.every((l) => l.length < 10_000)).toBe(true);
      const other = native.forSandbox("malformed", MIB);
      const malformed = await other.run({
        session: null,
        language: "python",
        request: request("malformed"),
        output: () => undefined,
      });
      expect(malformed.status).toBe("error");
      expect(malformed.message).toMatch(/invalid result/);
    } finally {
      await native.close();
    }
  }, 60_000);

  it("T20 a line longer than any honest message kills the jail, and the run says so", async () => {
    const native = host();
    try {
      const r = await native.forSandbox("long", MIB).run({
        session: null,
        language: "python",
        request: request("longline"),
        output: () => undefined,
      });
      expect(r.status).toBe("error");
      expect(r.message).toMatch(/native jail ended/);
      expect(logged.some((l) => /longer than any honest message/.test(l))).toBe(true);
    } finally {
      await native.close();
    }
  }, 60_000);

  it("T20 forged file changes are refused: no path outside the workspace, nothing past the quota", async () => {
    const native = host();
    try {
      const r = await native.forSandbox("files", MIB).run({
        session: null,
        language: "python",
        request: request("files"),
        output: () => undefined,
      });
      // One path escapes: the whole result is discarded.
      expect(r.status).toBe("error");
      expect(r.changes.files).toHaveLength(0);
    } finally {
      await native.close();
    }
  }, 60_000);

  it("T20 an agent that never ends a run: the run ends as timeout, the jail is killed", async () => {
    const native = host();
    try {
      const sandbox = native.forSandbox("silent", MIB);
      const r = await sandbox.run({
        session: null,
        language: "python",
        request: request("silent"),
        output: () => undefined,
      });
      expect(r.status).toBe("timeout");
      expect(r.message).toMatch(/timeoutMs=2000/);
      const deadline = Date.now() + 20_000;
      while (!logged.some((l) => /did not stop an overdue run/.test(l)) && Date.now() < deadline)
        await new Promise((res) => setTimeout(res, 100));
      expect(logged.some((l) => /did not stop an overdue run/.test(l))).toBe(true);
    } finally {
      await native.close();
    }
  }, 60_000);

  it("T20 the floods, long lines and forged files left the server's memory bounded", () => {
    global.gc?.();
    const now = process.memoryUsage();
    // What the server still holds after a collection: ~170 MiB went past it, so keeping any of
    // the floods would show here. RSS also counts what the allocator keeps after a collection,
    // which Node 22 and 24 keep more of than 20 (50-85 MiB here), so it gets a looser bound.
    const retained = now.heapUsed + now.external - (before.heapUsed + before.external);
    expect(retained, `retained ${Math.round(retained / MIB)} MiB`).toBeLessThan(32 * MIB);
    const rss = now.rss - before.rss;
    expect(rss, `RSS grew by ${Math.round(rss / MIB)} MiB`).toBeLessThan(128 * MIB);
  });

  it("T20 after all that, a real native sandbox works", async () => {
    const rt = await Runtime.create({
      isolation: "native",
      pool: { python: 0, javascript: 0, bash: 0, typescript: 0 },
    });
    try {
      const { Sandbox } = (await import(path.join(REPO_DIR, "dist", "index.js"))) as RuntimeModule;
      const sb = await Sandbox.create({ runtime: rt });
      const r = await sb.run("python", "print(6 * 7)");
      expect(r.stdout).toBe("42\n");
      await sb.close();
    } finally {
      await rt.close();
    }
  }, 120_000);
});

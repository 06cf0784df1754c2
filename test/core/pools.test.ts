// Warm engine hosts: every tenant (sandbox or one-shot run) gets an engine host process of its
// own, taken warm from the fleet; the fleet fills to its size, keeps within its memory budget,
// shrinks after an idle spell and refills on the next claim. A host is never handed on.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fleetOf, hostPidOf } from "../helpers/internals.js";
import { run, Sandbox, testRuntime } from "../helpers/runtime.js";

async function until(check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("warm engine hosts", () => {
  it("fill, shrink when idle, and refill on the next claim", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 3, typescript: 0, bash: 0 },
      poolIdleShrinkMs: 2000,
    });
    await until(() => fleetOf(rt).stats().warm.javascript === 3);
    await until(() => fleetOf(rt).stats().warm.javascript === 1);
    await run({ runtime: rt, language: "javascript", code: "1" });
    await until(() => fleetOf(rt).stats().warm.javascript === 3);
  });

  it("stay within the memory budget", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 0, typescript: 0, bash: 4 },
      // Room for two Bash hosts by the fleet's estimate (105 MiB each), not three.
      poolBudgetMb: 220,
    });
    await until(() => fleetOf(rt).stats().warm.bash === 2);
    await new Promise((r) => setTimeout(r, 1000));
    expect(fleetOf(rt).stats().warm.bash).toBe(2);
  });

  it("give every sandbox a process of its own, ended when the sandbox closes", async () => {
    await using rt = await testRuntime();
    const a = await Sandbox.create({ runtime: rt });
    const b = await Sandbox.create({ runtime: rt });
    await a.run("python", "1");
    await b.run("python", "1");
    await a.run("bash", "true");
    const pidA = hostPidOf(a)!;
    const pidB = hostPidOf(b)!;
    expect(pidA).toBeTypeOf("number");
    expect(pidB).toBeTypeOf("number");
    expect(pidA).not.toBe(pidB);
    // Every language of one sandbox runs in that sandbox's one process.
    await a.run("javascript", "1");
    expect(hostPidOf(a)).toBe(pidA);
    expect(fleetOf(rt).stats().claimed).toBe(2);
    // The kernel ends a jailed host with its jail, a moment after the launcher dies.
    await a.close();
    await until(() => !alive(pidA), 10_000);
    expect(alive(pidB)).toBe(true);
    await b.close();
    await until(() => !alive(pidB), 10_000);
    expect(fleetOf(rt).stats().claimed).toBe(0);
  });

  it("never hand a one-shot's interpreter to a second run, though its principal's process serves both", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 1, typescript: 0, bash: 1 },
    });
    await run({ runtime: rt, language: "javascript", code: "globalThis.leftover = 'secret'" });
    const r = await run({
      runtime: rt,
      language: "javascript",
      code: "typeof globalThis.leftover",
    });
    expect(r.value).toBe("'undefined'");
    const first = await run({
      runtime: rt,
      language: "bash",
      code: "echo secret > /workspace/left.txt; echo secret > /tmp/left.txt; export LEFT=secret",
    });
    expect(first.status).toBe("ok");
    const second = await run({
      runtime: rt,
      language: "bash",
      code: 'ls /workspace /tmp; echo "[$LEFT]"',
    });
    expect(second.stdout).not.toContain("secret");
    expect(second.stdout).not.toContain("left.txt");
    expect(second.stdout).toContain("[]");
    // One process serves the runtime's default principal; another principal gets its own.
    expect(fleetOf(rt).stats().claimed).toBe(1);
    const mine = fleetOf(rt).principalPid("default");
    expect(mine).toBeGreaterThan(0);
    const theirs = await run({
      runtime: rt,
      language: "javascript",
      code: "typeof globalThis.leftover",
      principal: "other",
    });
    expect(theirs.value).toBe("'undefined'");
    expect(fleetOf(rt).stats().claimed).toBe(2);
    expect(fleetOf(rt).principalPid("other")).not.toBe(mine);
    expect(alive(mine!)).toBe(true);
    await fleetOf(rt).releasePrincipal("other");
    expect(fleetOf(rt).stats().claimed).toBe(1);
  });

  it.runIf(process.platform === "linux")(
    "leave no engine host process behind when the runtime closes",
    async () => {
      const rt = await testRuntime();
      const sb = await Sandbox.create({ runtime: rt });
      await sb.run("javascript", "1");
      const pid = hostPidOf(sb)!;
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("engine-host");
      await rt.close();
      await until(() => !alive(pid), 10_000);
    },
  );
});

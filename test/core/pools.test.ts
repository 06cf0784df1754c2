// Warm pools: filled to their size, kept within the memory budget, shrunk after an idle spell
// and refilled by the next run. One-shot interpreters are never reused.
import { describe, expect, it } from "vitest";
import { run, testRuntime } from "../helpers/runtime.js";

async function until(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

describe("warm pools", () => {
  it("fill, shrink when idle, and refill on the next run", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 3, typescript: 0, bash: 0 },
      poolIdleShrinkMs: 2000,
    });
    await until(async () => (await rt.host.stats()).pooled.javascript === 3);
    await until(async () => (await rt.host.stats()).pooled.javascript === 1);
    await run({ runtime: rt, language: "javascript", code: "1" });
    await until(async () => (await rt.host.stats()).pooled.javascript === 3);
  });

  it("stay within the memory budget", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 0, typescript: 0, bash: 4 },
      poolBudgetMb: 60,
    });
    await until(async () => (await rt.host.stats()).pooled.bash === 2);
    await new Promise((r) => setTimeout(r, 500));
    expect((await rt.host.stats()).pooled.bash).toBe(2);
  });

  it("recycle a bash one-shot worker with a fresh interpreter: nothing carries over", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 0, typescript: 0, bash: 1 },
    });
    await until(async () => (await rt.host.stats()).pooled.bash === 1);
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
    // The worker came back to the pool instead of a new one being booted.
    await until(async () => (await rt.host.stats()).pooled.bash === 1);
  });

  it("never hand a one-shot interpreter to a second run", async () => {
    await using rt = await testRuntime({
      pool: { python: 0, javascript: 1, typescript: 0, bash: 0 },
    });
    await run({ runtime: rt, language: "javascript", code: "globalThis.leftover = 'secret'" });
    const r = await run({
      runtime: rt,
      language: "javascript",
      code: "typeof globalThis.leftover",
    });
    expect(r.value).toBe('"undefined"');
  });
});

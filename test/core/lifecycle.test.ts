// Lifetimes: one-shot runs, cancellation, live output, and a long mixed run that must leave no
// worker or memory behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Language, type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

describe("lifecycle", () => {
  it("one-shot run creates, runs and destroys", async () => {
    const r = await run({
      runtime,
      language: "python",
      code: "print(open('in.txt').read())",
      files: { "in.txt": "given" },
    });
    expect(r).toMatchObject({ status: "ok", stdout: "given\n" });
  });

  it("streams output before the run ends", async () => {
    await using sb = await Sandbox.create({ runtime });
    const seen: { text: string; at: number }[] = [];
    const started = Date.now();
    const r = await sb.run(
      "python",
      "import time\nprint('first', flush=True)\ntime.sleep(0.6)\nprint('second')",
      {
        onOutput: (_stream, text) => seen.push({ text, at: Date.now() - started }),
      },
    );
    expect(r.stdout).toBe("first\nsecond\n");
    const first = seen.find((s) => s.text.includes("first"));
    expect(first).toBeDefined();
    expect(first!.at).toBeLessThan(r.durationMs - 300);
  });

  it("cancels a running run with an AbortSignal", async () => {
    await using sb = await Sandbox.create({ runtime });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await sb.run("javascript", "while (true) {}", { signal: controller.signal });
    expect(r.status).toBe("cancelled");
    expect((await sb.run("javascript", "1 + 1")).value).toBe("2");
  });

  it("cancels a run whose interpreter is still booting, without waiting for its timeout", async () => {
    await using cold = await testRuntime({
      pool: { python: 0, javascript: 0, typescript: 0, bash: 0 },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const r = await run({
      runtime: cold,
      language: "python",
      code: "while True: pass",
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    expect(r.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("leaves no worker or memory growth behind after 200 mixed runs", async () => {
    const languages: Language[] = ["python", "javascript", "typescript", "bash"];
    const code: Partial<Record<Language, string>> = {
      python: "print(sum(range(100)))",
      javascript: "console.log([1,2,3].map(x => x * 2).join(','))",
      typescript: "const n: number = 6 * 7;\nconsole.log(n)",
      bash: "echo $((6 * 7))",
    };
    const keep = await Sandbox.create({ runtime });
    /** 100 runs, alternating one-shot and stateful, across every language. */
    const batch = async () => {
      for (let i = 0; i < 100; i++) {
        const language = languages[i % languages.length]!;
        const r =
          i % 2 === 0
            ? await run({ runtime, language, code: code[language]! })
            : await keep.run(language, code[language]!);
        expect(r.status).toBe("ok");
      }
      await new Promise((r) => setTimeout(r, 2000)); // let pools refill and workers exit
      return runtime.host.stats();
    };
    // The first batch sets the allocator's high-water mark; a leak shows as growth in the second.
    const first = await batch();
    const second = await batch();
    await keep.close();
    await new Promise((r) => setTimeout(r, 500));
    const after = await runtime.host.stats();
    expect(after.sessions).toBe(0);
    expect(second.workers).toBeLessThanOrEqual(first.workers);
    expect(second.rssBytes - first.rssBytes).toBeLessThan(150 * 1024 * 1024);
  });
});

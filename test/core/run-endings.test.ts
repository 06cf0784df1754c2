// How a run ends when something stops it: everything the guest printed before the end is in the
// result, for every language and every way it can end; a timeout is reported as `timeout`, never
// as `cancelled`, and the call returns within the limit plus the stated grace; an interpreter
// left unusable by a limit is replaced and the result says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Language, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

/** Prints three lines, then never ends on its own. */
const PRINT_THEN_HANG: Partial<Record<Language, string>> = {
  python:
    "import time\nfor i in range(3):\n    print('line', i, flush=True)\nwhile True:\n    time.sleep(0.1)",
  javascript: "for (let i = 0; i < 3; i++) console.log('line', i);\nwhile (true) {}",
  bash: "for i in 0 1 2; do echo line $i; done\nwhile true; do sleep 0.1; done",
};

/** The timeout is counted from the guest's start; the call may also wait for its start. */
const GRACE_MS = 3_000 + 5_000;

describe.each(Object.keys(PRINT_THEN_HANG) as Language[])("%s", (language) => {
  it(`${language}: a timeout keeps what was printed and is reported as timeout`, async () => {
    await using sb = await Sandbox.create({ runtime, limits: { timeoutMs: 2_000 } });
    const started = Date.now();
    const r = await sb.run(language, PRINT_THEN_HANG[language]!);
    expect(r.status).toBe("timeout");
    expect(r.message).toMatch(/timeoutMs=2000/);
    expect(r.stdout).toContain("line 0");
    expect(r.stdout).toContain("line 2");
    expect(Date.now() - started).toBeLessThan(2_000 + GRACE_MS);
    // The sandbox works afterwards.
    expect((await sb.run(language, language === "bash" ? "echo ok" : "'ok'")).status).toBe("ok");
  });

  it(`${language}: a cancel keeps what was printed`, async () => {
    await using sb = await Sandbox.create({ runtime, limits: { timeoutMs: 60_000 } });
    const controller = new AbortController();
    // Bash hands back its output only when it stops: cancel it after a while instead, long
    // enough for the loop's first lines on a loaded machine (the run may also wait to start).
    const later = setTimeout(() => controller.abort(), language === "bash" ? 6_000 : 60_000);
    let printed = "";
    const running = sb.run(language, PRINT_THEN_HANG[language]!, {
      signal: controller.signal,
      onOutput: (_stream, text) => {
        printed += text;
        if (printed.includes("line 2")) controller.abort();
      },
    });
    const r = await running;
    clearTimeout(later);
    expect(r.status).toBe("cancelled");
    expect(r.stdout).toContain("line 0");
    expect(r.stdout).toContain("line 2");
  });
});

it("javascript: after memory_limit the interpreter is replaced, and the next run works", async () => {
  await using sb = await Sandbox.create({ runtime, limits: { memoryMb: 64 } });
  const r = await sb.run(
    "javascript",
    "globalThis.big = []; for (;;) big.push('x'.repeat(1e6) + Math.random())",
  );
  expect(r.status).toBe("memory_limit");
  expect(r.stateLost).toBe(true);
  for (let i = 0; i < 3; i++) {
    const next = await sb.run("javascript", "typeof globalThis.big");
    expect(next.status).toBe("ok");
    expect(next.value).toBe("'undefined'");
  }
});

it("python: stdin arrives as given, with no newline added, and EOF is EOFError", async () => {
  await using sb = await Sandbox.create({ runtime });
  const r = await sb.run("python", "import sys\nprint(repr(sys.stdin.read()))", { stdin: "abc" });
  expect(r.stdout).toBe("'abc'\n");
  const eof = await sb.run("python", "input()", { stdin: "" });
  expect(eof.status).toBe("error");
  expect(eof.stderr).toMatch(/EOFError/);
});

describe("the output cap", () => {
  it("python: stops a flood without a traceback of the interrupt it raised", async () => {
    await using sb = await Sandbox.create({ runtime, limits: { maxOutputBytes: 4096 } });
    const r = await sb.run("python", "while True:\n    print('x' * 100)");
    expect(r.status).toBe("output_limit");
    expect(r.stdout.length).toBe(4096);
    expect(r.stderr).not.toMatch(/KeyboardInterrupt|Traceback/);
    expect(r.message).toMatch(/maxOutputBytes=4096/);
    // The sandbox goes on, and its own errors still show their traceback.
    const next = await sb.run("python", "raise KeyboardInterrupt");
    expect(next.stderr).toMatch(/KeyboardInterrupt/);
  }, 60_000);
});

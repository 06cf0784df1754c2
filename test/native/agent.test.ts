// Native mode, the agent and the trusted side: guest code runs as the jail's one user, like the
// agent (polybox's own code in the jail, which answers the server for the sandbox).
//   T20 the guest takes over the agent (its memory through /proc, ptrace, signals)
//   T19 the trusted side bounds what a native jail sends
//   14.10 a bad interpreter path is refused when the runtime is made
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPolyboxError, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { usable } from "./helpers.js";

let rt: Runtime;
beforeAll(async () => {
  if (usable) rt = await testRuntime({ isolation: "auto" });
});
afterAll(async () => {
  await rt?.close();
});

describe.runIf(usable)("native agent", () => {
  it("T20 guest code cannot open the agent's memory, read its environment, trace or signal it", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    const r = await sb.run(
      "python",
      `import os, errno
agent = os.getppid()
def attempt(label, f):
    try:
        f()
        print(label, "GOT")
    except OSError as e:
        print(label, "blocked", errno.errorcode.get(e.errno, e.errno))
# Positive control: the same calls on our own process work.
attempt("self-mem", lambda: open(f"/proc/{os.getpid()}/mem", "r+b").close())
attempt("agent-mem", lambda: open(f"/proc/{agent}/mem", "r+b").close())
attempt("agent-environ", lambda: open(f"/proc/{agent}/environ", "rb").read())
attempt("agent-signal", lambda: os.kill(agent, 0))
print("comm", open(f"/proc/{agent}/comm").read().strip())`,
    );
    expect(r.status, r.stderr).toBe("ok");
    // The process we aim at really is the agent (node), and /proc works for our own process.
    expect(r.stdout).toMatch(/comm (node|MainThread)/);
    expect(r.stdout).toContain("self-mem GOT");
    expect(r.stdout).toMatch(/agent-mem blocked (EACCES|EPERM)/);
    expect(r.stdout).toMatch(/agent-environ blocked (EACCES|EPERM)/);
    expect(r.stdout).toMatch(/agent-signal blocked EPERM/);
    // The agent still answers.
    expect((await sb.run("python", "6 * 7")).value).toBe("42");
  });

  it("T19 a flood of output from a native run stays within the run's cap on the trusted side", async () => {
    await using sb = await Sandbox.create({
      runtime: rt,
      engine: "native",
      limits: { maxOutputBytes: 64 * 1024 },
    });
    const seen = { stdout: 0, stderr: 0 };
    const r = await sb.run("bash", "head -c 50000000 /dev/zero | tr '\\0' x", {
      onOutput: (stream, text) => (seen[stream] += text.length),
    });
    expect(r.status).toBe("output_limit");
    expect(seen.stdout).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(64 * 1024);
  });
});

describe.runIf(usable)("native interpreter paths", () => {
  it("a missing --native-python/--native-bash/--native-node path is refused at start, naming it", async () => {
    for (const key of ["python", "bash", "node"] as const) {
      const made = testRuntime({
        isolation: "auto",
        nativeInterpreters: { [key]: "/nonexistent/interpreter" },
      });
      await expect(made).rejects.toSatisfy(
        (e: unknown) =>
          isPolyboxError(e) &&
          e.code === "INVALID_ARGUMENT" &&
          e.message.includes(`nativeInterpreters.${key}`) &&
          e.message.includes("/nonexistent/interpreter"),
      );
    }
  });
});

describe.runIf(usable)("T23 native: nothing of a run keeps running after it", () => {
  it.each([
    [
      "python",
      "python thread",
      "import threading, time\ndef tick():\n    while True:\n        open('/tmp/ticks', 'a').write('t\\n')\n        time.sleep(0.05)\nthreading.Thread(target=tick, daemon=True).start()\ntime.sleep(0.2)",
      "print(len(open('/tmp/ticks').read().split()))",
    ],
    [
      "javascript",
      "node setInterval",
      "setInterval(() => require('fs').appendFileSync('/tmp/ticks', 't\\n'), 50); await new Promise((r) => setTimeout(r, 200));",
      "console.log(require('fs').readFileSync('/tmp/ticks', 'utf8').split('\\n').filter(Boolean).length)",
    ],
  ] as const)(
    "T23 a %s %s left behind does no work between runs",
    async (language, _label, start, count) => {
      await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
      const first = await sb.run(language, start);
      expect(first.status, first.stderr).toBe("ok");
      const during = Number((await sb.run(language, count)).stdout.trim());
      // Three idle seconds: a free-running ticker would add ~60 lines.
      await new Promise((r) => setTimeout(r, 3_000));
      const after = Number((await sb.run(language, count)).stdout.trim());
      expect(during).toBeGreaterThan(0);
      expect(after - during, "ticks added while no run was in progress").toBeLessThan(15);
    },
  );
});

describe.runIf(usable)("T24 native: memoryMb holds for an interpreter and what it starts", () => {
  it.each([
    [
      "javascript",
      "node Buffers",
      "globalThis.keep = []; for (let i = 0; i < 12; i++) keep.push(Buffer.alloc(100 * 2 ** 20, 1)); keep.length",
    ],
    [
      "javascript",
      "a child of node",
      "require('child_process').execFileSync('/usr/bin/python3', ['-c', 'b = bytearray(900 * 2**20); import time; time.sleep(5)']); 'done'",
    ],
    [
      "bash",
      "a python started from bash",
      "python3 -c 'b = bytearray(900 * 2**20); import time; time.sleep(5)'",
    ],
  ] as const)("T24 %s: %s past memoryMb ends memory_limit", async (language, _label, code) => {
    await using sb = await Sandbox.create({
      runtime: rt,
      engine: "native",
      limits: { memoryMb: 256, timeoutMs: 30_000 },
    });
    const r = await sb.run(language, code);
    expect(r.status, `${r.stdout} ${r.stderr}`).toBe("memory_limit");
    expect(r.exitCode).toBe(137);
    expect((await sb.run(language, language === "bash" ? "echo ok" : "'ok'")).status).toBe("ok");
  });
});

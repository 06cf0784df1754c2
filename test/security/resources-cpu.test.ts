// T8 CPU exhaustion: infinite loops in every language and in the Python worker's JavaScript
// realm (where Python's own interrupt cannot reach), and a thread parked forever in Atomics.wait.
// Each must end with status "timeout" close to its deadline, and the sandbox must run again.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  hostPid,
  type Language,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
  sleep,
} from "../helpers/security-env.js";

const TIMEOUT_MS = 2_000;
/** How far past its deadline a run may end: the kill backstop plus a slow CI machine. */
const SLACK_MS = 12_000;
let rt: Runtime;

beforeAll(async () => {
  rt = await securityRuntime();
});

afterAll(async () => {
  await rt?.close();
});

const LOOPS: [string, Language, string][] = [
  ["python while True", "python", "while True:\n    pass"],
  ["python time.sleep", "python", "import time\ntime.sleep(3600)"],
  [
    "python realm while(true) via run_js",
    "python",
    "from pyodide.code import run_js\nrun_js('while (true) {}')",
  ],
  [
    "python realm Atomics.wait forever",
    "python",
    "from pyodide.code import run_js\nrun_js('Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)')",
  ],
  [
    "python except-swallowing loop",
    "python",
    "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
  ],
  ["javascript while(true)", "javascript", "while (true) {}"],
  ["javascript timer chain", "javascript", "const tick = () => setTimeout(tick, 0); tick();"],
  [
    "javascript catch-swallowing loop",
    "javascript",
    "for (;;) { try { for (;;) {} } catch (e) {} }",
  ],
  ["bash while true", "bash", "while true; do :; done"],
  ["bash sleep", "bash", "sleep 3600"],
];

it.each(LOOPS)(
  "T8 CPU exhaustion: %s ends with timeout and the sandbox runs again",
  async (_label, language, code) => {
    const sb = await newSandbox(rt, { timeoutMs: TIMEOUT_MS });
    try {
      const started = Date.now();
      const r = await sb.run(language, code);
      const took = Date.now() - started;
      // just-bash's own command budget follows timeoutMs, so Bash ends with timeout like the rest.
      expect(r.status, `${r.message ?? ""} ${r.stderr}`).toBe("timeout");
      expect(r.message).toMatch(/timeoutMs=2000/);
      expect(took).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      const next = await sb.run(
        language,
        language === "bash"
          ? "echo again"
          : language === "python"
            ? "print('again')"
            : "console.log('again')",
        // The next run boots a fresh interpreter, which a loaded machine can keep past 2 s.
        { timeoutMs: 60_000 },
      );
      expect(next.status).toBe("ok");
      expect(next.stdout).toBe("again\n");
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
  },
);

/** CPU seconds (user + system) the engine host process has used so far (Linux). */
function hostCpuSeconds(sb: Sandbox): number {
  const fields = readFileSync(`/proc/${hostPid(sb)}/stat`, "utf8")
    .split(") ")[1]!
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// A run ends when its code returns; code it left scheduled must not keep running afterwards
// with no deadline (the sandbox stays open between runs, and so does its interpreter).
it.skipIf(process.platform !== "linux").each([
  [
    "python asyncio task",
    "import asyncio\nasync def spin():\n    while True:\n        await asyncio.sleep(0)\n        sum(range(200000))\nasyncio.ensure_future(spin())\n'started'",
  ],
  [
    "python realm setInterval via run_js",
    "from pyodide.code import run_js\nrun_js('setInterval(() => { const t = Date.now(); while (Date.now() - t < 95) {} }, 100)')\n'started'",
  ],
])(
  "T8 CPU exhaustion: %s left behind by a finished run stops burning CPU",
  async (_label, code) => {
    const sb = await newSandbox(rt, { timeoutMs: TIMEOUT_MS });
    try {
      await sb.run("python", "1");
      const r = await sb.run("python", code);
      expect(r.status).toBe("ok");
      const before = hostCpuSeconds(sb);
      await sleep(4_000);
      const used = hostCpuSeconds(sb) - before;
      expect(
        used,
        `the engine host used ${used.toFixed(2)} CPU-s in the 4 s after the run returned`,
      ).toBeLessThan(1.5);
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
  },
);

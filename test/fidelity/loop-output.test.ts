// Output printed inside a compound command (a loop, a function, a subshell, `if`, `case`, a brace
// group, the last stage of a pipeline) reaches the run as each statement ends, as a top-level
// command's does: it is in the result, in order, when a timeout, a cancel or the output limit
// stops the script, and `onOutput` sees it before the run ends. Output the script captures
// itself (`$(…)`, a redirection, a pipe) is still not the run's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunResult, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
let sb: Sandbox;
beforeAll(async () => {
  runtime = await testRuntime();
  sb = await Sandbox.create({ runtime });
});
afterAll(async () => {
  await sb.close();
  await runtime.close();
});

/** Eight ticks a second apart, as a straight list of commands. */
const TICKS = Array.from({ length: 8 }, (_, i) => `echo tick ${i + 1}; sleep 1`).join("; ");

/** Each prints `tick 1`, `tick 2`, … a second apart, for longer than the run's 3 s. */
const PRINTERS: [string, string][] = [
  ["for loop", "for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; done"],
  ["while loop", "i=1; while [ $i -le 8 ]; do echo tick $i; i=$((i + 1)); sleep 1; done"],
  ["until loop", "i=1; until [ $i -gt 8 ]; do echo tick $i; i=$((i + 1)); sleep 1; done"],
  ["C-style for loop", "for ((i = 1; i <= 8; i++)); do echo tick $i; sleep 1; done"],
  ["function", `f() { ${TICKS}; }; f`],
  [
    "function calling a function in a loop",
    "t() { echo tick $1; sleep 1; }; f() { for i in 1 2 3 4 5 6 7 8; do t $i; done; }; f",
  ],
  ["subshell", `( ${TICKS} )`],
  ["if", `if true; then ${TICKS}; fi`],
  ["case", `case x in x) ${TICKS} ;; esac`],
  ["brace group", `{ ${TICKS}; }`],
  ["pipeline ending in a loop", "seq 1 8 | while read i; do echo tick $i; sleep 1; done"],
  [
    "loop in a loop",
    "for a in 1; do for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; done; done",
  ],
];

/** The ticks in `stdout`, which must be `tick 1`, `tick 2`, … in order and nothing else. */
function ticks(stdout: string): number {
  const lines = stdout.split("\n");
  expect(lines.pop()).toBe("");
  lines.forEach((line, i) => {
    expect(line).toBe(`tick ${i + 1}`);
  });
  return lines.length;
}

describe("a timeout keeps what a compound command printed", () => {
  it.each(PRINTERS)("%s", async (_name, code) => {
    const r = await sb.run("bash", code, { timeoutMs: 3_000 });
    expect(r.status).toBe("timeout");
    // Ticks at 0, 1 and 2 s; a loaded machine may get to fewer.
    const n = ticks(r.stdout);
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThanOrEqual(4);
    // The sandbox works afterwards.
    expect((await sb.run("bash", "echo ok")).stdout).toBe("ok\n");
  });

  it("stderr printed in a loop is kept too, each stream in order", async () => {
    const r = await sb.run(
      "bash",
      "for i in 1 2 3 4 5 6 7 8; do echo tick $i; echo warn $i >&2; sleep 1; done",
      { timeoutMs: 3_000 },
    );
    expect(r.status).toBe("timeout");
    const n = ticks(r.stdout);
    expect(n).toBeGreaterThanOrEqual(2);
    expect(r.stderr).toMatch(/^warn 1\nwarn 2\n/);
  });
});

describe("a timeout does not print what the script had captured", () => {
  // A loop redirected to a file, or a $(…) being read, when the deadline stops it: its text was
  // the file's or the substitution's, never the script's output. It used to come back as stdout.
  it.each([
    [
      "a loop redirected to a file",
      'echo before; for i in $(seq 1 400000); do echo "x$i"; done > big.txt',
    ],
    [
      "a loop inside $(…)",
      'echo before; s=$(for i in $(seq 1 400000); do echo "x$i"; done); echo "$s" | wc -l',
    ],
  ])("%s", async (_name, code) => {
    const r = await sb.run("bash", code, { timeoutMs: 2_000 });
    expect(r.status).toBe("timeout");
    expect(r.stdout).toBe("before\n");
    // just-bash says so on stderr when it stops itself; on a loaded machine its worker may be
    // stopped for it a moment later, and then only the run's message says so.
    expect(`${r.stderr}\n${r.message ?? ""}`).toMatch(/deadline|timed out/);
  });
});

describe("a cancel keeps what a loop printed", () => {
  it("the ticks before the cancel are in the result, and each arrived once", async () => {
    const controller = new AbortController();
    // Cancel once the second tick has arrived; failing that, after a while anyway.
    const fallback = setTimeout(() => controller.abort(), 10_000);
    let live = "";
    const r = await sb.run("bash", "for i in $(seq 1 30); do echo tick $i; sleep 1; done", {
      timeoutMs: 60_000,
      signal: controller.signal,
      onOutput: (stream, text) => {
        if (stream !== "stdout") return;
        live += text;
        if (live.includes("tick 2\n")) controller.abort();
      },
    });
    clearTimeout(fallback);
    expect(r.status).toBe("cancelled");
    expect(ticks(r.stdout)).toBeGreaterThanOrEqual(2);
    expect(r.stdout).toBe(live);
  });
});

describe("the output limit reached inside a loop", () => {
  it("keeps what fit, stops the loop, and says output_limit", async () => {
    const started = Date.now();
    const r = await sb.run("bash", 'i=0; while :; do i=$((i + 1)); echo "line $i"; done', {
      timeoutMs: 30_000,
      maxOutputBytes: 1_000,
    });
    expect(r.status).toBe("output_limit");
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBe(1_000);
    const expected = Array.from({ length: 400 }, (_, i) => `line ${i + 1}\n`).join("");
    expect(expected.startsWith(r.stdout)).toBe(true);
    // Stopped at the limit, not at the timeout.
    expect(Date.now() - started).toBeLessThan(25_000);
  });
});

describe("onOutput", () => {
  it("receives a loop's ticks while the loop runs", async () => {
    const arrived: [number, string][] = [];
    const r = await sb.run("bash", "for i in 1 2 3; do echo tick $i; sleep 1; done", {
      onOutput: (stream, text) => {
        if (stream === "stdout") arrived.push([Date.now(), text]);
      },
    });
    const ended = Date.now();
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("tick 1\ntick 2\ntick 3\n");
    expect(arrived.map(([, text]) => text).join("")).toBe(r.stdout);
    // The first tick came about 3 s before the end (two more seconds of sleep after it).
    const first = arrived.find(([, text]) => text.includes("tick 1"));
    expect(first).toBeDefined();
    expect(ended - first![0]).toBeGreaterThan(1_500);
  });

  it("sees a long loop's output exactly once, in order", async () => {
    let live = "";
    const r = await sb.run("bash", 'for i in $(seq 1 3000); do echo "w$i"; done; echo end >&2', {
      onOutput: (stream, text) => {
        if (stream === "stdout") live += text;
      },
    });
    const expected = Array.from({ length: 3000 }, (_, i) => `w${i + 1}\n`).join("");
    expect(r.stdout).toBe(expected);
    expect(live).toBe(expected);
    expect(r.stderr).toBe("end\n");
  });
});

describe("output the script captures is not the run's", () => {
  async function run(code: string): Promise<RunResult> {
    let live = "";
    const r = await sb.run("bash", code, {
      onOutput: (stream, text) => {
        if (stream === "stdout") live += text;
      },
    });
    expect(live).toBe(r.stdout);
    return r;
  }

  it("$(…) around a loop", async () => {
    const r = await run('x=$(for i in 1 2; do echo $i; done); echo "[$x]"');
    expect(r.stdout).toBe("[1\n2]\n");
  });

  it("a loop redirected to a file", async () => {
    const r = await run("for i in 1 2 3; do echo $i; done > f; cat f");
    expect(r.stdout).toBe("1\n2\n3\n");
  });

  it("a loop piped into another command", async () => {
    const r = await run("for i in 1 2 3; do echo $i; done | wc -l");
    expect(r.stdout.trim()).toBe("3");
  });

  it("a function whose call is redirected, and a group's stderr sent to stdout", async () => {
    const r = await run(
      "f() { for i in 1 2; do echo f$i; done; }; f > out; f 2>/dev/null; { echo e >&2; } 2>&1; cat out",
    );
    expect(r.stdout).toBe("f1\nf2\ne\nf1\nf2\n");
  });

  it("a loop's stdout captured while its stderr still reaches the run", async () => {
    const r = await run("for i in 1 2; do echo o$i; echo e$i >&2; done > f; cat f");
    expect(r.stdout).toBe("o1\no2\n");
    expect(r.stderr).toBe("e1\ne2\n");
  });

  it("the EXIT trap's output follows the script's", async () => {
    const r = await run(
      "trap 'for i in 1 2; do echo bye $i; done' EXIT; for i in 1 2; do echo $i; done",
    );
    expect(r.stdout).toBe("1\n2\nbye 1\nbye 2\n");
  });
});

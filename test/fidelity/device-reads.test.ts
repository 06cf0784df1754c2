// Differential (issue #34): reads from the endless devices and large streams in WASM Bash give
// exactly the bytes asked for. WASM Bash used to read at most 64 KiB from /dev/zero and
// /dev/urandom with status ok (`head -c 1048576 /dev/zero | wc -c` printed 65536) and had no dd.
// Each script runs in a polybox sandbox (limits raised so that 64 MiB fits) and in the machine's
// bash, in an empty directory; stdout and exit status must be equal, and equal to the arithmetic
// answer where there is one. Sizes are 2^k-1, 2^k and 2^k+1, every k up to 64 MiB for head through
// a pipe, a few k for the rest. Past a limit of the run (memoryMb, workspaceQuotaBytes,
// maxOutputBytes) the run must fail with that limit's status and a message, never come back short.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const MIB = 1024 * 1024;
/** 2^26 = 64 MiB, the largest size read. */
const TOP = 26;

/** 2^k-1, 2^k, 2^k+1 for each k, each size once, smallest first. */
function around(ks: number[]): number[] {
  const sizes = new Set<number>();
  for (const k of ks) for (const n of [2 ** k - 1, 2 ** k, 2 ** k + 1]) sizes.add(n);
  return [...sizes].sort((a, b) => a - b);
}
const EVERY_K = Array.from({ length: TOP + 1 }, (_, k) => k);
const SOME_K = [0, 12, 16, 20, 24];
const lines = (values: (number | string)[]) => values.map((v) => `${v}\n`).join("");

let runtime: Runtime;
let sb: Sandbox;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 0, bash: 1 } });
  sb = await Sandbox.create({
    runtime,
    limits: { memoryMb: 1024, workspaceQuotaBytes: 512 * MIB, timeoutMs: 120_000 },
  });
});
afterAll(async () => {
  await sb?.close();
  await runtime?.close();
});

/** The script in the machine's bash, run as a script file in an empty directory. */
function realBash(script: string): { stdout: string; exitCode: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-devices-"));
  try {
    const file = path.join(dir, "script.sh");
    writeFileSync(file, `${script}\n`);
    const work = path.join(dir, "work");
    spawnSync("/bin/mkdir", [work]);
    const r = spawnSync("/bin/bash", [file], {
      cwd: work,
      encoding: "utf8",
      input: "",
      maxBuffer: 64 * MIB,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, LANG: "C.UTF-8", TZ: "UTC" },
    });
    return { stdout: r.stdout, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The script in the sandbox, in a fresh directory under /tmp (outside the workspace, so that the
 * large files it leaves are not copied back), against the real bash and, if given, the answer.
 */
async function compare(script: string, expected?: string): Promise<string> {
  await sb.run("bash", `cd "$(mktemp -d)"`);
  const r = await sb.run("bash", script);
  expect(r.stderr).not.toMatch(/limit exceeded|command not found/);
  expect(r.status).toBe("ok");
  const real = realBash(script);
  expect({ stdout: r.stdout, exitCode: r.exitCode }).toEqual(real);
  if (expected !== undefined) expect(r.stdout).toBe(expected);
  return r.stdout;
}

describe("WASM Bash reads the devices and large streams exactly", () => {
  it("head -c N /dev/zero | wc -c, at every power of two up to 64 MiB", async () => {
    const sizes = around(EVERY_K);
    await compare(sizes.map((n) => `head -c ${n} /dev/zero | wc -c`).join("\n"), lines(sizes));
  }, 120_000);

  it("head -c N /dev/urandom | wc -c, and /dev/random", async () => {
    const sizes = [...around(EVERY_K.filter((k) => k <= 17)), 2 ** 20, 2 ** 24, 2 ** TOP];
    const script = [
      ...sizes.map((n) => `head -c ${n} /dev/urandom | wc -c`),
      ...[4095, 65537].map((n) => `head -c ${n} /dev/random | wc -c`),
    ].join("\n");
    await compare(script, lines([...sizes, 4095, 65537]));
  }, 120_000);

  it("head -c N /dev/zero > f; wc -c < f", async () => {
    const sizes = [...around(SOME_K), 2 ** TOP];
    const script = sizes.map((n) => `head -c ${n} /dev/zero > f; wc -c < f`).join("\n");
    await compare(`${script}\nrm f`, lines(sizes));
  }, 120_000);

  it("random bytes differ from read to read, and zeros are zeros", async () => {
    await compare(
      [
        "head -c 70000 /dev/urandom > a; head -c 70000 /dev/urandom > b; cmp -s a b || echo differ",
        "head -c 3000000 /dev/zero > z; dd if=/dev/zero bs=1000 count=3000 2>/dev/null | cmp - z && echo same",
        "head -c 100000 /dev/zero | tr -d '\\0' | wc -c; tr -d '\\0' < z | wc -c",
        "rm a b z",
      ].join("\n"),
    );
  });

  it("a device read whole, then limited: cat | head, head < device, yes | head", async () => {
    const sizes = around([16, 20, 24]);
    const script = [
      ...sizes.map((n) => `cat /dev/zero | head -c ${n} | wc -c`),
      ...sizes.map((n) => `head -c ${n} < /dev/urandom | wc -c`),
      `yes | head -n ${3 * MIB} | wc -l`,
      `yes abc | head -c ${2 ** 24 + 1} | cksum`,
      "tr -dc a-z < /dev/urandom | head -c 32 | wc -c",
      "dd bs=1M count=3 < /dev/zero 2>/dev/null | wc -c",
    ].join("\n");
    await compare(script);
  }, 120_000);

  it("a device read whole and changed on its way (tr, od, fold): exact, or a clear error", async () => {
    // Each pipeline in real bash prints its count; in polybox it prints the same count, or the
    // reading command fails (pipefail makes that the pipeline's status) and says why: the
    // window of a device read whole ends where the real stream goes on.
    const pipelines = [
      // Within the window: exact, as in bash.
      "tr -dc a-z < /dev/urandom | head -c 4096 | wc -c",
      "cat /dev/urandom | od -An -tx1 | head -n 1000 | wc -l",
      "yes hello | tr a-z A-Z | head -n 3 | wc -l",
      "tr -dc a-z < /dev/urandom | head -c 16 | head -c 100 | wc -c",
      // dd counts a short read from a pipe as a block; fullblock makes bash's answer one answer.
      "tr -dc a-z < /dev/urandom | dd bs=1000 count=5 iflag=fullblock status=none | wc -c",
      // Past it: bash reads on.
      "tr -dc a-z < /dev/urandom | head -c 2000000 | wc -c",
      "cat /dev/urandom | od -An -tx1 | head -n 100000 | wc -l",
      "yes hello | tr a-z A-Z | head -n 300000 | wc -l",
      "tr -dc a-z < /dev/urandom | fold -w 8 | head -n 200000 | wc -l",
      "tr -dc a-z < /dev/urandom | dd bs=1M count=2 iflag=fullblock status=none | wc -c",
      // bash would never end: tail waits for the end of a stream that has none.
      "tr a b < /dev/zero | tail -c 10 | wc -c",
      "tr -dc a-z < /dev/urandom | tail -c 10 | wc -c",
    ];
    let cut = 0;
    for (const pipeline of pipelines) {
      const script = `set -o pipefail\n${pipeline}`;
      const r = await sb.run("bash", script);
      if (r.exitCode === 0 && !pipeline.includes("tail")) {
        expect({ pipeline, stdout: r.stdout }).toEqual({
          pipeline,
          stdout: realBash(script).stdout,
        });
        expect(r.stderr).toBe("");
        continue;
      }
      cut++;
      expect(r.exitCode, pipeline).not.toBe(0);
      expect(r.stderr, pipeline).toMatch(
        /is cut short: it was made from (\/dev\/\w+|the output of yes) read whole|never ends/,
      );
    }
    // The first five fit their window; the others cannot be exact here, so each must say so.
    expect(cut).toBe(7);
  }, 120_000);

  it("dd if=DEVICE bs=B count=C, counts and GNU's summary", async () => {
    // bs= as written, its bytes, count=.
    const blocks: [string, number, number][] = [
      ["1", 1, 1],
      ["1", 1, 65537],
      ["512", 512, 129],
      ["1000", 1000, 1000],
      ["1024", 1024, 200],
      ["4096", 4096, 17],
      ["65535", 65535, 3],
      ["64K", 65536, 2],
      ["65537", 65537, 1],
      ["1M", MIB, 1],
      ["1M", MIB, 64],
      ["2x512", 1024, 3],
      ["3", 3, 100000],
    ];
    const sizes = blocks.map(([, bytes, count]) => bytes * count);
    const small = blocks.filter(([, bytes, count]) => bytes * count <= MIB);
    const script = [
      ...blocks.map(([bs, , c]) => `dd if=/dev/zero bs=${bs} count=${c} 2>/dev/null | wc -c`),
      ...small.map(([bs, , c]) => `dd if=/dev/urandom bs=${bs} count=${c} 2>/dev/null | wc -c`),
    ].join("\n");
    await compare(script, lines([...sizes, ...small.map(([, bytes, count]) => bytes * count)]));
    // The example, and what dd says on stderr (less its timing).
    await compare(
      [
        "dd if=/dev/urandom bs=1024 count=200 | wc -c",
        ...blocks.map(
          ([bs, , c]) =>
            `dd if=/dev/zero of=/dev/null bs=${bs} count=${c} 2>&1 | sed 's/ copied.*//'`,
        ),
        "dd if=/dev/zero of=f bs=1M count=16 2>&1 | head -2; wc -c < f",
        "dd if=/dev/zero of=/dev/null bs=1M count=1024 2>&1 | sed 's/ copied.*//'",
        "dd if=/dev/zero of=f bs=1K count=3 seek=2 conv=notrunc status=none; wc -c < f; rm f",
        "printf 'hello world' > h; dd if=h bs=4 skip=1 count=1 conv=ucase status=none; echo",
        "dd if=h ibs=4 obs=3 2>&1 >/dev/null | head -2; dd if=h bs=1 skip=20 2>&1 >/dev/null | head -3",
        "printf 'abcdefgh' | dd bs=3 conv=sync status=none | od -c",
        "head -c 3000001 /dev/zero | dd bs=65536 iflag=fullblock 2>/dev/null | wc -c",
        "dd if=/dev/zero bs=64K count=1 status=none | dd bs=1 skip=100 count=50 status=none | wc -c",
      ].join("\n"),
    );
  }, 120_000);

  it("tail -c N and tail -c +N of a file and a 64 MiB stream", async () => {
    const sizes = around([0, 16, 24]);
    const total = 2 ** 24 + 1;
    const stdout = await compare(
      [
        `yes abcdefg | head -c ${total} > big`,
        ...sizes.map((n) => `tail -c ${n} big | wc -c`),
        ...sizes.map((n) => `tail -c +${n} big | wc -c`),
        `head -c ${2 ** TOP + 1} /dev/zero | tail -c ${2 ** TOP} | wc -c`,
        `cat big | tail -c ${2 ** 20 + 1} | cksum`,
        `tail -c +${2 ** 23} < big | cksum`,
        "rm big",
      ].join("\n"),
    );
    const counts = [
      ...sizes.map((n) => Math.min(n, total)),
      ...sizes.map((n) => Math.max(0, total - Math.max(n, 1) + 1)),
      2 ** TOP,
    ];
    expect(stdout.startsWith(lines(counts))).toBe(true);
  }, 120_000);

  it("cat of a large file, through pipes and redirects", async () => {
    const size = 2 ** 24 + 1;
    const stdout = await compare(
      [
        `yes abcdefg | head -c ${size} > big`,
        "cat big | wc -c",
        "cat big big | wc -c",
        "cat big > copy; wc -c < copy",
        "cat big | cksum",
        "cat < big | tail -c 100 | cksum",
        "rm big copy",
      ].join("\n"),
    );
    expect(stdout.startsWith(lines([size, 2 * size, size]))).toBe(true);
  }, 120_000);

  it("here-documents and here-strings of large size", async () => {
    const sizes = [65535, 65536, 65537, MIB + 1];
    // In subshells, so that the large variable does not outlive the run.
    const script = sizes
      .map(
        (n) =>
          `(x=$(yes abcdefg | head -c ${n})\ncat <<EOF | wc -c\n$x\nEOF\ncat <<EOF | cksum\n$x\nEOF\ncat <<< "$x" | wc -c\n)`,
      )
      .join("\n");
    await compare(script);
  }, 120_000);
});

describe("past a limit of the run, the run fails clearly", () => {
  let small: Sandbox;
  beforeAll(async () => {
    small = await Sandbox.create({
      runtime,
      limits: { memoryMb: 64, workspaceQuotaBytes: MIB, maxOutputBytes: 64 * 1024 },
    });
  });
  afterAll(async () => {
    await small?.close();
  });

  it("more than memoryMb allows: memory_limit, not a short count", async () => {
    for (const script of [
      "cat /dev/zero | head -c 100M > f; wc -c < f",
      "dd if=/dev/urandom bs=1M count=100 | wc -c",
      "head -n 1 /dev/zero | wc -c",
    ]) {
      const r = await small.run("bash", script);
      expect(r.status, script).toBe("memory_limit");
      expect(r.stdout, script).toBe("");
      expect(r.stderr, script).toMatch(/live byte limit exceeded/);
    }
  }, 120_000);

  it("more than workspaceQuotaBytes: workspace_limit", async () => {
    const r = await small.run("bash", "head -c 2M /dev/zero > f; wc -c < f");
    expect(r.status).toBe("workspace_limit");
    expect(r.stdout).toBe(`${2 * MIB}\n`);
  });

  it("more than maxOutputBytes: output_limit, truncated", async () => {
    const r = await small.run("bash", "head -c 100000 /dev/urandom");
    expect(r.status).toBe("output_limit");
    expect(r.truncated).toBe(true);
  });

  it("a device read to its end says it never ends", async () => {
    for (const [script, message] of [
      ["dd if=/dev/zero of=/dev/null", /never ends: give count=/],
      ["tail -c 5 /dev/zero", /never ends/],
      ["cat /dev/urandom | tail -n 1", /never ends/],
      ["head -c -5 /dev/zero", /never ends/],
    ] as const) {
      const r = await small.run("bash", `${script}; echo rc=$?`);
      expect(r.stdout, script).toBe("rc=1\n");
      expect(r.stderr, script).toMatch(message);
    }
  });
});

// `npm run bench:bash`: how fast Bash loops run in polybox, against the machine's bash and against
// just-bash (the interpreter polybox runs) called in this process, all three side by side in one
// run (issue #31). Each case is one script. Real bash and just-bash run it in a directory or file
// system of their own; polybox runs every case in one sandbox, as just-bash runs them all in this
// process. Each way runs a case once untimed, then the repeats interleaved, and keeps the median.
// Prints one table (case, the three times, the two ratios, PASS/MISS), and the same as JSON with
// --json. It reports; the exit code is 0 whatever misses.
//
// Targets: every case within 20x of real bash; polybox within 1.2x of just-bash in-process on
// each; the 100,000-line `while read` under 3 s and the 400,000-line generator under 20 s, with
// polybox's default limits. BENCH_QUICK=1 runs each case once at a tenth of its size (the two
// absolute targets scaled with it), in about a minute. BENCH_CASES=arrays,case runs only the cases
// named. `npm run build` first (bench:bash does).

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Bash, InMemoryFs } from "just-bash";
import { executionLimits } from "../dist/guest/engines/bash/budgets.js";
import { DEFAULT_LIMITS, Runtime, Sandbox } from "../dist/index.js";
import { bashBinary } from "./lib/baselines.mjs";
import { now, round } from "./lib/stats.mjs";

const exec = promisify(execFile);

const QUICK = process.env.BENCH_QUICK === "1";
const SCALE = QUICK ? 0.1 : 1;
const REPEATS = Number(process.env.BENCH_REPEATS ?? (QUICK ? 1 : 3));
/** The longest any one way may take on one case; just-bash in-process is stopped there. */
const CAP_MS = 120_000;
const BASH_RATIO = 20;
const PEER_RATIO = 1.2;

const n = (x) => Math.max(10, Math.round(x * SCALE));

/** Each case prints a short answer, so the three ways can be checked to agree. */
const CASES = [
  {
    name: "for_echo_redirect",
    code: (N) =>
      `for i in $(seq 1 ${N}); do echo "w$((i % 997)) lorem ipsum"; done > big.txt; wc -l < big.txt`,
    size: n(20_000),
  },
  {
    name: "while_read_sum",
    code: (N) => `seq 1 ${N} > n.txt; s=0; while read -r n; do s=$((s + n)); done < n.txt; echo $s`,
    size: n(20_000),
  },
  {
    name: "arithmetic",
    code: (N) =>
      `s=0; for ((i = 0; i < ${N}; i++)); do s=$(( (s + i * 7) % 1000003 )); done; echo $s`,
    size: n(20_000),
  },
  {
    name: "function_subst",
    code: (N) =>
      `f() { echo $(( $1 * 2 )); }; s=0; for i in $(seq 1 ${N}); do s=$((s + $(f $i))); done; echo $s`,
    size: n(5_000),
  },
  {
    name: "string_ops",
    code: (N) =>
      `x=; for i in $(seq 1 ${N}); do x="$x a$i"; done; y=\${x//a/b}; z=\${y#* }; echo \${#y} \${#z} \${y:0:8}`,
    size: n(5_000),
  },
  {
    name: "case",
    code: (N) =>
      `a=0 b=0 c=0; for i in $(seq 1 ${N}); do case "w$((i % 4))" in w0) a=$((a + 1));; w1|w2) b=$((b + 1));; *) c=$((c + 1));; esac; done; echo $a $b $c`,
    size: n(20_000),
  },
  {
    name: "arrays",
    code: (N) =>
      `a=(); for i in $(seq 1 ${N}); do a+=("$i"); done; s=0; for v in "\${a[@]}"; do s=$((s + v)); done; echo \${#a[@]} $s \${a[7]}`,
    size: n(10_000),
  },
  {
    name: "append_in_loop",
    code: (N) =>
      `rm -f ap.txt; for i in $(seq 1 ${N}); do echo "line $i" >> ap.txt; done; wc -l < ap.txt`,
    size: n(20_000),
  },
  {
    name: "while_read_100k",
    code: (N) =>
      `seq 1 ${N} > n.txt; c=0; while read -r line; do c=$((c + 1)); done < n.txt; echo $c`,
    size: n(100_000),
    underMs: 3000 * SCALE,
  },
  {
    name: "generator_400k",
    code: (N) =>
      `for i in $(seq 1 ${N}); do echo "w$((i % 997)) lorem ipsum $i"; done > big.txt; wc -l < big.txt`,
    size: n(400_000),
    underMs: 20_000 * SCALE,
  },
];

const note = (msg) => process.stderr.write(`bench:bash: ${msg}\n`);

/** The machine's bash, in an empty directory of its own. */
async function realBash(code) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bash-loops-"));
  try {
    const t = now();
    const { stdout } = await exec(bashBinary.path, ["-c", code], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
      timeout: CAP_MS,
    });
    return { ms: now() - t, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * just-bash as an application embeds it: a Bash over its own in-memory file system, with the
 * budgets polybox gives it under default limits (so neither stops at a count the other does not).
 */
async function justBash(code) {
  const fs = new InMemoryFs();
  await fs.mkdir("/workspace", { recursive: true });
  const bash = new Bash({
    fs,
    cwd: "/workspace",
    executionLimits: executionLimits(DEFAULT_LIMITS, CAP_MS),
  });
  const t = now();
  const r = await bash.exec(code);
  const ms = now() - t;
  if (r.exitCode !== 0) return { ms, stdout: r.stdout, failed: r.stderr.trim().split("\n").pop() };
  return { ms, stdout: r.stdout };
}

/** polybox: one sandbox with default limits for the whole bench, as just-bash is one process. */
async function polybox(sb, code) {
  const t = now();
  const r = await sb.run("bash", code);
  const ms = now() - t;
  if (r.status !== "ok")
    return { ms, stdout: r.stdout, failed: `${r.status}: ${r.message ?? r.stderr.trim()}` };
  return { ms, stdout: r.stdout };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const fmt = (ms) => (ms >= 10_000 ? `${round(ms / 1000)} s` : `${Math.round(ms)} ms`);

const only = process.env.BENCH_CASES?.split(",").filter(Boolean);
const chosen = only ? CASES.filter((c) => only.includes(c.name)) : CASES;
if (only && chosen.length !== only.length)
  throw new Error(`BENCH_CASES: no such case among ${CASES.map((c) => c.name).join(", ")}`);

const runtime = await Runtime.create({ pool: { bash: 1 } });
const sandbox = await Sandbox.create({ runtime });
const results = [];
const began = now();
try {
  for (const c of chosen) {
    const code = c.code(c.size);
    const times = { bash: [], just_bash: [], polybox: [] };
    const failures = [];
    const answers = new Set();
    const ways = [
      ["bash", () => realBash(code)],
      ["just_bash", () => justBash(code)],
      ["polybox", () => polybox(sandbox, code)],
    ];
    // Each way runs the case once untimed first, so that both interpreters meet the timed run
    // with their JIT warm from this script, as a sandbox used for a while has it.
    for (const [, fn] of ways) await fn();
    for (let i = 0; i < REPEATS; i++) {
      for (const [way, fn] of ways) {
        const r = await fn();
        times[way].push(r.ms);
        if (r.failed) failures.push(`${way}: ${r.failed}`);
        else answers.add(r.stdout.trim());
      }
    }
    const ms = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    const vsBash = ms.polybox / ms.bash;
    const vsPeer = ms.polybox / ms.just_bash;
    const checks = [vsBash <= BASH_RATIO, vsPeer <= PEER_RATIO];
    if (c.underMs !== undefined) checks.push(ms.polybox < c.underMs);
    if (failures.length) checks.push(false);
    if (answers.size > 1) failures.push(`the three ways disagree: ${[...answers].join(" | ")}`);
    const row = {
      name: c.name,
      size: c.size,
      ms: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v)])),
      polybox_vs_bash: round(vsBash),
      polybox_vs_just_bash: round(vsPeer),
      ...(c.underMs !== undefined ? { under_ms: c.underMs } : {}),
      pass: checks.every(Boolean) && answers.size <= 1,
      ...(failures.length ? { failures } : {}),
    };
    results.push(row);
    note(
      `[${Math.round((now() - began) / 1000)} s] ${c.name}: bash ${fmt(ms.bash)}, just-bash ${fmt(ms.just_bash)}, polybox ${fmt(ms.polybox)}${failures.length ? ` (${failures.join("; ")})` : ""}`,
    );
  }
} finally {
  await sandbox.close();
  await runtime.close();
}

console.log(
  `polybox Bash loops — ${os.cpus()[0]?.model ?? "cpu"}, ${os.availableParallelism?.() ?? os.cpus().length} cores, load ${round(os.loadavg()[0])}, bash ${bashBinary.path}, ${QUICK ? "quick (sizes / 10), " : ""}median of ${REPEATS}`,
);
console.log(
  `${"case".padEnd(20)} ${"size".padStart(7)} ${"bash".padStart(9)} ${"just-bash".padStart(9)} ${"polybox".padStart(9)} ${"vs bash".padStart(8)} ${"vs j-b".padStart(7)}  target`,
);
for (const r of results) {
  const target = `<=${BASH_RATIO}x bash, <=${PEER_RATIO}x just-bash${r.under_ms !== undefined ? `, < ${fmt(r.under_ms)}` : ""}`;
  console.log(
    `${r.name.padEnd(20)} ${String(r.size).padStart(7)} ${fmt(r.ms.bash).padStart(9)} ${fmt(r.ms.just_bash).padStart(9)} ${fmt(r.ms.polybox).padStart(9)} ${`${r.polybox_vs_bash}x`.padStart(8)} ${`${r.polybox_vs_just_bash}x`.padStart(7)}  ${r.pass ? "PASS" : "MISS"} (${target})${r.failures ? `  ${r.failures.join("; ")}` : ""}`,
  );
}
if (process.argv.includes("--json"))
  console.log(
    JSON.stringify({
      measured_at: new Date().toISOString(),
      quick: QUICK,
      repeats: REPEATS,
      results,
    }),
  );

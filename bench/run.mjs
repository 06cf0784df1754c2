// `npm run bench`: polybox's speed and memory, with every comparison measured side by side in the
// same run. Prints one table and writes bench/results.json. BENCH_QUICK=1 for a short smoke run;
// BENCH_SECONDS sets the length of each throughput phase (default 30).

import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Runtime, run, Sandbox } from "../dist/index.js";
import * as base from "./lib/baselines.mjs";
import * as mcp from "./lib/mcp.mjs";
import { interleaved, round, sleep, throughput, timeRuns } from "./lib/stats.mjs";

const QUICK = process.env.BENCH_QUICK === "1";
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 5 : 30));
const RUNS = QUICK ? 10 : 40;
const CORES = os.availableParallelism?.() ?? os.cpus().length;
const CODE = {
  python: "print(1)",
  javascript: "console.log(1)",
  typescript: "const n: number = 1;\nconsole.log(n)",
  bash: "echo 1",
};
const LANGS = Object.keys(CODE);

const metrics = {};
const comparisons = {};
const mb = (bytes) => round(bytes / 1024 / 1024);
const note = (msg) => process.stderr.write(`bench: ${msg}\n`);

async function waitPools(rt, sizes) {
  for (;;) {
    const s = await rt.host.stats();
    if (Object.entries(sizes).every(([l, n]) => s.pooled[l] >= n)) return s;
    await sleep(20);
  }
}

function compare(name, of, to, ratio, target, met) {
  comparisons[name] = { of, to, ratio: round(ratio), target, met };
}

// --- one-shot through the library, warm pools ----------------------------------------------
note("one-shot runs through the library");
const pool = { python: 2, javascript: 4, typescript: 1, bash: 2 };
const rt = await Runtime.create({ pool });
await waitPools(rt, pool);
for (const l of LANGS) {
  metrics[`oneshot_${l}`] = await timeRuns(
    () => run({ runtime: rt, language: l, code: CODE[l] }),
    RUNS,
    l === "python" ? 400 : 150,
  );
  metrics[`oneshot_${l}_back_to_back`] = await timeRuns(
    () => run({ runtime: rt, language: l, code: CODE[l] }),
    RUNS,
  );
  await waitPools(rt, pool);
}

// --- side by side with the alternatives ----------------------------------------------------
note("baselines, interleaved with polybox");
const py = await interleaved(
  {
    polybox: () => run({ runtime: rt, language: "python", code: CODE.python }),
    python3_c: base.python3,
  },
  QUICK ? 10 : 20,
  400,
);
const fresh = await timeRuns(base.freshPyodide, QUICK ? 2 : 5);
metrics.python_polybox_paired = py.polybox;
metrics.python_python3_c = py.python3_c;
metrics.python_fresh_pyodide = fresh;
const quickjs = await base.quickjsContext();
const justBash = await base.justBash();
const js = await interleaved(
  {
    polybox: () => run({ runtime: rt, language: "javascript", code: CODE.javascript }),
    node_e: base.nodeE,
    quickjs_context: quickjs,
  },
  QUICK ? 10 : 20,
  100,
);
const sh = await interleaved(
  {
    polybox: () => run({ runtime: rt, language: "bash", code: CODE.bash }),
    bash_c: base.bashC,
    just_bash: justBash,
  },
  QUICK ? 10 : 20,
  100,
);
for (const [k, v] of Object.entries(js)) metrics[`javascript_${k}`] = v;
for (const [k, v] of Object.entries(sh)) metrics[`bash_${k}`] = v;

// --- stateful calls and sustained throughput ---------------------------------------------
note(`throughput, ${SECONDS} s per engine`);
for (const l of LANGS) {
  const sb = await Sandbox.create({ runtime: rt });
  await sb.run(l, CODE[l]);
  metrics[`stateful_calls_per_s_${l}`] = {
    value: await throughput(
      () => sb.run(l, l === "bash" ? "echo 1" : l === "python" ? "x = 1" : "1"),
      QUICK ? 2 : 5,
      1,
    ),
  };
  await sb.close();
}
for (const l of LANGS) {
  await waitPools(rt, pool);
  metrics[`throughput_oneshot_per_s_${l}`] = {
    value: await throughput(
      () => run({ runtime: rt, language: l, code: CODE[l] }),
      SECONDS,
      CORES * 2,
    ),
  };
}
await rt.close();

// --- interpreter boot and memory ------------------------------------------------------------
note("interpreter boot and memory");
const none = { python: 0, javascript: 0, typescript: 0, bash: 0 };
const cold = await Runtime.create({ pool: none });
await run({ runtime: cold, language: "bash", code: "echo warm" });
const idleHost = (await cold.host.stats()).rssBytes;
for (const l of LANGS)
  metrics[`boot_cold_oneshot_${l}`] = await timeRuns(
    () => run({ runtime: cold, language: l, code: CODE[l] }),
    QUICK ? 3 : 8,
  );
await cold.close();
for (const l of LANGS) {
  const sizes = { ...none, [l]: 4 };
  const r = await Runtime.create({ pool: sizes });
  await waitPools(r, sizes);
  await sleep(500);
  metrics[`memory_per_warm_interpreter_mib_${l}`] = {
    value: mb(((await r.host.stats()).rssBytes - idleHost) / 4),
  };
  await r.close();
}
const defaults = await Runtime.create();
await waitPools(defaults, defaults.pool);
await sleep(1000);
const hostRss = (await defaults.host.stats()).rssBytes;
metrics.memory_idle_default_pools_mib = {
  value: mb(hostRss + process.memoryUsage().rss),
  pools: defaults.pool,
};
await defaults.close();

// --- MCP over stdio --------------------------------------------------------------------------
note("MCP over stdio");
const start = await mcp.startup();
metrics.mcp_start_to_tools_list = { value: start.toList };
metrics.mcp_start_to_first_python_result = { value: start.toPython };
const trips = await mcp.roundTrips(QUICK ? 10 : 30, 300);
for (const [tool, s] of Object.entries(trips)) metrics[`mcp_${tool}`] = s;

// --- comparisons and targets -------------------------------------------------------------------
const m = (k) => metrics[k].median_ms ?? metrics[k].value;
compare(
  "python_vs_fresh_pyodide",
  "fresh Pyodide per run",
  "polybox one-shot",
  m("python_fresh_pyodide") / m("python_polybox_paired"),
  ">= 20x",
  m("python_fresh_pyodide") / m("python_polybox_paired") >= 20,
);
compare(
  "python_vs_python3_c",
  "python3 -c",
  "polybox one-shot",
  m("python_python3_c") / m("python_polybox_paired"),
  "> 1x",
  m("python_python3_c") > m("python_polybox_paired"),
);
compare(
  "javascript_vs_node_e",
  "node -e",
  "polybox one-shot",
  m("javascript_node_e") / m("javascript_polybox"),
  "> 1x",
  m("javascript_node_e") > m("javascript_polybox"),
);
compare(
  "javascript_vs_quickjs_context",
  "bare QuickJS context",
  "polybox one-shot",
  m("javascript_quickjs_context") / m("javascript_polybox"),
  "(overhead)",
  true,
);
compare(
  "bash_vs_bash_c",
  "bash -c",
  "polybox one-shot",
  m("bash_bash_c") / m("bash_polybox"),
  "(reference)",
  true,
);
compare(
  "bash_vs_just_bash",
  "just-bash direct",
  "polybox one-shot",
  m("bash_just_bash") / m("bash_polybox"),
  "(overhead)",
  true,
);
const target = (name, value, limit, lower = true) =>
  compare(
    name,
    `${value}`,
    `target ${limit}`,
    value / limit,
    `${lower ? "<=" : ">="} ${limit}`,
    lower ? value <= limit : value >= limit,
  );
target("target_oneshot_python_ms", m("oneshot_python"), 10);
target("target_oneshot_javascript_ms", m("oneshot_javascript"), 3);
target("target_oneshot_bash_ms", m("oneshot_bash"), 15);
for (const [l, tool] of [
  ["python", "execute_python"],
  ["javascript", "execute_javascript"],
  ["bash", "execute_bash"],
]) {
  target(`target_mcp_overhead_${l}_ms`, round(m(`mcp_${tool}`) - m(`oneshot_${l}`)), 5);
}
target("target_boot_python_ms", m("boot_cold_oneshot_python"), 250);
target("target_throughput_python", m("throughput_oneshot_per_s_python"), 8, false);
target("target_throughput_javascript", m("throughput_oneshot_per_s_javascript"), 300, false);
target("target_throughput_bash", m("throughput_oneshot_per_s_bash"), 100, false);
target("target_stateful_python", m("stateful_calls_per_s_python"), 200, false);
target("target_memory_python_mib", m("memory_per_warm_interpreter_mib_python"), 60);
target("target_memory_javascript_mib", m("memory_per_warm_interpreter_mib_javascript"), 5);
target("target_memory_idle_mib", m("memory_idle_default_pools_mib"), 400);

// --- report ------------------------------------------------------------------------------------
const machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: CORES,
  memory_gib: round(os.totalmem() / 1024 ** 3),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  quick: QUICK,
};
const rows = Object.entries(metrics).map(([name, v]) =>
  v.median_ms !== undefined
    ? `${name.padEnd(44)} ${String(v.median_ms).padStart(9)} ${String(v.p95_ms).padStart(9)} ${String(v.runs).padStart(5)}`
    : `${name.padEnd(44)} ${String(v.value).padStart(9)}`,
);
console.log(
  `polybox bench — ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.os}, Node ${machine.node}`,
);
console.log(
  `${"metric".padEnd(44)} ${"median ms".padStart(9)} ${"p95 ms".padStart(9)} ${"runs".padStart(5)}   (or value)`,
);
for (const row of rows) console.log(row);
console.log("\ncomparisons (ratio = of / to; targets: value vs target)");
for (const [name, c] of Object.entries(comparisons))
  console.log(
    `${c.met ? "ok  " : "MISS"} ${name.padEnd(36)} ${String(c.ratio).padStart(8)}  ${c.target}`,
  );
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "results.json");
writeFileSync(out, `${JSON.stringify({ machine, metrics, comparisons }, null, 2)}\n`);
note(`wrote ${out}`);

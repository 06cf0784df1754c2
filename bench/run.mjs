// `npm run bench`: polybox's speed and memory, with every comparison measured side by side in the
// same run. Prints one table and writes bench/results.json. BENCH_QUICK=1 for a short smoke run;
// BENCH_SECONDS sets the length of each throughput phase (default 30). `npm run bench -- --readme`
// also rewrites README.md's performance figures from the results (bench/readme.mjs).
//
// Every tenant (a sandbox, or a one-shot run) gets an engine host process of its own, taken from
// a warm fleet and killed when the tenant ends. So the figures here are of that design: one-shot
// latency with a warm host ready and with none, sustained one-shots (bounded by how fast hosts
// start), what a sandbox's second language costs (it boots inside the sandbox's own host), and
// memory as the bench process plus every engine host process, read from /proc (lib/procs.mjs).
// Then where a fresh interpreter's boot goes (bench/profile.mjs), the peers side by side (real
// binaries, new contexts and isolates, warm Pyodide, bwrap), and the targets of issue #17 with
// pass or miss (lib/targets.mjs); native-mode targets read bench/native.mjs's last results.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Runtime, run, Sandbox } from "../dist/index.js";
import * as base from "./lib/baselines.mjs";
import * as mcp from "./lib/mcp.mjs";
import * as procs from "./lib/procs.mjs";
import { interleaved, now, round, sleep, summarize, throughput, timeRuns } from "./lib/stats.mjs";
import { evaluate, formatTargets } from "./lib/targets.mjs";
import { formatProfile, profile } from "./profile.mjs";
import { updateReadme } from "./readme.mjs";

const QUICK = process.env.BENCH_QUICK === "1";
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 5 : 30));
const RUNS = QUICK ? 8 : 20;
const CORES = os.availableParallelism?.() ?? os.cpus().length;
const CODE = {
  python: "print(1)",
  javascript: "console.log(1)",
  typescript: "const n: number = 1;\nconsole.log(n)",
  bash: "echo 1",
};
const STATEFUL = { python: "x = 1", javascript: "1", typescript: "1", bash: "echo 1" };
const LANGS = Object.keys(CODE);
const NONE = { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 };

const metrics = {};
const comparisons = {};
const mb = (bytes) => round(bytes / 1024 / 1024);
const began = now();
const note = (msg) =>
  process.stderr.write(`bench: [${Math.round((now() - began) / 1000)} s] ${msg}\n`);

/**
 * Waits until every language has its warm hosts started and their interpreters booted.
 * `fleet.stats().warm` counts hosts still starting too (a tenant would rather wait for one of
 * those than start another), so the fleet's refill must also be over.
 */
async function waitWarm(rt, sizes = rt.pool, timeoutMs = 180_000) {
  const end = now() + timeoutMs;
  for (;;) {
    const { warm } = rt.fleet.stats();
    const full = Object.entries(sizes).every(([l, n]) => (warm[l] ?? 0) >= n);
    if (full && !rt.fleet.refilling) return;
    if (now() > end) throw new Error(`warm hosts never reached ${JSON.stringify(sizes)}`);
    await sleep(10);
  }
}

/** Times `fn` `runs` times, each with the fleet full again first. */
async function timeWarm(rt, fn, runs) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    await waitWarm(rt);
    const t = now();
    await fn(i);
    samples.push(now() - t);
  }
  return summarize(samples);
}

function compare(name, of, to, ratio, target, met) {
  comparisons[name] = { of, to, ratio: round(ratio), target, met };
}

/** The bench process plus every engine host, once the fleet has settled. */
async function settledMemory(rt, sizes) {
  await waitWarm(rt, sizes);
  await sleep(1500);
  return procs.treeMemory();
}

// --- fleet start and memory, first: the bench process has loaded nothing else yet --------------
note("fleet start and memory");
const starts = [];
let idle;
let defaultPool;
for (let i = 0; i < (QUICK ? 1 : 3); i++) {
  const t = now();
  const rt = await Runtime.create();
  await waitWarm(rt);
  starts.push(now() - t);
  if (i === 0) {
    defaultPool = Object.fromEntries(Object.entries(rt.pool).filter(([, n]) => n > 0));
    idle = await settledMemory(rt);
  }
  await rt.close();
}
metrics.fleet_create_to_all_warm = { ...summarize(starts), pool: defaultPool };
metrics.memory_idle_default_fleet_mib = {
  value: mb(idle.rssBytes),
  pss_mib: mb(idle.pssBytes),
  server_mib: mb(idle.selfRssBytes),
  engine_hosts: idle.nodeProcesses,
  processes: idle.processes,
  pool: defaultPool,
};
const PER = 3;
for (const l of LANGS) {
  const sizes = { ...NONE, [l]: PER };
  const rt = await Runtime.create({ pool: sizes });
  const m = await settledMemory(rt, sizes);
  metrics[`memory_per_warm_host_mib_${l}`] = {
    value: mb((m.rssBytes - m.selfRssBytes) / PER),
    pss_mib: mb((m.pssBytes - procs.pss(process.pid)) / PER),
  };
  await rt.close();
}

// --- where a fresh interpreter's boot goes (fresh host processes; nothing else running) ---------
note("boot profile");
const bootProfile = await profile(QUICK ? { runs: 2, nodeRuns: 4 } : { runs: 5, nodeRuns: 10 });

// --- one-shot through the library -------------------------------------------------------------
note("one-shot runs through the library");
const pool = { python: 2, javascript: 4, typescript: 1, bash: 2 };
const rt = await Runtime.create({ pool });
for (const l of LANGS) {
  metrics[`oneshot_${l}`] = await timeWarm(
    rt,
    () => run({ runtime: rt, language: l, code: CODE[l] }),
    RUNS,
  );
  await waitWarm(rt);
  metrics[`oneshot_${l}_back_to_back`] = await timeRuns(
    () => run({ runtime: rt, language: l, code: CODE[l] }),
    RUNS,
  );
}

// --- a sandbox: its first language, a second one, and stateful calls --------------------------
note("sandboxes: first run, second language, stateful calls");
const firsts = Object.fromEntries(LANGS.map((l) => [l, []]));
const seconds = Object.fromEntries(LANGS.map((l) => [l, []]));
for (let i = 0; i < (QUICK ? 3 : 6); i++) {
  for (const second of LANGS) {
    const first = second === "javascript" ? "python" : "javascript";
    await waitWarm(rt);
    const sb = await Sandbox.create({ runtime: rt });
    let t = now();
    await sb.run(first, CODE[first]);
    firsts[first].push(now() - t);
    t = now();
    await sb.run(second, CODE[second]);
    seconds[second].push(now() - t);
    await sb.close();
  }
}
for (const l of LANGS) {
  if (firsts[l].length) metrics[`sandbox_first_run_${l}`] = summarize(firsts[l]);
  metrics[`sandbox_second_language_first_run_${l}`] = summarize(seconds[l]);
}
for (const l of LANGS) {
  await waitWarm(rt);
  const sb = await Sandbox.create({ runtime: rt });
  await sb.run(l, CODE[l]);
  metrics[`stateful_run_${l}`] = await timeRuns(() => sb.run(l, STATEFUL[l]), RUNS * 2);
  metrics[`stateful_calls_per_s_${l}`] = {
    value: await throughput(() => sb.run(l, STATEFUL[l]), QUICK ? 2 : 5, 1),
  };
  await sb.close();
}

// --- sustained one-shots -------------------------------------------------------------------------
note(`throughput, ${SECONDS} s per engine, ${CORES * 2} callers`);
for (const l of LANGS) {
  await waitWarm(rt);
  metrics[`throughput_oneshot_per_s_${l}`] = {
    value: await throughput(
      () => run({ runtime: rt, language: l, code: CODE[l] }),
      SECONDS,
      CORES * 2,
    ),
  };
}
await rt.close();

// --- no warm host: a one-shot starts its host and boots its interpreter ---------------------------
note("one-shots with no warm host");
const cold = await Runtime.create({ pool: NONE });
await run({ runtime: cold, language: "bash", code: "echo warm" });
for (const l of LANGS)
  metrics[`boot_cold_oneshot_${l}`] = await timeRuns(
    () => run({ runtime: cold, language: l, code: CODE[l] }),
    QUICK ? 3 : 8,
  );
await cold.close();

// --- side by side with the alternatives ----------------------------------------------------
note(`baselines, interleaved with polybox (python3: ${base.python3Binary.path})`);
if (base.python3Binary.shim)
  note(
    `python3 on PATH (${base.python3Binary.onPath}) is a shim, not the interpreter: measuring ${base.python3Binary.path}`,
  );
const brt = await Runtime.create({ pool });
// polybox's side waits (untimed) for the fleet to be full again, as a one-shot with a warm host.
const paced = (fn) => ({ before: () => waitWarm(brt), run: fn });
const py = await interleaved(
  {
    polybox: paced(() => run({ runtime: brt, language: "python", code: CODE.python })),
    python3_c: base.python3,
    ...(base.systemPython3 ? { system_python3_c: base.systemPython3 } : {}),
  },
  QUICK ? 10 : 20,
);
metrics.python_polybox_paired = py.polybox;
metrics.python_python3_c = py.python3_c;
if (py.system_python3_c) metrics.python_system_python3_c = py.system_python3_c;
const quickjs = await base.quickjsContext();
const ivm = await base.isolatedVm();
if (ivm.unavailable) note(`isolated-vm left out: ${ivm.unavailable}`);
const justBash = await base.justBash();
const js = await interleaved(
  {
    polybox: paced(() => run({ runtime: brt, language: "javascript", code: CODE.javascript })),
    node_e: base.nodeE,
    quickjs_context: quickjs,
    ...(ivm.unavailable ? {} : { isolated_vm: ivm }),
    node_vm_context: await base.nodeVmContext(),
  },
  QUICK ? 10 : 20,
);
const sh = await interleaved(
  {
    polybox: paced(() => run({ runtime: brt, language: "bash", code: CODE.bash })),
    bash_c: base.bashC,
    just_bash: justBash,
  },
  QUICK ? 10 : 20,
);
for (const [k, v] of Object.entries(js)) metrics[`javascript_${k}`] = v;
for (const [k, v] of Object.entries(sh)) metrics[`bash_${k}`] = v;
await brt.close();
// Native mode's floor: a bare interpreter start, in bwrap, and in polybox's own launcher.
const natives = base.nativeBaselines();
if (natives) {
  if (!natives.bwrap)
    note("bwrap not found (Debian: apt-get install bubblewrap); its row is left out");
  const nat = await interleaved(natives, QUICK ? 10 : 30);
  for (const [k, v] of Object.entries(nat)) metrics[`native_${k}_python3`] = v;
}
// Last: it loads Pyodide into this process.
metrics.python_fresh_pyodide = await timeRuns(base.freshPyodide, QUICK ? 2 : 5);
const pyodideWarm = await base.warmPyodide();
metrics.python_warm_pyodide_runpython = await timeRuns(pyodideWarm, QUICK ? 20 : 100);

// --- MCP over stdio --------------------------------------------------------------------------
note("MCP over stdio");
const start = await mcp.startup();
metrics.mcp_start_to_tools_list = { value: start.toList };
metrics.mcp_start_to_first_python_result = { value: start.toPython };
const trips = await mcp.roundTrips(QUICK ? 8 : 20);
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
  `${base.python3Binary.path} -c`,
  "polybox one-shot",
  m("python_python3_c") / m("python_polybox_paired"),
  "> 1x",
  m("python_python3_c") > m("python_polybox_paired"),
);
if (base.systemPython3)
  compare(
    "python_vs_system_python3_c",
    `${base.systemPython3.path} -c`,
    "polybox one-shot",
    m("python_system_python3_c") / m("python_polybox_paired"),
    "> 1x",
    m("python_system_python3_c") > m("python_polybox_paired"),
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
  "polybox one-shot",
  "quickjs-emscripten, new runtime + context",
  m("javascript_polybox") / m("javascript_quickjs_context"),
  "(polybox / peer)",
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
  "polybox one-shot",
  "just-bash called directly",
  m("bash_polybox") / m("bash_just_bash"),
  "(polybox / peer)",
  true,
);
compare(
  "python_vs_warm_pyodide",
  "polybox one-shot",
  "warm in-process Pyodide runPython",
  m("python_polybox_paired") / m("python_warm_pyodide_runpython"),
  "(polybox / floor)",
  true,
);
for (const [k, name] of [
  ["isolated_vm", "isolated-vm, new isolate"],
  ["node_vm_context", "node:vm, new context"],
]) {
  if (metrics[`javascript_${k}`])
    compare(
      `javascript_vs_${k}`,
      "polybox one-shot",
      name,
      m("javascript_polybox") / m(`javascript_${k}`),
      k === "node_vm_context" ? "(polybox / floor)" : "(polybox / peer)",
      true,
    );
}
for (const k of ["bwrap", "polybox_jail"]) {
  if (metrics[`native_${k}_python3`])
    compare(
      `native_${k}_vs_bare_python3`,
      `${k} python3 -c pass`,
      "bare python3 -c pass",
      m(`native_${k}_python3`) / m("native_bare_python3"),
      `(jailed / bare: +${round(m(`native_${k}_python3`) - m("native_bare_python3"))} ms)`,
      true,
    );
}
const nativeFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "native-results.json");
const native = existsSync(nativeFile) ? JSON.parse(readFileSync(nativeFile, "utf8")) : null;
const targets = evaluate({ metrics, profile: bootProfile, native, cores: CORES });

// --- report ------------------------------------------------------------------------------------
const machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: CORES,
  memory_gib: round(os.totalmem() / 1024 ** 3),
  load_avg_1m_at_end: round(os.loadavg()[0]),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  python3: base.python3Binary,
  node_binary: base.nodeBinary,
  bash_binary: base.bashBinary,
  native_python3: base.nativePython,
  bwrap: base.bwrapBinary,
  quick: QUICK,
  seconds: SECONDS,
};
const rows = Object.entries(metrics).map(([name, v]) =>
  v.median_ms !== undefined
    ? `${name.padEnd(44)} ${String(v.median_ms).padStart(9)} ${String(v.p95_ms).padStart(9)} ${String(v.runs).padStart(5)}`
    : `${name.padEnd(44)} ${String(v.value).padStart(9)}${v.pss_mib !== undefined ? `   (PSS ${v.pss_mib}${v.engine_hosts !== undefined ? `, server ${v.server_mib}, ${v.engine_hosts} hosts` : ""})` : ""}`,
);
console.log(
  `polybox bench — ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.os}, Node ${machine.node}, load ${machine.load_avg_1m_at_end}`,
);
if (base.python3Binary.shim)
  console.log(
    `python3 on PATH is a shim (${base.python3Binary.onPath}); baseline uses ${base.python3Binary.path}`,
  );
console.log(
  `baseline binaries: python3 ${base.python3Binary.path}, node ${base.nodeBinary.path}, bash ${base.bashBinary.path}; native rows: ${base.nativePython}${base.bwrapBinary ? `, bwrap ${base.bwrapBinary}` : ""}`,
);
console.log(`\n${formatProfile(bootProfile)}\n`);
console.log(
  `${"metric".padEnd(44)} ${"median ms".padStart(9)} ${"p95 ms".padStart(9)} ${"runs".padStart(5)}   (or value; memory in MiB)`,
);
for (const row of rows) console.log(row);
console.log("\nside by side (ratio = of / to)");
for (const [name, c] of Object.entries(comparisons))
  console.log(
    `${c.met ? "ok  " : "MISS"} ${name.padEnd(36)} ${String(c.ratio).padStart(8)}  ${c.target}  [${c.of} / ${c.to}]`,
  );
console.log(
  `\ntargets (issue #17)${native ? `; native figures from bench/native.mjs at ${native.measured_at}` : "; native: run npm run bench:native first"}`,
);
console.log(formatTargets(targets));
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "results.json");
writeFileSync(
  out,
  `${JSON.stringify({ machine, profile: bootProfile, metrics, comparisons, targets, native }, null, 2)}\n`,
);
note(`wrote ${out}`);
// Then the load bench (bench/load.mjs): the load issue's targets, with its own table and results,
// which README's figures include.
{
  const { spawnSync } = await import("node:child_process");
  spawnSync(process.execPath, [fileURLToPath(new URL("load.mjs", import.meta.url))], {
    stdio: "inherit",
  });
  spawnSync(process.execPath, [fileURLToPath(new URL("bash-loops.mjs", import.meta.url))], {
    stdio: "inherit",
  });
}
if (process.argv.includes("--readme"))
  note(`rewrote the performance figures in ${updateReadme(out)}`);

// `npm run bench:load`: polybox measured the way its users load it, against the targets of the
// load issue, with the bare interpreters measured beside it in the same run. Prints one table
// (figure, value, target, baseline, ratio, PASS/MISS) to stdout, progress to stderr, and writes
// bench/load-results.json. It reports; it does not fail: the exit code is 0 whatever misses.
//
//  1. MCP over stdio (the SDK's real client spawning `polybox mcp`): one-shot tools/call of
//     execute_python / execute_javascript / execute_bash with no sandbox_id, back to back after
//     one warm-up call, and paced 2 s apart as the baseline of the same server at rest.
//  2. Four calls sent at once (a model's parallel tool calls), in bursts 1 s apart.
//  3. Sustained one-shots through the library: `run()` on one `Runtime.create()`, 2 callers.
//  4. The idle MCP server's memory: its RSS plus every descendant's (engine hosts and their
//     jails), read from /proc once its warm instances have settled.
//  5. A machine with no cache: the server started with an empty cache directory, to its
//     tools/list answer and to its first Python result. Only this server gets a temp HOME and
//     cache; every other one uses the user's normal cache (made warm first with `polybox warmup`).
//  6. The bare interpreters (`python3 -c`, `node -e`, `bash -c`) started as processes: one at a
//     time, four at once, two callers sustained, and sitting idle, as each figure's baseline.
//
// BENCH_QUICK=1 takes fewer samples; BENCH_SECONDS sets each sustained phase (default 10, quick 4).
// `npm run build` first (bench:load does).

import { execFile, spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import * as base from "./lib/baselines.mjs";
import * as procs from "./lib/procs.mjs";
import { now, round, sleep, summarize } from "./lib/stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(HERE, "../dist/cli/main.js");
const OUT = path.join(HERE, "load-results.json");
const exec = promisify(execFile);

const QUICK = process.env.BENCH_QUICK === "1";
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 4 : 10));
const N = {
  backToBack: QUICK ? 10 : 30,
  paced: QUICK ? 3 : 10,
  bursts: QUICK ? 3 : 8,
  bare: QUICK ? 10 : 20,
};
const PACE_MS = 2000;
const BURST = 4;
const BURST_GAPS_MS = QUICK ? [1000] : [1000, 3000];
const IDLE_MS = 10_000;
const SETTLE_MS = QUICK ? 2000 : 3000;
const CALLERS = 2;

const LANGS = [
  { id: "python", tool: "execute_python", code: "print(1)", bare: "python3 -c" },
  { id: "javascript", tool: "execute_javascript", code: "console.log(1)", bare: "node -e" },
  { id: "bash", tool: "execute_bash", code: "echo 1", bare: "bash -c" },
];
const RATE_TARGET = { python: 30, javascript: 200, bash: 100 };

const began = now();
const note = (msg) =>
  process.stderr.write(`bench:load [${Math.round((now() - began) / 1000)} s] ${msg}\n`);
const mib = (bytes) => round(bytes / 1024 / 1024);

/** Where every server's stderr goes, and the cold-cache server's HOME; removed at the end. */
const WORK = mkdtempSync(path.join(os.tmpdir(), "polybox-load-"));
const results = { quick: QUICK, seconds: SECONDS, samples: N, errors: [] };
const failed = (phase, error) => {
  const message = String(error?.message ?? error).split("\n")[0];
  results.errors.push({ phase, message });
  note(`${phase} failed: ${message}`);
};

// --- MCP over stdio -----------------------------------------------------------------------------

let servers = 0;
/**
 * Spawns `polybox mcp` through the SDK's stdio client and lists its tools. `env` is merged over
 * this process's own environment (the SDK would otherwise pass only HOME, PATH and a few more,
 * and XDG_CACHE_HOME would be lost). Returns timings from the spawn.
 */
async function startServer(env = {}) {
  const log = path.join(WORK, `server-${++servers}.log`);
  const fd = openSync(log, "a");
  const t = now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: { ...process.env, ...env },
    stderr: fd,
  });
  const client = new Client({ name: "polybox-load-bench", version: "1" });
  try {
    await client.connect(transport);
  } finally {
    closeSync(fd); // the child has its own copy
  }
  try {
    const { tools } = await client.listTools();
    const toList = now() - t;
    const names = new Set(tools.map((x) => x.name));
    for (const l of LANGS)
      if (!names.has(l.tool)) throw new Error(`the server lists no ${l.tool} tool (${log})`);
    return { client, pid: transport.pid, log, started: t, toList };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** One tools/call one-shot; its latency in ms, and whether it printed what it should. */
async function call(client, lang) {
  const t = now();
  const r = await client.callTool({ name: lang.tool, arguments: { code: lang.code } });
  const ms = now() - t;
  const out = r.structuredContent?.stdout ?? r.content?.map((c) => c.text ?? "").join("");
  return { ms, ok: !r.isError && String(out).trim().endsWith("1") };
}

/** Latencies of `n` calls, `pauseMs` apart (none: back to back), and how many went wrong. */
async function series(client, lang, n, pauseMs = 0) {
  const samples = [];
  let bad = 0;
  for (let i = 0; i < n; i++) {
    if (pauseMs) await sleep(pauseMs);
    const r = await call(client, lang);
    samples.push(r.ms);
    if (!r.ok) bad++;
  }
  return { ...summarize(samples), bad };
}

/** `bursts` bursts of BURST calls sent at once, `gapMs` apart: every call's own latency. */
async function bursts(client, lang, count, gapMs) {
  const samples = [];
  const walls = [];
  let bad = 0;
  for (let b = 0; b < count; b++) {
    if (b) await sleep(gapMs);
    const t = now();
    const rs = await Promise.all(Array.from({ length: BURST }, () => call(client, lang)));
    walls.push(now() - t);
    for (const r of rs) {
      samples.push(r.ms);
      if (!r.ok) bad++;
    }
  }
  return { ...summarize(samples), burst_wall: summarize(walls), bad };
}

/** The server and all its descendants, once two readings a second apart agree within 2 MiB. */
async function settledTree(pid) {
  let last = procs.treeMemory(pid);
  for (let i = 0; i < 20; i++) {
    await sleep(1000);
    const m = procs.treeMemory(pid);
    const stable = Math.abs(m.rssBytes - last.rssBytes) < 2 * 1024 * 1024;
    last = m;
    if (stable) break;
  }
  return last;
}

// --- the bare interpreters ----------------------------------------------------------------------

const BARE = {
  python: base.python3Binary && base.python3,
  javascript: base.nodeBinary && base.nodeE,
  bash: base.bashBinary && base.bashC,
};
const BARE_BIN = {
  python: base.python3Binary?.path,
  javascript: base.nodeBinary?.path,
  bash: base.bashBinary?.path,
};

/** Calls per second that `callers` concurrent loops of `fn` complete, over the real elapsed time. */
async function rate(fn, seconds, callers) {
  const t = now();
  const end = t + seconds * 1000;
  let done = 0;
  let bad = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (now() < end) {
        if ((await fn()) === false) bad++;
        done++;
      }
    }),
  );
  return { value: round(done / ((now() - t) / 1000)), calls: done, bad };
}

/** RSS of one idle bare interpreter each, waiting on stdin (python3 -i, node, bash). */
async function bareIdleRss() {
  const args = { python: ["-i", "-q"], javascript: [], bash: [] };
  const kids = Object.entries(BARE_BIN)
    .filter(([, bin]) => bin)
    .map(([l, bin]) => [l, spawn(bin, args[l], { stdio: ["pipe", "ignore", "ignore"] })]);
  await sleep(1000);
  const each = Object.fromEntries(kids.map(([l, k]) => [l, mib(procs.rss(k.pid))]));
  for (const [, k] of kids) k.kill();
  return { value: round(Object.values(each).reduce((a, b) => a + b, 0)), each };
}

// --- the run --------------------------------------------------------------------------------------

note(
  `quick=${QUICK}, ${SECONDS} s sustained phases; server logs in ${WORK}; ${os.availableParallelism?.() ?? os.cpus().length} cores`,
);

// 5. No cache: first, with its own empty HOME and cache, so nothing else has run before it.
note("cold cache: spawn to tools/list and to the first Python result");
{
  const home = path.join(WORK, "cold-home");
  mkdirSync(home);
  let s;
  try {
    s = await startServer({
      HOME: home,
      XDG_CACHE_HOME: path.join(home, ".cache"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
    });
    const r = await call(s.client, LANGS[0]);
    results.cold = {
      to_tools_list_ms: round(s.toList),
      to_first_python_ms: round(now() - s.started),
      python_ok: r.ok,
    };
  } catch (error) {
    failed("cold cache", error);
  } finally {
    await s?.client.close();
  }
}

// The user's normal cache, made warm (untimed) so every other figure is of a warm machine.
note("polybox warmup (the user's normal cache)");
try {
  await exec(process.execPath, [CLI, "warmup"]);
} catch (error) {
  failed("polybox warmup", error);
}
note("warm cache: spawn to tools/list and to the first Python result (baseline)");
{
  let s;
  try {
    s = await startServer();
    const r = await call(s.client, LANGS[0]);
    results.warm_start = {
      to_tools_list_ms: round(s.toList),
      to_first_python_ms: round(now() - s.started),
      python_ok: r.ok,
    };
  } catch (error) {
    failed("warm start", error);
  } finally {
    await s?.client.close();
  }
}

// 4, 1, 2: one server, idle first, then one-shots back to back, paced, and in bursts.
results.mcp = {};
let server;
try {
  note(`MCP server idle ${IDLE_MS / 1000} s after tools/list, then memory of its process tree`);
  const s = await startServer();
  server = s;
  await sleep(IDLE_MS);
  if (procs.supported) {
    const m = await settledTree(s.pid);
    results.idle_memory = {
      rss_mib: mib(m.rssBytes),
      pss_mib: mib(m.pssBytes),
      server_rss_mib: mib(m.selfRssBytes),
      processes: m.processes,
      node_processes: m.nodeProcesses,
    };
  } else failed("idle memory", new Error("/proc is Linux only"));

  for (const l of LANGS) {
    note(`MCP ${l.tool}: one warm-up call, then ${N.backToBack} back to back`);
    await call(s.client, l);
    results.mcp[l.id] = { back_to_back: await series(s.client, l, N.backToBack) };
    await sleep(SETTLE_MS);
  }
  for (const l of LANGS) {
    note(`MCP ${l.tool}: ${N.paced} calls ${PACE_MS / 1000} s apart`);
    results.mcp[l.id].paced = await series(s.client, l, N.paced, PACE_MS);
  }
  for (const l of LANGS) {
    for (const gap of BURST_GAPS_MS) {
      await sleep(SETTLE_MS);
      note(`MCP ${l.tool}: ${N.bursts} bursts of ${BURST} at once, ${gap / 1000} s apart`);
      results.mcp[l.id][`bursts_${gap}ms`] = await bursts(s.client, l, N.bursts, gap);
    }
  }
} catch (error) {
  failed("MCP server", error);
} finally {
  await server?.client.close();
}

// 3. Sustained one-shots through the library.
results.library = {};
try {
  note(
    `library: Runtime.create(), then ${SECONDS} s of one-shots per language, ${CALLERS} callers`,
  );
  const { Runtime, run } = await import("../dist/index.js");
  const runtime = await Runtime.create();
  try {
    for (const l of LANGS) {
      const once = async () => {
        const r = await run({ language: l.id, code: l.code, runtime });
        return r.status === "ok" && r.stdout.trim() === "1";
      };
      await once();
      await sleep(SETTLE_MS);
      note(`library ${l.id}: ${SECONDS} s`);
      results.library[l.id] = await rate(once, SECONDS, CALLERS);
    }
  } finally {
    await runtime.close();
  }
} catch (error) {
  failed("library", error);
}

// 6. The bare interpreters, one at a time, four at once, sustained, and idle.
note(`bare interpreters: ${N.bare} spawns each, ${N.bursts} bursts of ${BURST}, sustained, idle`);
results.bare = {};
const BARE_SECONDS = Math.min(SECONDS, 5);
await sleep(SETTLE_MS); // the library's engine hosts gone
if (base.systemPython3) {
  // python3 on PATH is another build (a version manager's): the system's, for reference.
  const one = [];
  for (let i = 0; i < N.bare; i++) {
    const t = now();
    await base.systemPython3();
    one.push(now() - t);
  }
  results.bare.system_python3 = { binary: base.systemPython3.path, spawn: summarize(one) };
}
for (const l of LANGS) {
  const fn = BARE[l.id];
  if (!fn) {
    failed(`bare ${l.bare}`, new Error("binary not found"));
    continue;
  }
  const timed = async () => {
    const t = now();
    await fn();
    return now() - t;
  };
  try {
    const one = [];
    for (let i = 0; i < N.bare; i++) one.push(await timed());
    const four = [];
    for (let b = 0; b < N.bursts; b++)
      four.push(...(await Promise.all(Array.from({ length: BURST }, timed))));
    results.bare[l.id] = {
      binary: BARE_BIN[l.id],
      spawn: summarize(one),
      four_at_once: summarize(four),
      per_s: await rate(fn, BARE_SECONDS, CALLERS),
    };
  } catch (error) {
    failed(`bare ${l.bare}`, error);
  }
}
try {
  results.bare.idle_rss = await bareIdleRss();
} catch (error) {
  failed("bare idle RSS", error);
}

// --- the table ------------------------------------------------------------------------------------

const rows = [];
/**
 * One row: `lower` says whether a smaller value is better (a limit) or not (a floor); no
 * `limit` makes it a baseline row, with no verdict.
 */
function row(figure, value, unit, limit, lower, baseline, baselineName) {
  const has = (x) => x !== undefined && x !== null && !Number.isNaN(x);
  const met = !has(limit) || !has(value) ? null : lower ? value <= limit : value >= limit;
  rows.push({
    figure,
    unit,
    value: has(value) ? value : null,
    target: has(limit) ? `${lower ? "<=" : ">="} ${limit}` : "",
    baseline: has(baseline) ? baseline : null,
    baseline_of: baselineName ?? "",
    ratio: has(value) && has(baseline) && baseline > 0 ? round(value / baseline) : null,
    result: !has(limit) ? "" : met === null ? "n/a" : met ? "PASS" : "MISS",
  });
}

for (const l of LANGS) {
  const m = results.mcp[l.id] ?? {};
  const b = results.bare[l.id];
  const bareName = `${l.bare} spawn`;
  row(
    `MCP ${l.id} back to back, p50`,
    m.back_to_back?.median_ms,
    "ms",
    15,
    true,
    b?.spawn.median_ms,
    bareName,
  );
  row(
    `MCP ${l.id} back to back, p95`,
    m.back_to_back?.p95_ms,
    "ms",
    50,
    true,
    b?.spawn.p95_ms,
    `${bareName} p95`,
  );
  row(
    `MCP ${l.id} paced ${PACE_MS / 1000} s, p50`,
    m.paced?.median_ms,
    "ms",
    null,
    true,
    b?.spawn.median_ms,
    bareName,
  );
  row(
    `MCP ${l.id} paced ${PACE_MS / 1000} s, p95`,
    m.paced?.p95_ms,
    "ms",
    null,
    true,
    b?.spawn.p95_ms,
    `${bareName} p95`,
  );
}
for (const l of LANGS) {
  const m = results.mcp[l.id] ?? {};
  const b = results.bare[l.id];
  BURST_GAPS_MS.forEach((gap, i) => {
    row(
      `MCP ${l.id} ${BURST} at once, ${gap / 1000} s apart, p50`,
      m[`bursts_${gap}ms`]?.median_ms,
      "ms",
      i === 0 ? 30 : null,
      true,
      b?.four_at_once.median_ms,
      `${BURST} × ${l.bare} at once`,
    );
  });
}
for (const l of LANGS)
  row(
    `library ${l.id} one-shots, ${CALLERS} callers`,
    results.library[l.id]?.value,
    "/s",
    RATE_TARGET[l.id],
    false,
    results.bare[l.id]?.per_s.value,
    `${l.bare}, ${CALLERS} callers`,
  );
row(
  "idle MCP server + descendants, RSS",
  results.idle_memory?.rss_mib,
  "MiB",
  250,
  true,
  results.bare.idle_rss?.value,
  "python3 + node + bash idle",
);
row(
  "no cache: spawn to tools/list",
  results.cold?.to_tools_list_ms,
  "ms",
  3000,
  true,
  results.warm_start?.to_tools_list_ms,
  "same, warm cache",
);
row(
  "no cache: spawn to first Python result",
  results.cold?.to_first_python_ms,
  "ms",
  10000,
  true,
  results.warm_start?.to_first_python_ms,
  "same, warm cache",
);
for (const l of LANGS) {
  const b = results.bare[l.id];
  row(`bare ${l.bare} spawn, p50`, b?.spawn.median_ms, "ms", null, true, null, b?.binary);
}
if (results.bare.system_python3)
  row(
    "bare system python3 -c spawn, p50",
    results.bare.system_python3.spawn.median_ms,
    "ms",
    null,
    true,
    null,
    results.bare.system_python3.binary,
  );
results.table = rows;

const show = (x) => (x === null ? "n/a" : String(x));
const W = { figure: 46, value: 9, target: 9, baseline: 9, ratio: 8, result: 6 };
const lines = [
  `polybox load bench — ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.availableParallelism?.() ?? os.cpus().length} cores, Node ${process.version}, load ${round(os.loadavg()[0])}${QUICK ? ", QUICK" : ""}`,
  `${"figure".padEnd(W.figure)} ${"value".padStart(W.value)} ${"unit".padEnd(4)} ${"target".padStart(W.target)} ${"baseline".padStart(W.baseline)} ${"ratio".padStart(W.ratio)} ${"result".padEnd(W.result)} baseline is`,
];
for (const r of rows)
  lines.push(
    `${r.figure.padEnd(W.figure)} ${show(r.value).padStart(W.value)} ${r.unit.padEnd(4)} ${r.target.padStart(W.target)} ${show(r.baseline).padStart(W.baseline)} ${(r.ratio === null ? "" : `${r.ratio}x`).padStart(W.ratio)} ${r.result.padEnd(W.result)} ${r.baseline_of}`,
  );
const wrong = [];
for (const l of LANGS) {
  for (const [phase, v] of Object.entries(results.mcp[l.id] ?? {}))
    if (v.bad) wrong.push(`MCP ${l.id} ${phase}: ${v.bad} calls did not print 1`);
  if (results.library[l.id]?.bad)
    wrong.push(`library ${l.id}: ${results.library[l.id].bad} runs did not print 1`);
}
if (results.idle_memory)
  lines.push(
    `\nidle server: ${results.idle_memory.processes} processes (${results.idle_memory.node_processes} node), server alone ${results.idle_memory.server_rss_mib} MiB RSS, tree PSS ${results.idle_memory.pss_mib} MiB`,
  );
for (const w of wrong) lines.push(`wrong output: ${w}`);
for (const e of results.errors) lines.push(`not measured: ${e.phase}: ${e.message}`);
const passed = rows.filter((r) => r.result === "PASS").length;
const judged = rows.filter((r) => r.result === "PASS" || r.result === "MISS").length;
lines.push(`${passed} of ${judged} targets met`);
console.log(lines.join("\n"));

results.machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.availableParallelism?.() ?? os.cpus().length,
  memory_gib: round(os.totalmem() / 1024 ** 3),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  load_avg_1m_at_end: round(os.loadavg()[0]),
};
results.measured_at = new Date().toISOString();
writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
note(`wrote ${OUT}`);
if (results.errors.length === 0) rmSync(WORK, { recursive: true, force: true });
else note(`server logs kept in ${WORK}`);
process.exit(0);

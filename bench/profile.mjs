// Where a fresh interpreter's boot goes. Every tenant (a sandbox, or a one-shot run) gets an engine
// host process of its own, so a boot is: a Node process start (in the OS jail on Linux, under the
// permission model), the host's own work (compiling the engine's WebAssembly, reading the Python
// snapshot), a worker thread start, the engine's boot, and polybox's set-up on top. This script
// times each phase, in wall time and CPU time, by starting hosts the way the trusted side does
// (same Node flags, environment and jail; lib/profile-host.mjs) and booting an interpreter the
// way the engine does (lib/profile-worker.mjs), and takes the median of several fresh processes.
//
//   npm run build && node bench/profile.mjs       (BENCH_QUICK=1 for fewer boots)
//
// `npm run bench` runs it too (bench/run.mjs) and prints the same tables.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DEFAULT_LIMITS } from "../dist/core/limits.js";
import { DIST_DIR, engineReadPaths, PYODIDE_DIR, QUICKJS_WASM } from "../dist/supervisor/assets.js";
import { launcherReport, linuxJailWrapper } from "../dist/supervisor/jail/launcher.js";
import { engineHostNodeArgs } from "../dist/supervisor/jail/permissions.js";
import { ensureQuickjsImage } from "../dist/supervisor/quickjs-image.js";
import {
  bootCacheGrants,
  defaultCacheDir,
  ensurePythonSnapshot,
} from "../dist/supervisor/snapshot.js";
import { round } from "./lib/stats.mjs";

const LIB = path.join(path.dirname(fileURLToPath(import.meta.url)), "lib");
const HOST_SCRIPT = path.join(LIB, "profile-host.mjs");
/** How long a host is watched after its interpreter is ready, for the boot's background work. */
const SETTLE_MS = 1000;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : Number.NaN;
};
const cpuMs = (u) => (u.user + u.system) / 1000;

/** How the trusted side starts an engine host on this machine (src/runtime.ts, wasm-host.ts). */
async function hostLaunch() {
  const snapshot = await ensurePythonSnapshot(defaultCacheDir(), () => {});
  const quickjsImage =
    process.env.BENCH_NO_QUICKJS_IMAGE === "1"
      ? null
      : await ensureQuickjsImage(defaultCacheDir(), () => {});
  const jailed = process.platform === "linux" && launcherReport().available;
  const extra = [...bootCacheGrants(snapshot, quickjsImage), LIB];
  const wrap = jailed ? linuxJailWrapper(extra) : (command, args) => [command, args];
  const flags = engineHostNodeArgs([...engineReadPaths(), ...extra]);
  const env = { MALLOC_ARENA_MAX: "2", ...(jailed ? { UV_USE_IO_URING: "0" } : {}) };
  return { snapshot, quickjsImage, jailed, wrap, flags, env };
}

/** Starts `command args` as the trusted side starts a host; resolves with its IPC answer (if any). */
function start(command, args, env, { expectMessage }) {
  const cwd = mkdtempSync(path.join(os.tmpdir(), "polybox-bench-"));
  return new Promise((resolve, reject) => {
    const t = performance.timeOrigin + performance.now();
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      serialization: "advanced",
    });
    let out = "";
    let err = "";
    let message = null;
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("message", (m) => {
      message = m;
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const wall = performance.timeOrigin + performance.now() - t;
      rmSync(cwd, { recursive: true, force: true });
      if (code !== 0 || (expectMessage && !message))
        reject(new Error(`${command} exited ${code}: ${err.slice(-1500)}`));
      else resolve({ spawnedAt: t, wall, out, message });
    });
  });
}

/** A Node start with nothing to do: bare, with the host's flags, and as a jailed host. */
async function nodeStarts(launch, runs) {
  // Prints the CPU it took to reach user code and when it got there.
  const probe =
    "process.stdout.write(JSON.stringify({cpu:process.cpuUsage(),at:performance.timeOrigin+performance.now()}))";
  const variants = {
    "node -e (bare)": [process.execPath, ["-e", probe]],
    "node -e, engine host flags": [process.execPath, [...launch.flags, "-e", probe]],
  };
  if (launch.jailed)
    variants["node -e, engine host flags, in the jail"] = launch.wrap(process.execPath, [
      ...launch.flags,
      "-e",
      probe,
    ]);
  const samples = Object.fromEntries(
    Object.keys(variants).map((k) => [k, { wall: [], cpu: [], toUser: [] }]),
  );
  for (let i = 0; i < runs; i++) {
    for (const [name, [command, args]] of Object.entries(variants)) {
      const r = await start(command, args, launch.env, { expectMessage: false });
      const p = JSON.parse(r.out);
      samples[name].wall.push(r.wall);
      samples[name].cpu.push(cpuMs(p.cpu));
      samples[name].toUser.push(p.at - r.spawnedAt);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([k, s]) => [
      k,
      {
        wall_ms: round(median(s.wall)),
        to_user_code_ms: round(median(s.toUser)),
        cpu_ms: round(median(s.cpu)),
        runs,
      },
    ]),
  );
}

/** One fresh host booting one interpreter: its marks as phases (wall and CPU since the last). */
async function boot(launch, language, mode) {
  const config = {
    pyodideDir: PYODIDE_DIR,
    quickjsWasm: QUICKJS_WASM,
    pythonSnapshot: launch.snapshot,
    quickjsImage: launch.quickjsImage,
    memoryMb: DEFAULT_LIMITS.memoryMb,
  };
  const arg = JSON.stringify({
    language,
    mode,
    config,
    dist: pathToFileURL(DIST_DIR).href,
    settleMs: SETTLE_MS,
  });
  const [command, args] = launch.wrap(process.execPath, [...launch.flags, HOST_SCRIPT, arg]);
  const r = await start(command, args, launch.env, { expectMessage: true });
  if (r.message.error) throw new Error(`${language} boot failed: ${r.message.error}`);
  const marks = [...r.message.marks].sort((a, b) => a.at - b.at);
  const phases = [];
  let prev = { at: r.spawnedAt, cpu: { user: 0, system: 0 } };
  for (const m of marks) {
    phases.push({
      name: m.name === "host first line" ? "Node process start (to the host's first line)" : m.name,
      wall: m.at - prev.at,
      cpu: cpuMs(m.cpu) - cpuMs(prev.cpu),
    });
    prev = m;
  }
  return { phases, rss: r.message.rss };
}

const SUMMED_UNTIL = "host: ready message received";

/** Median per phase over `runs` fresh hosts, and the totals that the targets read. */
async function profileLanguage(launch, language, runs) {
  const boots = [];
  const whole = [];
  for (let i = 0; i < runs; i++) {
    // Alternated: the replicated phases, then the real engine booted as one step.
    boots.push(await boot(launch, language, "phases"));
    whole.push(await boot(launch, language, "engine"));
  }
  const names = boots[0].phases.map((p) => p.name);
  const phases = names.map((name) => {
    const of = boots.map((b) => b.phases.find((p) => p.name === name) ?? { wall: 0, cpu: 0 });
    return {
      phase: name,
      wall_ms: round(median(of.map((p) => p.wall))),
      cpu_ms: round(median(of.map((p) => p.cpu))),
    };
  });
  const total = (b, from, pick) => {
    const start = b.phases.findIndex((p) => p.name === from);
    const end = b.phases.findIndex((p) => p.name === SUMMED_UNTIL);
    return b.phases.slice(start, end + 1).reduce((s, p) => s + p[pick], 0);
  };
  const sums = (list, from) => ({
    wall_ms: round(median(list.map((b) => total(b, from, "wall")))),
    cpu_ms: round(median(list.map((b) => total(b, from, "cpu")))),
  });
  const mib = (bytes) => round(bytes / 1024 / 1024);
  const hostStep =
    language === "python" ? "host: compile pyodide.asm.wasm" : "host: compile QuickJS wasm";
  return {
    runs,
    phases,
    // Spawn to ready: what a tenant's host costs before its first run can start.
    host_spawn_to_ready: sums(boots, names[0]),
    // The host's first line to ready: the boot without the Node process start.
    boot: sums(boots, hostStep),
    // The same with the real engine from dist/, booted as one step: the check on the replica.
    boot_real_engine: sums(whole, hostStep),
    after_ready_background_cpu_ms: round(median(boots.map((b) => b.phases.at(-1).cpu))),
    rss_mib: {
      host_before_assets: mib(median(boots.map((b) => b.rss.start))),
      host_with_assets: mib(median(boots.map((b) => b.rss.assets))),
      host_interpreter_ready: mib(median(boots.map((b) => b.rss.settled))),
      // What one warm interpreter adds to a Node process: its engine's compiled code, the
      // snapshot bytes, the worker and its heap, and the WebAssembly memory.
      interpreter: mib(median(boots.map((b) => b.rss.settled - b.rss.start))),
    },
  };
}

export async function profile({ runs = 5, nodeRuns = 10 } = {}) {
  const launch = await hostLaunch();
  return {
    jailed: launch.jailed,
    snapshot: launch.snapshot !== null,
    quickjs_image: launch.quickjsImage !== null,
    node_start: await nodeStarts(launch, nodeRuns),
    python: await profileLanguage(launch, "python", runs),
    javascript: await profileLanguage(launch, "javascript", runs),
  };
}

/** The profile as text: one table per engine, then the Node starts. */
export function formatProfile(p) {
  const lines = [];
  const row = (a, b, c) => `  ${a.padEnd(52)} ${String(b).padStart(9)} ${String(c).padStart(9)}`;
  for (const language of ["python", "javascript"]) {
    const l = p[language];
    lines.push(
      `${language === "python" ? "Pyodide" : "QuickJS"} boot in a fresh engine host${p.jailed ? " (jailed)" : ""}, median of ${l.runs}:`,
    );
    lines.push(row("phase", "wall ms", "CPU ms"));
    for (const ph of l.phases) lines.push(row(ph.phase, ph.wall_ms, ph.cpu_ms));
    lines.push(
      row("= spawn to ready", l.host_spawn_to_ready.wall_ms, l.host_spawn_to_ready.cpu_ms),
    );
    lines.push(row("= boot (host's first line to ready)", l.boot.wall_ms, l.boot.cpu_ms));
    lines.push(
      row(
        "  check: real engine from dist/, same span",
        l.boot_real_engine.wall_ms,
        l.boot_real_engine.cpu_ms,
      ),
    );
    lines.push(
      `  RSS: host ${l.rss_mib.host_before_assets} MiB bare, ${l.rss_mib.host_with_assets} with assets, ${l.rss_mib.host_interpreter_ready} with the interpreter warm (+${l.rss_mib.interpreter} MiB)`,
    );
    lines.push("");
  }
  lines.push("Node process start (spawn to exit; CPU is the child's own, to its first line):");
  lines.push(row("", "wall ms", "CPU ms"));
  for (const [name, s] of Object.entries(p.node_start)) lines.push(row(name, s.wall_ms, s.cpu_ms));
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.env.BENCH_QUICK === "1";
  const p = await profile(quick ? { runs: 3, nodeRuns: 5 } : {});
  console.log(formatProfile(p));
}

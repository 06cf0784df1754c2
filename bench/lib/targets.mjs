// The speed and memory targets of issue #17, in one place. Each reads its figure from one bench
// run (bench/run.mjs: `metrics`, the boot `profile`, and bench/native.mjs's last results when
// present) and says what stands in its way when missed, from the same run's figures.

const top = (phases, n) =>
  [...phases]
    .filter((p) => !p.phase.startsWith("after ready"))
    .sort((a, b) => b.cpu_ms - a.cpu_ms)
    .slice(0, n)
    .map((p) => `${p.phase} ${p.cpu_ms}`)
    .join(", ");

/** Sustained one-shots are bounded by host starts: CPU per host start, spread over the cores. */
const hostBound = (r, language) => {
  const l = r.profile?.[language];
  if (!l) return "";
  const cpu = l.host_spawn_to_ready.cpu_ms + l.after_ready_background_cpu_ms;
  return `each one-shot starts an engine host: ${cpu} ms CPU (spawn to ready, and after), so ${r.cores} cores allow ~${Math.round((r.cores * 1000) / cpu)}/s`;
};

const oneshotGap = (r, language) => {
  const stateful = r.metrics[`stateful_run_${language}`]?.median_ms;
  return stateful === undefined
    ? ""
    : `a run in an open sandbox takes ${stateful} ms; the rest is claiming a warm host and ending it`;
};

const mcpGap = (r, language) => {
  const lib = r.metrics[`oneshot_${language}`]?.median_ms;
  return lib === undefined ? "" : `the library one-shot alone takes ${lib} ms`;
};

const rssNote = (r, language) => {
  const m = r.profile?.[language]?.rss_mib;
  return m
    ? `host ${m.host_before_assets} MiB bare; its engine's assets add ${round(m.host_with_assets - m.host_before_assets)}, the booted interpreter ${round(m.host_interpreter_ready - m.host_with_assets)}`
    : "";
};
const round = (x) => Math.round(x * 100) / 100;

export const TARGETS = [
  {
    id: "python_boot_cpu_ms",
    what: "Python boot, CPU (fresh host to interpreter ready)",
    limit: 60,
    lower: true,
    value: (r) => r.profile?.python.boot.cpu_ms,
    blocker: (r) => `largest phases (ms CPU): ${top(r.profile.python.phases, 4)}`,
  },
  {
    id: "python_oneshots_per_s",
    what: "sustained Python one-shots (per s)",
    limit: 30,
    lower: false,
    value: (r) => r.metrics.throughput_oneshot_per_s_python?.value,
    blocker: (r) => hostBound(r, "python"),
  },
  {
    id: "javascript_oneshots_per_s",
    what: "sustained JavaScript one-shots (per s)",
    limit: 200,
    lower: false,
    value: (r) => r.metrics.throughput_oneshot_per_s_javascript?.value,
    blocker: (r) => hostBound(r, "javascript"),
  },
  {
    id: "library_oneshot_python_ms",
    what: "library one-shot, Python, median ms",
    limit: 3,
    lower: true,
    value: (r) => r.metrics.oneshot_python?.median_ms,
    blocker: (r) => oneshotGap(r, "python"),
  },
  {
    id: "library_oneshot_javascript_ms",
    what: "library one-shot, JavaScript, median ms",
    limit: 1.5,
    lower: true,
    value: (r) => r.metrics.oneshot_javascript?.median_ms,
    blocker: (r) => oneshotGap(r, "javascript"),
  },
  ...[
    ["python", "Python"],
    ["javascript", "JavaScript"],
    ["bash", "Bash"],
  ].map(([language, name]) => ({
    id: `mcp_oneshot_${language}_ms`,
    what: `MCP stdio one-shot, ${name}, median ms`,
    limit: 5,
    lower: true,
    value: (r) => r.metrics[`mcp_execute_${language}`]?.median_ms,
    blocker: (r) => mcpGap(r, language),
  })),
  {
    id: "native_oneshot_over_warm_ms",
    what: "native one-shot minus a warm native run, ms",
    limit: 3,
    lower: true,
    value: (r) =>
      r.native ? round(r.native.first_python_run_ms - r.native.warm_python_run_ms) : undefined,
    blocker: (r) =>
      `a sandbox's first run from a spare jail still copies in its workspace and thaws the warm python3 (${r.native.first_python_run_ms} ms against ${r.native.warm_python_run_ms} ms warm; bench/native.mjs)`,
  },
  {
    id: "native_cold_over_bwrap_ms",
    what: "cold native sandbox minus bwrap python3 -c, ms",
    limit: 10,
    lower: true,
    value: (r) =>
      r.native && r.metrics.native_bwrap_python3
        ? round(
            (r.native.cold_python_run_ms ?? r.native.first_python_run_ms) -
              r.metrics.native_bwrap_python3.median_ms,
          )
        : undefined,
    blocker: (r) =>
      `polybox-jail alone adds ${round(r.metrics.native_polybox_jail_python3.median_ms - r.metrics.native_bare_python3.median_ms)} ms to python3 -c; the rest is the agent and the first run`,
  },
  {
    id: "idle_memory_mib",
    what: "idle server + engine hosts, default pools, RSS MiB",
    limit: 250,
    lower: true,
    value: (r) => r.metrics.memory_idle_default_fleet_mib?.value,
    blocker: (r) => {
      const m = r.metrics.memory_idle_default_fleet_mib;
      return `${m.engine_hosts} engine hosts (${m.processes} processes with their jails); the server ${m.server_mib} MiB; pool ${JSON.stringify(m.pool)}`;
    },
  },
  {
    id: "warm_python_interpreter_mib",
    what: "warm Python interpreter, RSS MiB over a bare host",
    limit: 50,
    lower: true,
    value: (r) => r.profile?.python.rss_mib.interpreter,
    blocker: (r) => rssNote(r, "python"),
  },
  {
    id: "warm_javascript_interpreter_mib",
    what: "warm JavaScript interpreter, RSS MiB over a bare host",
    limit: 4,
    lower: true,
    value: (r) => r.profile?.javascript.rss_mib.interpreter,
    blocker: (r) => rssNote(r, "javascript"),
  },
];

/**
 * Every target against one run: `{ id, what, target, value, met, by, note }`, `met` null (n/a)
 * when the run has no figure for it. `by` is how far past the limit (or inside it) the value is.
 */
export function evaluate(run) {
  return TARGETS.map((t) => {
    const target = `${t.lower ? "<=" : ">="} ${t.limit}`;
    const value = t.value(run);
    if (value === undefined || value === null || Number.isNaN(value))
      return { id: t.id, what: t.what, target, value: null, met: null, by: "n/a", note: "" };
    const met = t.lower ? value <= t.limit : value >= t.limit;
    const by = t.lower
      ? `${met ? "" : "+"}${round(value - t.limit)} (${round(value / t.limit)}x the limit)`
      : `${round(value - t.limit)} (${round(value / t.limit)}x the target)`;
    let note = "";
    if (!met) {
      try {
        note = t.blocker(run);
      } catch {
        note = "";
      }
    }
    return { id: t.id, what: t.what, target, value, met, by, note };
  });
}

/** The targets as text, one line each, with the note under a miss. */
export function formatTargets(rows) {
  const lines = [
    `${"".padEnd(5)}${"target".padEnd(54)} ${"limit".padStart(8)} ${"measured".padStart(9)}  by`,
  ];
  for (const r of rows) {
    const flag = r.met === null ? "n/a " : r.met ? "PASS" : "MISS";
    lines.push(
      `${flag} ${r.what.padEnd(54)} ${r.target.padStart(8)} ${String(r.value ?? "n/a").padStart(9)}  ${r.by}`,
    );
    if (r.note) lines.push(`       ${r.note}`);
  }
  return lines.join("\n");
}

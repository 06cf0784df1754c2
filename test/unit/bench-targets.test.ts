// bench/lib/targets.mjs decides what `npm run bench` reports as PASS or MISS: a wrong direction
// or a figure read from the wrong place would turn a miss into a pass. No timing here: the
// figures are given, and only how they are judged is checked.

import { describe, expect, it } from "vitest";

interface Row {
  id: string;
  target: string;
  value: number | null;
  met: boolean | null;
  by: string;
  note: string;
}
// A path held in a variable: the bench is plain JavaScript, imported untyped.
const modulePath = "../../bench/lib/targets.mjs";
const { evaluate, formatTargets, TARGETS } = (await import(modulePath)) as {
  evaluate: (run: unknown) => Row[];
  formatTargets: (rows: Row[]) => string;
  TARGETS: { id: string }[];
};

const phase = (name: string, cpu: number) => ({ phase: name, wall_ms: cpu * 2, cpu_ms: cpu });
const lang = (bootCpu: number, interpreterMib: number) => ({
  phases: [phase("Python-side: polybox runner set-up", bootCpu), phase("after ready (x)", 999)],
  boot: { wall_ms: bootCpu * 2, cpu_ms: bootCpu },
  host_spawn_to_ready: { wall_ms: bootCpu * 3, cpu_ms: bootCpu + 30 },
  after_ready_background_cpu_ms: 10,
  rss_mib: {
    host_before_assets: 40,
    host_with_assets: 45,
    host_interpreter_ready: 40 + interpreterMib,
    interpreter: interpreterMib,
  },
});
const median = (ms: number) => ({ median_ms: ms, p95_ms: ms, runs: 5 });

function run(fast: boolean) {
  return {
    cores: 2,
    profile: {
      python: lang(fast ? 50 : 300, fast ? 40 : 140),
      javascript: lang(20, fast ? 3 : 27),
    },
    native: fast
      ? { first_python_run_ms: 40, warm_python_run_ms: 38 }
      : { first_python_run_ms: 500, warm_python_run_ms: 5 },
    metrics: {
      throughput_oneshot_per_s_python: { value: fast ? 31 : 2 },
      throughput_oneshot_per_s_javascript: { value: fast ? 250 : 7 },
      oneshot_python: median(fast ? 2.5 : 40),
      oneshot_javascript: median(fast ? 1 : 20),
      stateful_run_python: median(1.2),
      stateful_run_javascript: median(0.6),
      mcp_execute_python: median(fast ? 4 : 40),
      mcp_execute_javascript: median(fast ? 4 : 20),
      mcp_execute_bash: median(fast ? 4 : 30),
      native_bare_python3: median(20),
      native_bwrap_python3: median(fast ? 35 : 25),
      native_polybox_jail_python3: median(24),
      memory_idle_default_fleet_mib: {
        value: fast ? 200 : 700,
        server_mib: 80,
        engine_hosts: 5,
        processes: 16,
        pool: { python: 1 },
      },
    },
  };
}

describe("bench targets", () => {
  it("has one target per figure the issue sets", () => {
    expect(TARGETS.map((t) => t.id)).toEqual([
      "python_boot_cpu_ms",
      "python_oneshots_per_s",
      "javascript_oneshots_per_s",
      "library_oneshot_python_ms",
      "library_oneshot_javascript_ms",
      "mcp_oneshot_python_ms",
      "mcp_oneshot_javascript_ms",
      "mcp_oneshot_bash_ms",
      "native_oneshot_over_warm_ms",
      "native_cold_over_bwrap_ms",
      "idle_memory_mib",
      "warm_python_interpreter_mib",
      "warm_javascript_interpreter_mib",
    ]);
  });

  it("passes figures inside every limit, in both directions", () => {
    const rows = evaluate(run(true));
    expect(rows.filter((r) => r.met !== true)).toEqual([]);
    expect(rows.every((r) => r.note === "")).toBe(true);
  });

  it("misses figures past every limit, says by how much and what stands in the way", () => {
    const rows = evaluate(run(false));
    expect(rows.filter((r) => r.met !== false).map((r) => r.id)).toEqual([]);
    const boot = rows.find((r) => r.id === "python_boot_cpu_ms")!;
    expect(boot.value).toBe(300);
    expect(boot.by).toBe("+240 (5x the limit)");
    expect(boot.note).toContain("Python-side: polybox runner set-up 300");
    // The phase after ready is background work, not a boot phase to blame.
    expect(boot.note).not.toContain("after ready");
    const throughput = rows.find((r) => r.id === "python_oneshots_per_s")!;
    expect(throughput.by).toBe("-28 (0.07x the target)");
    // 330 ms spawn to ready + 10 after, on 2 cores.
    expect(throughput.note).toContain("340 ms CPU");
    expect(rows.find((r) => r.id === "native_oneshot_over_warm_ms")!.value).toBe(495);
    expect(rows.find((r) => r.id === "native_cold_over_bwrap_ms")!.value).toBe(475);
    expect(formatTargets(rows)).toMatch(/^MISS Python boot, CPU/m);
  });

  it("reports a figure the run lacks as n/a, never as a pass", () => {
    const partial = run(true) as { native: unknown; metrics: Record<string, unknown> };
    partial.native = null;
    delete partial.metrics.mcp_execute_bash;
    const rows = evaluate(partial);
    for (const id of [
      "native_oneshot_over_warm_ms",
      "native_cold_over_bwrap_ms",
      "mcp_oneshot_bash_ms",
    ]) {
      const row = rows.find((r) => r.id === id)!;
      expect(row.met).toBeNull();
      expect(row.by).toBe("n/a");
    }
    expect(formatTargets(rows)).toMatch(/^n\/a {2}MCP stdio one-shot, Bash/m);
  });
});

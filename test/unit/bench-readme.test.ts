// bench/readme.mjs rewrites README's performance figures from one bench run: the generated part
// must carry every target with its verdict, every side-by-side row with its ratio and the boot
// profile, go between its markers (under "## Performance" the first time), and leave the rest of
// the README as it was. No timing here: the figures are given.

import { describe, expect, it } from "vitest";

const modulePath = "../../bench/readme.mjs";
const { renderPerformance, rewriteReadme, START, END } = (await import(modulePath)) as {
  renderPerformance: (results: unknown) => string;
  rewriteReadme: (readme: string, generated: string) => string;
  START: string;
  END: string;
};

const lang = (cpu: number) => ({
  runs: 3,
  phases: [{ phase: "node-inspect evaluation", wall_ms: 600, cpu_ms: cpu }],
  host_spawn_to_ready: { wall_ms: 900, cpu_ms: cpu + 40 },
  boot: { wall_ms: 800, cpu_ms: cpu + 10 },
  boot_real_engine: { wall_ms: 810, cpu_ms: cpu + 12 },
  after_ready_background_cpu_ms: 5,
  rss_mib: {
    host_before_assets: 41,
    host_with_assets: 48,
    host_interpreter_ready: 55,
    interpreter: 14,
  },
});

const results = {
  machine: {
    cpu: "Test CPU",
    cores: 2,
    memory_gib: 8,
    load_avg_1m_at_end: 1.5,
    os: "Linux 6 x64",
    node: "v20.20.2",
    python3: { path: "/usr/bin/python3.11", onPath: "/home/u/.pyenv/shims/python3", shim: true },
    node_binary: { path: "/usr/bin/node", onPath: "/usr/bin/node", shim: false },
    bash_binary: { path: "/usr/bin/bash", onPath: "/usr/bin/bash", shim: false },
    native_python3: "/usr/bin/python3.11",
    bwrap: null,
    quick: true,
    seconds: 5,
  },
  profile: {
    jailed: true,
    python: lang(700),
    javascript: lang(130),
    node_start: { "node -e (bare)": { wall_ms: 120, cpu_ms: 28 } },
  },
  metrics: {
    oneshot_javascript: { median_ms: 21.5, p95_ms: 40, runs: 8 },
    memory_idle_default_fleet_mib: { value: 402, pss_mib: 300, server_mib: 90, engine_hosts: 5 },
  },
  comparisons: {
    "javascript one-shot vs node -e": { of: 21.5, to: 92, ratio: 0.23, target: "< 1", met: true },
    "python one-shot vs python3 -c": { of: 45, to: 30, ratio: 1.5, target: "< 1", met: false },
  },
  targets: [
    {
      id: "a",
      what: "library one-shot, JavaScript, median ms",
      target: "<= 1.5",
      value: 21.5,
      met: false,
      by: "+20 (14.33x the limit)",
      note: "a run in an open sandbox takes 0.6 ms",
    },
    {
      id: "b",
      what: "idle memory | RSS",
      target: "<= 250",
      value: 240,
      met: true,
      by: "-10 (0.96x the limit)",
      note: "",
    },
    {
      id: "c",
      what: "native one-shot",
      target: "<= 3",
      value: null,
      met: null,
      by: "n/a",
      note: "",
    },
  ],
  native: null,
};

describe("bench/readme.mjs", () => {
  it("renders the targets with their verdicts, the side-by-side ratios and the boot profile", () => {
    const text = renderPerformance(results);
    expect(text).toContain(
      "| **MISS** | library one-shot, JavaScript, median ms | <= 1.5 | 21.5 | +20 (14.33x the limit) | a run in an open sandbox takes 0.6 ms |",
    );
    expect(text).toContain("| PASS | idle memory \\| RSS | <= 250 | 240 |");
    expect(text).toContain("| n/a | native one-shot |");
    expect(text).toContain("| ok | javascript one-shot vs node -e | 0.23 | < 1 | 21.5 | 92 |");
    expect(text).toContain("| **MISS** | python one-shot vs python3 -c | 1.5 |");
    expect(text).toContain("| node-inspect evaluation | 600 | 130 |");
    expect(text).toContain("| **boot** (host's first line to ready) | 800 | 140 |");
    expect(text).toContain("/home/u/.pyenv/shims/python3");
    expect(text).toContain("BENCH_QUICK=1");
    expect(text).toContain("| memory_idle_default_fleet_mib | 402 (PSS 300, server 90, 5 hosts) |");
  });

  it("replaces only its own part of the README, the first time under the Performance heading", () => {
    const readme =
      "# x\n\n## Performance\n\nold figures\n\n### Measuring it yourself\n\nkeep\n\n## Next\n";
    const once = rewriteReadme(readme, "FIRST");
    expect(once).toBe(
      `# x\n\n## Performance\n\n${START}\n\nFIRST\n\n${END}\n\n### Measuring it yourself\n\nkeep\n\n## Next\n`,
    );
    const twice = rewriteReadme(once, "SECOND");
    expect(twice).toBe(once.replace("FIRST", "SECOND"));
    expect(() => rewriteReadme("# no section\n", "x")).toThrow(/Performance/);
  });
});

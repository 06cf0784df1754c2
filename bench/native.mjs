// Linux native mode: what the launcher costs. Each comparison runs interleaved in one process,
// so both sides share the machine's noise. Target (issue: native launcher): at most 15 ms added
// at the median to `python3 -c 'print(1)'` and `bash -c 'echo 1'`.
//
//   npm run build && node bench/native.mjs        (BENCH_QUICK=1 for a short run)
//
// Writes bench/native-results.json, which `npm run bench` reads for its native-mode targets.

import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Runtime, Sandbox } from "../dist/index.js";
import { interleaved, round } from "./lib/stats.mjs";

const QUICK = process.env.BENCH_QUICK === "1";
const RUNS = QUICK ? 15 : 60;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LAUNCHER = path.join(root, "native", "build", "polybox-jail");
if (process.platform !== "linux" || !existsSync(LAUNCHER)) {
  console.log("native benchmark skipped: the launcher is built on Linux only");
  process.exit(0);
}

/** Runs a command to completion (output discarded); rejects on a non-zero exit. */
function exec(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command}: ${code}`))));
  });
}
const jailed = (command, args) => exec(LAUNCHER, ["--", command, ...args]);

const rows = [];
const compare = (name, bare, jail) =>
  rows.push({
    name,
    bare_ms: bare.median_ms,
    jailed_ms: jail.median_ms,
    added_ms: round(jail.median_ms - bare.median_ms),
    target: "≤ 15 ms added",
    met: jail.median_ms - bare.median_ms <= 15,
  });

const py = await interleaved(
  {
    bare: () => exec("/usr/bin/python3", ["-c", "print(1)"]),
    jail: () => jailed("/usr/bin/python3", ["-c", "print(1)"]),
  },
  RUNS,
);
compare("python3 -c 'print(1)'", py.bare, py.jail);
const sh = await interleaved(
  {
    bare: () => exec("/bin/bash", ["-c", "echo 1"]),
    jail: () => jailed("/bin/bash", ["-c", "echo 1"]),
  },
  RUNS,
);
compare("bash -c 'echo 1'", sh.bare, sh.jail);
const empty = await interleaved({ jail: () => jailed("/bin/true", []) }, RUNS);

// Native sandboxes. Cold: a runtime without spare jails, so each sandbox's first run starts its
// jail, the agent and python3. From a spare: the runtime keeps one jail started (agent and
// interpreters running) and each new sandbox takes it, as a steady trickle of one-shots does
// (a pause lets the spare be refilled in the background, as it is between real requests). Later
// runs reuse the warm interpreter.
const SANDBOXES = QUICK ? 3 : 8;
const NO_POOLS = { python: 0, javascript: 0, typescript: 0, bash: 0 };
const coldRt = await Runtime.create({ isolation: "auto", pool: NO_POOLS, nativeSpares: 0 });
const cold = [];
for (let i = 0; i < SANDBOXES; i++) {
  const sb = await Sandbox.create({ runtime: coldRt, engine: "native" });
  const t = performance.now();
  await sb.run("python", "print(1)");
  cold.push(performance.now() - t);
  await sb.close();
}
await coldRt.close();

const rt = await Runtime.create({ isolation: "auto", pool: NO_POOLS, nativeSpares: 1 });
// The runtime's first native sandbox starts the spares.
await (await Sandbox.create({ runtime: rt, engine: "native" })).run("bash", "true");
const first = [];
const warm = { python: [], bash: [], javascript: [] };
for (let i = 0; i < SANDBOXES; i++) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const sb = await Sandbox.create({ runtime: rt, engine: "native" });
  let t = performance.now();
  await sb.run("python", "print(1)");
  first.push(performance.now() - t);
  for (const language of Object.keys(warm)) {
    await sb.run(
      language,
      language === "python" ? "print(1)" : language === "bash" ? "echo 1" : "console.log(1)",
    );
    for (let j = 0; j < 5; j++) {
      t = performance.now();
      await sb.run(
        language,
        language === "python" ? "x = 1" : language === "bash" ? "x=1" : "var x = 1",
      );
      warm[language].push(performance.now() - t);
    }
  }
  await sb.close();
}
await rt.close();
const median = (xs) => round([...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]);

console.log(
  `\nnative mode on ${process.platform}-${process.arch}, Node ${process.versions.node}, ${RUNS} runs per side, interleaved\n`,
);
console.table(rows);
console.log(`an empty jail (/bin/true): ${empty.jail.median_ms} ms median`);
console.log(
  `native sandbox, cold first Python run (jail + agent + python3 start): ${median(cold)} ms median`,
);
console.log(`native sandbox from a spare jail, first Python run: ${median(first)} ms median`);
for (const [language, xs] of Object.entries(warm))
  console.log(`native sandbox, warm ${language} run: ${median(xs)} ms median`);
writeFileSync(
  path.join(root, "bench", "native-results.json"),
  `${JSON.stringify(
    {
      measured_at: new Date().toISOString(),
      node: process.version,
      runs: RUNS,
      cold_python_run_ms: median(cold),
      first_python_run_ms: median(first),
      warm_python_run_ms: median(warm.python),
      warm_bash_run_ms: median(warm.bash),
      warm_javascript_run_ms: median(warm.javascript),
      empty_jail_ms: empty.jail.median_ms,
      launcher: rows,
    },
    null,
    2,
  )}\n`,
);

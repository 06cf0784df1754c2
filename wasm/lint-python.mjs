// Checks the guest side's Python with pyflakes, program by program as the engines run it: the
// Pyodide runner is common.py, compat.py, net.py and runner.py joined (sources.ts), state.py runs
// after it in the same namespace, and native mode's driver is common.py then driver.py
// (drivers.ts), so a name one file defines for another is not reported as undefined. Each
// finding is named by the file and line it comes from. Run by `.ci/run`; without pyflakes
// (Debian's pyflakes3, or `python3 -m pyflakes`) it says so and passes, unless given --require.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const python = "src/guest/engines/python";
const runner = ["common.py", "compat.py", "net.py", "runner.py"].map((f) => `${python}/${f}`);

/** Each program: its files in order, and the names the engine sets before running it. */
const PROGRAMS = [
  { files: [...runner, `${python}/state.py`], given: ["_polybox_machine"] },
  { files: [`${python}/boot.py`], given: ["_polybox_source"] },
  { files: [`${python}/precompile.py`], given: ["_polybox_source"] },
  // Imported for the snapshot to hold them: that nothing uses the names is the point.
  { files: [`${python}/snapshot_imports.py`], given: [], importsOnly: true },
  { files: [`${python}/common.py`, "src/guest/native-agent/driver.py"], given: [] },
];

function pyflakes() {
  for (const [command, args] of [
    ["pyflakes3", []],
    ["python3", ["-m", "pyflakes"]],
  ]) {
    const probe = spawnSync(command, [...args, "--version"], { encoding: "utf8" });
    if (probe.status === 0) return [command, args];
  }
  return null;
}

const found = pyflakes();
if (!found) {
  const message = "python lint: pyflakes not found (Debian: apt-get install pyflakes3)";
  process.stderr.write(`${message}${process.argv.includes("--require") ? "" : "; skipped"}\n`);
  process.exit(process.argv.includes("--require") ? 1 : 0);
}

let problems = 0;
for (const program of PROGRAMS) {
  // Where each file's lines start in the joined program (files are joined with "\n").
  const starts = [];
  let line = 1;
  const texts = program.files.map((file) => {
    const text = readFileSync(path.join(root, file), "utf8");
    starts.push({ file, line });
    line += text.split("\n").length;
    return text;
  });
  const [command, args] = found;
  // With no file named, pyflakes reads the program from stdin.
  const r = spawnSync(command, args, {
    input: texts.join("\n"),
    encoding: "utf8",
    env: { ...process.env, PYFLAKES_BUILTINS: program.given.join(",") },
  });
  let reported = 0;
  for (const finding of `${r.stdout}${r.stderr}`.split("\n")) {
    const m = /^[^:]*:(\d+):(\d+):? (.*)$/.exec(finding);
    if (!m) continue;
    reported++;
    if (program.importsOnly && / imported but unused$/.test(m[3])) continue;
    const at = Number(m[1]);
    const from = starts.findLast((s) => s.line <= at);
    process.stderr.write(`${from.file}:${at - from.line + 1}:${m[2]}: ${m[3]}\n`);
    problems++;
  }
  if (r.status !== 0 && reported === 0) {
    process.stderr.write(`${program.files.join(" + ")}: pyflakes failed: ${r.stderr}${r.error ?? ""}\n`);
    problems++;
  }
}
process.stderr.write(`python lint: ${problems === 0 ? "passed" : `${problems} problems`}\n`);
process.exit(problems === 0 ? 0 : 1);

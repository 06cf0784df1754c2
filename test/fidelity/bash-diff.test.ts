// Differential: everyday Bash one-liners and short scripts (test/fidelity/cases/bash.txt), each
// run in polybox and in the machine's /bin/bash (as a script file), each in a directory holding the
// same fixture files. A case matches when stdout and exit status are byte-equal. Cases that
// cannot match by design are marked in the corpus with their reason and left out of the ratio.
// The test prints every difference and the ratio, and fails under 95%.
//
// POLYBOX_BASH_DIFF_ONLY=REGEX runs only the cases whose name matches (the ratio is then not
// enforced); POLYBOX_BASH_DIFF_REPORT=FILE also writes the report to FILE.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MIN_RATIO = 0.95;

/** The files every case finds in its working directory. */
const FIXTURES: Record<string, string> = {
  "words.txt":
    "the quick brown fox jumps over the lazy dog\nThe dog barks and the fox runs\na quick brown dog\n",
  "data.csv":
    "name,dept,salary\nalice,eng,120000\nbob,sales,55000\ncarol,eng,98000\ndave,ops,45000\nerin,sales,61000\n",
  "ages.csv": "alice,34\nbob,27\ncarol,41\nzed,50\n",
  "access.log": [
    '192.168.1.10 - - [10/Oct/2024:13:55:36 +0000] "GET /index.html HTTP/1.1" 200 2326',
    '10.0.0.5 - - [10/Oct/2024:13:56:01 +0000] "POST /api/login HTTP/1.1" 401 128',
    '192.168.1.10 - - [10/Oct/2024:13:57:12 +0000] "GET /about.html HTTP/1.1" 200 1532',
    '172.16.0.3 - - [10/Oct/2024:13:58:45 +0000] "GET /index.html HTTP/1.1" 304 0',
    '10.0.0.5 - - [10/Oct/2024:13:59:59 +0000] "POST /api/login HTTP/1.1" 200 512',
    '192.168.1.10 - - [10/Oct/2024:14:00:03 +0000] "GET /missing HTTP/1.1" 404 0',
    "",
  ].join("\n"),
  "app.conf": "# settings\nhost=localhost\nport=8080\n\n# debug mode\ndebug=true\nname=my app\n",
  "table.tsv": "id\tname\tscore\n1\tann\t90\n2\tben\t85\n",
  "nums.txt": "5\n3\n10\n1\n7\n3\n",
  "people.json":
    '[{"name":"alice","age":34,"tags":["admin","dev"]},{"name":"bob","age":27,"tags":["dev"]},{"name":"carol","age":41,"tags":[]}]\n',
  "config.json":
    '{\n  "server": {"host": "localhost", "port": 8080},\n  "debug": true,\n  "features": ["a", "b"]\n}\n',
  "flat.json": '{"a": 1, "b": "two", "c": true}\n',
  "list1.txt": "apple\nbanana\ncherry\ndate\n",
  "list2.txt": "banana\ncherry\nelderberry\nfig\n",
  "src/main.py": "import sys\nfrom util import helper\n\ndef main():\n    print(helper())\n",
  "src/util.py": "def helper():\n    return 42\n",
  "src/lib/helpers.py": "import os\n\ndef join(a, b):\n    return os.path.join(a, b)\n",
  "docs/README.md": "# Project\n\nSome text.\n",
  "docs/notes.txt": "note one\nnote two\n",
};

interface Case {
  name: string;
  script: string;
  /** Why the case cannot match by design, if it cannot. */
  excluded?: string;
}

function parseCorpus(text: string): Case[] {
  const cases: Case[] = [];
  let current: { name: string; excluded?: string; lines: string[] } | null = null;
  const finish = () => {
    if (current)
      cases.push({
        name: current.name,
        script: current.lines.join("\n"),
        ...(current.excluded ? { excluded: current.excluded } : {}),
      });
  };
  for (const line of text.split("\n")) {
    const header = /^=== (.*?)(?: !! (.*))?$/.exec(line);
    if (header) {
      finish();
      current = { name: header[1]!, lines: [], ...(header[2] ? { excluded: header[2] } : {}) };
    } else if (current) current.lines.push(line);
  }
  finish();
  for (const c of cases) c.script = c.script.replace(/\n+$/, "");
  return cases;
}

const ALL = parseCorpus(readFileSync(path.join(HERE, "cases/bash.txt"), "utf8"));
const only = process.env.POLYBOX_BASH_DIFF_ONLY;
const CASES = only ? ALL.filter((c) => new RegExp(only).test(c.name)) : ALL;

interface Outcome {
  stdout: string;
  exitCode: number;
}

/**
 * The script as a file outside the working directory: polybox runs code as bash runs a script
 * file, which differs from `bash -c` in places (an unbound variable exits 1, not 127).
 */
function scriptFile(script: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-script-"));
  const file = path.join(dir, "script.sh");
  writeFileSync(file, `${script}\n`);
  scripts.push(dir);
  return file;
}
const scripts: string[] = [];
afterAll(() => {
  for (const dir of scripts) rmSync(dir, { recursive: true, force: true });
});

function realBash(script: string): Outcome {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-bash-diff-"));
  try {
    for (const [name, text] of Object.entries(FIXTURES)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    const r = spawnSync("/bin/bash", [scriptFile(script)], {
      cwd: dir,
      encoding: "utf8",
      input: "",
      timeout: 20_000,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", TZ: "UTC" },
    });
    return { stdout: r.stdout, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let runtime: Runtime;
let sb: Sandbox;
/** The shell variables a fresh run has, which the reset between cases keeps. */
let baseline = "";
let caseNumber = 0;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 0, bash: 1 } });
  // One sandbox for all the cases (a fresh interpreter per case costs seconds on a loaded
  // machine): the fixtures are written once, and each case gets a copy of them in a directory
  // of its own, its variables reset to the baseline by a run of its own first.
  sb = await Sandbox.create({ runtime });
  for (const [name, text] of Object.entries(FIXTURES))
    await sb.files.write(`.fixtures/${name}`, text);
  baseline = (await sb.run("bash", "compgen -v | tr '\\n' ' '")).stdout;
});
afterAll(async () => {
  await sb?.close();
  await runtime?.close();
});

async function polybox(script: string): Promise<Outcome> {
  const n = ++caseNumber;
  const reset = await sb.run(
    "bash",
    `for v in $(compgen -v); do case " ${baseline} " in *" $v "*) ;; *) unset -v "$v" 2>/dev/null;; esac; done; unset v
rm -rf /workspace/case-${n - 1}; cp -r /workspace/.fixtures /workspace/case-${n} && cd /workspace/case-${n}`,
  );
  if (reset.exitCode !== 0) throw new Error(`could not set up case ${n}: ${reset.stderr}`);
  const r = await sb.run("bash", script, { env: { TZ: "UTC", LANG: "C.UTF-8" } });
  return { stdout: r.stdout, exitCode: r.exitCode };
}

const show = (o: Outcome) => `${JSON.stringify(o.stdout)} rc=${o.exitCode}`;

describe("Bash one-liners match /bin/bash", () => {
  it("the corpus parses into named, distinct cases", () => {
    expect(ALL.length).toBeGreaterThanOrEqual(150);
    expect(new Set(ALL.map((c) => c.name)).size).toBe(ALL.length);
    for (const c of ALL) expect(c.script, c.name).not.toBe("");
  });

  it(
    `at least ${MIN_RATIO * 100}% of the cases give bash's stdout and exit status`,
    async () => {
      let matched = 0;
      let counted = 0;
      const lines: string[] = [];
      for (const c of CASES) {
        const expected = realBash(c.script);
        const actual = await polybox(c.script);
        const same = expected.stdout === actual.stdout && expected.exitCode === actual.exitCode;
        if (c.excluded) {
          lines.push(`EXCLUDED ${c.name}: ${c.excluded}${same ? " (matches anyway)" : ""}`);
          continue;
        }
        counted++;
        if (same) matched++;
        else lines.push(`DIFF ${c.name}\n  bash:    ${show(expected)}\n  polybox: ${show(actual)}`);
      }
      const ratio = counted === 0 ? 1 : matched / counted;
      lines.push(
        `bash differential: ${matched}/${counted} = ${(ratio * 100).toFixed(1)}% ` +
          `(${CASES.length - counted} excluded by design)`,
      );
      const report = lines.join("\n");
      console.log(report);
      if (process.env.POLYBOX_BASH_DIFF_REPORT)
        writeFileSync(process.env.POLYBOX_BASH_DIFF_REPORT, `${report}\n`);
      if (!only) expect(ratio).toBeGreaterThanOrEqual(MIN_RATIO);
    },
    30 * 60_000,
  );
});

// Differential: Python stdlib programs in a polybox sandbox (Pyodide) against the machine's own
// CPython. The programs are in python-diff.corpus, each after a "### label" line; stdout and the
// exit status must be the same.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { differential, type Outcome } from "../helpers/differential.js";
import { type Runtime, run, testRuntime } from "../helpers/runtime.js";

const PYTHON = "/usr/bin/python3";
const THRESHOLD = 0.97;

const CASES: [string, string][] = readFileSync(
  new URL("./python-diff.corpus", import.meta.url),
  "utf8",
)
  .split(/^### /m)
  .slice(1)
  .map((chunk): [string, string] => {
    const newline = chunk.indexOf("\n");
    return [chunk.slice(0, newline).trim(), chunk.slice(newline + 1)];
  });

/** What a program reads on standard input. */
const STDIN: Record<string, string> = {
  "input from stdin": "Ann\n30\n",
  "input EOF handling": "first\nsecond\n",
  "sys.stdin read": "the cat saw the dog\n",
  "sys.stdin lines iteration": "1\n2\n\n39\n",
};

const VERSION = "another CPython version: ";

/**
 * Cases that cannot match by design, and why. polybox's Pyodide is CPython 3.14; the machine's
 * python3 may be another minor version, and a difference that comes only from that is not
 * polybox's.
 */
const EXCLUDED: Record<string, string> = {
  "integer string conversion limit": "sys.maxsize is 2**31 - 1 on wasm32",
  "file modes and encodings":
    "OSError.errno carries Emscripten's numbers (ENOENT is 44), a WebAssembly platform difference",
  "generators and comprehensions":
    "a set of strings iterates in an order set by the per-process hash seed, random in CPython too",
  "json loads and errors": `${VERSION}json's error messages changed in 3.13`,
  "calendar module": `${VERSION}calendar's weekdays are an IntEnum since 3.12`,
  "collections defaultdict and OrderedDict": `${VERSION}OrderedDict's repr changed in 3.12`,
  "typing annotations at runtime": `${VERSION}Optional and Union print as X | None since 3.14`,
  "math functions": `${VERSION}sum() of floats is compensated since 3.12`,
  "argparse parsing": `${VERSION}argparse's help layout changed in 3.13`,
  "abc abstract classes": `${VERSION}the abstract-class TypeError's wording changed in 3.12`,
  "exception messages of builtins": `${VERSION}list.index's ValueError wording changed in 3.12`,
  "class __slots__ and __dict__": `${VERSION}the AttributeError's wording changed in 3.13`,
  "itertools real-world chunking": `${VERSION}itertools.batched is new in 3.12`,
};

let runtime: Runtime;
let scratch: string;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 2, javascript: 0, bash: 0 } });
  scratch = mkdtempSync(join(tmpdir(), "polybox-pydiff-"));
});
afterAll(async () => {
  await runtime?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(!existsSync(PYTHON))("Python programs behave as on CPython", () => {
  it(`at least ${THRESHOLD * 100}% of ${CASES.length} programs print the same and exit the same`, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
    const tally = await differential(
      "Python stdlib programs",
      CASES,
      EXCLUDED,
      (code, label): Outcome => {
        // Each program in a directory of its own, as each sandbox has a workspace of its own.
        const cwd = mkdtempSync(join(scratch, "case-"));
        const r = spawnSync(PYTHON, ["-c", code], {
          cwd,
          encoding: "utf8",
          input: STDIN[label] ?? "",
          env: { PATH: "/usr/bin:/bin", TZ: "UTC", LANG: "C.UTF-8" },
        });
        return { stdout: r.stdout, exitCode: r.status ?? -1 };
      },
      async (code, label): Promise<Outcome> => {
        // A one-shot: a fresh interpreter and an empty workspace, as execute_python gives.
        const r = await run({ language: "python", code, runtime, stdin: STDIN[label] ?? "" });
        return { stdout: r.stdout, exitCode: r.exitCode };
      },
    );
    expect(tally.ratio).toBeGreaterThanOrEqual(THRESHOLD);
  }, 2_400_000);
});

// Differential suites: each case runs on polybox and on the machine's own interpreter, and what
// counts is how many print the same stdout and end with the same exit status. Cases that cannot
// match by design are listed apart with the reason, and left out of the ratio.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "./runtime.js";

export interface Outcome {
  stdout: string;
  exitCode: number;
}

export interface Tally {
  ratio: number;
  equal: number;
  counted: number;
  excluded: number;
  failures: string[];
}

/**
 * Runs every case on both sides and counts the equal ones. `excluded` maps a case's label to
 * the reason it cannot match; such cases still run (so that the list stays honest: one that
 * starts matching is reported) but are not counted.
 */
export async function differential(
  name: string,
  cases: [string, string][],
  excluded: Record<string, string>,
  reference: (code: string, label: string) => Outcome,
  polybox: (code: string, label: string) => Promise<Outcome>,
  concurrency = 2,
): Promise<Tally> {
  const labels = new Set<string>();
  for (const [label] of cases) {
    if (labels.has(label)) throw new Error(`duplicate case label: ${label}`);
    labels.add(label);
  }
  for (const label of Object.keys(excluded))
    if (!labels.has(label)) throw new Error(`excluded case not in the corpus: ${label}`);
  const failures: string[] = [];
  const nowMatching: string[] = [];
  let equal = 0;
  let counted = 0;
  // The reference runs first, one at a time; polybox's runs a few at a time (each in a fresh
  // sandbox, whose interpreter boots while another runs).
  const wanted = cases.map(([label, code]) => reference(code, label));
  const gotten: Outcome[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const [label, code] = cases[i]!;
      gotten[i] = await polybox(code, label);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  for (const [i, [label]] of cases.entries()) {
    const want = wanted[i]!;
    const got = gotten[i]!;
    const same = want.stdout === got.stdout && want.exitCode === got.exitCode;
    if (label in excluded) {
      if (same) nowMatching.push(label);
      continue;
    }
    counted++;
    if (same) equal++;
    else
      failures.push(
        `${label}\n  reference (exit ${want.exitCode}): ${JSON.stringify(want.stdout)}\n  polybox   (exit ${got.exitCode}): ${JSON.stringify(got.stdout)}`,
      );
  }
  const ratio = counted === 0 ? 0 : equal / counted;
  const excludedCount = Object.keys(excluded).length;
  const lines = [
    `${name}: ${equal}/${counted} equal (${(ratio * 100).toFixed(1)}%), ${excludedCount} excluded by design`,
    ...failures.map((f) => `  differs: ${f}`),
    ...nowMatching.map((l) => `  excluded but now equal: ${l}`),
  ];
  console.log(lines.join("\n"));
  return { ratio, equal, counted, excluded: excludedCount, failures };
}

/**
 * The machine's bash running `script` with `-c` in an empty temporary directory (its HOME too),
 * with no stdin and a plain environment: the reference side of the Bash suites.
 */
export function bashInTempDir(
  script: string,
  env: Record<string, string> = {},
): Outcome & { stderr: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-bash-"));
  try {
    const r = spawnSync("/bin/bash", ["-c", script], {
      cwd: dir,
      encoding: "utf8",
      input: "",
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dir,
        LANG: "C.UTF-8",
        TZ: "UTC",
        ...env,
      },
    });
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One Bash sandbox for a test file (the differential suites run every case in it): made before
 * the file's tests and closed after them.
 */
export function bashSandbox(): { readonly sb: Sandbox; readonly runtime: Runtime } {
  let runtime: Runtime | undefined;
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    runtime = await testRuntime({ pool: { python: 0, javascript: 0, bash: 1 } });
    sb = await Sandbox.create({ runtime });
  });
  afterAll(async () => {
    await sb?.close();
    await runtime?.close();
  });
  return {
    get sb() {
      return sb!;
    },
    get runtime() {
      return runtime!;
    },
  };
}

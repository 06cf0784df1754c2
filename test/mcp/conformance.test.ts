// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json)
// against `polybox serve` on a loopback port: every server scenario of the protocol version
// polybox speaks, pending ones too. polybox runs on the Node running this test; the suite needs
// Node 22 or newer, this one or one POLYBOX_TEST_NODES names (.ci/run installs them), and the
// file is skipped without one. Every check passes except those conformance-baseline.yml lists,
// each with why it cannot apply, and each listed one still fails, so the list stays honest.

import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpHandle, httpServer } from "../helpers/mcp-client.js";

const SUITE = path.resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/conformance/dist/index.js",
);
const BASELINE = path.join(import.meta.dirname, "conformance-baseline.yml");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

/** The first Node of 22 or newer: this one, else one that POLYBOX_TEST_NODES names. */
function suiteNode(): string | null {
  const others = (process.env.POLYBOX_TEST_NODES ?? "").split(path.delimiter).filter(Boolean);
  for (const node of [process.execPath, ...others]) {
    const version =
      node === process.execPath
        ? process.version
        : execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    if (Number(/^v(\d+)/.exec(version)?.[1]) >= 22) return node;
  }
  return null;
}

/** The suite's server scenarios for a protocol version, from its own list. */
function scenarios(node: string): string[] {
  const out = execFileSync(
    node,
    [SUITE, "list", "--server", "--spec-version", LATEST_PROTOCOL_VERSION],
    { encoding: "utf8" },
  );
  return [...out.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!);
}

/** conformance-baseline.yml: scenario → the check ids allowed to fail, with the reason given. */
function baseline(): Map<string, { checks: string[]; why: string[] }> {
  const entries = new Map<string, { checks: string[]; why: string[] }>();
  for (const line of readFileSync(BASELINE, "utf8").split("\n")) {
    const m = /^\s+- ([\w/-]+):([\w-]+)\s*(?:#\s*(.*))?$/.exec(line);
    if (!m) continue;
    const entry = entries.get(m[1]!) ?? { checks: [], why: [] };
    entry.checks.push(m[2]!);
    if (m[3]) entry.why.push(m[3]);
    entries.set(m[1]!, entry);
  }
  return entries;
}

/** The suite writes one directory per scenario: server-<scenario>-<timestamp>/checks.json. */
function readResults(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const name of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name);
    const file = path.join(dir, name, "checks.json");
    if (m && existsSync(file)) results.set(m[1]!, JSON.parse(readFileSync(file, "utf8")));
  }
  return results;
}

function suiteVersion(): string {
  const pkg = path.join(path.dirname(path.dirname(SUITE)), "package.json");
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

const count = (checks: Check[], status: Check["status"]) =>
  checks.filter((c) => c.status === status).length;

/** One line per scenario, as the CI log shows it. */
function report(
  names: string[],
  results: Map<string, Check[]>,
  expected: ReturnType<typeof baseline>,
): string {
  const lines = names.map((name) => {
    const checks = results.get(name);
    if (!checks) return `  ? ${name}: did not run`;
    const failed = count(checks, "FAILURE") + count(checks, "WARNING");
    const listed = expected.get(name);
    const mark = failed === 0 ? "✓" : listed ? "~" : "✗";
    return [
      `  ${mark} ${name}: ${count(checks, "SUCCESS")} passed, ${failed} failed`,
      listed && failed > 0 ? ` (expected: ${listed.why.join("; ")})` : "",
    ].join("");
  });
  return [
    `MCP conformance suite ${suiteVersion()}, protocol ${LATEST_PROTOCOL_VERSION}, polybox on Node ${process.version}:`,
    ...lines,
  ].join("\n");
}

const node = existsSync(SUITE) ? suiteNode() : null;
if (node === null) {
  console.log(
    "MCP conformance: skipped, the suite needs Node 22 or newer (set POLYBOX_TEST_NODES)",
  );
}

describe.skipIf(node === null)("MCP conformance suite against polybox serve", () => {
  const names = node ? scenarios(node) : [];
  const expected = baseline();
  const out = mkdtempSync(path.join(os.tmpdir(), "polybox-conformance-"));
  let server: HttpHandle;
  let results = new Map<string, Check[]>();
  let suite = { code: 0, output: "" };

  beforeAll(async () => {
    server = await httpServer();
    suite = await new Promise((resolve) => {
      execFile(
        node!,
        [
          SUITE,
          "server",
          "--url",
          server.url,
          "--suite",
          "all",
          "--spec-version",
          LATEST_PROTOCOL_VERSION,
          "--expected-failures",
          BASELINE,
          "--output-dir",
          out,
        ],
        { timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === "number" ? error.code : -1) : 0,
            output: `${stdout}${stderr}`,
          }),
      );
    });
    results = readResults(out);
    console.log(report(names, results, expected));
  }, 300_000);

  afterAll(async () => {
    rmSync(out, { recursive: true, force: true });
    if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
  });

  it("has server scenarios for this protocol version, and the baseline names only them", () => {
    expect(names).toEqual(
      expect.arrayContaining([
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
      ]),
    );
    expect([...expected.keys()].filter((n) => !names.includes(n))).toEqual([]);
  });

  it.each(names)("%s", (name) => {
    const checks = results.get(name);
    expect(checks, `${name} did not run:\n${suite.output.slice(-4000)}`).toBeDefined();
    // As the suite's own baseline check counts them: a warning is a SHOULD not met.
    const failed = checks!.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    const allowed = expected.get(name)?.checks ?? [];
    const unexpected = failed.filter((c) => !allowed.includes(c.id));
    expect(unexpected.map((c) => `${c.id}: ${c.errorMessage}`)).toEqual([]);
    // A listed check that passes now is a stale entry: remove it from the baseline.
    const stale = allowed.filter((id) => !failed.some((c) => c.id === id));
    expect(stale, "listed in conformance-baseline.yml but passing").toEqual([]);
  });

  it("the suite itself agrees: exit 0 with the baseline", () => {
    expect(suite.code, suite.output.slice(-4000)).toBe(0);
  });
});

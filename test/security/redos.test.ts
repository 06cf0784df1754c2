// T21 main-thread freeze by scanning guest text: before each Python run the server scans the
// guest's code for imports and a PEP 723 block, and it reads file names, output and (native mode)
// the agent's lines, all on its main thread. A scanner that backtracks (a regex with overlapping
// quantifiers) or re-reads what it already read takes time quadratic in the text: with the old
// regexes `"from " + "a" * 64000` took 4 s, so 1 MiB would freeze every client for ~17 minutes.
// Each scanner here gets a 1 MiB adversarial input and must finish well under a bound that is
// generous for a loaded machine and far below what a quadratic scan needs; then a real run with
// such code must answer while the server's event loop keeps turning.

import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sniff } from "../../dist/core/mime.js";
import { PackageResolver } from "../../dist/core/packages/packages.js";
import { inlineDependencies, packageRequirements } from "../../dist/core/packages/python-deps.js";
import { imageTypeOf } from "../../dist/core/sandbox/rich-output.js";
import { readLines } from "../../dist/protocol/native-wire.js";
import { validateResult } from "../../dist/protocol/validate.js";
import {
  expectRuntimeAnswers,
  newSandbox,
  type Runtime,
  securityRuntime,
} from "../helpers/security-env.js";

const MIB = 1024 * 1024;
/** Far above what a linear scan of 1 MiB needs (milliseconds), far below a quadratic one (minutes). */
const BOUND_MS = 2_000;

/** `unit` repeated to fill 1 MiB (in UTF-16 code units) between `prefix` and `suffix`. */
function fill(unit: string, prefix = "", suffix = "", size = MIB): string {
  const n = Math.floor((size - prefix.length - suffix.length) / unit.length);
  return prefix + unit.repeat(n) + suffix;
}

function timed(work: () => unknown): number {
  const start = performance.now();
  try {
    work();
  } catch {
    // Refusing the input is a fine answer; only the time it took matters here.
  }
  return performance.now() - start;
}

/** Inputs that made the old import and PEP 723 regexes backtrack, and their neighbours. */
const CODE: [string, string][] = [
  ["from + one long name", fill("a", "from ")],
  ["from + long dotted name", fill("a.", "from a")],
  ["from + name + long gap", fill(" ", "from a", "x")],
  ["import + long name list", fill("a,", "import ")],
  ["import + long spaces", fill(" ", "import ", "a")],
  ["indented from lines", fill(" ", "", "from a")],
  ["many from lines", fill("from aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n")],
  ["many import lines", fill("import a, b, c as d, e.f\n")],
  ["many PEP 723 openers", fill("# /// script\n")],
  ["unclosed PEP 723 block", fill("#\n", "# /// script\n")],
  ["PEP 723 block of long lines", fill("a", "# /// script\n# ")],
  ["many closed blocks", fill("# /// x\n# a\n# ///\nx\n")],
  ["huge PEP 723 block", fill('#   "a>=1",\n', "# /// script\n# dependencies = [\n", "# ]\n# ///")],
  ["CR line ends", fill("# /// script\r\n#\r\n")],
];

describe("T21 main-thread freeze: scanners of guest text are linear", () => {
  const resolver = new PackageResolver({
    sources: [],
    cacheDir: os.tmpdir(),
    pyodideDir: path.dirname(createRequire(import.meta.url).resolve("pyodide/package.json")),
  });

  it.each(CODE)("T21 import scan of 1 MiB (%s) finishes quickly", (_label, code) => {
    expect(code.length).toBeGreaterThan(MIB - 64);
    expect(timed(() => resolver.packagesForImports(code))).toBeLessThan(BOUND_MS);
  });

  it.each(CODE)("T21 PEP 723 scan of 1 MiB (%s) finishes quickly", (_label, code) => {
    expect(timed(() => inlineDependencies(code))).toBeLessThan(BOUND_MS);
  });

  it("T21 the scanners still find what they look for", () => {
    const code = `import numpy as np, micropip\n${fill("x = 1\n", "", "", MIB / 2)}from packaging.version import Version\n`;
    expect(resolver.packagesForImports(code).sort()).toEqual(["micropip", "numpy", "packaging"]);
    const block = `# /// script\n# dependencies = ["attrs>=23"]\n# ///\n${fill("#\n", "", "", MIB / 2)}`;
    expect(inlineDependencies(block)).toMatchObject([{ name: "attrs", specifier: ">=23" }]);
  });

  it("T21 a PEP 723 block or requirement list past polybox's limits is refused, not parsed", () => {
    const huge = fill('#   "a",\n', "# /// script\n# dependencies = [\n", "# ]\n# ///");
    expect(() => inlineDependencies(huge)).toThrow(/over 64 KiB/);
    const many = `# /// script\n# dependencies = [${'"a",'.repeat(300)}]\n# ///`;
    expect(() => inlineDependencies(many)).toThrow(/300 requirements, over polybox's limit/);
  });

  it.each([
    ["one long name", fill("a")],
    ["long version", fill("1.", "a==", "1")],
    ["many specifiers", fill(",>=1", "a>=1")],
    ["long extras", fill("a,", "a[", "a]")],
    ["long spaces", fill(" ", "a", "==1")],
  ])("T21 a 1 MiB requirement (%s) is refused quickly", (_label, text) => {
    expect(timed(() => packageRequirements(text))).toBeLessThan(BOUND_MS);
    expect(() => packageRequirements(text)).toThrow(/longer than 1000 characters/);
  });

  it.each([
    ["U+FFFD run", fill("\uFFFD")],
    ["U+FFFD run, other last", fill("\uFFFD", "", "a")],
    ["4-byte characters", fill("😀")],
  ])("T21 capping 1 MiB of output (%s) finishes quickly", (_label, text) => {
    const raw = {
      status: "ok",
      stdout: text,
      stderr: text,
      exitCode: 0,
      value: null,
      truncated: false,
      changes: { files: [], dirs: [], removed: [] },
    };
    let result: ReturnType<typeof validateResult> | undefined;
    expect(timed(() => (result = validateResult(raw, 1000)))).toBeLessThan(BOUND_MS);
    expect(result?.truncated).toBe(true);
    expect(Buffer.byteLength(result!.stdout)).toBeLessThanOrEqual(1000);
  });

  it.each([
    ["dot then letters", fill("a", ".", "!")],
    ["many dots", fill(".a")],
    ["dots then slash", fill(".", "", "/x")],
  ])("T21 typing a file by a 1 MiB name (%s) finishes quickly", (_label, name) => {
    expect(timed(() => sniff(name, new Uint8Array([0xff, 0xfe, 0])))).toBeLessThan(BOUND_MS);
    expect(timed(() => imageTypeOf(name))).toBeLessThan(BOUND_MS);
  });

  it("T21 a file named like an Object.prototype key is typed by its bytes, not the key", () => {
    for (const name of ["x.constructor", "x.__proto__", "x.toString", "x.hasOwnProperty"]) {
      expect(sniff(name, new Uint8Array([0xff, 0xfe, 0])).mimeType).toBe(
        "application/octet-stream",
      );
      expect(sniff(name, new TextEncoder().encode("hi")).mimeType).toBe("text/plain");
      expect(imageTypeOf(name)).toBeUndefined();
    }
  });

  it("T21 a 1 MiB line from a native agent, in 32-byte pieces, is read in linear time", () => {
    const stream = new PassThrough();
    const lines: number[] = [];
    readLines(stream, (line) => lines.push(line.length));
    const piece = "a".repeat(32);
    const elapsed = timed(() => {
      for (let n = 0; n < MIB; n += piece.length) stream.emit("data", piece);
      stream.emit("data", "\nb\n");
    });
    expect(lines).toEqual([MIB, 1]);
    expect(elapsed).toBeLessThan(BOUND_MS);
  });
});

describe("T21 main-thread freeze: a run with adversarial code", () => {
  let rt: Runtime;
  beforeAll(async () => {
    rt = await securityRuntime();
  });
  afterAll(async () => {
    await rt?.close();
  });

  it.each([
    ["from + 1 MiB name", fill("a", "from ", "", MIB - 16)],
    ["1 MiB of PEP 723 openers", fill("# /// script\n", "", "", MIB - 16)],
    ["1 MiB unclosed PEP 723 block", fill("#\n", "# /// script\n", "", MIB - 16)],
  ])(
    "T21 a Python run of %s answers and the server keeps answering",
    async (_label, code) => {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      await using sb = await newSandbox(rt, { timeoutMs: 30_000 });
      delay.enable();
      const r = await sb.run("python", code);
      delay.disable();
      // Pyodide may take long over 1 MiB of code on a loaded machine; that is the engine host's
      // time, under the run's deadline. What counts is that the run answered and the server did not
      // stall meanwhile.
      expect(["ok", "error", "timeout"]).toContain(r.status);
      // The longest the server's event loop was blocked during the run (nanoseconds).
      expect(delay.max / 1e6).toBeLessThan(BOUND_MS);
      await expectRuntimeAnswers(rt);
    },
    120_000,
  );
});

// An import installs a package from a directory of wheels the operator named, as an import of
// one of Pyodide's own packages installs it: `polybox run --python-packages=DIR -e 'import pkg'`
// and the library's `pythonPackages: [DIR]`, whatever the module is called inside the wheel
// (its top_level.txt, a package directory, a single module). And a package whose dependency
// cannot be had is named in the error as the package asked for, with the dependency beside it.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel, zip } from "../helpers/wheel.js";

const CLI = path.resolve(import.meta.dirname, "../../dist/cli/main.js");

/** A wheel whose distribution (`acme-tools`) and module (`democore`) have unrelated names. */
function packageWheel(): { fileName: string; data: Buffer } {
  const dist = "acme_tools-2.0";
  const files: Record<string, string> = {
    "democore/__init__.py": "from .calc import double\n",
    "democore/calc.py": "def double(x):\n    return 2 * x\n",
    [`${dist}.dist-info/METADATA`]: "Metadata-Version: 2.1\nName: acme-tools\nVersion: 2.0\n",
    [`${dist}.dist-info/WHEEL`]:
      "Wheel-Version: 1.0\nGenerator: polybox-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    [`${dist}.dist-info/top_level.txt`]: "democore\n",
  };
  const record = Object.entries(files).map(
    ([p, c]) =>
      `${p},sha256=${createHash("sha256").update(c).digest("base64url")},${Buffer.byteLength(c)}`,
  );
  files[`${dist}.dist-info/RECORD`] = `${[...record, `${dist}.dist-info/RECORD,,`].join("\n")}\n`;
  return { fileName: `${dist}-py3-none-any.whl`, data: zip(files) };
}

let dir: string;
let runtime: Runtime;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "polybox-wheels-"));
  const pkg = packageWheel();
  writeFileSync(path.join(dir, pkg.fileName), pkg.data);
  const single = buildWheel("single-thing", "1.0", "single_mod", "ANSWER = 42\n");
  writeFileSync(path.join(dir, single.fileName), single.data);
  runtime = await testRuntime({ pythonPackages: [dir] });
});
afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an import installs from a directory source", () => {
  it("a package named by its wheel's top_level.txt", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", "import democore\nprint(democore.double(21))");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("42\n");
  });

  it("a single-module wheel without top_level.txt, in a one-shot", async () => {
    const { run } = await import("../helpers/runtime.js");
    const r = await run({
      runtime,
      language: "python",
      code: "from single_mod import ANSWER\nprint(ANSWER)",
    });
    expect(r.stdout).toBe("42\n");
  });

  it("a module no source has still fails as an import does anywhere", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", "import nowhere_to_be_found");
    expect(r.status).toBe("error");
    expect(r.stderr).toMatch(/ModuleNotFoundError: No module named 'nowhere_to_be_found'/);
  });

  it("polybox run --python-packages=DIR -e 'import …'", () => {
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        "run",
        `--python-packages=${dir}`,
        "--lang=python",
        "-e",
        "import democore\nprint(democore.double(4))",
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("8\n");
    expect(r.status).toBe(0);
  });
});

describe("a package whose dependency cannot be had", () => {
  it("is named as asked for, with the dependency beside it", async () => {
    const offline = await testRuntime({
      cachedOnly: true,
      cacheDir: mkdtempSync(path.join(os.tmpdir(), "polybox-cache-")),
    });
    try {
      await using sb = await Sandbox.create({ runtime: offline });
      const error = await sb.installPackages("pandas").catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: "PACKAGE_NOT_CACHED",
        details: { package: "pandas", dependency: "numpy" },
      });
      expect((error as Error).message).toMatch(/^Python package "pandas" needs "numpy"/);
      const r = await sb.run("python", "import pandas");
      expect(r.status).toBe("error");
      expect(r.notes?.join("\n")).toMatch(
        /imports pandas, which was not installed: .*"pandas" needs "numpy"/,
      );
    } finally {
      await offline.close();
    }
  });
});

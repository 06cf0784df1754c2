// Native mode installs wheels for the machine's real python3: a wheel holding a compiled C
// extension module, built here with Debian's toolchain (cc and python3's headers, python3-dev),
// served from a loopback index with sha256 links, chosen by the interpreter's own tags over
// wheels for other platforms and a source distribution (never built), unpacked inside the
// sandbox's jail and imported there. Where cc or Python.h is missing the suite is skipped and
// says so: the tests install nothing themselves.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { interpreterTags, TAGS_SCRIPT } from "../../dist/supervisor/python-tags.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { zip } from "../helpers/wheel.js";
import { PYTHON, usable } from "./helpers.js";

/** What the machine's python3 says about itself: headers, extension suffix, version, platform. */
const facts = (() => {
  const r = spawnSync(
    PYTHON,
    [
      "-I",
      "-c",
      "import json, sys, sysconfig; print(json.dumps([sysconfig.get_paths()['include'], sysconfig.get_config_var('EXT_SUFFIX'), f'{sys.version_info[0]}{sys.version_info[1]}', sysconfig.get_platform()]))",
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) return null;
  const [include, suffix, version, platform] = JSON.parse(r.stdout) as string[];
  return { include: include!, suffix: suffix!, version: version!, platform: platform! };
})();
const cc = spawnSync("cc", ["--version"], { stdio: "ignore" }).status === 0;
const headers = facts !== null && existsSync(path.join(facts.include, "Python.h"));
const buildable = usable && cc && headers;
if (usable && !buildable)
  console.warn(
    `native wheel tests skipped: ${cc ? "" : "no cc; "}${headers ? "" : `no Python.h for ${PYTHON} (Debian's python3-dev)`}`,
  );

const C_SOURCE = `
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *add(PyObject *self, PyObject *args) {
  long a, b;
  if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
  return PyLong_FromLong(a + b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b, in C"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "polybox_cext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_polybox_cext(void) { return PyModule_Create(&module); }
`;

const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-native-wheels-"));
const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** A binary wheel of `polybox-cext` with `files`, tagged `tag`. */
function binaryWheel(version: string, tag: string, files: Record<string, string | Buffer>) {
  const dist = `polybox_cext-${version}`;
  const all: Record<string, string | Buffer> = {
    ...files,
    [`${dist}.dist-info/METADATA`]: `Metadata-Version: 2.1\nName: polybox-cext\nVersion: ${version}\n`,
    [`${dist}.dist-info/WHEEL`]: `Wheel-Version: 1.0\nGenerator: polybox-tests\nRoot-Is-Purelib: false\nTag: ${tag}\n`,
  };
  all[`${dist}.dist-info/RECORD`] = `${Object.keys(all)
    .map((f) => `${f},,`)
    .join("\n")}\n${dist}.dist-info/RECORD,,\n`;
  const data = zip(all);
  return { fileName: `${dist}-${tag}.whl`, data, sha256: sha(data) };
}

type Served = { fileName: string; data: Buffer; sha256: string; hashInLink?: string };
let files: Served[] = [];
const requests: string[] = [];
const server = http.createServer((req, res) => {
  requests.push(req.url ?? "");
  if (req.url === "/simple/polybox-cext/") {
    res.end(
      files
        .map((f) => `<a href="/files/${f.fileName}#sha256=${f.hashInLink ?? f.sha256}">x</a>`)
        .join("\n"),
    );
    return;
  }
  const file = files.find((f) => req.url === `/files/${f.fileName}`);
  res.statusCode = file ? 200 : 404;
  res.end(file?.data);
});

let rt: Runtime;
let index = "";
let good: Served;
let tags: string[];

beforeAll(async () => {
  if (!buildable) return;
  const { include, suffix, version, platform } = facts!;
  const source = path.join(tmp, "polybox_cext.c");
  writeFileSync(source, C_SOURCE);
  const so = path.join(tmp, `polybox_cext${suffix}`);
  const built = spawnSync("cc", ["-shared", "-fPIC", "-O2", `-I${include}`, source, "-o", so], {
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`cc failed: ${built.stderr}`);
  const arch = platform.replace(/[-.]/g, "_");
  good = binaryWheel("1.0.0", `cp${version}-cp${version}-${arch}`, {
    [`polybox_cext${suffix}`]: readFileSync(so),
  });
  // Newer, but for other machines: a wheel for Windows, one for Pyodide, and an sdist.
  const decoy = { "polybox_cext.py": "def add(a, b):\n    return 'wrong wheel'\n" };
  const sdist = Buffer.from("not a wheel");
  files = [
    good,
    binaryWheel("2.0.0", `cp${version}-cp${version}-win_amd64`, decoy),
    binaryWheel("2.0.0", `cp${version}-cp${version}-pyodide_2024_0_wasm32`, decoy),
    { fileName: "polybox_cext-3.0.0.tar.gz", data: sdist, sha256: sha(sdist) },
  ];
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // On loopback: runtimes that use it opt in with allowPrivateIndex (a mirror on a private network).
  index = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`;
  tags = await interpreterTags(PYTHON);
  rt = await testRuntime({
    isolation: "auto",
    pythonPackages: [index],
    allowPrivateIndex: true,
    cacheDir: mkdtempSync(path.join(tmp, "cache-")),
    pool: { python: 0, javascript: 0, bash: 0 },
  });
}, 60_000);

afterAll(async () => {
  await rt?.close();
  server.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe.runIf(buildable)("native wheels", () => {
  it("asks the interpreter for its tags: its own version and platform, and pure Python", () => {
    const { version, platform } = facts!;
    expect(tags).toContain(`cp${version}-cp${version}-${platform.replace(/[-.]/g, "_")}`);
    expect(tags).toContain("py3-none-any");
    expect(tags.some((t) => t.endsWith("win_amd64") || t.includes("wasm32"))).toBe(false);
  });

  it.runIf(spawnSync(PYTHON, ["-I", "-c", "import packaging.tags"]).status === 0)(
    "computes, where packaging is missing, the very list packaging.tags gives",
    () => {
      const computed = spawnSync(PYTHON, ["-I", "-c", TAGS_SCRIPT, "computed"], {
        encoding: "utf8",
      });
      expect(computed.status, computed.stderr).toBe(0);
      expect(JSON.parse(computed.stdout)).toEqual(tags);
    },
  );

  it("installs a compiled extension for this python3 in the jail and imports it", async () => {
    requests.length = 0;
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    expect(await sb.installPackages("polybox-cext")).toEqual(["polybox-cext"]);
    const r = await sb.run(
      "python",
      "import polybox_cext\nprint(polybox_cext.__file__)\npolybox_cext.add(2, 40)",
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("42");
    // Unpacked inside the jail, in its own /tmp: a compiled module, not the decoys' Python.
    expect(r.stdout).toMatch(new RegExp(`^/tmp/polybox-site/polybox_cext${facts!.suffix}\\n$`));
    // The index page and the one wheel that fits: never the other platforms' or the sdist.
    expect(requests).toEqual(["/simple/polybox-cext/", `/files/${good.fileName}`]);
    // Another sandbox does not have it.
    await using other = await Sandbox.create({ runtime: rt, engine: "native" });
    expect((await other.run("python", "import polybox_cext")).stderr).toMatch(
      /No module named 'polybox_cext'/,
    );
  });

  it("installs a PEP 723 dependency before a native run", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    const r = await sb.run(
      "python",
      '# /// script\n# dependencies = ["polybox-cext==1.0.0"]\n# ///\nimport polybox_cext\nprint(polybox_cext.add(1, 1))',
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toBe("2\n");
  });

  it("refuses a wheel whose sha256 is not the index's, and one that fits no tag", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    const saved = files;
    try {
      // A different version, so that no cached copy can answer for it.
      const forged = binaryWheel(
        "1.0.1",
        good.fileName.split("-").slice(2).join("-").slice(0, -4),
        {
          "polybox_cext.py": "X = 1\n",
        },
      );
      files = [{ ...forged, hashInLink: "0".repeat(64) }];
      await expect(sb.installPackages("polybox-cext")).rejects.toMatchObject({
        code: "PACKAGE_HASH_MISMATCH",
      });
      files = saved.filter((f) => f.fileName.endsWith(".whl") && f !== good);
      await expect(sb.installPackages("polybox-cext")).rejects.toMatchObject({
        code: "PACKAGE_NOT_FOUND",
        message: expect.stringMatching(/polybox-cext.*wheels whose tags it accepts/),
      });
    } finally {
      files = saved;
    }
    expect((await sb.run("python", "import polybox_cext")).stderr).toMatch(/No module named/);
  });

  it("warms the cache with machine wheels; cachedOnly then installs them with the index gone", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    const pool = { python: 0, javascript: 0, bash: 0 };
    const online = await testRuntime({
      isolation: "auto",
      pythonPackages: [index],
      allowPrivateIndex: true,
      cacheDir,
      pool,
    });
    try {
      expect(await online.cachePackages("polybox-cext", { engine: "native" })).toEqual([
        { name: "polybox-cext", version: "1.0.0", fileName: good.fileName },
      ]);
    } finally {
      await online.close();
    }
    requests.length = 0;
    const offline = await testRuntime({
      isolation: "auto",
      // Nothing listens here: with cachedOnly it is never asked.
      pythonPackages: ["http://127.0.0.1:9/simple/"],
      cachedOnly: true,
      cacheDir,
      pool,
    });
    try {
      await using sb = await Sandbox.create({ runtime: offline, engine: "native" });
      await sb.installPackages("polybox-cext");
      expect((await sb.run("python", "import polybox_cext\npolybox_cext.add(20, 1)")).value).toBe(
        "21",
      );
      // The cached wheel is for the machine's python3: Pyodide is not offered it.
      await using wasm = await Sandbox.create({ runtime: offline, engine: "wasm" });
      await expect(wasm.installPackages("polybox-cext")).rejects.toMatchObject({
        code: "PACKAGE_NOT_CACHED",
      });
      expect(requests).toEqual([]);
    } finally {
      await offline.close();
    }
  });
});

// Python packages: installed from a local directory of wheels or a loopback index named as a
// source (naming it allows it: no network grant), checked by hash, kept per sandbox, and
// re-installed when an interpreter is replaced; with cachedOnly an index is never contacted.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel } from "../helpers/wheel.js";

/** Python that prints whether `module` can be imported, without an import statement naming it. */
const FIND_SPEC = (module: string) =>
  `import importlib.util\nprint(importlib.util.find_spec(${JSON.stringify(module)}))`;

const wheel = buildWheel(
  "polybox-demo",
  "1.0.0",
  "polybox_demo",
  "def greet(who):\n    return f'hello {who}'\n",
);
const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-wheels-"));
writeFileSync(path.join(dir, wheel.fileName), wheel.data);
// Several versions of one distribution, each reporting its own version: 1.10 must beat 1.9
// (PEP 440 order, not string order) and a pre-release is chosen only when asked for.
const VERSIONS = ["1.9", "1.10", "2.0rc1"];
const versioned = VERSIONS.map((v) =>
  buildWheel("polybox-ver", v, "polybox_ver", `VERSION = ${JSON.stringify(v)}\n`),
);
for (const w of versioned) writeFileSync(path.join(dir, w.fileName), w.data);

let requests = 0;
let badHash = false;
const server = http.createServer((req, res) => {
  requests++;
  if (req.url === "/simple/polybox-ver/") {
    res.end(
      versioned
        .map((w) => `<a href="/files/${w.fileName}#sha256=${w.sha256}">${w.fileName}</a><br/>`)
        .join("\n"),
    );
  } else if (req.url?.startsWith("/files/polybox_ver-")) {
    const w = versioned.find((v) => req.url === `/files/${v.fileName}`);
    res.statusCode = w ? 200 : 404;
    res.end(w?.data);
  } else if (req.url === "/simple/polybox-demo/") {
    const hash = badHash ? "0".repeat(64) : wheel.sha256;
    res.end(
      `<html><body><a href="../../files/${wheel.fileName}#sha256=${hash}">${wheel.fileName}</a></body></html>`,
    );
  } else if (req.url === `/files/${wheel.fileName}`) {
    res.end(wheel.data);
  } else {
    res.statusCode = 404;
    res.end();
  }
});
let index = "";
let host = "";

let local: Runtime;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  // On loopback: runtimes that use it opt in with allowPrivateIndex (a mirror on a private network).
  index = `http://${host}/simple/`;
  local = await testRuntime({
    pythonPackages: [dir],
    cacheDir: mkdtempSync(path.join(os.tmpdir(), "polybox-cache-")),
  });
});
afterAll(async () => {
  await local.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("python packages", () => {
  it("installs a wheel from a local directory; it persists in the sandbox and is absent in another", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    expect(await sb.installPackages("polybox-demo")).toEqual(["polybox-demo"]);
    expect((await sb.run("python", "import polybox_demo\npolybox_demo.greet('a')")).value).toBe(
      "'hello a'",
    );
    expect((await sb.run("python", "polybox_demo.greet('b')")).value).toBe("'hello b'");
    // After the interpreter is replaced (timeout), the package is installed again.
    expect((await sb.run("python", "while True: pass", { timeoutMs: 200 })).status).toBe("timeout");
    expect((await sb.run("python", "import polybox_demo\npolybox_demo.greet('c')")).value).toBe(
      "'hello c'",
    );
    // Looked up without an import statement, which would install it there too.
    await using other = await Sandbox.create({ runtime: local });
    const r = await other.run("python", FIND_SPEC("polybox_demo"));
    expect(r.stdout).toBe("None\n");
  });

  it("installs PEP 723 inline dependencies before a one-shot run", async () => {
    const code =
      '# /// script\n# dependencies = ["polybox-demo>=1.0"]\n# ///\nimport polybox_demo\nprint(polybox_demo.greet("pep723"))';
    const r = await run({ runtime: local, language: "python", code });
    expect(r).toMatchObject({ status: "ok", stdout: "hello pep723\n" });
  });

  it("says which package, which sources and which option when a package is missing", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    await expect(sb.installPackages("no-such-dist")).rejects.toMatchObject({
      code: "PACKAGE_NOT_FOUND",
      message: expect.stringMatching(
        /"no-such-dist" was not found in: .*polybox-wheels-.*pythonPackages/,
      ),
      details: { limit: "pythonPackages" },
    });
    const r = await sb.run(
      "python",
      '# /// script\n# dependencies = ["no-such-dist"]\n# ///\nprint(1)',
    );
    expect(r.status).toBe("error");
    expect(r.message).toMatch(/inline dependencies could not be installed.*no-such-dist/);
    await expect(sb.installPackages(["ok", "../../etc"])).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("refuses a lock-file package whose bytes do not match the lock's sha256", async () => {
    const fake = buildWheel("micropip", "0.11.1", "micropip", "print('not the real micropip')\n");
    const fakeDir = mkdtempSync(path.join(os.tmpdir(), "polybox-fake-"));
    writeFileSync(path.join(fakeDir, "micropip-0.11.1-py3-none-any.whl"), fake.data);
    const rt = await testRuntime({
      pythonPackages: [fakeDir],
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      await using sb = await Sandbox.create({ runtime: rt });
      await expect(sb.installPackages("micropip")).rejects.toMatchObject({
        code: "PACKAGE_HASH_MISMATCH",
      });
    } finally {
      await rt.close();
      rmSync(fakeDir, { recursive: true, force: true });
    }
  });
});

/** The version of `polybox_ver` a sandbox imports. */
async function versionIn(sb: Sandbox): Promise<string | null> {
  return (await sb.run("python", "import polybox_ver\npolybox_ver.VERSION")).value;
}

describe("python package versions", () => {
  it.each([
    ["polybox-ver", "'1.10'"],
    ["polybox-ver==1.9", "'1.9'"],
    ["polybox-ver == 1.9.0", "'1.9'"],
    ["polybox-ver~=1.9", "'1.10'"],
    ["polybox-ver>=1.9,<1.10", "'1.9'"],
    ["Polybox_Ver (>=2.0rc1)", "'2.0rc1'"],
    ["polybox-ver[extra]<2", "'1.10'"],
  ])("%s installs the highest satisfying version by PEP 440 order", async (spec, version) => {
    await using sb = await Sandbox.create({ runtime: local });
    expect(await sb.installPackages(spec)).toEqual(["polybox-ver"]);
    expect(await versionIn(sb)).toBe(version);
  });

  it.each(["polybox-ver==2.0", "polybox-ver>=5", "polybox-ver<1.9", "polybox-ver>1.9,<1.10"])(
    "%s is refused with the versions that were found",
    async (spec) => {
      await using sb = await Sandbox.create({ runtime: local });
      const error = await sb.installPackages(spec).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "PACKAGE_NOT_FOUND" });
      expect((error as Error).message).toContain(spec.slice("polybox-ver".length));
      expect((error as Error).message).toMatch(/1\.9, 1\.10, 2\.0rc1/);
      const r = await sb.run("python", FIND_SPEC("polybox_ver"));
      expect(r.stdout).toBe("None\n");
    },
  );

  it.each([
    "not a valid ;; spec",
    "polybox-ver==",
    "polybox-ver=>1",
    "polybox-ver==1.0 extra",
    "polybox-ver[extra",
    "polybox-ver @ https://example.com/polybox_ver-1.9-py3-none-any.whl",
    'polybox-ver; python_version >= "3"',
    "-polybox-ver",
    "",
  ])("%j is refused as an invalid requirement", async (spec) => {
    await using sb = await Sandbox.create({ runtime: local });
    await expect(sb.installPackages(spec)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("keeps one version per sandbox: a pin the installed version meets is a no-op, another is refused", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    await sb.installPackages("polybox-ver==1.9");
    expect(await sb.installPackages("polybox-ver<1.10")).toEqual(["polybox-ver"]);
    await expect(sb.installPackages("polybox-ver==1.10")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(/polybox-ver 1\.9 is already installed/),
    });
    expect(await versionIn(sb)).toBe("'1.9'");
  });

  it("checks a pin on a Pyodide package against the lock file's version", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    await expect(sb.installPackages("micropip==99")).rejects.toMatchObject({
      code: "PACKAGE_NOT_FOUND",
      message: expect.stringMatching(/micropip.*==99.*0\.11\.1/),
    });
  });

  it("keeps PEP 723 pins, read with a TOML parser", async () => {
    const code = [
      "# /// script",
      '# requires-python = ">=3.11"',
      "# dependencies = [",
      "#   'polybox-ver==1.9',  # a comment with a ] in it",
      '#   "polybox-demo",',
      "# ]",
      "# ///",
      "import polybox_ver, polybox_demo",
      "print(polybox_ver.VERSION, polybox_demo.greet('x'))",
    ].join("\n");
    const r = await run({ runtime: local, language: "python", code });
    expect(r).toMatchObject({ status: "ok", stdout: "1.9 hello x\n" });
  });

  it("does not start a script whose PEP 723 block cannot be met or parsed", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    const block = (toml: string) => `# /// script\n${toml}\n# ///\nprint("ran")`;
    for (const [toml, message] of [
      ['# dependencies = ["polybox-ver>=5"]', /polybox-ver.*>=5.*1\.9, 1\.10, 2\.0rc1/],
      ['# dependencies = ["polybox-ver ;; x"]', /not a valid requirement/],
      ["# dependencies = [", /TOML/],
      ['# dependencies = "polybox-ver"', /dependencies.*list of strings/],
    ] as const) {
      const r = await sb.run("python", block(toml));
      expect(r.status).toBe("error");
      expect(r.stdout).toBe("");
      expect(r.message).toMatch(message);
    }
  });
});

describe("python packages over the network", () => {
  it("chooses among an index's versions by PEP 440 and honours pins", async () => {
    const rt = await testRuntime({
      pythonPackages: [index],
      allowPrivateIndex: true,
      cacheDir: mkdtempSync(path.join(os.tmpdir(), "polybox-cache-")),
      pool: { python: 1, javascript: 0, bash: 0 },
    });
    try {
      await using latest = await Sandbox.create({ runtime: rt });
      await latest.installPackages("polybox-ver");
      expect(await versionIn(latest)).toBe("'1.10'");
      await using pinned = await Sandbox.create({ runtime: rt });
      await pinned.installPackages("polybox-ver<1.10");
      expect(await versionIn(pinned)).toBe("'1.9'");
      await using none = await Sandbox.create({ runtime: rt });
      await expect(none.installPackages("polybox-ver==2.0")).rejects.toMatchObject({
        code: "PACKAGE_NOT_FOUND",
        message: expect.stringMatching(/==2\.0.*1\.9, 1\.10, 2\.0rc1/),
      });
    } finally {
      await rt.close();
    }
  });

  it("downloads from an index it names, with no network grant, checking the link's sha256", async () => {
    requests = 0;
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), "polybox-cache-"));
    const rt = await testRuntime({
      pythonPackages: [index],
      allowPrivateIndex: true,
      cacheDir,
      pool: { python: 1, javascript: 0, bash: 0 },
    });
    try {
      await using sb = await Sandbox.create({ runtime: rt });
      await sb.installPackages("polybox-demo");
      expect((await sb.run("python", "import polybox_demo; polybox_demo.greet('net')")).value).toBe(
        "'hello net'",
      );
      expect(requests).toBe(2); // the index page and the wheel
      await using again = await Sandbox.create({ runtime: rt });
      await again.installPackages("polybox-demo");
      expect(requests).toBe(3); // the index page only: the wheel came from the per-user cache
      badHash = true;
      await using sb2 = await Sandbox.create({ runtime: rt });
      await expect(sb2.installPackages("polybox-demo")).rejects.toMatchObject({
        code: "PACKAGE_HASH_MISMATCH",
      });
    } finally {
      badHash = false;
      await rt.close();
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("cachedOnly: an index is never contacted; its wheels come from the cache a download filled", async () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), "polybox-cache-"));
    const options = {
      pythonPackages: [index],
      allowPrivateIndex: true,
      cacheDir,
      pool: { python: 1, javascript: 0, bash: 0 },
    };
    const offline = await testRuntime({ ...options, cachedOnly: true });
    try {
      requests = 0;
      await using before = await Sandbox.create({ runtime: offline });
      const error = await before.installPackages("polybox-demo").catch((e: unknown) => e);
      // The library names its option and the package; the CLI and MCP turn that into advice.
      expect(error).toMatchObject({
        code: "PACKAGE_NOT_CACHED",
        details: { limit: "cachedOnly", package: "polybox-demo" },
      });
      expect(requests).toBe(0);
      const online = await testRuntime({ ...options, pool: { python: 0, javascript: 0, bash: 0 } });
      await using filler = await Sandbox.create({ runtime: online });
      await filler.installPackages("polybox-demo").finally(() => online.close());
      requests = 0;
      await using after = await Sandbox.create({ runtime: offline });
      await after.installPackages("polybox-demo");
      expect(
        (await after.run("python", "import polybox_demo; polybox_demo.greet('c')")).value,
      ).toBe("'hello c'");
      expect(requests).toBe(0);
    } finally {
      await offline.close();
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});

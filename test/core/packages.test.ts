// Python packages: installed from a local directory of wheels or a loopback index granted with
// --allow-net, checked by hash, refused from hosts not granted (before any request), kept per
// sandbox, and re-installed when an interpreter is replaced.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel } from "../helpers/wheel.js";

const wheel = buildWheel(
  "polybox-demo",
  "1.0.0",
  "polybox_demo",
  "def greet(who):\n    return f'hello {who}'\n",
);
const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-wheels-"));
writeFileSync(path.join(dir, wheel.fileName), wheel.data);

let requests = 0;
let badHash = false;
const server = http.createServer((req, res) => {
  requests++;
  if (req.url === "/simple/polybox-demo/") {
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
let grant = "";

let local: Runtime;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  grant = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  index = `http://${grant}/simple/`;
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
    await using other = await Sandbox.create({ runtime: local });
    const r = await other.run("python", "import polybox_demo");
    expect(r.stderr).toMatch(/ModuleNotFoundError: No module named 'polybox_demo'/);
  });

  it("installs PEP 723 inline dependencies before a one-shot run", async () => {
    const code =
      '# /// script\n# dependencies = ["polybox-demo>=1.0"]\n# ///\nimport polybox_demo\nprint(polybox_demo.greet("pep723"))';
    const r = await run({ runtime: local, language: "python", code });
    expect(r).toMatchObject({ status: "ok", stdout: "hello pep723\n" });
  });

  it("says which package, which sources and which flag when a package is missing", async () => {
    await using sb = await Sandbox.create({ runtime: local });
    await expect(sb.installPackages("no-such-dist")).rejects.toMatchObject({
      code: "PACKAGE_NOT_FOUND",
      message: expect.stringMatching(
        /"no-such-dist" was not found in: .*polybox-wheels-.*--python-packages/,
      ),
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

describe("python packages over the network", () => {
  it("downloads from an index on a granted host, checking the link's sha256", async () => {
    requests = 0;
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), "polybox-cache-"));
    const rt = await testRuntime({
      pythonPackages: [index],
      permissions: { net: [grant] },
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

  it("refuses a host that was not granted without sending it any request", async () => {
    requests = 0;
    const rt = await testRuntime({
      pythonPackages: [index],
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      await using sb = await Sandbox.create({ runtime: rt });
      const error = await sb.installPackages("polybox-demo").catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "PACKAGE_NOT_FOUND" });
      expect((error as Error).message).toContain(`--allow-net=${grant}`);
      expect(requests).toBe(0);
    } finally {
      await rt.close();
    }
  });
});

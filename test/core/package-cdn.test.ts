// Packages fetched like Deno fetches dependencies: lock-file packages come from the Pyodide
// distribution without any network grant, checked against the lock file's sha256 and cached;
// `cachedOnly` refuses every download. The CDN is a loopback stand-in: a directory served over
// HTTP. The resolver tests give it a distribution whose lock file has real entries (the real
// micropip entry's fields, renamed and re-hashed for wheels built here, since no real Pyodide
// wheel is on this machine); the runtime tests use the installed Pyodide's own lock file.
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PackageResolver } from "../../dist/core/packages/packages.js";
import { parseRequirement } from "../../dist/core/packages/requirements.js";
import { isPolyboxError, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel } from "../helpers/wheel.js";

const PYODIDE = path.dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
const realLock = JSON.parse(readFileSync(path.join(PYODIDE, "pyodide-lock.json"), "utf8")) as {
  info: unknown;
  packages: Record<string, Record<string, unknown> & { file_name: string; sha256: string }>;
};
const micropip = realLock.packages.micropip!;

const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-cdn-"));
const served = path.join(tmp, "full");
const distribution = path.join(tmp, "pyodide");
const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

const dep = buildWheel("polybox-cdn-dep", "0.2.0", "polybox_cdn_dep", "VALUE = 2\n");
const demo = buildWheel(
  "polybox-cdn-demo",
  "1.0.0",
  "polybox_cdn_demo",
  "from polybox_cdn_dep import VALUE\n",
);
const tampered = buildWheel("polybox-cdn-bad", "1.0.0", "polybox_cdn_bad", "X = 1\n");
// A real lock entry's shape (micropip's), for each wheel; the CDN serves the bytes.
const entry = (
  name: string,
  version: string,
  w: typeof dep,
  module: string,
  depends: string[],
) => ({
  ...micropip,
  name,
  version,
  file_name: w.fileName,
  sha256: w.sha256,
  depends,
  imports: [module],
});

/** Requests the stand-in saw, by path. */
const requests: string[] = [];
const cdn = http.createServer((req, res) => {
  requests.push(req.url ?? "");
  const file = path.join(served, path.basename(req.url ?? ""));
  if (req.url?.startsWith("/full/") && existsSync(file)) res.end(readFileSync(file));
  else {
    res.statusCode = 404;
    res.end();
  }
});
let base = "";

beforeAll(async () => {
  mkdirSync(served);
  mkdirSync(distribution);
  cpSync(path.join(PYODIDE, "package.json"), path.join(distribution, "package.json"));
  writeFileSync(
    path.join(distribution, "pyodide-lock.json"),
    JSON.stringify({
      info: realLock.info,
      packages: {
        "polybox-cdn-dep": entry("polybox-cdn-dep", "0.2.0", dep, "polybox_cdn_dep", []),
        "polybox-cdn-demo": entry("polybox-cdn-demo", "1.0.0", demo, "polybox_cdn_demo", [
          "polybox-cdn-dep",
        ]),
        "polybox-cdn-bad": entry("polybox-cdn-bad", "1.0.0", tampered, "polybox_cdn_bad", []),
      },
    }),
  );
  for (const w of [dep, demo]) writeFileSync(path.join(served, w.fileName), w.data);
  // Bytes that are not the ones the lock file's sha256 names.
  writeFileSync(path.join(served, tampered.fileName), Buffer.concat([tampered.data, Buffer.of(0)]));
  // The real micropip's name, with other bytes: what a compromised CDN would serve.
  writeFileSync(
    path.join(served, micropip.file_name),
    buildWheel("micropip", "0.11.1", "micropip", "print('not micropip')\n").data,
  );
  await new Promise<void>((resolve) => cdn.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/full/`;
});

afterAll(() => {
  cdn.close();
  rmSync(tmp, { recursive: true, force: true });
});

const resolver = (cacheDir: string, cachedOnly = false) =>
  new PackageResolver({
    sources: [],
    cacheDir,
    pyodideDir: distribution,
    pyodideCdn: base,
    cachedOnly,
    // The stand-in CDN is on loopback: the opt-in for a package source on a private network.
    allowPrivateIndex: true,
  });
const req = (text: string) => [parseRequirement(text)];

describe("lock-file packages from the Pyodide distribution", () => {
  it("are fetched by default with their lock-file dependencies, checked and cached", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    requests.length = 0;
    const wheels = await resolver(cacheDir).resolve(req("polybox-cdn-demo"));
    expect(wheels.map((w) => [w.name, w.version, w.fileName])).toEqual([
      ["polybox-cdn-dep", "0.2.0", dep.fileName],
      ["polybox-cdn-demo", "1.0.0", demo.fileName],
    ]);
    expect(wheels.map((w) => sha(w.data))).toEqual([dep.sha256, demo.sha256]);
    expect(requests).toEqual([`/full/${dep.fileName}`, `/full/${demo.fileName}`]);
    // Cached by sha256: a new resolver (a new process) asks the CDN nothing.
    expect(existsSync(path.join(cacheDir, "packages", demo.sha256))).toBe(true);
    requests.length = 0;
    const again = await resolver(cacheDir).resolve(req("polybox-cdn-demo"));
    expect(again.map((w) => sha(w.data))).toEqual([dep.sha256, demo.sha256]);
    expect(requests).toEqual([]);
  });

  it("cachedOnly: served from the cache with no request; refused, naming the package, without it", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    await resolver(cacheDir).resolve(req("polybox-cdn-dep"));
    requests.length = 0;
    const cached = await resolver(cacheDir, true).resolve(req("polybox-cdn-dep"));
    expect(sha(cached[0]!.data)).toBe(dep.sha256);
    const error = await resolver(mkdtempSync(path.join(tmp, "cache-")), true)
      .resolve(req("polybox-cdn-dep"))
      .catch((e: unknown) => e);
    expect(isPolyboxError(error, "PACKAGE_NOT_CACHED")).toBe(true);
    expect(error).toMatchObject({
      message: expect.stringMatching(/"polybox-cdn-dep" is not in the package cache.*cachedOnly/),
      details: { limit: "cachedOnly", package: "polybox-cdn-dep" },
    });
    expect(requests).toEqual([]);
  });

  it("refuses bytes whose sha256 is not the lock file's, and does not cache them", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    const error = await resolver(cacheDir)
      .resolve(req("polybox-cdn-bad"))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "PACKAGE_HASH_MISMATCH",
      message: expect.stringContaining(`expected ${tampered.sha256}`),
      details: { package: "polybox-cdn-bad" },
    });
    expect(existsSync(path.join(cacheDir, "packages", tampered.sha256))).toBe(false);
  });

  it("takes only wheels Pyodide can load from a directory: not a newer one for another machine", async () => {
    const dir = mkdtempSync(path.join(tmp, "wheels-"));
    const [major, minor] = (realLock.info as { python: string }).python.split(".");
    const cp = `cp${major}${minor}`;
    const pure = buildWheel("polybox-tagged", "1.0", "polybox_tagged", "X = 1\n");
    const linux = buildWheel("polybox-tagged", "2.0", "polybox_tagged", "X = 2\n");
    writeFileSync(path.join(dir, pure.fileName), pure.data);
    writeFileSync(
      path.join(dir, `polybox_tagged-2.0-${cp}-${cp}-manylinux_2_17_x86_64.whl`),
      linux.data,
    );
    const r = new PackageResolver({ sources: [dir], cacheDir: tmp, pyodideDir: distribution });
    expect((await r.resolve(req("polybox-tagged"))).map((w) => w.fileName)).toEqual([
      pure.fileName,
    ]);
    await expect(r.resolve(req("polybox-tagged>=2"))).rejects.toMatchObject({
      code: "PACKAGE_NOT_FOUND",
      message: expect.stringMatching(
        /for Pyodide: pure-Python wheels or its own WebAssembly builds/,
      ),
    });
  });

  it("refuses a CDN base that is not an http(s) URL", () => {
    expect(
      () =>
        new PackageResolver({
          sources: [],
          cacheDir: tmp,
          pyodideDir: distribution,
          pyodideCdn: "file:///etc/",
        }),
    ).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", details: expect.anything() }));
  });
});

describe("a runtime with the installed Pyodide's lock file", () => {
  it("downloads a lock-file package with no network grant and checks it (a forged micropip is refused)", async () => {
    const rt = await testRuntime({
      pyodideCdn: base,
      allowPrivateIndex: true,
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      expect(rt.permissions.net).toEqual([]);
      requests.length = 0;
      await using sb = await Sandbox.create({ runtime: rt });
      await expect(sb.installPackages("micropip")).rejects.toMatchObject({
        code: "PACKAGE_HASH_MISMATCH",
        message: expect.stringContaining(micropip.sha256),
      });
      expect(requests).toEqual([`/full/${micropip.file_name}`]);
    } finally {
      await rt.close();
    }
  });

  it("cachedOnly: no request at all, and a typed error naming the package", async () => {
    const rt = await testRuntime({
      pyodideCdn: base,
      allowPrivateIndex: true,
      cachedOnly: true,
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
      pool: { python: 1, javascript: 0, bash: 0 },
    });
    try {
      requests.length = 0;
      await using sb = await Sandbox.create({ runtime: rt });
      await expect(sb.installPackages("micropip")).rejects.toMatchObject({
        code: "PACKAGE_NOT_CACHED",
        details: { limit: "cachedOnly", package: "micropip" },
      });
      // An import of a lock-file package is a wish: the run goes on, and says why it failed.
      const r = await sb.run("python", "import micropip");
      expect(r.stderr).toMatch(/No module named 'micropip'/);
      expect(r.notes?.join("\n")).toMatch(/micropip.*not in the package cache/);
      expect(requests).toEqual([]);
    } finally {
      await rt.close();
    }
  });
});

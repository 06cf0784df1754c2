// Wasmer registry packages by name (`wasmerPackage` on `wasix` runs): the trusted side asks the
// registry (GraphQL `getPackageVersion`) for the version's WEBC file, downloads it only from a
// granted host, checks its sha256, pins and caches it, and hands the bytes to the engine, whose
// sdk runs the package's command in the workspace. The registry is a loopback stand-in serving
// real .webc files written by test/helpers/webc.ts around C programs built to WebAssembly
// (test/fixtures/wasix: tool.c, grow.c).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmerPackageResolver } from "../../dist/core/packages/wasmer-packages.js";
import { CLI, call, stdioServer, text } from "../helpers/mcp-client.js";
import { isPolyboxError, type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { wasixModule } from "../helpers/wasix-modules.js";
import { wat } from "../helpers/wat.js";
import { encodeWebc } from "../helpers/webc.js";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-wasmer-"));

// A command-line tool (test/fixtures/wasix/tool.c): `upper` upper-cases /workspace/<arg> into
// /workspace/out/<arg>; `hello` (the entrypoint) greets with its arguments.
const TOOL = wasixModule("tool");

const pkg = (
  name: string,
  atoms: Record<string, Uint8Array> = { tool: TOOL },
  version: 2 | 3 = 2,
) =>
  encodeWebc(
    {
      name,
      version: "1.0.0",
      atoms,
      commands: {
        hello: { atom: Object.keys(atoms)[0]! },
        upper: { atom: Object.keys(atoms)[0]!, mainArgs: ["upper"] },
      },
      entrypoint: "hello",
    },
    version,
  );

const TOOL_WEBC = pkg("polybox/tool");
// Allocates 1 MiB blocks until malloc fails (exit 12) or 2 GiB are held.
const GROW_WEBC = pkg("polybox/grow", { grow: wasixModule("grow") });
const NAPI_MODULE = wat(
  '(module (import "napi" "napi_run_script" (func)) (memory (export "memory") 1) (func (export "_start")))',
);
const NAPI_WEBC = pkg("polybox/napi", { napi: NAPI_MODULE });
// The registry serves version 3 files where it has them: the engine reads both.
const TOOL_V3_WEBC = pkg("polybox/tool-v3", { tool: TOOL }, 3);
const NAPI_V3_WEBC = pkg("polybox/napi-v3", { napi: NAPI_MODULE }, 3);

// ---- the registry stand-in ------------------------------------------------------------------
/** What the stand-in serves: per `name@version`, the file and the sha256 it claims for it. */
const published = new Map<
  string,
  { file: string; bytes: Uint8Array; claimed: string; host?: string }
>();
/** Requests it saw: "query name@version" or "GET /path". */
const seen: string[] = [];
let failQueries = false;
const registry = http.createServer((req, res) => {
  if (req.method === "POST" && req.url === "/graphql") {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const { query, variables } = JSON.parse(body) as {
        query: string;
        variables: { name: string; version: string };
      };
      const key = `${variables.name}@${variables.version}`;
      seen.push(`query ${key}`);
      if (failQueries) {
        res.statusCode = 502;
        res.end("bad gateway");
        return;
      }
      // The query names the schema's fields; a stand-in that ignored them would prove nothing.
      expect(query).toMatch(/getPackageVersion\(name: \$name, version: \$version\)/);
      expect(query).toMatch(/distribution\(version: V2\) \{ piritaDownloadUrl piritaSha256Hash \}/);
      const p = published.get(key);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          data: {
            getPackageVersion: p
              ? {
                  version: variables.version,
                  v3: null,
                  v2: {
                    piritaDownloadUrl: `http://${p.host ?? `127.0.0.1:${port}`}/webc/${p.file}`,
                    piritaSha256Hash: p.claimed,
                  },
                }
              : null,
          },
        }),
      );
    });
    return;
  }
  seen.push(`GET ${req.url}`);
  const file = [...published.values()].find((p) => req.url === `/webc/${p.file}`);
  if (req.method === "GET" && file) res.end(file.bytes);
  else {
    res.statusCode = 404;
    res.end();
  }
});
let port = 0;
let registryUrl = "";

const publish = (
  name: string,
  bytes: Uint8Array,
  extra: { claimed?: string; host?: string } = {},
) =>
  published.set(`${name}@1.0.0`, {
    file: `${sha(bytes)}.webc`,
    bytes,
    claimed: extra.claimed ?? sha(bytes),
    ...(extra.host ? { host: extra.host } : {}),
  });

let runtime: Runtime;
let sb: Sandbox;
let cacheDir = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  port = (registry.address() as AddressInfo).port;
  registryUrl = `http://127.0.0.1:${port}/graphql`;
  publish("polybox/tool", TOOL_WEBC);
  publish("polybox/napi", NAPI_WEBC);
  publish("polybox/grow", GROW_WEBC);
  publish("polybox/tool-v3", TOOL_V3_WEBC);
  publish("polybox/napi-v3", NAPI_V3_WEBC);
  // Bytes that are not the ones the registry's sha256 names: what a compromised CDN would serve.
  publish("polybox/tampered", pkg("polybox/tampered"), { claimed: sha(TOOL_WEBC) });
  // A download URL on a host the registry was not granted with ("localhost" is not 127.0.0.1).
  publish("polybox/elsewhere", TOOL_WEBC, { host: `localhost:${port}` });
  cacheDir = mkdtempSync(path.join(tmp, "cache-"));
  runtime = await testRuntime({
    pool: { python: 0, javascript: 0, bash: 0, wasix: 1 },
    pythonSnapshot: false,
    cacheDir,
    wasmerRegistry: registryUrl,
    // The stand-in registry is on loopback: the opt-in for a registry on a private network.
    allowPrivateIndex: true,
  });
  sb = await Sandbox.create({ runtime });
}, 120_000);
afterAll(async () => {
  await sb?.close();
  await runtime?.close();
  registry.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("a package's command by name", () => {
  it("runs the entrypoint, then comes from the cache: the registry sees one query and one download", async () => {
    seen.length = 0;
    const r = await sb.run("wasix", "", {
      wasmerPackage: "polybox/tool@1.0.0",
      args: ["a", "b c"],
    });
    expect(r).toMatchObject({ exitCode: 7, stdout: "hello from a package: a b c\n", stderr: "" });
    expect(seen).toEqual(["query polybox/tool@1.0.0", `GET /webc/${sha(TOOL_WEBC)}.webc`]);
    seen.length = 0;
    // Another sandbox, a one-shot: the pinned bytes from the cache, no request at all.
    const again = await run({
      language: "wasix",
      code: "hello",
      wasmerPackage: "polybox/tool@1.0.0",
      args: ["again"],
      runtime,
    });
    expect(again).toMatchObject({ exitCode: 7, stdout: "hello from a package: again\n" });
    expect(seen).toEqual([]);
  }, 90_000);

  it("a command reads workspace files and its changed files come back", async () => {
    await sb.files.write("notes.txt", "make me loud\n");
    const r = await sb.run("wasix", "upper", {
      wasmerPackage: "polybox/tool@1.0.0",
      args: ["notes.txt"],
    });
    expect(r).toMatchObject({ exitCode: 0, stdout: "upper: 13 bytes\n", stderr: "" });
    // The directory the command made is a change too, as with every engine.
    expect(r.filesChanged).toEqual(["out", "out/notes.txt"]);
    expect(new TextDecoder().decode(await sb.files.read("out/notes.txt"))).toBe("MAKE ME LOUD\n");
  }, 60_000);

  it("a version 3 WEBC file runs too, its modules read and checked alike", async () => {
    const r = await sb.run("wasix", "hello", {
      wasmerPackage: "polybox/tool-v3@1.0.0",
      args: ["v3"],
    });
    expect(r).toMatchObject({ exitCode: 7, stdout: "hello from a package: v3\n" });
    const napi = await sb.run("wasix", "", { wasmerPackage: "polybox/napi-v3@1.0.0" });
    expect(napi).toMatchObject({ status: "error", exitCode: 126 });
    expect(napi.stderr).toMatch(/module napi imports napi\.napi_run_script/);
  }, 60_000);

  it("an unknown command names the package's commands", async () => {
    const r = await sb.run("wasix", "nope", { wasmerPackage: "polybox/tool@1.0.0" });
    expect(r).toMatchObject({ status: "error", exitCode: 127 });
    expect(r.stderr).toMatch(/polybox\/tool@1\.0\.0 has no command "nope"; its commands: .*hello/);
  }, 60_000);

  it("T31 a package's module is held to memoryMb, as a workspace module is", async () => {
    // A sandbox of its own: a package keeps the cap of its first run in an interpreter.
    const own = await Sandbox.create({ runtime });
    try {
      const r = await own.run("wasix", "", { wasmerPackage: "polybox/grow@1.0.0", memoryMb: 64 });
      expect(r.exitCode).toBe(12);
      const held = Number(/held (\d+) MiB/.exec(r.stdout)?.[1]);
      expect(held).toBeGreaterThan(8);
      expect(held).toBeLessThan(64);
    } finally {
      await own.close();
    }
  }, 90_000);

  it("T31 a package module importing beyond the system calls is refused before the sdk loads it", async () => {
    const r = await sb.run("wasix", "", { wasmerPackage: "polybox/napi@1.0.0" });
    expect(r).toMatchObject({ status: "error", exitCode: 126 });
    expect(r.stderr).toMatch(/module napi imports napi\.napi_run_script; only WASI and WASIX/);
  }, 60_000);
});

describe("refusals, with stable codes", () => {
  const failure = (spec: string) =>
    sb.run("wasix", "", { wasmerPackage: spec }).then(
      () => null,
      (e: unknown) => e,
    );

  it("T31 bytes whose sha256 is not the registry's are refused and not cached", async () => {
    const error = await failure("polybox/tampered@1.0.0");
    expect(error).toMatchObject({
      code: "PACKAGE_HASH_MISMATCH",
      details: { package: "polybox/tampered@1.0.0" },
    });
    expect(String((error as Error).message)).toMatch(/expected|registry gives/);
    // Nothing pinned: asked again, the registry is asked again.
    seen.length = 0;
    expect(await failure("polybox/tampered@1.0.0")).toMatchObject({
      code: "PACKAGE_HASH_MISMATCH",
    });
    expect(seen[0]).toBe("query polybox/tampered@1.0.0");
  }, 60_000);

  it("T31 a download host the registry was not granted with is refused before any download", async () => {
    seen.length = 0;
    const error = await failure("polybox/elsewhere@1.0.0");
    expect(error).toMatchObject({
      code: "PERMISSION_DENIED",
      details: { hosts: ["localhost"], limit: "wasmerDownloadHosts" },
    });
    expect(seen).toEqual(["query polybox/elsewhere@1.0.0"]);
  }, 60_000);

  it("an unknown package or version, a malformed name, another language", async () => {
    expect(await failure("polybox/tool@9.9.9")).toMatchObject({ code: "PACKAGE_NOT_FOUND" });
    expect(await failure("polybox/absent@1.0.0")).toMatchObject({ code: "PACKAGE_NOT_FOUND" });
    for (const bad of ["tool@1.0.0", "polybox/tool", "polybox/tool@latest", "../x/y@1.0.0"])
      expect(await failure(bad)).toMatchObject({ code: "INVALID_ARGUMENT" });
    const other = await sb
      .run("python", "print(1)", { wasmerPackage: "polybox/tool@1.0.0" })
      .catch((e: unknown) => e);
    expect(isPolyboxError(other, "INVALID_ARGUMENT")).toBe(true);
  }, 60_000);

  it("a registry that fails or cannot be reached", async () => {
    failQueries = true;
    try {
      expect(await failure("polybox/fresh@1.0.0")).toMatchObject({
        code: "PACKAGE_REGISTRY_UNAVAILABLE",
      });
    } finally {
      failQueries = false;
    }
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const resolver = new WasmerPackageResolver({
      registry: `http://127.0.0.1:${deadPort}/graphql`,
      allowPrivateIndex: true,
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
    });
    const error = await resolver
      .fetch({ name: "polybox/tool", version: "1.0.0" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "PACKAGE_REGISTRY_UNAVAILABLE" });
  }, 60_000);
});

describe("cachedOnly", () => {
  it("serves a pinned package from the cache with no request; without it, refuses naming the package", async () => {
    // The runtime's cache holds polybox/tool from the first test.
    const cached = new WasmerPackageResolver({
      registry: registryUrl,
      cacheDir,
      cachedOnly: true,
      allowPrivateIndex: true,
    });
    seen.length = 0;
    const hit = await cached.fetch({ name: "polybox/tool", version: "1.0.0" });
    expect(hit.sha256).toBe(sha(TOOL_WEBC));
    expect(sha(hit.data)).toBe(sha(TOOL_WEBC));
    expect(seen).toEqual([]);
    const empty = new WasmerPackageResolver({
      registry: registryUrl,
      allowPrivateIndex: true,
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
      cachedOnly: true,
    });
    const error = await empty
      .fetch({ name: "polybox/tool", version: "1.0.0" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "PACKAGE_NOT_CACHED",
      details: { limit: "cachedOnly", package: "polybox/tool@1.0.0" },
    });
    expect(seen).toEqual([]);
  });

  it("T31 a cache file changed on disk is not trusted: fetched again", async () => {
    const dir = mkdtempSync(path.join(tmp, "cache-"));
    const resolver = new WasmerPackageResolver({
      registry: registryUrl,
      cacheDir: dir,
      allowPrivateIndex: true,
    });
    await resolver.fetch({ name: "polybox/tool", version: "1.0.0" });
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path.join(dir, "wasmer", "blobs", `${sha(TOOL_WEBC)}.webc`), "tampered");
    seen.length = 0;
    const again = await resolver.fetch({ name: "polybox/tool", version: "1.0.0" });
    expect(sha(again.data)).toBe(sha(TOOL_WEBC));
    expect(seen).toEqual(["query polybox/tool@1.0.0", `GET /webc/${sha(TOOL_WEBC)}.webc`]);
  });
});

describe("the same field through MCP and the CLI", () => {
  /**
   * A cache dir of its own for a server process (XDG_CACHE_HOME), with the engines' snapshots
   * linked in from the user's cache so that the process does not rebuild them.
   */
  const ownCache = () => {
    const xdg = mkdtempSync(path.join(tmp, "xdg-"));
    const mine = path.join(xdg, "polybox");
    mkdirSync(mine);
    const user = path.join(
      process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"),
      "polybox",
    );
    if (existsSync(user))
      for (const f of readdirSync(user))
        if (/^(pyodide|quickjs)-/.test(f)) symlinkSync(path.join(user, f), path.join(mine, f));
    return xdg;
  };
  const COLD = "--pool=python=0,javascript=0,typescript=0,bash=0,ruby=0,wasm=0,wasix=0";

  it("MCP: create_run_close and execute_code take wasmer_package", async () => {
    const server = await stdioServer(
      [COLD, `--wasmer-registry=${registryUrl}`, "--allow-private-index"],
      {
        XDG_CACHE_HOME: ownCache(),
      },
    );
    try {
      const once = await call(server.client, "create_run_close", {
        language: "wasix",
        code: "",
        wasmer_package: "polybox/tool@1.0.0",
        args: ["over", "mcp"],
      });
      expect(once.structuredContent).toMatchObject({
        exit_code: 7,
        stdout: "hello from a package: over mcp\n",
      });
      const sandbox_id = (await call(server.client, "create_sandbox", { language: "wasix" }))
        .structuredContent?.sandbox_id;
      await call(server.client, "write_file", { sandbox_id, path: "in.txt", content: "abc" });
      const upper = await call(server.client, "execute_code", {
        sandbox_id,
        code: "upper",
        wasmer_package: "polybox/tool@1.0.0",
        args: ["in.txt"],
      });
      expect(upper.structuredContent).toMatchObject({ exit_code: 0, stdout: "upper: 3 bytes\n" });
      const missing = await call(server.client, "create_run_close", {
        language: "wasix",
        code: "",
        wasmer_package: "polybox/absent@1.0.0",
      });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toMatch(/^PACKAGE_NOT_FOUND: Wasmer package "polybox\/absent@1\.0\.0"/);
    } finally {
      await server.close();
    }
  }, 120_000);

  it("CLI: polybox run --wasmer-package P [COMMAND] [-- ARGS], and --cached-only", async () => {
    const polybox = (args: string[], xdg: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, "run", ...args], {
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, XDG_CACHE_HOME: xdg },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c) => {
          stdout += c;
        });
        child.stderr.on("data", (c) => {
          stderr += c;
        });
        child.on("error", reject);
        child.on("exit", (code) => resolve({ code, stdout, stderr }));
      });
    const xdg = ownCache();
    const registryFlag = `--wasmer-registry=${registryUrl}`;
    const privateFlag = "--allow-private-index";
    // Not cached yet and downloads off: refused, naming the package.
    const offline = await polybox(
      ["--cached-only", registryFlag, privateFlag, "--wasmer-package", "polybox/tool@1.0.0"],
      xdg,
    );
    expect(offline.code).not.toBe(0);
    expect(offline.stderr).toMatch(/PACKAGE_NOT_CACHED|not in the package cache/);
    const first = await polybox(
      [
        registryFlag,
        privateFlag,
        "--wasmer-package",
        "polybox/tool@1.0.0",
        "hello",
        "--",
        "x",
        "y",
      ],
      xdg,
    );
    expect(first).toMatchObject({ code: 7, stdout: "hello from a package: x y\n" });
    // Now pinned in this cache: --cached-only runs it.
    const cached = await polybox(
      ["--cached-only", registryFlag, privateFlag, "--wasmer-package", "polybox/tool@1.0.0"],
      xdg,
    );
    expect(cached).toMatchObject({ code: 7, stdout: "hello from a package:\n" });
  }, 180_000);
});

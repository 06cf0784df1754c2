// `polybox warmup --python-packages=…` fills the package cache so that the machine can go
// offline, and `--cached-only` then serves from it: end to end through the CLI binary, with a
// loopback index that is shut down before the offline run, and a cache dir of the test's own
// (XDG_CACHE_HOME). Pyodide's lock-file packages are fetched from a loopback stand-in for its
// CDN (--pyodide-cdn) that serves forged bytes, which warmup must refuse.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCacheDir } from "../../dist/supervisor/snapshot.js";
import { CLI } from "../helpers/mcp-client.js";
import { buildWheel } from "../helpers/wheel.js";

const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-warmup-"));
const wheel = buildWheel(
  "polybox-warm",
  "1.0.0",
  "polybox_warm",
  "def hi(w):\n    return 'hello ' + w\n",
);
const lock = createRequire(import.meta.url)("pyodide/pyodide-lock.json") as {
  packages: Record<string, { file_name: string }>;
};
const micropipFile = lock.packages.micropip!.file_name;
const forgedMicropip = buildWheel("micropip", "0.11.1", "micropip", "X = 1\n");

let requests: string[] = [];
const server = http.createServer((req, res) => {
  requests.push(req.url ?? "");
  if (req.url === "/simple/polybox-warm/")
    res.end(`<a href="/files/${wheel.fileName}#sha256=${wheel.sha256}">${wheel.fileName}</a>`);
  else if (req.url === `/files/${wheel.fileName}`) res.end(wheel.data);
  else if (req.url?.startsWith("/cdn/micropip-")) res.end(forgedMicropip.data);
  else {
    res.statusCode = 404;
    res.end();
  }
});
let origin = "";

/** A fresh per-user cache dir holding only the boot caches (so no test rebuilds them). */
function freshCache(): string {
  const home = mkdtempSync(path.join(tmp, "xdg-"));
  mkdirSync(path.join(home, "polybox", "boot"), { recursive: true });
  const boot = path.join(defaultCacheDir(), "boot");
  if (existsSync(boot))
    for (const f of readdirSync(boot).filter((n) => /\.(snapshot|image)(\.json)?$/.test(n)))
      cpSync(path.join(boot, f), path.join(home, "polybox", "boot", f));
  return home;
}

function polybox(args: string[], cacheHome: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, XDG_CACHE_HOME: cacheHome },
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
}

const CODE =
  '# /// script\n# dependencies = ["polybox-warm"]\n# ///\nimport polybox_warm\nprint(polybox_warm.hi("offline"))';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("polybox warmup and --cached-only", () => {
  it("without a warmed cache, --cached-only refuses the package and contacts nothing", async () => {
    requests = [];
    const r = await polybox(
      ["run", "--cached-only", `--python-packages=${origin}/simple/`, "--lang=python", "-e", CODE],
      freshCache(),
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/"polybox-warm" is not in the package cache/);
    expect(requests).toEqual([]);
  });

  it("warmup caches a package from a named index; --cached-only then runs with the index gone", async () => {
    const home = freshCache();
    requests = [];
    const warm = await polybox(
      ["warmup", "--allow-private-index", `--python-packages=${origin}/simple/,polybox-warm`],
      home,
    );
    expect(warm.code, warm.stderr).toBe(0);
    expect(warm.stdout).toContain(`cached polybox-warm 1.0.0 (${wheel.fileName})\n`);
    expect(requests).toEqual(["/simple/polybox-warm/", `/files/${wheel.fileName}`]);
    // Offline: nothing listens where the index was.
    const offline = "http://127.0.0.1:9/simple/";
    const r = await polybox(
      ["run", "--cached-only", `--python-packages=${offline}`, "--lang=python", "-e", CODE],
      home,
    );
    expect(r.stderr).toBe("");
    expect(r).toMatchObject({ code: 0, stdout: "hello offline\n" });
  });

  it("warmup fetches Pyodide's packages without --allow-net and refuses bytes the lock file does not name", async () => {
    requests = [];
    const r = await polybox(
      [
        "warmup",
        "--allow-private-index",
        "--python-packages=micropip",
        `--pyodide-cdn=${origin}/cdn/`,
      ],
      freshCache(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refusing Python package "micropip".*expected [0-9a-f]{64}/);
    expect(requests).toEqual([`/cdn/${micropipFile}`]);
  });

  it("an invalid --pyodide-cdn is refused, naming the flag", async () => {
    const r = await polybox(
      ["warmup", "--python-packages=micropip", "--pyodide-cdn=ftp://example/"],
      freshCache(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pyodideCdn must be an http\(s\) URL.*--pyodide-cdn/);
  });
});

// What macOS does to a program that Linux does not, reproduced here so that the normal suite
// (Linux) meets it. macOS itself is not tested (README, "Platforms"); each trap below is what it
// would do there, made on this machine:
//
// - A symlinked prefix. macOS's TMPDIR is /var/folders/…, and /var, /tmp and /etc are links into
//   /private. Node's permission model, Seatbelt and the Linux jail's binds compare paths as text,
//   so a grant in one spelling does not hold for the other. Made here as a directory tree whose
//   `var` is a link to `private/var`, with TMPDIR, HOME and the XDG dirs spelled through it.
//   (The Seatbelt profile's spellings: test/unit/seatbelt-profile.test.ts.)
// - A case-insensitive volume (APFS as it comes): `Data.csv` and `data.csv` are one file. No such
//   file system can be mounted here (no vfat, no casefold in this kernel), so the workspace's
//   probe is forced, and the probe itself is checked to find this volume case-sensitive.
// - A 512 KiB stack for threads a program does not size (macOS's default): the engines' worker
//   threads are given theirs explicitly, and deep recursion is checked to end as it should.
import { spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseInsensitiveAt, forceCaseInsensitive } from "../../dist/core/sandbox/names.js";
import { Workspace } from "../../dist/core/sandbox/workspace.js";
import { launcherReport, linuxJailWrapper } from "../../dist/supervisor/jail/launcher.js";
import {
  engineHostNodeArgs,
  grantSpellings,
  realSpelling,
} from "../../dist/supervisor/jail/permissions.js";
import { defaultCacheDir } from "../../dist/supervisor/snapshot.js";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel } from "../helpers/wheel.js";

const DIST_INDEX = path.resolve(import.meta.dirname, "../../dist/index.js");

/** Runs `node args…` with `env`; its exit code and output. */
function node(
  args: string[],
  env: NodeJS.ProcessEnv,
  command = process.execPath,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

// macOS's layout: <root>/private/var is real, <root>/var a relative link to it.
const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "polybox-traps-")));
const real = path.join(root, "private", "var");
const link = path.join(root, "var");
mkdirSync(real, { recursive: true });
symlinkSync("private/var", link);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a symlinked prefix (/var → /private/var)", () => {
  const data = path.join(link, "data");
  const secret = path.join(real, "secret.txt");
  beforeAll(() => {
    mkdirSync(path.join(real, "data"));
    writeFileSync(path.join(real, "data", "f.txt"), "granted");
    writeFileSync(secret, "not granted");
  });

  it("a grant names the path as given and as resolved, also for a path not made yet", () => {
    expect(realSpelling(data)).toBe(path.join(real, "data"));
    expect(grantSpellings([data])).toEqual([data, path.join(real, "data")]);
    expect(grantSpellings([path.join(link, "later", "x")])).toEqual([
      path.join(link, "later", "x"),
      path.join(real, "later", "x"),
    ]);
    // A directory grant keeps its trailing separator; a real path is given once.
    expect(grantSpellings([`${data}/`])).toEqual([`${data}/`, `${path.join(real, "data")}/`]);
    expect(grantSpellings([path.join(real, "data")])).toEqual([path.join(real, "data")]);
  });

  it("the permission model (L2) lets the engine host read a grant in both spellings, and only it", async () => {
    // What a grant in one spelling did: Node compares the strings, so /var/… did not cover
    // /private/var/… (and the reverse).
    const code = `const fs = require("fs");
for (const p of process.argv.slice(1)) {
  try { fs.readFileSync(p); console.log("read", p); } catch (e) { console.log(e.code, p); }
}`;
    const args = engineHostNodeArgs([data]);
    const r = await node(
      [...args, "-e", code, path.join(data, "f.txt"), path.join(real, "data", "f.txt"), secret],
      {},
    );
    expect(r.stderr).toBe("");
    expect(r.stdout.trim().split("\n")).toEqual([
      `read ${path.join(data, "f.txt")}`,
      `read ${path.join(real, "data", "f.txt")}`,
      `ERR_ACCESS_DENIED ${secret}`,
    ]);
  });

  const jail = launcherReport();
  it.skipIf(!jail.available)(
    `the Linux jail (L3) binds a grant in both spellings${jail.available ? "" : ` (skipped: ${jail.detail})`}`,
    async () => {
      const code = `const fs = require("fs");
for (const p of process.argv.slice(1)) {
  try { console.log(fs.readFileSync(p, "utf8"), p); } catch (e) { console.log(e.code, p); }
}`;
      const [command, args] = linuxJailWrapper([data])(
        process.execPath,
        ["-e", code, path.join(data, "f.txt"), path.join(real, "data", "f.txt"), secret],
        "",
      );
      const r = await node(args, {}, command);
      expect(r.stdout.trim().split("\n"), r.stderr).toEqual([
        `granted ${path.join(data, "f.txt")}`,
        `granted ${path.join(real, "data", "f.txt")}`,
        `ENOENT ${secret}`,
      ]);
    },
  );

  it("the library runs every language, a named sandbox, its packages and a snapshot with TMPDIR, HOME and the XDG dirs spelled through the link", async () => {
    for (const d of ["tmp", "home", "cache", "state", "share", "wheels"])
      mkdirSync(path.join(real, d));
    // The boot caches this machine has already built are copied in, so that the test does not
    // build a Python snapshot (a minute on two cores); without them it is built here, through
    // the link.
    const boot = path.join(defaultCacheDir(), "boot");
    if (existsSync(boot)) {
      mkdirSync(path.join(real, "cache", "polybox", "boot"), { recursive: true });
      const major = `node${process.versions.node.split(".")[0]}-`;
      for (const f of readdirSync(boot))
        if (f.includes(major) || f.startsWith("quickjs-"))
          copyFileSync(path.join(boot, f), path.join(real, "cache", "polybox", "boot", f));
    }
    const wheel = buildWheel("polybox-traps", "1.0", "polybox_traps", "ANSWER = 42\n");
    writeFileSync(path.join(real, "wheels", wheel.fileName), wheel.data);
    const script = path.join(real, "script.mjs");
    writeFileSync(
      script,
      `const lib = await import(process.argv[2]);
const out = {};
const rt = await lib.Runtime.create({
  pythonPackages: [process.argv[3]],
  pool: { python: 1, javascript: 1, bash: 1, ruby: 0, wasm: 0 },
});
const code = {
  python: "print(eval(open('in.txt').read()))",
  javascript: "console.log(eval(require('fs').readFileSync('in.txt', 'utf8')))",
  bash: "bc < in.txt",
};
for (const [language, source] of Object.entries(code)) {
  const r = await lib.run({ runtime: rt, language, code: source, files: { "in.txt": "6*7" } });
  out[language] = r.status + " " + r.stdout.trim() + r.stderr;
}
const sb = await lib.Sandbox.open("traps", { runtime: rt });
out.installed = await sb.installPackages("polybox-traps");
let r = await sb.run("python", "import polybox_traps\\nopen('kept.txt', 'w').write('kept')\\nprint(polybox_traps.ANSWER)");
out.named = r.status + " " + r.stdout.trim() + r.stderr;
const snap = await sb.snapshot();
await sb.run("bash", "rm kept.txt");
await sb.restore(snap.id);
r = await sb.run("python", "print(open('kept.txt').read())");
out.restored = r.status + " " + r.stdout.trim() + r.stderr;
await sb.close();
await rt.close();
console.log(JSON.stringify(out));
`,
    );
    const env = {
      PATH: process.env.PATH,
      TMPDIR: path.join(link, "tmp"),
      HOME: path.join(link, "home"),
      XDG_CACHE_HOME: path.join(link, "cache"),
      XDG_STATE_HOME: path.join(link, "state"),
      XDG_DATA_HOME: path.join(link, "share"),
    };
    const r = await node([script, DIST_INDEX, path.join(link, "wheels")], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual({
      python: "ok 42",
      javascript: "ok 42",
      bash: "ok 42",
      installed: ["polybox-traps"],
      named: "ok 42",
      restored: "ok kept",
    });
    // Everything landed where the link points, and nothing was left in the temp dir.
    const state = path.join(real, "state", "polybox");
    expect(readdirSync(state)).toEqual(expect.arrayContaining(["objects", "scopes"]));
    const cached = readdirSync(path.join(real, "cache", "polybox", "boot"));
    expect(cached.some((f) => f.endsWith(".snapshot"))).toBe(true);
    expect(cached.some((f) => f.endsWith(".image"))).toBe(true);
    expect(readdirSync(path.join(real, "tmp")).filter((f) => f.startsWith("polybox-"))).toEqual([]);
  }, 240_000);
});

describe("names that differ only in case", () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await testRuntime({ pool: { python: 1, javascript: 0, bash: 0 } });
  });
  afterAll(async () => {
    forceCaseInsensitive(null);
    await runtime.close();
  });
  const twins = "open('Data.csv', 'w').write('upper')\nopen('data.csv', 'w').write('lower')";

  it.runIf(process.platform === "linux")(
    "on this case-sensitive volume the probe says so, and both files are kept",
    async () => {
      expect(await caseInsensitiveAt(os.tmpdir())).toBe(false);
      await using sb = await Sandbox.create({ runtime });
      const r = await sb.run("python", twins);
      expect(r.filesChanged).toEqual(["Data.csv", "data.csv"]);
      expect(r.notes ?? []).toEqual([]);
      expect(new TextDecoder().decode(await sb.files.read("data.csv"))).toBe("lower");
      expect(new TextDecoder().decode(await sb.files.read("Data.csv"))).toBe("upper");
    },
  );

  it("the probe leaves nothing behind, and a directory it cannot write in counts as case-sensitive", async () => {
    const dir = mkdtempSync(path.join(root, "case-"));
    expect(await caseInsensitiveAt(dir)).toBe(process.platform === "win32");
    expect(await readdir(dir)).toEqual([]);
    expect(await caseInsensitiveAt(path.join(dir, "missing"))).toBe(false);
  });

  it("on a volume that ignores case, the second of two twins is left out with a note", async () => {
    forceCaseInsensitive(true);
    try {
      await using sb = await Sandbox.create({ runtime });
      const r = await sb.run("python", twins);
      expect(r.status).toBe("ok");
      expect(r.filesChanged).toHaveLength(1);
      const [kept] = r.filesChanged;
      const other = kept === "Data.csv" ? "data.csv" : "Data.csv";
      expect(r.notes?.join("\n")).toContain(
        `"${other}" (the host's file system takes it for "${kept}", which differs only in case)`,
      );
      expect((await sb.files.list()).map((f) => f.path)).toEqual([kept]);
      // The host API refuses a twin too, naming the file it would have replaced.
      await expect(sb.files.write(other, "again")).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining(`takes it for "${kept}"`),
      });

      // In order, with the workspace alone: the first of the two is the one kept.
      const home = mkdtempSync(path.join(root, "ws-"));
      const ws = new Workspace(1024 * 1024, { home });
      await ws.load();
      const notes: string[] = [];
      const bytes = (t: string) => new TextEncoder().encode(t);
      const touched = await ws.apply(
        {
          files: [
            { path: "Dir/Data.csv", data: bytes("a"), mtimeMs: Date.now() },
            { path: "dir/x.txt", data: bytes("b"), mtimeMs: Date.now() },
            { path: "Dir/data.CSV", data: bytes("c"), mtimeMs: Date.now() },
          ],
          dirs: ["Dir", "dir"],
          removed: [],
        },
        Number.POSITIVE_INFINITY,
        notes,
      );
      expect(touched).toEqual(["Dir", "Dir/Data.csv"]);
      expect(notes[0]).toMatch(/"dir" \(.*takes it for "Dir"/);
      expect(notes[0]).toMatch(/"Dir\/data\.CSV" \(.*takes it for "Dir\/Data\.csv"/);
      // A name freed by a removal may be taken again in another case.
      await ws.remove("Dir/Data.csv");
      await ws.write("Dir/DATA.csv", bytes("d"));
      expect(ws.list("Dir").map((f) => f.path)).toEqual(["Dir/DATA.csv"]);
    } finally {
      forceCaseInsensitive(null);
    }
  });
});

describe("deep recursion in an engine's worker thread", () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await testRuntime({ pool: { python: 1, javascript: 1, bash: 0 } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it("Python recurses 5,000 deep under a raised limit, and past its limit raises RecursionError", async () => {
    const r = await run({
      runtime,
      language: "python",
      code: `import sys
sys.setrecursionlimit(10000)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(depth(5000))
sys.setrecursionlimit(1000)
try:
    depth(5000)
except RecursionError:
    print("RecursionError")`,
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("5000\nRecursionError\n");
  }, 60_000);

  it("JavaScript recurses thousands deep, and past QuickJS's limit gets a catchable error, not a dead worker", async () => {
    // With a 2 MiB stack (or macOS's 512 KiB) V8's stack ran out before QuickJS's own limit and
    // the run ended as an engine failure; the worker's explicit stack keeps QuickJS's limit first.
    const r = await run({
      runtime,
      language: "javascript",
      code: `function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }
console.log(depth(3000));
try { depth(1e6); } catch (e) { console.log(e.name, e.message); }
console.log(depth(3000));`,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe("ok");
    expect(r.stdout).toMatch(
      /^3000\n(RangeError Maximum call stack size exceeded|InternalError stack overflow)\n3000\n$/,
    );
  }, 60_000);
});

// State that outlives a process, at the library level: named sandboxes reopened by a new
// runtime, snapshots, restore and fork over the object store, the quotas that bound them, and
// typed errors for bad names and ids.

import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultDataDir, SandboxManager } from "../../dist/index.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let dataDir: string;
let rt: Runtime;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "polybox-state-test-"));
  rt = await testRuntime({ dataDir, pool: { python: 0, javascript: 1, bash: 0 } });
});

afterAll(async () => {
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("named sandboxes", () => {
  it("keeps files when unloaded, and a new runtime reopens them with fresh interpreters", async () => {
    const sb = await Sandbox.open("keep-me", { runtime: rt });
    expect(sb.name).toBe("keep-me");
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
    await sb.files.write("data/blob.bin", bytes);
    await sb.files.write("notes.txt", "hello");
    const r = await sb.run("javascript", "globalThis.x = 41; 1");
    expect(r.stateLost).toBeUndefined();
    const id = sb.id;
    await sb.close();

    const other = await testRuntime({ dataDir, pool: { python: 0, javascript: 1, bash: 0 } });
    try {
      const again = await Sandbox.open("keep-me", { runtime: other });
      expect(again.id).toBe(id);
      expect(await again.files.read("notes.txt", "utf8")).toBe("hello");
      expect(Buffer.from(await again.files.read("data/blob.bin")).equals(Buffer.from(bytes))).toBe(
        true,
      );
      const first = await again.run("javascript", "typeof globalThis.x");
      expect(first.stateLost).toBe(true);
      expect(first.value).toBe("'undefined'");
      expect(first.notes?.join(" ")).toMatch(/reopened.*interpreters are new/);
      const second = await again.run("javascript", "1");
      expect(second.stateLost).toBeUndefined();
      await again.close({ delete: true });
    } finally {
      await other.close();
    }
    expect((await Sandbox.listNamed({ runtime: rt })).map((n) => n.name)).not.toContain("keep-me");
  });

  it("is open in one place at a time, and names are checked", async () => {
    const sb = await Sandbox.open("only-once", { runtime: rt });
    await expect(Sandbox.open("only-once", { runtime: rt })).rejects.toMatchObject({
      code: "SANDBOX_BUSY",
    });
    await sb.close({ delete: true });
    for (const bad of ["", "../up", "UPPER", "a/b", ".hidden", "x".repeat(65), 7]) {
      await expect(Sandbox.open(bad as string, { runtime: rt })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    }
  });

  it("keeps scopes apart: another scope's names and snapshots are unknown", async () => {
    const mine = await Sandbox.open("shared-name", { runtime: rt, scope: "alice" });
    await mine.files.write("secret.txt", "alice's");
    const snap = await mine.snapshot();
    const theirs = await Sandbox.open("shared-name", { runtime: rt, scope: "bob" });
    expect(await theirs.files.list()).toEqual([]);
    await expect(theirs.restore(snap.id)).rejects.toMatchObject({ code: "SNAPSHOT_NOT_FOUND" });
    await expect(Sandbox.fork(snap.id, { runtime: rt, scope: "bob" })).rejects.toMatchObject({
      code: "SNAPSHOT_NOT_FOUND",
    });
    expect(await Sandbox.listSnapshots({ runtime: rt, scope: "bob" })).toEqual([]);
    await theirs.close({ delete: true });
    await mine.close({ delete: true });
  });

  it("leaves symbolic links in its directory out when it is loaded", async () => {
    const sb = await Sandbox.open("with-link", { runtime: rt });
    await sb.files.write("real.txt", "real");
    await sb.close();
    const ws = readdirSync(path.join(dataDir, "scopes"))
      .map((s) => path.join(dataDir, "scopes", s, "sandboxes", "with-link", "workspace"))
      .find((p) => statSync(p, { throwIfNoEntry: false }));
    symlinkSync("/etc/passwd", path.join(ws!, "link"));
    const again = await Sandbox.open("with-link", { runtime: rt });
    expect((await again.files.list()).map((f) => f.path)).toEqual(["real.txt"]);
    await expect(again.files.read("link")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await again.close({ delete: true });
  });
});

describe("snapshots", () => {
  it("restore brings the files back, and an interpreter the snapshot holds no state of is fresh", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    await sb.files.write("a.txt", "one");
    await sb.files.write("dir/b.txt", "two");
    await sb.run("bash", "kept=1; cd dir");
    const snap = await sb.snapshot({ label: "start" });
    expect(snap).toMatchObject({ label: "start", files: 2, bytes: 6, sandboxName: null });
    expect(snap.state).toEqual({
      bash: { kept: "none", bytes: 0, reason: "bash interpreters are not captured" },
    });
    await sb.files.write("a.txt", "changed");
    await sb.files.remove("dir");
    await sb.files.write("new.txt", "new");
    await sb.restore(snap.id);
    expect((await sb.files.list()).map((f) => f.path)).toEqual(["a.txt", "dir", "dir/b.txt"]);
    expect(await sb.files.read("a.txt", "utf8")).toBe("one");
    const r = await sb.run("bash", 'echo "[$kept] $(basename "$PWD")"');
    expect(r.stateLost).toBe(true);
    expect(r.stdout).toBe("[] workspace\n");
    expect(r.notes?.join(" ")).toMatch(/restored from a snapshot: its interpreters are new/);
    expect(r.notes?.join(" ")).toMatch(/holds no bash state: bash interpreters are not captured/);
    // The guest sees the restored files, not what its interpreter had.
    const seen = await sb.run(
      "javascript",
      "const fs = require('fs'); [fs.readFileSync('a.txt','utf8'), fs.existsSync('new.txt')].join()",
    );
    expect(seen.value).toBe("'one,false'");
    await sb.close();
    // An ephemeral sandbox's snapshots go with it.
    await expect(Sandbox.fork(snap.id, { runtime: rt })).rejects.toMatchObject({
      code: "SNAPSHOT_NOT_FOUND",
    });
  });

  it("a fork diverges without touching its parent, and shares its files' disk", async () => {
    const parent = await Sandbox.open("parent", { runtime: rt });
    const big = new Uint8Array(1024 * 1024).fill(7);
    await parent.files.write("big.bin", big);
    await parent.files.write("small.txt", "parent");
    const snap = await parent.snapshot();
    const child = await Sandbox.fork(snap.id, { runtime: rt, name: "child" });
    const live = await Sandbox.fork(parent, {});
    expect(live.name).toBeNull();
    await child.files.write("small.txt", "child");
    await live.files.write("small.txt", "live");
    await child.files.write("big.bin", "overwritten");
    expect(await parent.files.read("small.txt", "utf8")).toBe("parent");
    expect((await parent.files.read("big.bin")).byteLength).toBe(big.byteLength);
    expect(await live.files.read("small.txt", "utf8")).toBe("live");
    // The parent's big file is one inode shared with the store (a link, not a copy).
    const scope = readdirSync(path.join(dataDir, "scopes")).find((s) =>
      statSync(path.join(dataDir, "scopes", s, "sandboxes", "parent"), { throwIfNoEntry: false }),
    )!;
    const file = path.join(dataDir, "scopes", scope, "sandboxes", "parent", "workspace", "big.bin");
    expect(statSync(file).nlink).toBeGreaterThanOrEqual(2);
    await live.close();
    await child.close();
    // A name in use cannot be forked onto, open (busy) or not.
    await expect(Sandbox.fork(snap.id, { runtime: rt, name: "parent" })).rejects.toMatchObject({
      code: "SANDBOX_BUSY",
    });
    await expect(Sandbox.fork(snap.id, { runtime: rt, name: "child" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await Sandbox.deleteNamed("child", { runtime: rt });
    await parent.close({ delete: true });
  });

  it("bad ids are typed errors, and limits name their option", async () => {
    const small = await testRuntime({
      dataDir,
      maxSnapshotsPerSandbox: 1,
      dataDirQuotaBytes: 3 * 1024 * 1024,
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      const sb = await Sandbox.create({ runtime: small });
      for (const bad of ["nope", "snap-00000000000000000000000000000000", "../../etc", 3]) {
        await expect(sb.restore(bad as string)).rejects.toMatchObject({
          code: "SNAPSHOT_NOT_FOUND",
        });
      }
      await sb.files.write("x.txt", "x");
      const snap = await sb.snapshot();
      await expect(sb.snapshot()).rejects.toMatchObject({
        code: "QUOTA_EXCEEDED",
        details: { limit: "maxSnapshotsPerSandbox", value: 1 },
      });
      await Sandbox.deleteSnapshot(snap.id, { runtime: small });
      await expect(Sandbox.deleteSnapshot(snap.id, { runtime: small })).rejects.toMatchObject({
        code: "SNAPSHOT_NOT_FOUND",
      });
      await sb.close();
      const named = await Sandbox.open("quota", { runtime: small });
      await named.files.write("a.bin", new Uint8Array(2 * 1024 * 1024));
      await expect(
        named.files.write("b.bin", new Uint8Array(2 * 1024 * 1024)),
      ).rejects.toMatchObject({ code: "QUOTA_EXCEEDED", details: { limit: "dataDirQuotaBytes" } });
      await named.close({ delete: true });
    } finally {
      await small.close();
    }
  });
});

describe("interpreter state in snapshots", () => {
  const JS_STATE = `
    let x = 41;
    const m = new Map([["a", 1]]);
    class Point { constructor(x, y) { this.x = x; this.y = y } norm() { return Math.hypot(this.x, this.y) } }
    const p = new Point(3, 4);
    const counter = (() => { let n = 0; return () => ++n })();
    counter();
    x`;
  const JS_READ = "[x, m.get('a'), m.size, p.norm(), p instanceof Point, counter()].join()";

  it("JavaScript: a restore brings the whole interpreter back (let, Map, class instance, closure)", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    try {
      expect((await sb.run("javascript", JS_STATE)).value).toBe("41");
      const snap = await sb.snapshot();
      expect(snap.state.javascript).toMatchObject({ kept: "memory" });
      expect(snap.state.javascript!.bytes).toBeGreaterThan(1024 * 1024);
      expect(snap.state.javascript!.bytes).toBeLessThanOrEqual(sb.limits.memoryMb * 1024 * 1024);
      const changed = await sb.run("javascript", "x = 0; m.clear(); counter(); counter(); x");
      expect(changed.value).toBe("0");
      await sb.restore(snap.id);
      const r = await sb.run("javascript", JS_READ);
      expect(r.stderr).toBe("");
      expect(r.value).toBe("'41,1,1,5,true,2'");
      expect(r.stateLost).toBeUndefined();
      expect(r.notes?.join(" ")).toMatch(/javascript interpreter was restored whole/);
      // And it goes on as an interpreter does: the next run sees the last one's changes.
      await sb.run("javascript", "x++");
      expect((await sb.run("javascript", "x")).value).toBe("42");
      // A snapshot taken before the restored state's first run still holds that state.
      await sb.restore(snap.id);
      const again = await sb.snapshot();
      expect(again.state.javascript).toMatchObject({ kept: "memory" });
      await sb.restore(again.id);
      expect((await sb.run("javascript", JS_READ)).value).toBe("'41,1,1,5,true,2'");
    } finally {
      await sb.close();
    }
  });

  it("JavaScript: forks of a snapshot and of a live sandbox diverge without touching the parent", async () => {
    const parent = await Sandbox.create({ runtime: rt });
    try {
      await parent.run("javascript", JS_STATE);
      const snap = await parent.snapshot();
      const fromSnap = await Sandbox.fork(snap.id, { runtime: rt });
      await parent.run("javascript", "x = 1000; m.set('b', 2)");
      const fromLive = await Sandbox.fork(parent, {});
      try {
        const a = await fromSnap.run(
          "javascript",
          "x += 1; m.set('z', 9); [x, m.size, counter()].join()",
        );
        expect(a.value).toBe("'42,2,2'");
        expect(a.stateLost).toBeUndefined();
        expect(a.notes?.join(" ")).toMatch(/forked: its javascript interpreter was restored whole/);
        const b = await fromLive.run("javascript", "[x, m.size, counter()].join()");
        expect(b.value).toBe("'1000,2,2'");
        // The parent's interpreter is as it was: neither fork's runs reached it.
        const own = await parent.run("javascript", "[x, m.size, m.has('z'), counter()].join()");
        expect(own.value).toBe("'1000,2,false,2'");
        expect((await fromSnap.run("javascript", "[x, counter()].join()")).value).toBe("'42,3'");
      } finally {
        await fromSnap.close();
        await fromLive.close();
      }
    } finally {
      await parent.close();
    }
  });

  it("TypeScript keeps its interpreter too", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    try {
      await sb.run(
        "typescript",
        "const greet = (n: string): string => 'hi ' + n; let seen: number[] = [1];",
      );
      const snap = await sb.snapshot();
      expect(snap.state.typescript).toMatchObject({ kept: "memory" });
      await sb.restore(snap.id);
      const r = await sb.run("typescript", "seen.push(2); greet(String(seen))");
      expect(r.value).toBe("'hi 1,2'");
      expect(r.stateLost).toBeUndefined();
    } finally {
      await sb.close();
    }
  });

  it("Python: picklable globals and imported modules come back; the rest is named as not kept", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    try {
      const setup = await sb.run(
        "python",
        [
          "import collections, json as j",
          "from fractions import Fraction",
          "data = {'a': [1, 2, 3], 'b': (4, 5)}",
          "counts = collections.Counter('hello')",
          "half = Fraction(1, 2)",
          "def f(x): return x + 1",
          "class C: pass",
          "c = C()",
          "gen = (i for i in range(3))",
        ].join("\n"),
      );
      expect(setup.stderr).toBe("");
      const snap = await sb.snapshot();
      const py = snap.state.python!;
      expect(py.kept).toBe("globals");
      expect(py.notKept?.map((n) => n.split(" ")[0]).sort()).toEqual(["C", "c", "f", "gen"]);
      expect(py.notKept?.join(" ")).toMatch(/f \(function: f is defined in the session\)/);
      await sb.run("python", "data = None; del counts");
      await sb.restore(snap.id);
      const r = await sb.run(
        "python",
        "print(data, counts['l'], half * 2, j.dumps([1]), collections.OrderedDict is not None)\nprint(sorted(n for n in ('f', 'C', 'c', 'gen') if n in globals()))",
      );
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("{'a': [1, 2, 3], 'b': (4, 5)} 2 1 [1] True\n[]\n");
      expect(r.stateLost).toBeUndefined();
      const notes = r.notes?.join(" ") ?? "";
      expect(notes).toMatch(
        /python interpreter is new, with the global values and imported modules/,
      );
      expect(notes).toMatch(/not kept: .*f \(function/);
    } finally {
      await sb.close();
    }
  }, 120_000);

  it("states count against the snapshot quota", async () => {
    const small = await testRuntime({
      dataDir,
      maxSnapshotBytesPerSandbox: 1024 * 1024,
      pool: { python: 0, javascript: 1, bash: 0 },
    });
    try {
      const sb = await Sandbox.create({ runtime: small });
      await sb.files.write("x.txt", "x");
      await sb.snapshot(); // files only: well under the quota
      await sb.run("javascript", "let big = 'y'.repeat(1000)");
      await expect(sb.snapshot()).rejects.toMatchObject({
        code: "QUOTA_EXCEEDED",
        details: { limit: "maxSnapshotBytesPerSandbox" },
      });
      await sb.close();
    } finally {
      await small.close();
    }
  });
});

describe("the data directory", () => {
  it("defaults to the platform's per-user state dir", () => {
    expect(defaultDataDir({ XDG_STATE_HOME: "/x/state" }, "linux", "/home/u")).toBe(
      "/x/state/polybox",
    );
    expect(defaultDataDir({}, "linux", "/home/u")).toBe("/home/u/.local/state/polybox");
    expect(defaultDataDir({ XDG_STATE_HOME: "rel" }, "linux", "/home/u")).toBe(
      "/home/u/.local/state/polybox",
    );
    expect(defaultDataDir({}, "darwin", "/Users/u")).toBe(
      "/Users/u/Library/Application Support/polybox",
    );
    expect(
      defaultDataDir({ LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32", "C:\\Users\\u"),
    ).toBe("C:\\Users\\u\\AppData\\Local\\polybox");
  });
});

describe("the manager's lifecycle", () => {
  it("a held sandbox (a run queued or running) is never idle; expiry is its own code", async () => {
    let now = Date.now() + 1000;
    const manager = new SandboxManager({ runtime: rt, idleTimeoutMs: 1000, now: () => now });
    try {
      const sb = await manager.create({ owner: "o" });
      const release = manager.hold(sb.id, "o");
      now += 60_000;
      expect(await manager.sweep()).toEqual([]);
      release();
      now += 999;
      expect(await manager.sweep()).toEqual([]);
      now += 1;
      expect(await manager.sweep()).toEqual([sb.id]);
      expect(() => manager.get(sb.id, "o")).toThrow(
        expect.objectContaining({
          code: "SANDBOX_EXPIRED",
          details: { sandboxId: sb.id, limit: "idleTimeoutMs", value: 1000 },
        }),
      );
      // Another owner hears what an unknown id gets.
      expect(() => manager.get(sb.id, "other")).toThrow(
        expect.objectContaining({ code: "SANDBOX_NOT_FOUND" }),
      );
    } finally {
      await manager.closeAll();
    }
  });

  it("a named sandbox past its lifetime is unloaded, its files kept", async () => {
    let now = Date.now() + 1000;
    const manager = new SandboxManager({
      runtime: rt,
      idleTimeoutMs: 0,
      maxLifetimeMs: 5000,
      now: () => now,
    });
    try {
      const sb = await manager.create({ owner: "o" }, { name: "aging", scope: "s" });
      await sb.files.write("kept.txt", "kept");
      const release = manager.hold(sb.id, "o");
      now += 5000;
      // The lifetime is hard: a held sandbox goes too.
      expect(await manager.sweep()).toEqual([sb.id]);
      release();
      expect(() => manager.get(sb.id, "o")).toThrow(/maximum lifetime.*its files are kept/);
      const again = await manager.create({ owner: "o" }, { name: "aging", scope: "s" });
      expect(await again.files.read("kept.txt", "utf8")).toBe("kept");
      await again.close({ delete: true });
    } finally {
      await manager.closeAll();
    }
  });
});

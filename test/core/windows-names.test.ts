// Names a guest may make that a Windows host cannot store as themselves: the trusted side leaves
// them out of the workspace with a note instead of failing the run or writing somewhere else
// (`a:b` is a stream of `a`, `name.` is `name`, `CON` is the console). The checker runs here on
// Linux with platform "win32"; test/windows/run.mjs checks the same runs under Windows itself.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hostNameProblem, windowsNameProblem } from "../../dist/core/sandbox/names.js";
import { Workspace } from "../../dist/core/sandbox/workspace.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("windowsNameProblem", () => {
  it.each([
    ["CON", /reserves CON/],
    ["con", /reserves CON/],
    ["Con.txt", /reserves CON/],
    ["nul.tar.gz", /reserves NUL/],
    ["PRN", /reserves PRN/],
    ["aux.c", /reserves AUX/],
    ["COM1", /reserves COM1/],
    ["com9.log", /reserves COM9/],
    ["LPT1", /reserves LPT1/],
    ["lpt¹", /reserves LPT¹/],
    ["CON .txt", /reserves CON/],
    ["CONOUT$", /reserves CONOUT\$/],
    ["a:b", /":" is not allowed/],
    ["q?x", /"\?" is not allowed/],
    ["star*", /"\*" is not allowed/],
    ["<tag>", /"<" is not allowed/],
    ['say"hi"', /"\\"" is not allowed/],
    ["pipe|x", /"\|" is not allowed/],
    ["back\\slash", /"\\\\" is not allowed/],
    ["tab\there", /control character \(U\+0009\)/],
    ["bell\x07", /control character \(U\+0007\)/],
    ["trailing.", /trailing dot or space/],
    ["name ", /trailing dot or space/],
    ["...", /trailing dot or space/],
  ])("%j cannot be stored", (name, why) => {
    expect(windowsNameProblem(name)).toMatch(why);
  });

  it.each([
    "ok.txt",
    "A.txt",
    ".hidden",
    "con-artist.txt",
    "console",
    "com10",
    "lpt",
    "auxiliary.c",
    "prn2",
    "名前 with spaces.txt",
    "Ünïcödé.csv",
    "a.b.c",
    " leading space",
  ])("%j is a Windows name", (name) => {
    expect(windowsNameProblem(name)).toBeNull();
  });
});

describe("hostNameProblem", () => {
  it("checks every component on win32 and names the one it refuses", () => {
    expect(hostNameProblem("dir/CON/x.txt", "win32")).toMatch(/^"CON": Windows reserves CON/);
    expect(hostNameProblem("a/b.txt", "win32")).toBeNull();
    expect(hostNameProblem("trailing.", "win32")).toMatch(/^Windows drops a trailing dot/);
  });

  it("finds nothing to refuse on other hosts, whose file systems store these names", () => {
    for (const p of ["CON", "a:b", "trailing.", "name ", "dir/nul.txt"]) {
      expect(hostNameProblem(p, "linux")).toBeNull();
      expect(hostNameProblem(p, "darwin")).toBeNull();
    }
  });
});

describe("a run's files the host already has under another spelling", () => {
  // What a case-insensitive file system (Windows, macOS) does with `a.txt` after `A.txt`: the
  // host finds an entry the index does not have. Made here by putting a file on the host behind
  // the index's back, which a case-sensitive file system shows the same way.
  it("are left out with a note, and the rest of the run is kept", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "polybox-names-"));
    try {
      const ws = new Workspace(1024 * 1024, { home });
      await ws.load();
      const root = await ws.root();
      await writeFile(path.join(root, "taken.txt"), "the host's own");
      const notes: string[] = [];
      const touched = await ws.apply(
        {
          files: [
            { path: "taken.txt", data: bytes("guest"), mtimeMs: Date.now() },
            { path: "ok.txt", data: bytes("ok"), mtimeMs: Date.now() },
          ],
          dirs: [],
          removed: [],
        },
        Number.POSITIVE_INFINITY,
        notes,
      );
      expect(touched).toEqual(["ok.txt"]);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatch(/not kept in the workspace.*"taken\.txt" \(.*another spelling\)/);
      expect(ws.list().map((f) => f.path)).toEqual(["ok.txt"]);
      expect((await readdir(root)).sort()).toEqual(["ok.txt", "taken.txt"]);
      // The host's file is not replaced by the guest's.
      expect(await readFile(path.join(root, "taken.txt"), "utf8")).toBe("the host's own");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("refuse a host-API write with INVALID_ARGUMENT naming the case twin", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "polybox-names-"));
    try {
      const ws = new Workspace(1024 * 1024, { home });
      await ws.load();
      await ws.write("A.txt", bytes("upper"));
      // Stands in for a case-insensitive host: `a.txt` is there once `A.txt` is.
      await writeFile(path.join(await ws.root(), "a.txt"), "upper");
      await expect(ws.write("a.txt", bytes("lower"))).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringMatching(/takes it for "A\.txt", which differs only in case/),
      });
      expect(ws.list().map((f) => f.path)).toEqual(["A.txt"]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

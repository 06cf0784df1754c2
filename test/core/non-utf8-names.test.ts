// A guest may name a file with bytes that are not UTF-8 (Python's `open(b'\xffname.txt', 'w')`,
// Bash's `touch $'\xff'`). No client can be shown such a name or send it back, so the workspace
// leaves that file out with a note naming its bytes; the rest of the run is kept, and the sandbox
// goes on working. In native mode the name is a real file's bytes in the jail; in WebAssembly,
// Pyodide's file system decodes the bytes into lone surrogates.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSafeRelativePath, isUnstorablePath } from "../../dist/protocol/paths.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const LAUNCHER = path.resolve(import.meta.dirname, "../../native/build/polybox-jail");
const nativeUsable =
  process.platform === "linux" &&
  existsSync(LAUNCHER) &&
  spawnSync(LAUNCHER, ["--probe"], { timeout: 10_000 }).status === 0;

const NOTE = /not kept in the workspace: .*not valid UTF-8/;

describe("isUnstorablePath", () => {
  it.each([
    ["\udcffname.txt", true],
    ["dir/\ud800", true],
    ["a\ufffdb", true],
    ["ok/ÿ.txt", false],
    ["emoji-😀.txt", false],
  ])("%j → %s", (name, unstorable) => {
    expect(isUnstorablePath(name)).toBe(unstorable);
  });

  it("a path a client sends is refused when it holds a lone surrogate", () => {
    expect(isSafeRelativePath("a\udcff")).toBe(false);
    expect(isSafeRelativePath("😀/b")).toBe(true);
  });
});

const engines: ("wasm" | "native")[] = ["wasm", ...(nativeUsable ? (["native"] as const) : [])];

describe.each(engines)("a non-UTF-8 name made by a %s guest", (engine) => {
  let runtime: Runtime;
  let sandbox: Sandbox;
  beforeAll(async () => {
    runtime = await testRuntime();
    sandbox = await Sandbox.create({ runtime, engine });
  });
  afterAll(async () => {
    await sandbox?.close();
    await runtime?.close();
  });

  it("Python: the file is left out with a note, the others are kept", async () => {
    const r = await sandbox.run(
      "python",
      "open(b'\\xffname.txt', 'w').write('x')\nopen('kept.txt', 'w').write('y')\nprint('done')",
    );
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("done\n");
    expect(r.filesChanged).toEqual(["kept.txt"]);
    expect(r.notes?.join("\n")).toMatch(NOTE);
    const listed = (await sandbox.files.list()).map((f) => f.path);
    expect(listed).toEqual(["kept.txt"]);
    // No lone surrogate in a name a client is given.
    for (const p of listed) expect(p).not.toMatch(/\p{Cs}/u);
  });

  it("the sandbox goes on working, and the guest still sees its file", async () => {
    const r = await sandbox.run(
      "python",
      "import os\nprint(sorted(n for n in os.listdir(b'.') if n != b'kept.txt') != [])",
    );
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("True\n");
    expect(await sandbox.files.read("kept.txt", "utf8")).toBe("y");
  });

  it.runIf(engine === "native")(
    "Bash: a name made of raw bytes is noted with those bytes",
    async () => {
      const r = await sandbox.run("bash", "touch $'\\xfe'b.txt c.txt");
      expect(r.status).toBe("ok");
      expect(r.filesChanged).toEqual(["c.txt"]);
      // The note shows the byte 0xFE as Python's surrogateescape does.
      expect(r.notes?.join("\n")).toContain("\\udcfeb.txt");
    },
  );
});

// Unit tier: worker-side pieces that need no WASM (output cap, import rewriting, JS memfs).
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OutputSink, truncateUtf8 } from "../../dist/guest/engines/common/output.js";
import { MemFs } from "../../dist/guest/engines/javascript/memfs.js";
import { PRELUDE_FILES, rewriteImports } from "../../dist/guest/engines/javascript/prelude.js";

describe("OutputSink", () => {
  it("keeps at most maxBytes per stream and reports the overflow once", () => {
    const live: string[] = [];
    let overflows = 0;
    const sink = new OutputSink(
      10,
      (_s, t) => live.push(t),
      () => overflows++,
    );
    sink.write("stdout", "12345");
    sink.write("stdout", "6789012345");
    sink.write("stdout", "more");
    sink.write("stderr", "e");
    sink.flush();
    expect(sink.text.stdout).toBe("1234567890");
    expect(sink.text.stderr).toBe("e");
    expect(sink.truncated).toBe(true);
    expect(sink.overflowed).toBe("stdout");
    expect(overflows).toBe(1);
    expect(live.join("")).toBe("1234567890e");
  });

  it("never splits a UTF-8 character", () => {
    expect(truncateUtf8("héllo", 2)).toBe("h");
    expect(truncateUtf8("€€", 4)).toBe("€");
  });
});

describe("the JavaScript prelude's files", () => {
  it("are each joined into the prelude, once", () => {
    // A file added to src/guest/engines/javascript/prelude/ and not to PRELUDE_FILES would be
    // copied to dist/ and type-checked, yet never evaluated.
    const dir = new URL("../../src/guest/engines/javascript/prelude/", import.meta.url);
    const onDisk = readdirSync(dir).filter((name) => name.endsWith(".js"));
    expect([...PRELUDE_FILES].sort()).toEqual(onDisk.sort());
    expect(new Set(PRELUDE_FILES).size).toBe(PRELUDE_FILES.length);
  });
});

describe("rewriteImports", () => {
  it("turns static imports of built-in modules into require calls", () => {
    expect(rewriteImports('import fs from "node:fs";')).toBe('var fs = require("fs");');
    expect(rewriteImports("import { readFileSync as r, existsSync } from 'fs'")).toBe(
      'var { readFileSync: r, existsSync } = require("fs");',
    );
    expect(rewriteImports('import * as p from "path"')).toBe('var p = require("path");');
    expect(rewriteImports('import fs, { promises } from "fs"')).toBe(
      'var fs = require("fs");var { promises } = require("fs");',
    );
    expect(rewriteImports('import x from "left-pad"')).toBe('import x from "left-pad"');
    expect(rewriteImports('import a from "fs"; import b from "path";\nimport c from "os"')).toBe(
      'var a = require("fs"); var b = require("path");\nvar c = require("os");',
    );
  });
});

describe("MemFs", () => {
  it("confines paths to the workspace and enforces the quota", () => {
    const fs = new MemFs();
    expect(fs.resolve("a/b")).toBe("a/b");
    expect(fs.resolve("/workspace/a")).toBe("a");
    expect(() => fs.resolve("/etc/passwd")).toThrow(/EACCES/);
    expect(() => fs.resolve("../x")).toThrow(/EACCES/);
    fs.quotaBytes = 4;
    fs.write("a", new Uint8Array(4), "a");
    expect(() => fs.write("b", new Uint8Array(1), "b")).toThrow(/ENOSPC/);
    expect(fs.quotaHit).toBe(true);
  });
});

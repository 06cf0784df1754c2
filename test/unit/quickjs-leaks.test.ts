// The JavaScript engine disposes every QuickJS handle it takes. It runs here on quickjs-emscripten's
// debug build, whose runtime refuses to be disposed while any object is still referenced (an
// assertion that aborts the module), through everything the engine converts: console output,
// fs reads and writes of text and bytes, errors, values of every type, promises and timers.
import { MessageChannel } from "node:worker_threads";
import { DEBUG_SYNC } from "quickjs-emscripten";
import { describe, expect, it } from "vitest";
import { OutputSink } from "../../dist/guest/engines/common/output.js";
import { createEngine } from "../../dist/guest/engines/javascript/engine.js";

const limits = {
  timeoutMs: 10_000,
  memoryMb: 128,
  maxOutputBytes: 1024 * 1024,
  workspaceQuotaBytes: 16 * 1024 * 1024,
};
const request = (code: string) => ({
  code,
  stdin: "some input",
  env: { A: "1" },
  limits,
  fullSync: false,
  sync: { files: [], dirs: [], removed: [] },
});

const PROGRAMS = [
  `console.log("text", 1, { a: [1, 2] }); console.error(new Error("shown"))`,
  `const fs = require("fs"); fs.writeFileSync("t.txt", "hello"); fs.writeFileSync("b.bin", new Uint8Array([1, 2, 3])); fs.readFileSync("t.txt", "utf8") + fs.readFileSync("b.bin")[2]`,
  `new TextDecoder().decode(new TextEncoder().encode("héllo")) + require("fs").readFileSync(0, "utf8")`,
  `display(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0]), { table: [1] }, "<svg/>")`,
  `throw new RangeError("bad")`,
  `({ n: 1, s: "x", b: true, u: undefined, nul: null, big: 10n, sym: Symbol("s"), f() {}, d: new Date(0), m: new Map([[1, 2]]) })`,
  `await new Promise((resolve) => setTimeout(resolve, 5)); queueMicrotask(() => {}); [1, 2, 3].map((x) => x * 2)`,
  `Promise.reject(new Error("rejected"))`,
  `process.exit(3)`,
  `while (true) {}`,
  `process.env.A + require("path").join("a", "b")`,
  // fetch: the answer's handles (meta, body buffer) and a refusal's.
  `const res = await fetch("http://a.example/", { method: "POST", body: new Uint8Array([1, 2]) }); [res.status, await res.text(), res.headers.get("a")]`,
  `await fetch("http://refused.example/").catch((e) => e.message)`,
];

describe("QuickJS handle lifetimes", () => {
  it("disposing the engine after every kind of run leaves no live object (debug build)", async () => {
    const engine = await createEngine(
      {
        language: "javascript",
        memoryMb: 128,
        assets: { pyodideDir: "" },
        net: { signal: new SharedArrayBuffer(4), port: new MessageChannel().port1 },
      },
      DEBUG_SYNC,
    );
    const outputs: string[] = [];
    for (const code of PROGRAMS) {
      const output = new OutputSink(
        limits.maxOutputBytes,
        (_s, text) => outputs.push(text),
        () => undefined,
      );
      const deadline = Date.now() + (code.startsWith("while") ? 200 : 10_000);
      await engine.applyFiles(request(code));
      const outcome = await engine.run(request(code), {
        output,
        deadline,
        stopRequested: false,
        display: () => undefined,
        // What the trusted side would answer; this test is about the engine's handles.
        net: (req) =>
          req.url.includes("refused")
            ? { ok: false, kind: "denied", message: "not granted" }
            : {
                ok: true,
                status: 200,
                statusText: "OK",
                url: req.url,
                headers: [["a", "b"]],
                body: new Uint8Array([104, 105]),
                redirected: false,
              },
      });
      output.flush?.();
      expect(outcome.exitCode, code).toBeTypeOf("number");
      await engine.collectFiles();
    }
    expect(outputs.join("")).toContain("text 1");
    // The debug build aborts here if any handle the engine took is still alive.
    expect(() => engine.dispose?.()).not.toThrow();
  }, 60_000);
});

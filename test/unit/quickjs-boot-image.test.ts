// The QuickJS boot image: built by its own process into a cache directory with a sha256 sidecar,
// restored into new interpreters in place of evaluating node-inspect and the prelude, and refused
// (the set-up is then evaluated) when it is of another build, cut short or laid out otherwise.
// An interpreter booted from it behaves as one that evaluated its set-up, and each one draws its
// own Math.random sequence.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MessageChannel } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutputSink } from "../../dist/guest/engines/common/output.js";
import { createEngine } from "../../dist/guest/engines/javascript/engine.js";
import { QUICKJS_WASM } from "../../dist/supervisor/assets.js";
import { ensureQuickjsImage } from "../../dist/supervisor/quickjs-image.js";
import { run as oneShot, testRuntime } from "../helpers/runtime.js";

const limits = {
  timeoutMs: 10_000,
  memoryMb: 128,
  maxOutputBytes: 1024 * 1024,
  workspaceQuotaBytes: 16 * 1024 * 1024,
};

let cacheDir: string;
let imageFile: string;
let wasm: WebAssembly.Module;
let build: string;

const shared = (bytes: Uint8Array) => {
  const sab = new SharedArrayBuffer(bytes.length);
  new Uint8Array(sab).set(bytes);
  return sab;
};

function boot(image?: Uint8Array, language: "javascript" | "typescript" = "javascript") {
  return createEngine({
    language,
    memoryMb: 128,
    assets: {
      pyodideDir: "",
      quickjsWasm: wasm,
      quickjsBuild: build,
      ...(image ? { quickjsImage: shared(image) } : {}),
    },
    net: { signal: new SharedArrayBuffer(4), port: new MessageChannel().port1 },
  });
}

type Engine = Awaited<ReturnType<typeof createEngine>>;

async function run(engine: Engine, code: string) {
  const out: string[] = [];
  const output = new OutputSink(
    limits.maxOutputBytes,
    (stream, text) => out.push(`${stream}:${text}`),
    () => undefined,
  );
  const request = {
    code,
    stdin: "",
    env: { A: "1" },
    limits,
    fullSync: false,
    sync: { files: [], dirs: [], removed: [] },
  };
  await engine.applyFiles(request);
  const outcome = await engine.run(request, {
    output,
    deadline: Date.now() + limits.timeoutMs,
    stopRequested: false,
    display: () => undefined,
    net: () => ({ ok: false, kind: "failed", message: "no network here" }),
  });
  output.flush();
  return { ...outcome, out: out.join("") };
}

const PROGRAMS = [
  `console.log("text", 1, { a: [1, 2, { m: new Map([[1, { deep: [1] }]]) }] }); console.error(new Error("shown").message)`,
  `const fs = require("fs"); fs.writeFileSync("t.txt", "hello"); fs.readFileSync("t.txt", "utf8") + process.env.A`,
  `await new Promise((resolve) => setTimeout(resolve, 5)); [1, 2, 3].map((x) => x * 2)`,
  `throw new RangeError("bad")`,
  `require("path").join("a", "b", "..", "c")`,
  `typeof __polybox + " " + typeof util + " " + typeof Atomics`,
];

beforeAll(async () => {
  cacheDir = mkdtempSync(path.join(os.tmpdir(), "polybox-qjs-image-"));
  const bytes = readFileSync(QUICKJS_WASM);
  wasm = await WebAssembly.compile(bytes);
  build = createHash("sha256").update(bytes).digest("hex").slice(0, 32);
  const file = await ensureQuickjsImage(cacheDir, () => undefined);
  if (!file) throw new Error("the boot image was not built");
  imageFile = file;
}, 120_000);

afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

describe("QuickJS boot image", () => {
  it("is cached with a sidecar naming its key, size and sha256, and a verified one is reused", async () => {
    const bytes = readFileSync(imageFile);
    const sidecar = JSON.parse(readFileSync(`${imageFile}.json`, "utf8"));
    expect(sidecar.size).toBe(bytes.length);
    expect(sidecar.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(path.basename(imageFile)).toContain(sidecar.key.slice(0, 24));
    // Only the non-zero pages are kept: far less than the interpreter's 16 MiB memory.
    expect(bytes.length).toBeLessThan(8 * 1024 * 1024);
    expect(await ensureQuickjsImage(cacheDir, () => undefined)).toBe(imageFile);
  });

  it("a corrupt cached image is rebuilt, not used", async () => {
    const logs: string[] = [];
    const original = readFileSync(imageFile);
    const corrupt = Uint8Array.from(original);
    corrupt[corrupt.length - 1]! ^= 0xff;
    writeFileSync(imageFile, corrupt);
    const file = await ensureQuickjsImage(cacheDir, (_level, message) => logs.push(message));
    expect(file).toBe(imageFile);
    expect(logs.join(" ")).toMatch(/stale or corrupt/);
    const rebuilt = readFileSync(imageFile);
    expect(createHash("sha256").update(rebuilt).digest("hex")).toBe(
      JSON.parse(readFileSync(`${imageFile}.json`, "utf8")).sha256,
    );
  }, 120_000);

  it("an interpreter booted from it runs every program as one that evaluated its set-up", async () => {
    const image = readFileSync(imageFile);
    const restored = await boot(image);
    const evaluated = await boot();
    try {
      expect(restored.bootedFrom).toBe("image");
      expect(restored.bootNote).toBeUndefined();
      expect(evaluated.bootedFrom).toBe("evaluated");
      for (const code of PROGRAMS) {
        const [a, b] = [await run(restored, code), await run(evaluated, code)];
        expect(a, code).toEqual(b);
      }
      expect((await run(restored, PROGRAMS[0]!)).out).toContain("{ m: [Map] }");
    } finally {
      restored.dispose?.();
      evaluated.dispose?.();
    }
  });

  it("an interpreter booted from it grows its heap past the image's without corrupting it", async () => {
    const engine = await boot(readFileSync(imageFile));
    try {
      expect(engine.bootedFrom).toBe("image");
      // ~40 MiB of live objects: the allocator takes memory past what the image held.
      const r = await run(
        engine,
        `const keep = [];
         for (let i = 0; i < 2000; i++) keep.push({ i, s: "x".repeat(10000) + i, a: [i, i + 1] });
         const ok = keep.every((o, i) => o.i === i && o.s.endsWith(String(i)) && o.a[1] === i + 1);
         console.log({ ok, n: keep.length });
         ok`,
      );
      expect(r).toMatchObject({
        exitCode: 0,
        value: "true",
        out: "stdout:{ ok: true, n: 2000 }\n",
      });
    } finally {
      engine.dispose?.();
    }
  });

  it("TypeScript interpreters boot from the same image", async () => {
    const engine = await boot(readFileSync(imageFile), "typescript");
    try {
      expect(engine.bootedFrom).toBe("image");
      expect((await run(engine, "const n: number = 41; n + 1")).value).toBe("42");
    } finally {
      engine.dispose?.();
    }
  });

  it("each interpreter booted from it draws its own Math.random sequence", async () => {
    const image = readFileSync(imageFile);
    const draws = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const engine = await boot(image);
      try {
        expect(engine.bootedFrom).toBe("image");
        draws.add((await run(engine, "[Math.random(), Math.random()].join()")).value!);
      } finally {
        engine.dispose?.();
      }
    }
    expect(draws.size).toBe(3);
  });

  it("a captured state restores across interpreters booted either way", async () => {
    const from = await boot(readFileSync(imageFile));
    const into = await boot();
    try {
      await run(from, "globalThis.kept = new Map([[1, 'one']]); let counter = 40");
      const state = await from.captureState!(64 * 1024 * 1024);
      expect(state.captured).toBe(true);
      if (!state.captured) return;
      await into.restoreState!({ kind: "memory", data: state.data }, []);
      expect((await run(into, "kept.get(1) + (counter + 2)")).value).toBe("'one42'");
    } finally {
      from.dispose?.();
      into.dispose?.();
    }
  });

  it("an image of another build, cut short, or laid out otherwise is refused and the set-up evaluated", async () => {
    const image = readFileSync(imageFile);
    const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
    const buildLength = view.getUint32(12, true);
    const otherBuild = Uint8Array.from(image);
    otherBuild[16] = otherBuild[16] === 0x61 ? 0x62 : 0x61;
    const shifted = Uint8Array.from(image);
    const pointersAt = 16 + Math.ceil(buildLength / 4) * 4 + 4;
    new DataView(shifted.buffer).setUint32(pointersAt, view.getUint32(pointersAt, true) + 16, true);
    const cases: [Uint8Array, RegExp][] = [
      [otherBuild, /another QuickJS build or set-up/],
      [image.subarray(0, image.length - 4096), /cut short/],
      [image.subarray(0, 20), /cut short|not a QuickJS boot image/],
      [shifted, /laid out otherwise/],
    ];
    for (const [bytes, reason] of cases) {
      const engine = await boot(bytes);
      try {
        expect(engine.bootedFrom).toBe("evaluated");
        expect(engine.bootNote).toMatch(reason);
        expect((await run(engine, "[1, 2].map(String)")).value).toBe("[ '1', '2' ]");
      } finally {
        engine.dispose?.();
      }
    }
  });

  it("a runtime's JavaScript interpreters boot from it without a refusal", async () => {
    const logs: string[] = [];
    const rt = await testRuntime({
      cacheDir,
      // No Python here: its snapshot would be built into this cache dir too.
      pythonSnapshot: false,
      pool: { python: 0, javascript: 1, bash: 0 },
      log: (_level, message, detail) => logs.push(`${message} ${detail ?? ""}`),
    });
    try {
      const r = await oneShot({
        runtime: rt,
        language: "javascript",
        code: "console.log({ a: 1 }); Math.random() < 1",
      });
      expect(r).toMatchObject({ status: "ok", stdout: "{ a: 1 }\n", value: "true" });
      const ts = await oneShot({
        runtime: rt,
        language: "typescript",
        code: "const s: string = 'ok'; s",
      });
      expect(ts.value).toBe("'ok'");
      expect(logs.join("\n")).not.toMatch(/boot image/);
    } finally {
      await rt.close();
    }
  }, 120_000);

  it("an image the trusted side accepts but the worker refuses is logged, and JavaScript still runs", async () => {
    // Another build's image with a sidecar that matches it: only the worker's own check is left.
    const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-qjs-refused-"));
    try {
      const file = await ensureQuickjsImage(dir, () => undefined);
      if (!file) throw new Error("the boot image was not built");
      const bytes = Uint8Array.from(readFileSync(file));
      bytes[16] = bytes[16] === 0x61 ? 0x62 : 0x61;
      writeFileSync(file, bytes);
      const sidecar = JSON.parse(readFileSync(`${file}.json`, "utf8"));
      sidecar.sha256 = createHash("sha256").update(bytes).digest("hex");
      writeFileSync(`${file}.json`, JSON.stringify(sidecar));
      const logs: string[] = [];
      const rt = await testRuntime({
        cacheDir: dir,
        pythonSnapshot: false,
        pool: { python: 0, javascript: 1, bash: 0 },
        log: (_level, message, detail) => logs.push(`${message} ${detail ?? ""}`),
      });
      try {
        const r = await oneShot({ runtime: rt, language: "javascript", code: "[1, 2].length" });
        expect(r).toMatchObject({ status: "ok", value: "2" });
        expect(logs.join("\n")).toMatch(/boot image not used.*another QuickJS build or set-up/);
      } finally {
        await rt.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

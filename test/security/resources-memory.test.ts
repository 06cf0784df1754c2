// T9 memory exhaustion: allocation bombs in every language, and in the Python worker's
// JavaScript realm (JS heap, and ArrayBuffers, whose memory lives outside the JS heap and outside
// WebAssembly memory). Each must end with status "memory_limit" under a small memoryMb, the
// engine host's memory must stay bounded, and the runtime must answer afterwards.
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  hostRssBytes,
  type Language,
  newSandbox,
  type Runtime,
  securityRuntime,
} from "../helpers/security-env.js";

const MEMORY_MB = 128;
let rt: Runtime;

beforeAll(async () => {
  rt = await securityRuntime();
});

afterAll(async () => {
  await rt?.close();
});

const BOMBS: [string, Language, string][] = [
  [
    "python bytearray bomb",
    "python",
    "blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))",
  ],
  ["python one huge allocation", "python", "x = bytearray(1024 * 1024 * 1024)"],
  [
    "python realm JS heap bomb via run_js",
    "python",
    "from pyodide.code import run_js\nrun_js('const a = []; while (true) a.push({ x: Math.random(), y: [1, 2, 3] })')",
  ],
  [
    "javascript array bomb",
    "javascript",
    "const keep = [];\nwhile (true) keep.push(new Array(1e6).fill(Math.random()))",
  ],
  [
    "javascript ArrayBuffer bomb",
    "javascript",
    "const keep = [];\nwhile (true) keep.push(new Uint8Array(64 * 1024 * 1024).fill(1))",
  ],
  [
    "javascript string accumulation",
    "javascript",
    "const big = 'x'.repeat(1 << 20);\nconst keep = [];\nwhile (true) keep.push(big + keep.length)",
  ],
  ["bash string doubling", "bash", "x=aaaaaaaa; while true; do x=$x$x; done"],
];

it.each(BOMBS)(
  "T9 memory exhaustion: %s ends with memory_limit",
  async (_label, language, code) => {
    const sb = await newSandbox(rt, { timeoutMs: 30_000, memoryMb: MEMORY_MB });
    try {
      const r = await sb.run(language, code);
      expect(r.status, `${r.message ?? ""} ${r.stderr.slice(-500)}`).toBe("memory_limit");
      expect(r.message).toMatch(/memoryMb=128/);
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
  },
);

it("T9 memory exhaustion: python realm ArrayBuffers via run_js (outside WASM memory and the JS heap)", async () => {
  const sb = await newSandbox(rt, { timeoutMs: 30_000, memoryMb: MEMORY_MB });
  await sb.run("python", "1");
  const before = hostRssBytes(sb);
  try {
    // 1.5 GiB of touched ArrayBuffer memory against a 128 MiB limit.
    const r = await sb.run(
      "python",
      "from pyodide.code import run_js\nrun_js('globalThis.keep = []; for (let i = 0; i < 6; i++) { const b = new Uint8Array(256 * 1024 * 1024); b.fill(1); keep.push(b) } keep.length')",
    );
    const after = hostRssBytes(sb);
    if (before !== null && after !== null) {
      expect(after - before, "engine host memory grew far past memoryMb").toBeLessThan(
        512 * 1024 * 1024,
      );
    }
    expect(r.status, `a ${MEMORY_MB} MiB sandbox kept 1.5 GiB: ${r.value}`).toBe("memory_limit");
  } finally {
    await sb.close();
  }
  await expectRuntimeAnswers(rt);
});

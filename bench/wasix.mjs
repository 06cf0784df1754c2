// The wasix engine (@wasmer/sdk) next to the wasm engine (the in-memory WASI preview 1 shim), on
// the same WASI program built from C: a one-shot run (fresh sandbox; warm engine hosts waiting,
// as in a server), a one-shot with nothing warm (what `polybox run` pays), and a second run in a
// sandbox whose interpreter is already booted. Interleaved, medians and p95.
//
//   npm run build && node bench/wasix.mjs        (BENCH_QUICK=1 for a short run; needs clang,
//                                                 lld and wasi-libc to build the program)

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Runtime, run, Sandbox } from "../dist/index.js";
import { interleaved, sleep } from "./lib/stats.mjs";

const QUICK = process.env.BENCH_QUICK === "1";
const RUNS = QUICK ? 5 : 20;

const dir = mkdtempSync(path.join(tmpdir(), "polybox-bench-wasix-"));
let program;
try {
  writeFileSync(
    path.join(dir, "hello.c"),
    '#include <stdio.h>\nint main(void) { printf("hello %d\\n", 42); return 0; }\n',
  );
  execFileSync("clang", ["--target=wasm32-wasi", "-O2", "hello.c", "-o", "hello.wasm"], {
    cwd: dir,
  });
  program = new Uint8Array(readFileSync(path.join(dir, "hello.wasm")));
} catch (error) {
  console.log(`wasix benchmark skipped: cannot build the program with clang (${error.message})`);
  process.exit(0);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const files = { "hello.wasm": program };
const check = (language, r) => {
  if (r.stdout !== "hello 42\n") throw new Error(`${language}: ${JSON.stringify(r)}`);
};
const oneShot = (runtime, language) => async () =>
  check(language, await run({ language, code: "hello.wasm", files, runtime }));

const warm = await Runtime.create({
  pool: { python: 0, javascript: 0, bash: 0, typescript: 0, wasm: 1, wasix: 1 },
});
const cold = await Runtime.create({ pool: { python: 0, javascript: 0, bash: 0, typescript: 0 } });
const rows = [];
try {
  // Let the warm hosts boot before the first timed run, and refill between runs.
  await sleep(5_000);
  const warmShots = await interleaved(
    { wasm: oneShot(warm, "wasm"), wasix: oneShot(warm, "wasix") },
    RUNS,
    3_000,
  );
  const coldShots = await interleaved(
    { wasm: oneShot(cold, "wasm"), wasix: oneShot(cold, "wasix") },
    QUICK ? 3 : 8,
  );
  const sandboxes = {};
  for (const language of ["wasm", "wasix"]) {
    sandboxes[language] = await Sandbox.create({ runtime: cold });
    await sandboxes[language].files.write("hello.wasm", program);
    check(language, await sandboxes[language].run(language, "hello.wasm"));
  }
  const again = await interleaved(
    {
      wasm: async () => check("wasm", await sandboxes.wasm.run("wasm", "hello.wasm")),
      wasix: async () => check("wasix", await sandboxes.wasix.run("wasix", "hello.wasm")),
    },
    RUNS,
  );
  for (const sb of Object.values(sandboxes)) await sb.close();
  for (const [name, result] of [
    ["one-shot, warm host waiting", warmShots],
    ["one-shot, nothing warm", coldShots],
    ["next run in a booted sandbox", again],
  ])
    rows.push({
      case: name,
      wasm_median_ms: result.wasm.median_ms,
      wasm_p95_ms: result.wasm.p95_ms,
      wasix_median_ms: result.wasix.median_ms,
      wasix_p95_ms: result.wasix.p95_ms,
      runs: result.wasm.runs,
    });
} finally {
  await warm.close();
  await cold.close();
}
console.table(rows);

// A stand-in for one engine host, started the way the trusted side starts one (profile.mjs gives
// it the same Node flags, environment and, on Linux, the same jail) and doing what a warm host
// does before it reports ready (src/guest/engine-host/main.ts): compile the engine's WebAssembly,
// read the QuickJS boot image into shared memory, and start one interpreter's worker, with the same
// options as src/guest/engine-host/interpreter.ts. The worker (profile-worker.mjs) marks its own
// phases; this process adds its own and answers over IPC with every mark and the RSS it held.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";

const marks = [];
const mark = (name) =>
  marks.push({ name, at: performance.timeOrigin + performance.now(), cpu: process.cpuUsage() });
mark("host first line");
const rss = { start: process.memoryUsage.rss() };

const { language, mode, config, dist, settleMs } = JSON.parse(process.argv[2]);
const assets = { pyodideDir: config.pyodideDir };
if (language === "python") {
  assets.pythonWasm = await WebAssembly.compile(
    readFileSync(`${config.pyodideDir}pyodide.asm.wasm`),
  );
  mark("host: compile pyodide.asm.wasm");
  // Read by the worker itself (see EngineAssets.pythonSnapshot).
  if (config.pythonSnapshot) assets.pythonSnapshot = config.pythonSnapshot;
} else {
  const bytes = readFileSync(config.quickjsWasm);
  assets.quickjsWasm = await WebAssembly.compile(bytes);
  assets.quickjsBuild = createHash("sha256").update(bytes).digest("hex").slice(0, 32);
  mark("host: compile QuickJS wasm");
  if (config.quickjsImage) {
    const image = readFileSync(config.quickjsImage);
    assets.quickjsImage = new SharedArrayBuffer(image.length);
    new Uint8Array(assets.quickjsImage).set(image);
    mark("host: read the boot image into shared memory");
  }
}
rss.assets = process.memoryUsage.rss();

const worker = new Worker(new URL("./profile-worker.mjs", import.meta.url), {
  workerData: { language, mode, assets, memoryMb: config.memoryMb, dist },
  env: {},
  stdout: true,
  stderr: true,
  resourceLimits: {
    maxOldGenerationSizeMb: Math.max(64, config.memoryMb),
    maxYoungGenerationSizeMb: 32,
  },
});
mark("host: new Worker()");
worker.stdout.resume();
worker.stderr.resume();
const answer = await new Promise((resolve, reject) => {
  worker.once("message", resolve);
  worker.once("error", reject);
  worker.once("exit", (code) => reject(new Error(`worker exited ${code} before answering`)));
});
if (answer.error) {
  process.send({ error: answer.error });
  process.exit(0);
}
marks.push(...answer.marks);
mark("host: ready message received");
rss.ready = process.memoryUsage.rss();
// What the boot still costs after it is ready: V8 tiering up the WebAssembly it has run, and
// collecting the boot's garbage, on background threads.
await new Promise((r) => setTimeout(r, settleMs));
mark("after ready (background work)");
rss.settled = process.memoryUsage.rss();
process.send({ marks, rss }, () => process.exit(0));

// What the globals QuickJS lacks cost (src/guest/engines/javascript/polyfills.ts). A context's
// boot evaluates only the prelude, which installs getters; the polyfills are evaluated the first
// time guest code reads one of their globals. This prints the median of several fresh engines'
// boot (createEngine: QuickJS module, runtime, context, node-inspect and the prelude), and the
// cost of each first use, each in a fresh QuickJS context.
//
//   npm run build && node bench/polyfills.mjs [dist directory, default ./dist]

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getQuickJS } from "quickjs-emscripten";
import { round } from "./lib/stats.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.argv[2] ?? path.join(here, "..", "dist"));
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { createEngine } = await import(
  pathToFileURL(`${dist}/guest/engines/javascript/engine.js`).href
);
const init = { language: "javascript", memoryMb: 256, assets: {} };
await (await createEngine(init)).dispose(); // warm the WebAssembly compilation
const boots = [];
for (let i = 0; i < RUNS; i++) {
  const t = performance.now();
  const engine = await createEngine(init);
  boots.push(performance.now() - t);
  engine.dispose();
}
console.log(`QuickJS engine boot (createEngine), median of ${RUNS}: ${round(median(boots))} ms`);

const polyfills = path.join(dist, "guest", "engines", "javascript", "polyfills");
let web;
let intl;
try {
  web = readFileSync(path.join(polyfills, "web.js"), "utf8");
  intl = readFileSync(path.join(polyfills, "intl.js"), "utf8");
} catch {
  console.log("no polyfills in this dist: nothing is loaded on first use");
  process.exit(0);
}
const QuickJS = await getQuickJS();
const firstUse = {
  "URL / URLSearchParams / structuredClone (core-js, evaluate)": [
    web,
    'new URL("https://a.example/x?y=1").searchParams.get("y")',
  ],
  "Intl (FormatJS + en data, evaluate) and (1234.5).toLocaleString()": [
    intl,
    "(1234.5).toLocaleString()",
  ],
  "Intl, then a first Date#toLocaleDateString (DateTimeFormat's en patterns)": [
    intl,
    "new Date(0).toLocaleDateString()",
  ],
};
console.log(`bundle sizes: web ${web.length} bytes, intl ${intl.length} bytes`);
for (const [name, [bundle, use]] of Object.entries(firstUse)) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const ctx = QuickJS.newContext();
    const t = performance.now();
    ctx.unwrapResult(ctx.evalCode(bundle)).dispose();
    ctx.unwrapResult(ctx.evalCode(use)).dispose();
    times.push(performance.now() - t);
    ctx.dispose();
  }
  console.log(`first use of ${name}, median of ${RUNS}: ${round(median(times))} ms`);
}

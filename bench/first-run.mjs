// What a warm interpreter's warm-up buys (src/guest/engine-host/pool.ts, WARM_UP_PROGRAMS): for
// each language, a sandbox's first run, in the interpreter of the host it claims, against its
// third run in that same interpreter, interleaved over RUNS sandboxes (default 12). A first run
// that costs much more than a later one means the warm-up left the engine's run path to the
// tenant. Each sandbox waits for the fleet to start its replacement host before it is timed, and
// pauses before its later runs, so no host start competes with what is timed. `npm run build`
// first.

import { Runtime, Sandbox } from "../dist/index.js";
import { now, round, sleep, summarize } from "./lib/stats.mjs";

const RUNS = Number(process.env.RUNS ?? 12);
const CODE = {
  javascript: "console.log(1)",
  typescript: "const x: number = 1; console.log(x)",
  python: "print(1)",
  bash: "echo 1",
};
/** Long enough for the fleet to start a host of that language on 2 cores. */
const REFILL_MS = { javascript: 800, typescript: 1000, python: 2000, bash: 1000 };

const pool = { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 };
for (const language of Object.keys(CODE)) pool[language] = 2;
const rt = await Runtime.create({ pool });
await sleep(10_000); // the fleet warm

const out = {};
for (const [language, code] of Object.entries(CODE)) {
  const first = [];
  const later = [];
  for (let i = 0; i < RUNS; i++) {
    await sleep(REFILL_MS[language]);
    const sb = await Sandbox.create({ runtime: rt });
    let t = now();
    await sb.run(language, code);
    first.push(now() - t);
    await sleep(REFILL_MS[language]);
    await sb.run(language, code);
    t = now();
    await sb.run(language, code);
    later.push(now() - t);
    await sb.close();
  }
  const a = summarize(first);
  const b = summarize(later);
  out[language] = { first: a, third: b, ratio: round(a.median_ms / b.median_ms) };
  console.log(
    `${language}: first run ${a.median_ms} ms (p95 ${a.p95_ms}), third run ${b.median_ms} ms (p95 ${b.p95_ms}), first / third ${out[language].ratio}`,
  );
}
await rt.close();

// Benchmark helpers: timing, percentiles, and pacing. Medians over many runs, because this kind
// of machine is shared and noisy; single numbers are never reported.

export const now = () => performance.now();
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];
  return { median_ms: round(at(0.5)), p95_ms: round(at(0.95)), runs: sorted.length };
}

export const round = (x) => Math.round(x * 100) / 100;

/** Times `fn` `runs` times, waiting `pauseMs` between runs (so warm pools can refill). */
export async function timeRuns(fn, runs, pauseMs = 0) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    await fn(i);
    samples.push(now() - t);
    if (pauseMs) await sleep(pauseMs);
  }
  return summarize(samples);
}

/**
 * Runs several timed functions interleaved, so they share the machine's noise equally. An entry
 * may be `{ before, run }`: `before` (say, waiting for a warm engine host) is not timed.
 */
export async function interleaved(fns, runs, pauseMs = 0) {
  const samples = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let i = 0; i < runs; i++) {
    for (const [name, entry] of Object.entries(fns)) {
      const fn = typeof entry === "function" ? entry : entry.run;
      if (typeof entry !== "function") await entry.before?.();
      const t = now();
      await fn(i);
      samples[name].push(now() - t);
      if (pauseMs) await sleep(pauseMs);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize(v)]));
}

/** Calls completed by `workers` concurrent callers in `seconds`. */
export async function throughput(fn, seconds, workers) {
  const end = now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (now() < end) {
        await fn();
        done++;
      }
    }),
  );
  return round(done / seconds);
}

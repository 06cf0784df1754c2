// The cost of the guest network's path: guest `fetch` round trips to a loopback HTTP server
// (worker → engine host → channel → broker → server and back) next to the same requests made by
// Node directly with the client the broker uses (node:http, a new connection each time), in one
// run. The guest's requests run inside one run (QuickJS has only a millisecond clock), timed
// from outside, minus the same run with the fetches left out. `npm run build` first.
//   node bench/net.mjs            (BENCH_REQUESTS=200 to change the count)

import http from "node:http";
import { Runtime, Sandbox } from "../dist/index.js";

const N = Number(process.env.BENCH_REQUESTS ?? 200);
const BIG = Buffer.alloc(1024 * 1024, 120);
const server = http.createServer((req, res) => res.end(req.url === "/big" ? BIG : "ok"));
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

function direct(path) {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { agent: false }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).length));
      })
      .on("error", reject);
  });
}

async function nodeMs(path, n) {
  const t = performance.now();
  for (let i = 0; i < n; i++) await direct(path);
  return performance.now() - t;
}

const runtime = await Runtime.create({
  permissions: { net: [`127.0.0.1:${server.address().port}`] },
  net: { limits: { maxRequests: 100_000, maxBytesIn: 10 * 1024 ** 3 } },
  pool: { python: 0, javascript: 1, typescript: 0, bash: 0, ruby: 0, wasm: 0 },
});
const sb = await Sandbox.create({ runtime });

async function guestMs(code) {
  const t = performance.now();
  const r = await sb.run("javascript", code, { timeoutMs: 300_000 });
  if (r.status !== "ok") throw new Error(`guest run failed: ${r.status} ${r.stderr}`);
  return performance.now() - t;
}

const loop = (n, body) => `for (let i = 0; i < ${n}; i++) { ${body} }`;
// Warm up both paths (the worker's first fetch, Node's first connection).
await guestMs(loop(10, `await (await fetch("${base}/")).text();`));
await nodeMs("/", 10);

const rows = [];
for (const [label, path, n] of [
  ["2 bytes", "/", N],
  ["1 MiB", "/big", Math.max(5, Math.floor(N / 10))],
]) {
  const empty = await guestMs(loop(n, `await Promise.resolve();`));
  const guest =
    (await guestMs(loop(n, `await (await fetch("${base}${path}")).arrayBuffer();`))) - empty;
  const node = await nodeMs(path, n);
  rows.push({
    response: label,
    requests: n,
    "guest fetch (ms each)": +(guest / n).toFixed(3),
    "Node http directly (ms each)": +(node / n).toFixed(3),
    ratio: +(guest / node).toFixed(1),
  });
}
console.table(rows);

await sb.close();
await runtime.close();
server.close();

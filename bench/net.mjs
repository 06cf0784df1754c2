// The cost of the guest network's path: guest `fetch` round trips to a loopback HTTP server
// (worker → engine host → channel → broker → server and back) next to the same requests made by
// Node directly with the client the broker uses (node:http, a new connection each time), in one
// run. The guest's requests run inside one run (QuickJS has only a millisecond clock), timed
// from outside, minus the same run with the fetches left out. Where native sandboxes work, also
// native https:// through the jail's proxy (a CONNECT tunnel relayed by the trusted side, a new
// tunnel and TLS handshake per request) next to the same Python loop run outside the jail,
// straight to the server; both timed inside Python. `npm run build` first.
//   node bench/net.mjs            (BENCH_REQUESTS=200 to change the count)

import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
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

// ---- native https:// through CONNECT ---------------------------------------------------------

const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-bench-net-"));
const f = (name) => path.join(tmp, name);
const ssl = (args) => execFileSync("openssl", args.split(" "), { stdio: "ignore" });
ssl(
  `req -x509 -newkey rsa:2048 -nodes -keyout ${f("ca.key")} -out ${f("ca.pem")} -days 1 -subj /CN=bench-CA`,
);
ssl(`req -newkey rsa:2048 -nodes -keyout ${f("srv.key")} -out ${f("srv.csr")} -subj /CN=127.0.0.1`);
writeFileSync(f("ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
ssl(
  `x509 -req -in ${f("srv.csr")} -CA ${f("ca.pem")} -CAkey ${f("ca.key")} -CAcreateserial -out ${f("srv.pem")} -days 1 -extfile ${f("ext.cnf")}`,
);
const tls = https.createServer(
  { key: readFileSync(f("srv.key")), cert: readFileSync(f("srv.pem")) },
  (_req, res) => res.end("ok"),
);
await new Promise((r) => tls.listen(0, "127.0.0.1", r));
const tlsPort = tls.address().port;
const M = Math.max(5, Math.floor(N / 4));
const pyLoop = (ca) => `import ssl, time, urllib.request
ctx = ssl.create_default_context(cafile="${ca}")
urllib.request.urlopen("https://127.0.0.1:${tlsPort}/", context=ctx).read()
t = time.perf_counter()
for _ in range(${M}):
    urllib.request.urlopen("https://127.0.0.1:${tlsPort}/", context=ctx).read()
print((time.perf_counter() - t) * 1000 / ${M})`;
const native = await Runtime.create({
  isolation: "auto",
  permissions: { net: [`127.0.0.1:${tlsPort}`] },
  net: { limits: { maxRequests: 100_000 } },
  pool: { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 },
});
try {
  const nsb = await Sandbox.create({ runtime: native, engine: "native" });
  await nsb.files.write("ca.pem", new Uint8Array(readFileSync(f("ca.pem"))));
  const r = await nsb.run("python", pyLoop("/workspace/ca.pem"), { timeoutMs: 300_000 });
  await nsb.close();
  if (r.status !== "ok") throw new Error(`${r.status} ${r.stderr}`);
  // Asynchronously: the server answering it lives in this process.
  const outside = await promisify(execFile)("/usr/bin/python3", ["-c", pyLoop(f("ca.pem"))], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  const jailed = Number(r.stdout.trim());
  const direct = Number(outside.stdout.trim());
  console.table([
    {
      "https:// (new TLS connection each)": "2 bytes",
      requests: M,
      "native guest urllib via CONNECT (ms each)": +jailed.toFixed(3),
      "same Python outside the jail, direct (ms each)": +direct.toFixed(3),
      ratio: +(jailed / direct).toFixed(1),
    },
  ]);
} catch (error) {
  console.log(`native https row skipped: ${error?.message ?? error}`);
} finally {
  await native.close();
  tls.close();
  rmSync(tmp, { recursive: true, force: true });
}

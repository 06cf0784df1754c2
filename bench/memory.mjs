// Where an idle polybox's memory goes (Linux): a runtime with the default pools (or BENCH_POOL,
// JSON), once every warm host is ready and the fleet has settled, process by process: the
// server (this process), each engine host with its jail launcher, RSS and PSS, and each host's
// RSS split as the kernel counts it (anonymous: V8 heaps, WebAssembly memories and compiled code,
// Node's own allocations; file-backed: Node's binary and mapped files; shared memory).
//
//   npm run build && node bench/memory.mjs

import { readFileSync } from "node:fs";
import { Runtime } from "../dist/index.js";
import * as procs from "./lib/procs.mjs";
import { round, sleep } from "./lib/stats.mjs";

const mib = (kib) => round(kib / 1024);
const field = (status, name) =>
  Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);

function split(pid) {
  let status = "";
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  return {
    rss: mib(field(status, "VmRSS")),
    anon: mib(field(status, "RssAnon")),
    file: mib(field(status, "RssFile")),
    shmem: mib(field(status, "RssShmem")),
    pss: round(procs.pss(pid) / 1024 / 1024),
  };
}

if (!procs.supported) {
  console.log("bench/memory.mjs reads /proc: Linux only");
  process.exit(0);
}
const pool = process.env.BENCH_POOL ? JSON.parse(process.env.BENCH_POOL) : undefined;
const rt = await Runtime.create(pool ? { pool } : {});
for (const end = Date.now() + 180_000; ; ) {
  const { warm } = rt.fleet.stats();
  if (Object.entries(rt.pool).every(([l, n]) => (warm[l] ?? 0) >= n) && !rt.fleet.refilling) break;
  if (Date.now() > end) throw new Error("the fleet never became warm");
  await sleep(20);
}
await sleep(2000);
const total = procs.treeMemory();
const rows = [];
rows.push({ process: `server (pid ${process.pid})`, ...split(process.pid) });
for (const pid of procs.descendants()) {
  const s = split(pid);
  if (s) rows.push({ process: `${procs.comm(pid)} (pid ${pid})`, ...s });
}
console.log(`default pools: ${JSON.stringify(rt.pool)}`);
console.log(
  `${"process".padEnd(28)} ${"RSS".padStart(7)} ${"anon".padStart(7)} ${"file".padStart(7)} ${"shmem".padStart(7)} ${"PSS".padStart(7)}  (MiB)`,
);
for (const r of rows)
  console.log(
    `${r.process.padEnd(28)} ${String(r.rss).padStart(7)} ${String(r.anon).padStart(7)} ${String(r.file).padStart(7)} ${String(r.shmem).padStart(7)} ${String(r.pss).padStart(7)}`,
  );
console.log(
  `total: ${round(total.rssBytes / 1024 / 1024)} MiB RSS, ${round(total.pssBytes / 1024 / 1024)} MiB PSS, ${total.processes} processes (${total.nodeProcesses} engine hosts)`,
);
await rt.close();

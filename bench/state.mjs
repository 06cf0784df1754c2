// What snapshots and forks cost: for a 10 MiB and a 100 MiB workspace (100 files each, in a
// named sandbox), the time of a first snapshot (hash, link into the store), a second one (hashes
// known), a fork from the snapshot into a named sandbox, a fork of the live sandbox into an
// ephemeral one, and a restore; and the disk the data dir takes before and after the named fork
// (blocks of distinct inodes, so hard links count once). `npm run build` first.

import { randomFillSync } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Runtime, Sandbox } from "../dist/index.js";

async function diskBytes(dir) {
  const seen = new Set();
  let bytes = 0;
  const walk = async (d) => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = await fs.lstat(p);
      if (seen.has(st.ino)) continue;
      seen.add(st.ino);
      bytes += st.blocks * 512;
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return bytes;
}

async function timed(fn) {
  const t = performance.now();
  const value = await fn();
  return [value, performance.now() - t];
}

const mib = (n) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "polybox-bench-state-"));
const rt = await Runtime.create({
  dataDir,
  pool: { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 },
  limits: { workspaceQuotaBytes: 1024 ** 3 },
  maxLimits: { workspaceQuotaBytes: 1024 ** 3 },
});
const rows = [];
try {
  for (const size of [10, 100]) {
    const sb = await Sandbox.open(`ws-${size}`, { runtime: rt });
    const each = (size * 1024 ** 2) / 100;
    for (let i = 0; i < 100; i++)
      await sb.files.write(`d${i % 10}/f${i}.bin`, randomFillSync(new Uint8Array(each)));
    const [snap, first] = await timed(() => sb.snapshot());
    await sb.files.write("d0/f0.bin", randomFillSync(new Uint8Array(each)));
    const [, second] = await timed(() => sb.snapshot());
    const before = await diskBytes(dataDir);
    const [fork, forkSnap] = await timed(() =>
      Sandbox.fork(snap.id, { runtime: rt, name: `fork-${size}` }),
    );
    const after = await diskBytes(dataDir);
    const [live, forkLive] = await timed(() => Sandbox.fork(sb));
    const [, restore] = await timed(() => sb.restore(snap.id));
    rows.push({
      workspace: `${size} MiB`,
      "snapshot, first (ms)": Math.round(first),
      "snapshot, again (ms)": Math.round(second),
      "fork of snapshot, named (ms)": Math.round(forkSnap),
      "fork of live, ephemeral (ms)": Math.round(forkLive),
      "restore (ms)": Math.round(restore),
      "disk added by the named fork": mib(after - before),
    });
    await live.close();
    await fork.close({ delete: true });
    await sb.close({ delete: true });
  }
  console.table(rows);
} finally {
  await rt.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}

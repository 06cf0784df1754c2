// What snapshots and forks cost: for a 10 MiB and a 100 MiB workspace (100 files each, in a
// named sandbox), the time of a first snapshot (hash, link into the store), a second one (hashes
// known), a fork from the snapshot into a named sandbox, a fork of the live sandbox into an
// ephemeral one, and a restore; and the disk the data dir takes before and after the named fork
// (blocks of distinct inodes, so hard links count once). Then, for a JavaScript and a Python
// interpreter holding state, what capturing it costs (snapshot), its size as captured and on
// disk, and what bringing it back costs: restore() itself, and the first run after it (which
// puts the state into a fresh interpreter), against the first run after a restore that brings
// nothing back. Medians of REPEAT (default 5). `npm run build` first.

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
  console.table(await interpreterRows());
} finally {
  await rt.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}

/** Snapshot, restore and first-run-after times of a JavaScript and a Python interpreter with state. */
async function interpreterRows() {
  const repeat = Number(process.env.REPEAT ?? 5);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cases = [
    {
      language: "javascript",
      setup:
        "let rows = Array.from({ length: 20000 }, (_, i) => ({ i, name: 'row' + i })); const index = new Map(rows.map((r) => [r.name, r])); let hits = 0; const hit = () => ++hits;",
      check: "hit(); index.get('row123').i",
      expect: "123",
    },
    {
      language: "python",
      setup:
        "import json, collections\nrows = [{'i': i, 'name': f'row{i}'} for i in range(20000)]\nindex = {r['name']: r for r in rows}\ncounts = collections.Counter(r['name'][-1] for r in rows)",
      check: "index['row123']['i']",
      expect: "123",
    },
  ];
  const out = [];
  for (const c of cases) {
    const sb = await Sandbox.create({ runtime: rt });
    await sb.run(c.language, c.setup);
    const snaps = [];
    const snapshotMs = [];
    const restoreMs = [];
    const firstRunMs = [];
    const freshRunMs = [];
    for (let i = 0; i < repeat; i++) {
      const [snap, ms] = await timed(() => sb.snapshot());
      snaps.push(snap);
      snapshotMs.push(ms);
    }
    const snap = snaps[0];
    const objects = await diskBytes(path.join(dataDir, "objects"));
    for (let i = 0; i < repeat; i++) {
      const [, r] = await timed(() => sb.restore(snap.id));
      restoreMs.push(r);
      const [result, first] = await timed(() => sb.run(c.language, c.check));
      if (result.value !== c.expect || result.stateLost)
        throw new Error(`${c.language}: state did not come back: ${JSON.stringify(result)}`);
      firstRunMs.push(first);
    }
    // The same restore bringing nothing back: a snapshot of the files alone (a new sandbox).
    const bare = await Sandbox.create({ runtime: rt });
    const filesOnly = await bare.snapshot();
    await bare.run(c.language, "1");
    for (let i = 0; i < repeat; i++) {
      await bare.restore(filesOnly.id);
      const [, fresh] = await timed(() => bare.run(c.language, "1"));
      freshRunMs.push(fresh);
    }
    const [fork, forkMs] = await timed(() => Sandbox.fork(snap.id, { runtime: rt }));
    const [, forkFirst] = await timed(() => fork.run(c.language, c.check));
    out.push({
      interpreter: `${c.language} (${snap.state[c.language].kept})`,
      "state as captured": mib(snap.state[c.language].bytes),
      "store after all snapshots": mib(objects),
      "snapshot (ms)": Math.round(median(snapshotMs)),
      "restore() (ms)": Math.round(median(restoreMs)),
      "first run after, state back (ms)": Math.round(median(firstRunMs)),
      "first run after, nothing back (ms)": Math.round(median(freshRunMs)),
      "fork + first run (ms)": Math.round(forkMs + forkFirst),
    });
    for (const s of [fork, bare, sb]) await s.close();
  }
  return out;
}

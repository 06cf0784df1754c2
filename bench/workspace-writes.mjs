// What an atomic workspace write costs: 1,000 small writes and 20 writes of 1 MiB through
// Workspace, ephemeral (staged + renamed) and durable (also fsync of the file and its
// directory), against a plain in-place write of the same bytes. `npm run build` first.

import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Workspace } from "../dist/core/sandbox/workspace.js";

const small = new Uint8Array(200).fill(97);
const big = new Uint8Array(1024 * 1024).fill(98);

async function inPlace(dir, name, data) {
  const h = await fs.open(
    path.join(dir, name),
    C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW,
    0o644,
  );
  try {
    await h.writeFile(data);
  } finally {
    await h.close();
  }
}

async function time(label, n, data, write) {
  const t = performance.now();
  for (let i = 0; i < n; i++) await write(`f${i % 50}.bin`, data);
  const ms = performance.now() - t;
  console.log(`${label.padEnd(34)} ${(ms / n).toFixed(3)} ms per write`);
}

const plain = await fs.mkdtemp(path.join(os.tmpdir(), "bench-plain-"));
const eph = new Workspace(4 * 1024 ** 3);
const home = await fs.mkdtemp(path.join(os.tmpdir(), "bench-durable-"));
const dur = new Workspace(4 * 1024 ** 3, { home, durable: true });
await dur.load();
for (const [n, data, what] of [
  [1000, small, "200 B"],
  [20, big, "1 MiB"],
]) {
  await time(`in place, ${what}`, n, data, (f, d) => inPlace(plain, f, d));
  await time(`staged + rename, ${what}`, n, data, (f, d) => eph.write(f, d));
  await time(`staged + rename + fsync, ${what}`, n, data, (f, d) => dur.write(f, d));
}
await eph.destroy();
await dur.destroy();
await fs.rm(plain, { recursive: true, force: true });

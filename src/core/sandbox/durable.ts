// Trusted side: changes to files on disk that a crash cannot leave half made, for the workspace
// and the data directory. A new name or a rename is made durable by syncing its directory; a
// small file is staged, synced and renamed over the old; a whole tree is replaced by building the
// new one beside it and swapping the two with renames.

import { createHash, randomUUID } from "node:crypto";
import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

export async function exists(p: string): Promise<boolean> {
  return (await fs.lstat(p).catch(() => null)) !== null;
}

/**
 * Makes a directory's entries (a rename, a new name) durable. Windows cannot open a directory
 * for this; there the rename's own guarantees are what there is.
 */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await fs.open(dir, C.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Finishes or undoes a `swapTree` of `home/name` that a crash interrupted: the swap renames
 * `name` to `name.old`, then `name.new` to `name`, so a missing `name` means the crash came
 * between the two, when `name.new` was already complete. What is left of either goes.
 */
export async function settleSwap(home: string, name: string): Promise<void> {
  const files = path.join(home, name);
  const fresh = path.join(home, `${name}.new`);
  if (!(await exists(files)) && (await exists(fresh))) await fs.rename(fresh, files);
  await fs.rm(fresh, { recursive: true, force: true });
  await fs.rm(path.join(home, `${name}.old`), { recursive: true, force: true });
}

/** What `swapTree` builds: a path inside the tree, and whether it is a directory. */
export interface TreeEntry {
  path: string;
  type: "file" | "dir";
}

/**
 * Replaces the tree `home/name` with one holding `entries`: builds it beside the old one as
 * `name.new`, `place` putting each file at its host path, then swaps the two with renames, so
 * that a crash leaves one tree or the other (`name.old` is the old one until the swap is done).
 * On failure the old tree is put back and the error thrown.
 */
export async function swapTree<E extends TreeEntry>(
  home: string,
  name: string,
  entries: readonly E[],
  place: (hostPath: string, entry: E) => Promise<void>,
  durable: boolean,
): Promise<void> {
  const files = path.join(home, name);
  const fresh = path.join(home, `${name}.new`);
  const old = path.join(home, `${name}.old`);
  try {
    await fs.rm(fresh, { recursive: true, force: true });
    await fs.mkdir(fresh);
    const dirs = entries
      .filter((e) => e.type === "dir")
      .sort((a, b) => a.path.length - b.path.length);
    for (const d of dirs) await fs.mkdir(path.join(fresh, d.path));
    for (const f of entries) if (f.type === "file") await place(path.join(fresh, f.path), f);
    if (durable) {
      for (const d of dirs) await syncDir(path.join(fresh, d.path));
      await syncDir(fresh);
    }
    await fs.rm(old, { recursive: true, force: true });
    await fs.rename(files, old);
    await fs.rename(fresh, files);
    if (durable) await syncDir(home);
  } catch (error) {
    await fs.rm(fresh, { recursive: true, force: true });
    if (!(await exists(files)) && (await exists(old))) await fs.rename(old, files);
    throw error;
  }
  await fs.rm(old, { recursive: true, force: true });
}

/** Bytes of the regular files under `dir`, and `dirCost` per directory (a workspace counts them). */
export async function treeBytes(dir: string, dirCost: number): Promise<number> {
  let n = 0;
  for (const d of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) n += dirCost + (await treeBytes(p, dirCost));
    else if (d.isFile()) n += (await fs.lstat(p)).size;
  }
  return n;
}

/** The sha256 of a file's content, read without following a symlink. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash("sha256");
  const handle = await fs.open(file, C.O_RDONLY | (C.O_NOFOLLOW ?? 0));
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 1024 * 1024 }))
      hash.update(chunk as Buffer);
  } finally {
    await handle.close().catch(() => undefined);
  }
  return hash.digest("hex");
}

/** Makes a file's content durable. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, C.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes a small file so that a crash leaves the old one or the new one: staged, synced, renamed. */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const staged = `${file}.${randomUUID()}.tmp`;
  const handle = await fs.open(staged, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(staged, file);
  await syncDir(path.dirname(file));
}

// Trusted side: changes to a tree of files on disk that a crash cannot leave half made. A new
// name or a rename is made durable by syncing its directory; a whole tree is replaced by
// building the new one beside it and swapping the two with renames.

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

// Trusted side: polybox's private directories in the OS temp dir (sandbox workspaces, engine host
// working directories). Each name carries the pid of the process that made it, so that a server
// that died without cleaning up (SIGKILL, a crash, a power cut) has its leftovers removed by the
// next polybox process that starts, files of sandboxes included, and no live one is touched.

import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export type TempKind = "ws" | "host";

const NAME = /^polybox-(?:ws|host)-(\d+)-[A-Za-z0-9]{6}$/;

const prefix = (kind: TempKind) => path.join(os.tmpdir(), `polybox-${kind}-${process.pid}-`);

export function makeTempDirSync(kind: TempKind): string {
  return mkdtempSync(prefix(kind));
}

export function makeTempDir(kind: TempKind): Promise<string> {
  return fs.mkdtemp(prefix(kind));
}

/** Whether a process with this pid exists (what a directory named after a pid may still serve). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user has that pid now; its directory is not ours to judge.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let swept = false;

/**
 * Removes the temp directories of polybox processes that are gone. Once per process; only
 * directories this user owns, whose name says polybox made them.
 */
export function sweepStaleTempDirs(): void {
  if (swept) return;
  swept = true;
  const root = os.tmpdir();
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(NAME.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    const dir = path.join(root, name);
    try {
      const st = statSync(dir, { throwIfNoEntry: false });
      if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process removed it first, or it is not ours after all: leave it.
    }
  }
}

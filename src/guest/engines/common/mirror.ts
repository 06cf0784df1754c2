// Worker side: keeps an interpreter's private copy of the workspace in step with the trusted
// side. Files come in before a run; after it, whatever the guest created, changed or removed is
// collected by comparing a listing (type, size, mtime) taken before and after the run. Incoming
// files keep the trusted side's mtime, so only the guest's own writes look new.

import type { FileBlob, FileSync } from "../../../protocol/messages.js";
import { isUnstorablePath } from "../../../protocol/paths.js";

export interface GuestEntry {
  type: "file" | "dir";
  size: number;
  mtimeMs: number;
}

/** The few operations an engine's in-memory file system must offer, with workspace-relative paths. */
export interface GuestFs {
  list(): Promise<Map<string, GuestEntry>> | Map<string, GuestEntry>;
  read(path: string): Promise<Uint8Array> | Uint8Array;
  write(path: string, data: Uint8Array, mtimeMs: number): Promise<void> | void;
  mkdir(path: string): Promise<void> | void;
  /** Removes a file or a directory tree; a missing path is not an error. */
  remove(path: string): Promise<void> | void;
}

export class WorkspaceMirror {
  private before = new Map<string, GuestEntry>();

  constructor(private readonly fs: GuestFs) {}

  async apply(sync: FileSync, full: boolean): Promise<void> {
    if (full) {
      const current = await this.fs.list();
      // Remove top-level entries only; removing a directory takes its children along.
      for (const path of current.keys()) if (!path.includes("/")) await this.fs.remove(path);
    }
    for (const path of sync.removed) await this.fs.remove(path);
    for (const dir of sync.dirs) await this.fs.mkdir(dir);
    for (const file of sync.files) await this.fs.write(file.path, file.data, file.mtimeMs);
    this.before = await this.fs.list();
  }

  async collect(): Promise<FileSync> {
    const after = await this.fs.list();
    const files: FileBlob[] = [];
    const dirs: string[] = [];
    for (const [path, entry] of after) {
      const old = this.before.get(path);
      const same =
        old !== undefined &&
        old.type === entry.type &&
        old.size === entry.size &&
        old.mtimeMs === entry.mtimeMs;
      if (same) continue;
      if (entry.type === "dir") {
        if (old?.type !== "dir") dirs.push(path);
      } else {
        // A name the workspace cannot store is reported (so that the result notes it) but not
        // read: the trusted side leaves it out, and a name not in UTF-8 may not be readable here.
        const data = isUnstorablePath(path) ? new Uint8Array() : await this.fs.read(path);
        files.push({ path, data, mtimeMs: entry.mtimeMs });
      }
    }
    const removed: string[] = [];
    for (const [path, old] of this.before) {
      const now = after.get(path);
      if (!now || now.type !== old.type) removed.push(path);
    }
    this.before = after;
    return { files, dirs, removed };
  }
}

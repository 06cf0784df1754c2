// Trusted side: a sandbox's files. They live on the host, in a private directory (under the OS
// temp dir, or a named sandbox's directory in the data dir), and never move: engines get copies
// and send changes back. Every path from outside (API caller, MCP client, engine) goes through
// `resolve`, which keeps it inside the workspace, and every file operation refuses to follow a
// symlink. A generation counter records when each path last changed, so that an interpreter is
// sent only what changed since it last synced.
//
// A file is never modified in place: a write goes to a new file in a staging directory beside the
// workspace (same file system), which is then renamed over the target. A reader or a crash sees
// the old content or the new, never part of one; and a file may be a hard link to a snapshot's
// object (see state.ts), which a later write replaces rather than changes.

import { randomUUID } from "node:crypto";
import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { FileBlob, FileSync } from "../../protocol/messages.js";
import { PolyboxError } from "../errors.js";
import { formatBytes } from "../limits.js";
import { makeTempDir } from "../tmp.js";
import type { FileInfo } from "../types.js";
import { settleSwap, swapTree, syncDir } from "./durable.js";
import {
  asUnstorable,
  caseInsensitiveAt,
  droppedNote,
  hostNameProblem,
  parentOf,
  readTree,
  Unstorable,
} from "./names.js";

/**
 * What a directory costs against the quota: a directory takes a block on the host's disk however
 * empty it is, so ten thousand empty ones are not free.
 */
export const DIR_COST_BYTES = 4096;

const costOf = (e: { type: "file" | "dir"; size: number }) =>
  e.type === "dir" ? DIR_COST_BYTES : e.size;

interface Entry {
  type: "file" | "dir";
  size: number;
  mtimeMs: number;
  gen: number;
  /** sha256 of a file's content, once something asked (a snapshot); a write makes a new entry. */
  hash?: string;
}

export interface WorkspaceOptions {
  /**
   * A directory of the workspace's own: the files in `workspace/`, writes staged in `staging/`
   * beside it. Default: a private directory under the OS temp dir, made on first use.
   */
  home?: string;
  /**
   * Sync each write (the file, then its directory) to disk before it returns, so that a write
   * that returned survives a crash of the machine: for workspaces that outlive the process.
   */
  durable?: boolean;
  /**
   * Told how many bytes a change adds before it is made (negative: frees, after it is made);
   * throws to refuse. For a quota beyond the workspace's own (the data directory's).
   */
  charge?: (bytes: number) => void;
}

/** A workspace entry as a snapshot records it. */
export interface WorkspaceEntry {
  path: string;
  type: "file" | "dir";
  size: number;
  mtimeMs: number;
  hash?: string;
}

const FILES = "workspace";
const STAGING = "staging";

export class Workspace {
  private home: string | null;
  private readonly entries = new Map<string, Entry>();
  private readonly removedAt = new Map<string, number>();
  private bytes = 0;
  private readonly durable: boolean;
  private readonly charge: (bytes: number) => void;
  /**
   * On a case-insensitive host volume, each index path by its case-folded form (a value the
   * index no longer has is stale and ignored); null until the volume is known to be one.
   */
  private folded: Map<string, string> | null = null;
  private caseProbe: Promise<boolean> | null = null;
  generation = 0;

  constructor(
    private readonly quotaBytes: number,
    options: WorkspaceOptions = {},
  ) {
    this.home = options.home ?? null;
    this.durable = options.durable ?? false;
    this.charge = options.charge ?? (() => undefined);
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** Files and directories, each of which costs the host an inode whatever its size. */
  get entryCount(): number {
    return this.entries.size;
  }

  /** How many entries the workspace would hold after `changes` (an upper bound). */
  projectedEntries(changes: FileSync): number {
    let added = 0;
    for (const p of [...changes.dirs, ...changes.files.map((f) => f.path)])
      if (!this.entries.has(p)) added++;
    return this.entries.size + added;
  }

  get fileCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.type === "file") n++;
    return n;
  }

  /** The workspace's own directory, made on first use so that sandboxes without files cost nothing. */
  private async ownHome(): Promise<string> {
    if (this.home === null) {
      const dir = await makeTempDir("ws");
      await fs.mkdir(path.join(dir, FILES));
      await fs.mkdir(path.join(dir, STAGING));
      this.home = dir;
    }
    return this.home;
  }

  /** The host directory that holds the files. */
  async root(): Promise<string> {
    return path.join(await this.ownHome(), FILES);
  }

  /**
   * Reads an existing workspace from its home (a named sandbox's, after a restart): finishes or
   * undoes a restore a crash interrupted, clears staged writes, and rebuilds the index from the
   * files. Symbolic links and anything but regular files and directories are left out (never
   * followed); their paths are returned.
   */
  async load(): Promise<string[]> {
    if (this.home === null) throw new PolyboxError("INVALID_ARGUMENT", "no workspace to load");
    const home = this.home;
    const files = path.join(home, FILES);
    await settleSwap(home, FILES);
    await fs.rm(path.join(home, STAGING), { recursive: true, force: true });
    await fs.mkdir(files, { recursive: true });
    await fs.mkdir(path.join(home, STAGING), { recursive: true });
    this.entries.clear();
    this.removedAt.clear();
    this.bytes = 0;
    const { entries, skipped } = await readTree(files);
    for (const e of entries) {
      this.bytes += costOf(e);
      this.touch(e.path, { type: e.type, size: e.size, mtimeMs: e.mtimeMs });
    }
    return skipped.sort();
  }

  /**
   * Host path for a relative path, after checking that no existing component is a symlink. A
   * parent this workspace made itself (it never makes links) needs no check, so a path under a
   * known directory costs one join, not a system call per component.
   */
  private async hostPath(rel: string): Promise<string> {
    return (await this.target(rel)).host;
  }

  /** `hostPath`, and whether the host already has something at that path. */
  private async target(rel: string): Promise<{ host: string; found: boolean }> {
    const root = await this.root();
    const parent = parentOf(rel);
    if (parent === "" || this.entries.get(parent)?.type === "dir") {
      const own = path.join(root, rel);
      const st = await fs.lstat(own).catch(() => null);
      if (st?.isSymbolicLink()) {
        throw new PolyboxError(
          "PATH_OUTSIDE_WORKSPACE",
          `"${rel}" goes through a symbolic link, which is not followed`,
        );
      }
      return { host: own, found: st !== null };
    }
    let current = root;
    let found = true;
    for (const part of rel.split("/").filter(Boolean)) {
      current = path.join(current, part);
      const st = await fs.lstat(current).catch(() => null);
      if (!st) {
        found = false;
        break;
      }
      if (st.isSymbolicLink()) {
        throw new PolyboxError(
          "PATH_OUTSIDE_WORKSPACE",
          `"${rel}" goes through a symbolic link, which is not followed`,
        );
      }
    }
    return { host: path.join(root, rel), found };
  }

  /**
   * The host path for a new entry `rel` (one the index does not have), or throws Unstorable when
   * the host cannot keep it under that name: a name Windows refuses or turns into another (see
   * `hostNameProblem`), or one the host already has under another spelling, a case-insensitive
   * file system's `A.txt` for `a.txt` (Windows, macOS) or another Unicode normalization
   * (macOS). Writing there would replace a different file of the index, or land elsewhere.
   */
  private async newTarget(rel: string): Promise<string> {
    const problem = hostNameProblem(rel);
    if (problem) throw new Unstorable(rel, problem);
    const twin = await this.caseTwin(rel);
    if (twin !== null)
      throw new Unstorable(
        rel,
        `the host's file system takes it for ${JSON.stringify(twin)}, which differs only in case`,
      );
    const { host, found } = await this.target(rel);
    if (found) {
      const folded = rel.toLowerCase();
      const twin = [...this.entries.keys()].find((k) => k.toLowerCase() === folded);
      throw new Unstorable(
        rel,
        twin
          ? `the host's file system takes it for ${JSON.stringify(twin)}, which differs only in case`
          : "the host's file system already has an entry by that name under another spelling",
      );
    }
    return host;
  }

  /**
   * The index's entry that `rel` (a path the index does not have) differs from only in case, when
   * the host volume ignores case (probed once, see `caseInsensitiveAt`); null otherwise. Known
   * before the host is asked, so that which of two such names is kept does not rest on what the
   * host happens to hold.
   */
  private async caseTwin(rel: string): Promise<string | null> {
    // Probed beside the home, so that the workspaces of one parent (the temp dir, a scope's named
    // sandboxes) share one probe.
    this.caseProbe ??= this.ownHome().then((home) => caseInsensitiveAt(path.dirname(home)));
    if (!(await this.caseProbe)) return null;
    if (this.folded === null) {
      this.folded = new Map();
      for (const k of this.entries.keys()) this.folded.set(k.toLowerCase(), k);
    }
    const twin = this.folded.get(rel.toLowerCase());
    return twin !== undefined && twin !== rel && this.entries.has(twin) ? twin : null;
  }

  /** @internal The host path of one of the workspace's files, for a snapshot to link or copy. */
  async hostFile(relPath: string): Promise<string> {
    if (this.entries.get(relPath)?.type !== "file")
      throw new PolyboxError("FILE_NOT_FOUND", `no file "${relPath}" in the workspace`);
    return this.hostPath(relPath);
  }

  async write(relPath: string, data: Uint8Array, mtimeMs?: number): Promise<void> {
    const existing = this.entries.get(relPath);
    if (existing?.type === "dir")
      throw new PolyboxError("NOT_A_FILE", `"${relPath}" is a directory`);
    let newDirs = 0;
    for (let p = parentOf(relPath); p !== "" && !this.entries.has(p); p = parentOf(p)) newDirs++;
    const next = this.bytes - (existing?.size ?? 0) + data.length + newDirs * DIR_COST_BYTES;
    if (next > this.quotaBytes) {
      throw new PolyboxError(
        "QUOTA_EXCEEDED",
        `writing "${relPath}" (${formatBytes(data.length)}) would exceed the workspace quota: workspaceQuotaBytes=${this.quotaBytes} (${formatBytes(this.quotaBytes)}), ${formatBytes(this.bytes)} in use`,
        { details: { limit: "workspaceQuotaBytes", value: this.quotaBytes } },
      );
    }
    const grows = data.length - (existing?.size ?? 0);
    const parent = parentOf(relPath);
    if (parent) await this.mkdir(parent);
    const target = existing ? await this.hostPath(relPath) : await this.newTarget(relPath);
    this.grow(grows);
    try {
      await this.replaceFile(target, data, mtimeMs);
    } catch (error) {
      this.grow(-grows);
      throw error;
    }
    this.bytes += grows;
    this.touch(relPath, { type: "file", size: data.length, mtimeMs: mtimeMs ?? Date.now() });
  }

  /** Charges growth before the change and refunds shrinkage after it (see `charge`). */
  private grow(bytes: number): void {
    if (bytes !== 0) this.charge(bytes);
  }

  /**
   * Writes a new file in the staging directory and renames it over `target`: never a write into
   * an existing file, which may be a hard link shared with a snapshot.
   */
  private async replaceFile(target: string, data: Uint8Array, mtimeMs?: number): Promise<void> {
    const staged = path.join(await this.ownHome(), STAGING, randomUUID());
    const handle = await fs.open(
      staged,
      C.O_WRONLY | C.O_CREAT | C.O_EXCL | (C.O_NOFOLLOW ?? 0),
      0o644,
    );
    try {
      await handle.writeFile(data);
      if (mtimeMs !== undefined) {
        // Keeping the guest's mtime is a courtesy; a value the host refuses is not worth failing for.
        const t = new Date(mtimeMs);
        await handle.utimes(t, t).catch(() => undefined);
      }
      if (this.durable) await handle.sync();
    } catch (error) {
      await handle.close();
      await fs.rm(staged, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await fs.rename(staged, target);
    } catch (error) {
      await fs.rm(staged, { force: true });
      throw error;
    }
    if (this.durable) await syncDir(path.dirname(target));
  }

  /** Makes a directory and any missing parents: work in proportion to what is missing. */
  async mkdir(relPath: string): Promise<void> {
    const missing: string[] = [];
    for (let p = relPath; p !== ""; p = parentOf(p)) {
      const e = this.entries.get(p);
      if (e?.type === "dir") break;
      if (e?.type === "file")
        throw new PolyboxError("NOT_A_FILE", `"${p}" is a file, not a directory`);
      missing.push(p);
    }
    for (const sub of missing.reverse()) {
      const host = await this.newTarget(sub);
      this.grow(DIR_COST_BYTES);
      try {
        await fs.mkdir(host);
      } catch (error) {
        this.grow(-DIR_COST_BYTES);
        throw error;
      }
      if (this.durable) await syncDir(path.dirname(host));
      this.bytes += DIR_COST_BYTES;
      this.touch(sub, { type: "dir", size: 0, mtimeMs: Date.now() });
    }
  }

  async read(relPath: string): Promise<Uint8Array> {
    const e = this.entries.get(relPath);
    if (!e) throw new PolyboxError("FILE_NOT_FOUND", `no file "${relPath}" in the workspace`);
    if (e.type !== "file") throw new PolyboxError("NOT_A_FILE", `"${relPath}" is a directory`);
    const handle = await fs.open(await this.hostPath(relPath), C.O_RDONLY | (C.O_NOFOLLOW ?? 0));
    try {
      return new Uint8Array(await handle.readFile());
    } finally {
      await handle.close();
    }
  }

  async remove(relPath: string): Promise<string[]> {
    const e = this.entries.get(relPath);
    if (!e)
      throw new PolyboxError(
        "FILE_NOT_FOUND",
        `no file or directory "${relPath}" in the workspace`,
      );
    const gone = [relPath, ...[...this.entries.keys()].filter((k) => k.startsWith(`${relPath}/`))];
    const host = await this.hostPath(relPath);
    await fs.rm(host, { recursive: true, force: true });
    if (this.durable) await syncDir(path.dirname(host));
    this.generation++;
    let freed = 0;
    for (const p of gone) {
      const entry = this.entries.get(p);
      if (entry) freed += costOf(entry);
      this.entries.delete(p);
      this.removedAt.set(p, this.generation);
    }
    this.bytes -= freed;
    this.grow(-freed);
    return gone;
  }

  has(relPath: string): boolean {
    return this.entries.has(relPath);
  }

  sizeOf(relPath: string): number {
    return this.entries.get(relPath)?.size ?? 0;
  }

  list(relDir = ""): FileInfo[] {
    if (relDir !== "" && this.entries.get(relDir)?.type !== "dir") {
      throw this.entries.has(relDir)
        ? new PolyboxError(
            "NOT_A_FILE",
            `"${relDir}" is a file, not a directory: list its directory, or read the file`,
          )
        : new PolyboxError("FILE_NOT_FOUND", `no directory "${relDir}" in the workspace`);
    }
    const prefix = relDir === "" ? "" : `${relDir}/`;
    const out: FileInfo[] = [];
    for (const [p, e] of this.entries) {
      if (!p.startsWith(prefix)) continue;
      out.push({
        path: p,
        type: e.type === "dir" ? "directory" : "file",
        size: e.size,
        mtimeMs: e.mtimeMs,
      });
    }
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }

  /**
   * @internal Every entry, each file with the sha256 of its content: `digest` is asked only for
   * files whose hash is not known yet, so a second snapshot of a workspace costs little.
   */
  async describe(
    digest?: (hostPath: string, relPath: string) => Promise<string>,
  ): Promise<WorkspaceEntry[]> {
    const out: WorkspaceEntry[] = [];
    for (const [p, e] of this.entries) {
      if (digest && e.type === "file" && e.hash === undefined)
        e.hash = await digest(await this.hostPath(p), p);
      out.push({
        path: p,
        type: e.type,
        size: e.size,
        mtimeMs: e.mtimeMs,
        ...(e.hash ? { hash: e.hash } : {}),
      });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * @internal Replaces every file with `entries` (a snapshot): builds the new tree beside the old
   * one, `place` putting each file at its host path (a hard link or a copy), then swaps the two
   * with renames, so that a crash leaves one tree or the other (see `load`).
   */
  async replace(
    entries: readonly WorkspaceEntry[],
    place: (hostPath: string, entry: WorkspaceEntry) => Promise<void>,
  ): Promise<void> {
    const home = await this.ownHome();
    let bytes = 0;
    for (const e of entries) bytes += costOf(e);
    if (bytes > this.quotaBytes) {
      throw new PolyboxError(
        "QUOTA_EXCEEDED",
        `the snapshot holds ${formatBytes(bytes)}, over this workspace's quota: workspaceQuotaBytes=${this.quotaBytes} (${formatBytes(this.quotaBytes)})`,
        { details: { limit: "workspaceQuotaBytes", value: this.quotaBytes } },
      );
    }
    const grows = bytes - this.bytes;
    if (grows > 0) this.grow(grows);
    try {
      await swapTree(home, FILES, entries, place, this.durable);
    } catch (error) {
      if (grows > 0) this.grow(-grows);
      throw error;
    }
    if (grows < 0) this.grow(grows);
    this.generation++;
    for (const p of this.entries.keys()) this.removedAt.set(p, this.generation);
    this.entries.clear();
    this.bytes = bytes;
    for (const e of entries) {
      this.touch(e.path, {
        type: e.type,
        size: e.size,
        mtimeMs: e.mtimeMs,
        ...(e.hash ? { hash: e.hash } : {}),
      });
    }
  }

  /** What an interpreter that last synced at `since` lacks (everything when `since` is null). */
  async changesSince(since: number | null): Promise<FileSync> {
    const files: FileBlob[] = [];
    const dirs: string[] = [];
    for (const [p, e] of this.entries) {
      if (since !== null && e.gen <= since) continue;
      if (e.type === "dir") dirs.push(p);
      else {
        files.push({ path: p, data: await this.read(p), mtimeMs: e.mtimeMs });
      }
    }
    const removed: string[] = [];
    if (since !== null)
      for (const [p, g] of this.removedAt) if (g > since && !this.entries.has(p)) removed.push(p);
    return { files, dirs, removed };
  }

  /** Checks that applying `changes` keeps the workspace within quota; returns the new total. */
  projectedBytes(changes: FileSync): number {
    let total = this.bytes;
    const removed = new Set<string>();
    for (const r of changes.removed) {
      for (const [p, e] of this.entries) {
        if ((p === r || p.startsWith(`${r}/`)) && !removed.has(p)) {
          removed.add(p);
          total -= costOf(e);
        }
      }
    }
    for (const d of changes.dirs) {
      if (removed.has(d) || !this.entries.has(d)) total += DIR_COST_BYTES;
    }
    for (const f of changes.files) {
      if (!removed.has(f.path)) total -= this.entries.get(f.path)?.size ?? 0;
      total += f.data.length;
    }
    return total;
  }

  /**
   * Applies an engine's changes; returns the paths touched. Quota is checked by the caller.
   * Storing is part of the run: past `deadline` (a `Date.now()` value) it stops with TIMEOUT,
   * leaving what was stored so far. A name the host cannot store (see `newTarget`) is left out,
   * with everything under it, and a note saying so is pushed on `notes`.
   */
  async apply(
    changes: FileSync,
    deadline = Number.POSITIVE_INFINITY,
    notes?: string[],
  ): Promise<string[]> {
    const touched = new Set<string>();
    const dropped: Unstorable[] = [];
    const inTime = () => {
      if (Date.now() > deadline)
        throw new PolyboxError("TIMEOUT", "storing the run's files took past its deadline");
    };
    // A name the host cannot store is left out, with a note, and the rest of the run is kept.
    const storing = async (rel: string, store: () => Promise<void>): Promise<void> => {
      try {
        await store();
        touched.add(rel);
      } catch (error) {
        const unstorable = asUnstorable(error, rel);
        if (!unstorable) throw error;
        dropped.push(unstorable);
      }
    };
    const isUnder = (rel: string) => dropped.some((d) => rel.startsWith(`${d.path}/`));
    for (const r of changes.removed) {
      inTime();
      if (this.entries.has(r)) for (const p of await this.remove(r)) touched.add(p);
    }
    // Parents before children, so that each directory costs one call.
    const dirs = [...changes.dirs].sort((a, b) => a.length - b.length);
    for (const d of dirs) {
      inTime();
      if (!this.entries.has(d) && !isUnder(d)) await storing(d, () => this.mkdir(d));
    }
    for (const f of changes.files) {
      inTime();
      if (isUnder(f.path)) continue;
      if (this.entries.get(f.path)?.type === "dir") await this.remove(f.path);
      await storing(f.path, () => this.write(f.path, f.data, f.mtimeMs));
    }
    if (dropped.length > 0) notes?.push(droppedNote(dropped));
    return [...touched].sort();
  }

  private touch(relPath: string, entry: Omit<Entry, "gen">): void {
    this.generation++;
    this.entries.set(relPath, { ...entry, gen: this.generation });
    this.folded?.set(relPath.toLowerCase(), relPath);
    this.removedAt.delete(relPath);
  }

  /** Forgets the files without touching them (a named sandbox unloaded: its files stay). */
  unload(): void {
    this.entries.clear();
    this.removedAt.clear();
    this.bytes = 0;
  }

  /** Removes the workspace's home and every file in it. */
  async destroy(): Promise<void> {
    if (this.home) await fs.rm(this.home, { recursive: true, force: true });
    this.home = null;
    this.unload();
  }
}

// Trusted side: a sandbox's files. They live on the host, in a private directory under the OS
// temp dir, and never move: engines get copies and send changes back. Every path from outside
// (API caller, MCP client, engine) goes through `resolve`, which keeps it inside the workspace,
// and every file operation refuses to follow a symlink. A generation counter records when each
// path last changed, so that an interpreter is sent only what changed since it last synced.

import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { FileBlob, FileSync } from "../protocol/messages.js";
import { PolyboxError } from "./errors.js";
import { formatBytes } from "./limits.js";
import { makeTempDir } from "./tmp.js";
import type { FileInfo } from "./types.js";

export const GUEST_ROOT = "/workspace";

/**
 * What a directory costs against the quota: a directory takes a block on the host's disk however
 * empty it is, so ten thousand empty ones are not free.
 */
export const DIR_COST_BYTES = 4096;

const costOf = (e: { type: "file" | "dir"; size: number }) =>
  e.type === "dir" ? DIR_COST_BYTES : e.size;

/**
 * Turns a caller's path into a workspace-relative one (`a/b.txt`), or throws. Accepted: relative
 * paths, and absolute ones under /workspace (the path guests see). `..` may not climb out.
 */
export function resolveWorkspacePath(input: unknown, { allowRoot = false } = {}): string {
  if (typeof input !== "string") {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `path must be a string, got ${input === null ? "null" : typeof input}`,
    );
  }
  if (input.includes("\0")) throw new PolyboxError("INVALID_ARGUMENT", "path contains a NUL byte");
  let rest = input.replace(/\\/g, "/");
  if (rest.startsWith("/")) {
    if (rest !== GUEST_ROOT && !rest.startsWith(`${GUEST_ROOT}/`)) {
      throw new PolyboxError(
        "PATH_OUTSIDE_WORKSPACE",
        `"${input}" is outside the workspace: use a relative path or one under ${GUEST_ROOT}/`,
      );
    }
    rest = rest.slice(GUEST_ROOT.length);
  }
  const parts: string[] = [];
  for (const part of rest.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) {
        throw new PolyboxError(
          "PATH_OUTSIDE_WORKSPACE",
          `"${input}" climbs out of the workspace with ".."`,
        );
      }
      parts.pop();
    } else parts.push(part);
  }
  const rel = parts.join("/");
  if (parts.some((part) => Buffer.byteLength(part) > 255)) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `"${input.slice(0, 80)}…" has a name longer than 255 bytes`,
    );
  }
  if (rel === "" && !allowRoot)
    throw new PolyboxError("INVALID_ARGUMENT", `"${input}" names the workspace root, not a file`);
  return rel;
}

interface Entry {
  type: "file" | "dir";
  size: number;
  mtimeMs: number;
  gen: number;
}

export class Workspace {
  private dir: string | null = null;
  private readonly entries = new Map<string, Entry>();
  private readonly removedAt = new Map<string, number>();
  private bytes = 0;
  generation = 0;

  constructor(private readonly quotaBytes: number) {}

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

  /** The host directory, created on first use so that sandboxes without files cost nothing. */
  async root(): Promise<string> {
    this.dir ??= await makeTempDir("ws");
    return this.dir;
  }

  /**
   * Host path for a relative path, after checking that no existing component is a symlink. A
   * parent this workspace made itself (it never makes links) needs no check, so a path under a
   * known directory costs one join, not a system call per component.
   */
  private async hostPath(rel: string): Promise<string> {
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
      return own;
    }
    let current = root;
    for (const part of rel.split("/").filter(Boolean)) {
      current = path.join(current, part);
      const st = await fs.lstat(current).catch(() => null);
      if (!st) break;
      if (st.isSymbolicLink()) {
        throw new PolyboxError(
          "PATH_OUTSIDE_WORKSPACE",
          `"${rel}" goes through a symbolic link, which is not followed`,
        );
      }
    }
    return path.join(root, rel);
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
      );
    }
    const parent = relPath.includes("/") ? relPath.slice(0, relPath.lastIndexOf("/")) : "";
    if (parent) await this.mkdir(parent);
    const target = await this.hostPath(relPath);
    const handle = await fs.open(
      target,
      C.O_WRONLY | C.O_CREAT | C.O_TRUNC | (C.O_NOFOLLOW ?? 0),
      0o644,
    );
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    this.bytes += data.length - (existing?.size ?? 0);
    this.touch(relPath, { type: "file", size: data.length, mtimeMs: mtimeMs ?? Date.now() });
    if (mtimeMs !== undefined) {
      // Keeping the guest's mtime is a courtesy; a value the host refuses is not worth failing for.
      const t = new Date(mtimeMs);
      await fs.utimes(target, t, t).catch(() => undefined);
    }
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
      await fs.mkdir(await this.hostPath(sub));
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
    await fs.rm(await this.hostPath(relPath), { recursive: true, force: true });
    this.generation++;
    for (const p of gone) {
      const entry = this.entries.get(p);
      if (entry) this.bytes -= costOf(entry);
      this.entries.delete(p);
      this.removedAt.set(p, this.generation);
    }
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
      throw new PolyboxError(
        this.entries.has(relDir) ? "NOT_A_FILE" : "FILE_NOT_FOUND",
        `no directory "${relDir}" in the workspace`,
      );
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
   * leaving what was stored so far.
   */
  async apply(changes: FileSync, deadline = Number.POSITIVE_INFINITY): Promise<string[]> {
    const touched = new Set<string>();
    const inTime = () => {
      if (Date.now() > deadline)
        throw new PolyboxError("TIMEOUT", "storing the run's files took past its deadline");
    };
    for (const r of changes.removed) {
      inTime();
      if (this.entries.has(r)) for (const p of await this.remove(r)) touched.add(p);
    }
    // Parents before children, so that each directory costs one call.
    const dirs = [...changes.dirs].sort((a, b) => a.length - b.length);
    for (const d of dirs) {
      inTime();
      if (!this.entries.has(d)) {
        await this.mkdir(d);
        touched.add(d);
      }
    }
    for (const f of changes.files) {
      inTime();
      if (this.entries.get(f.path)?.type === "dir") await this.remove(f.path);
      await this.write(f.path, f.data, f.mtimeMs);
      touched.add(f.path);
    }
    return [...touched].sort();
  }

  private touch(relPath: string, entry: Omit<Entry, "gen">): void {
    this.generation++;
    this.entries.set(relPath, { ...entry, gen: this.generation });
    this.removedAt.delete(relPath);
  }

  async destroy(): Promise<void> {
    if (this.dir) await fs.rm(this.dir, { recursive: true, force: true });
    this.dir = null;
    this.entries.clear();
    this.removedAt.clear();
    this.bytes = 0;
  }
}

/** The parent of a workspace-relative path ("" at the top). */
function parentOf(relPath: string): string {
  const slash = relPath.lastIndexOf("/");
  return slash < 0 ? "" : relPath.slice(0, slash);
}

// Worker side: the in-memory workspace behind the JavaScript engine's `fs` module. Paths are
// resolved against /workspace and clamped to it: the guest's `fs` sees only the workspace. Sizes
// are counted so that writes past the workspace quota fail with ENOSPC inside the guest.

import { GUEST_WORKSPACE as ROOT } from "../../../protocol/paths.js";
import type { GuestEntry, GuestFs } from "../common/mirror.js";

export class FsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

interface Node {
  type: "file" | "dir";
  data: Uint8Array;
  mtimeMs: number;
}

export class MemFs {
  private readonly nodes = new Map<string, Node>();
  private bytes = 0;
  quotaBytes = Number.POSITIVE_INFINITY;
  /** Set when a guest write was refused for quota, even if the guest caught the error. */
  quotaHit = false;

  /** Empties the workspace (a recycled interpreter starts with none). */
  clear(): void {
    this.nodes.clear();
    this.bytes = 0;
    this.quotaHit = false;
  }

  /** Workspace-relative form of a guest path, or an error if it leaves the workspace. */
  resolve(path: string, cwd = ROOT): string {
    if (typeof path !== "string") throw new FsError("EINVAL", "path must be a string");
    const full = path.startsWith("/") ? path : `${cwd}/${path}`;
    const parts: string[] = [];
    for (const part of full.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (parts.length === 0) throw new FsError("EACCES", `${path} is outside the workspace`);
        parts.pop();
      } else parts.push(part);
    }
    if (parts[0] !== "workspace")
      throw new FsError("EACCES", `${path} is outside the workspace (${ROOT})`);
    return parts.slice(1).join("/");
  }

  private parentOf(rel: string): string {
    const i = rel.lastIndexOf("/");
    return i < 0 ? "" : rel.slice(0, i);
  }

  private requireDir(rel: string, shown: string): void {
    if (rel === "") return;
    const node = this.nodes.get(rel);
    if (!node) throw new FsError("ENOENT", `no such file or directory, '${shown}'`);
    if (node.type !== "dir") throw new FsError("ENOTDIR", `not a directory, '${shown}'`);
  }

  stat(rel: string, shown: string): { type: "file" | "dir"; size: number; mtimeMs: number } {
    if (rel === "") return { type: "dir", size: 0, mtimeMs: 0 };
    const node = this.nodes.get(rel);
    if (!node) throw new FsError("ENOENT", `no such file or directory, '${shown}'`);
    return { type: node.type, size: node.data.length, mtimeMs: node.mtimeMs };
  }

  exists(rel: string): boolean {
    return rel === "" || this.nodes.has(rel);
  }

  read(rel: string, shown: string): Uint8Array {
    const node = this.nodes.get(rel);
    if (!node) throw new FsError("ENOENT", `no such file or directory, '${shown}'`);
    if (node.type === "dir")
      throw new FsError("EISDIR", `illegal operation on a directory, '${shown}'`);
    return node.data;
  }

  write(rel: string, data: Uint8Array, shown: string, mtimeMs = Date.now()): void {
    if (rel === "") throw new FsError("EISDIR", `illegal operation on a directory, '${shown}'`);
    this.requireDir(this.parentOf(rel), shown);
    const old = this.nodes.get(rel);
    if (old?.type === "dir")
      throw new FsError("EISDIR", `illegal operation on a directory, '${shown}'`);
    const next = this.bytes - (old?.data.length ?? 0) + data.length;
    if (next > this.quotaBytes) {
      this.quotaHit = true;
      throw new FsError(
        "ENOSPC",
        `workspace quota exceeded: workspaceQuotaBytes=${this.quotaBytes}, '${shown}'`,
      );
    }
    this.bytes = next;
    this.nodes.set(rel, { type: "file", data, mtimeMs });
  }

  mkdir(rel: string, recursive: boolean, shown: string): void {
    if (rel === "" || this.nodes.get(rel)?.type === "dir") {
      if (recursive) return;
      throw new FsError("EEXIST", `file already exists, mkdir '${shown}'`);
    }
    if (this.nodes.has(rel)) throw new FsError("EEXIST", `file already exists, mkdir '${shown}'`);
    const parent = this.parentOf(rel);
    if (recursive && parent !== "" && !this.nodes.has(parent)) this.mkdir(parent, true, shown);
    this.requireDir(parent, shown);
    this.nodes.set(rel, { type: "dir", data: new Uint8Array(0), mtimeMs: Date.now() });
  }

  readdir(rel: string, shown: string): string[] {
    this.requireDir(rel, shown);
    const prefix = rel === "" ? "" : `${rel}/`;
    const names: string[] = [];
    for (const key of this.nodes.keys()) {
      if (key.startsWith(prefix) && !key.slice(prefix.length).includes("/"))
        names.push(key.slice(prefix.length));
    }
    return names.sort();
  }

  rm(rel: string, recursive: boolean, force: boolean, shown: string): void {
    if (rel === "") throw new FsError("EPERM", `cannot remove the workspace root`);
    const node = this.nodes.get(rel);
    if (!node) {
      if (force) return;
      throw new FsError("ENOENT", `no such file or directory, '${shown}'`);
    }
    if (node.type === "dir") {
      const children = [...this.nodes.keys()].filter((k) => k.startsWith(`${rel}/`));
      if (children.length > 0 && !recursive)
        throw new FsError("ENOTEMPTY", `directory not empty, '${shown}'`);
      for (const child of children) this.drop(child);
    }
    this.drop(rel);
  }

  private drop(rel: string): void {
    const node = this.nodes.get(rel);
    if (!node) return;
    this.bytes -= node.data.length;
    this.nodes.delete(rel);
  }

  /** The mirror's view: the same store, without the guest-facing checks. */
  asGuestFs(): GuestFs {
    return {
      list: () => {
        const out = new Map<string, GuestEntry>();
        for (const [path, node] of this.nodes)
          out.set(path, { type: node.type, size: node.data.length, mtimeMs: node.mtimeMs });
        return out;
      },
      read: (path) => this.read(path, path),
      write: (path, data, mtimeMs) => {
        const parent = this.parentOf(path);
        if (parent) this.mkdir(parent, true, parent);
        const quota = this.quotaBytes;
        this.quotaBytes = Number.POSITIVE_INFINITY; // Files from the trusted side are already counted there.
        try {
          this.write(path, data, path, mtimeMs);
        } finally {
          this.quotaBytes = quota;
        }
      },
      mkdir: (path) => this.mkdir(path, true, path),
      remove: (path) => this.rm(path, true, true, path),
    };
  }
}

// Trusted side: the data directory's content-addressed store. A snapshot's files and captured
// interpreter states are kept once each, under their sha256, however many snapshots hold them;
// a workspace restored from a snapshot gets hard links to them where the file system allows.

import { createHash, randomUUID } from "node:crypto";
import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { PolyboxError } from "../errors.js";
import { exists, sha256File, syncFile } from "./durable.js";

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

export class ObjectStore {
  /** What the objects take on disk (counted against the data directory's quota). */
  bytes = 0;

  /**
   * `dir` holds the objects, `tmp` this process's staging area (same file system); `check`
   * throws if storing that many more bytes would pass the data directory's quota.
   */
  constructor(
    private readonly dir: string,
    private readonly tmp: string,
    private readonly check: (bytes: number) => void,
  ) {}

  /**
   * Stores a file's content as an object (if no object has it yet) and returns its sha256. The
   * file is linked into the store's staging area first, where nobody can change it, and hashed
   * there; a copy where linking fails.
   */
  async ingest(hostPath: string): Promise<string> {
    const staged = this.staging();
    const st = await fs.lstat(hostPath);
    if (!st.isFile()) throw new PolyboxError("NOT_A_FILE", "a snapshot holds regular files only");
    const linked = await fs.link(hostPath, staged).then(
      () => true,
      () => false,
    );
    if (!linked) {
      this.check(st.size);
      await fs.copyFile(hostPath, staged, C.COPYFILE_EXCL);
    }
    try {
      const hash = await sha256File(staged);
      const target = this.path(hash);
      if (await exists(target)) return hash;
      if (linked) this.check(st.size);
      if (!linked) await syncFile(staged);
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(staged, target);
      this.bytes += st.size;
      return hash;
    } finally {
      await fs.rm(staged, { force: true });
    }
  }

  has(hash: string): Promise<boolean> {
    return exists(this.path(hash));
  }

  /** Puts an object's content at `dest`: a hard link, or a copy where the file system refuses. */
  async materialize(hash: string, dest: string, mtimeMs: number): Promise<void> {
    const source = this.path(hash);
    try {
      await fs.link(source, dest);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        throw new PolyboxError(
          "SNAPSHOT_NOT_FOUND",
          "a file of the snapshot is missing from the store",
          { cause: error },
        );
      }
      await fs.copyFile(source, dest, C.COPYFILE_EXCL);
      const t = new Date(mtimeMs);
      await fs.utimes(dest, t, t).catch(() => undefined);
    }
  }

  /**
   * Stores an interpreter's captured state as an object (gzip: a QuickJS heap is mostly empty
   * pages) and returns its hash. Counts against `dataDirQuotaBytes` like a file.
   */
  async storeState(data: Uint8Array): Promise<string> {
    const packed = await gzip(data, { level: 1 });
    const hash = createHash("sha256").update(packed).digest("hex");
    const target = this.path(hash);
    if (await exists(target)) return hash;
    this.check(packed.byteLength);
    const staged = this.staging();
    const handle = await fs.open(staged, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o600);
    try {
      await handle.writeFile(packed);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.rename(staged, target);
    this.bytes += packed.byteLength;
    return hash;
  }

  /** A stored state's bytes, at most `maxBytes` of them (a larger one is not a state we stored). */
  async loadState(hash: string, maxBytes: number): Promise<Uint8Array> {
    const packed = await fs.readFile(this.path(hash)).catch((error: unknown) => {
      throw new PolyboxError(
        "SNAPSHOT_NOT_FOUND",
        "a state of the snapshot is missing from the store",
        {
          cause: error,
        },
      );
    });
    const data = await gunzip(packed, { maxOutputLength: Math.max(1, maxBytes) });
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  /** Removes every object not in `wanted` (by hash). */
  async sweep(wanted: ReadonlySet<string>): Promise<void> {
    for (const ab of await fs.readdir(this.dir).catch(() => [])) {
      for (const rest of await fs.readdir(path.join(this.dir, ab)).catch(() => [])) {
        if (wanted.has(ab + rest)) continue;
        const file = path.join(this.dir, ab, rest);
        const st = await fs.lstat(file).catch(() => null);
        await fs.rm(file, { force: true });
        if (st) this.bytes -= st.size;
      }
    }
  }

  private path(hash: string): string {
    return path.join(this.dir, hash.slice(0, 2), hash.slice(2));
  }

  private staging(): string {
    return path.join(this.tmp, randomUUID());
  }
}

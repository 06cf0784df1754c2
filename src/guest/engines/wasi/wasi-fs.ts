// Worker side: what a WASI guest sees of the world, built on @bjorn3/browser_wasi_shim (WASI
// preview 1 in JavaScript over an in-memory file system). The guest gets exactly these file
// descriptors: stdin (the request's text), stdout and stderr (into the run's OutputSink), and two
// preopened in-memory directories, /workspace (the sandbox's files, mirrored to the trusted side)
// and /tmp (scratch, never leaves the worker). There is no host directory behind either, no
// socket (the shim's sock_* calls trap) and no symlink (path_symlink answers ENOTSUP); `..` past a
// preopen's root answers ENOTCAPABLE.

import { createHash } from "node:crypto";
import {
  Directory,
  Fd,
  File,
  type Inode,
  OpenFile,
  PreopenDirectory,
  wasi,
} from "@bjorn3/browser_wasi_shim";
import type { GuestEntry, GuestFs } from "../common/mirror.js";
import type { OutputSink, StreamName } from "../common/output.js";

/** Where the output of the run in progress goes; null between runs. */
export interface OutputTarget {
  output: OutputSink;
  /** Once true (output cap crossed), writes fail with EIO so the guest stops writing. */
  readonly stopRequested: boolean;
}

/** Thrown out of a write past the output cap to unwind a guest that would ignore EIO. */
export class OutputStopped extends Error {}

/**
 * stdout/stderr: decoded as UTF-8 and handed to the run's OutputSink. Past the output cap a
 * write fails: with EIO (Ruby, whose interpreter must survive the run, raises Errno::EIO), or by
 * unwinding the guest (`trap`, for modules whose instance ends with the run anyway).
 */
class OutputFd extends Fd {
  private decoder = new TextDecoder("utf-8");

  constructor(
    private readonly stream: StreamName,
    private readonly target: () => OutputTarget | null,
    private readonly trapOnStop: boolean,
  ) {
    super();
  }

  override fd_write(data: Uint8Array): { ret: number; nwritten: number } {
    const t = this.target();
    if (t?.stopRequested && this.trapOnStop) throw new OutputStopped("output limit reached");
    if (!t || t.stopRequested) return { ret: wasi.ERRNO_IO, nwritten: 0 };
    t.output.write(this.stream, this.decoder.decode(data, { stream: true }));
    return { ret: wasi.ERRNO_SUCCESS, nwritten: data.byteLength };
  }

  override fd_fdstat_get(): { ret: number; fdstat: wasi.Fdstat } {
    const fdstat = new wasi.Fdstat(wasi.FILETYPE_CHARACTER_DEVICE, 0);
    fdstat.fs_rights_base = BigInt(wasi.RIGHTS_FD_WRITE);
    return { ret: wasi.ERRNO_SUCCESS, fdstat };
  }

  override fd_filestat_get(): { ret: number; filestat: wasi.Filestat } {
    return {
      ret: wasi.ERRNO_SUCCESS,
      filestat: new wasi.Filestat(0n, wasi.FILETYPE_CHARACTER_DEVICE, 0n),
    };
  }
}

const encoder = new TextEncoder();

function digest(data: Uint8Array): string {
  return createHash("sha1").update(data).digest("base64");
}

/**
 * The in-memory /workspace and /tmp of one interpreter, and the `GuestFs` view the workspace
 * mirror uses. The shim keeps no modification times, so a file's mtime is the trusted side's
 * until its content changes, and the time the change was seen after that.
 */
export class WasiFiles {
  readonly workspace = new Map<string, Inode>();
  private readonly scratch = new Map<string, Inode>();
  private readonly stamps = new Map<string, { hash: string; mtimeMs: number }>();

  /** The guest's descriptors 0–4 for one run (or, for Ruby, for the interpreter's life). */
  fds(stdin: string, target: () => OutputTarget | null, trapOnStop = false): Fd[] {
    return [
      new OpenFile(new File(encoder.encode(stdin), { readonly: true })),
      new OutputFd("stdout", target, trapOnStop),
      new OutputFd("stderr", target, trapOnStop),
      new PreopenDirectory("/workspace", this.workspace),
      new PreopenDirectory("/tmp", this.scratch),
    ];
  }

  static stdin(text: string): Fd {
    return new OpenFile(new File(encoder.encode(text), { readonly: true }));
  }

  /** A workspace file's bytes, or null if `path` is not a file. */
  readFile(path: string): Uint8Array | null {
    const entry = this.lookup(path.split("/").filter((p) => p !== "" && p !== "."));
    return entry instanceof File ? entry.data : null;
  }

  private lookup(parts: string[]): Inode | undefined {
    let dir: Map<string, Inode> = this.workspace;
    let entry: Inode | undefined;
    for (const [i, part] of parts.entries()) {
      entry = dir.get(part);
      if (i < parts.length - 1) {
        if (!(entry instanceof Directory)) return undefined;
        dir = entry.contents;
      }
    }
    return entry;
  }

  private dirFor(parts: string[]): Map<string, Inode> {
    let dir = this.workspace;
    for (const part of parts) {
      const found = dir.get(part);
      const next = found instanceof Directory ? found : new Directory(new Map());
      if (next !== found) dir.set(part, next);
      dir = next.contents;
    }
    return dir;
  }

  guestFs(): GuestFs {
    const split = (path: string) => path.split("/");
    return {
      list: () => {
        const out = new Map<string, GuestEntry>();
        const seen = new Set<string>();
        const walk = (dir: Map<string, Inode>, prefix: string) => {
          for (const [name, entry] of dir) {
            const path = prefix ? `${prefix}/${name}` : name;
            if (entry instanceof Directory) {
              out.set(path, { type: "dir", size: 0, mtimeMs: 0 });
              walk(entry.contents, path);
            } else if (entry instanceof File) {
              const hash = digest(entry.data);
              let stamp = this.stamps.get(path);
              if (stamp?.hash !== hash) {
                stamp = { hash, mtimeMs: Date.now() };
                this.stamps.set(path, stamp);
              }
              seen.add(path);
              out.set(path, { type: "file", size: entry.data.byteLength, mtimeMs: stamp.mtimeMs });
            }
          }
        };
        walk(this.workspace, "");
        for (const path of this.stamps.keys()) if (!seen.has(path)) this.stamps.delete(path);
        return out;
      },
      read: (path) => this.readFile(path) ?? new Uint8Array(),
      write: (path, data, mtimeMs) => {
        const parts = split(path);
        const name = parts.pop()!;
        this.dirFor(parts).set(name, new File(data));
        this.stamps.set(path, { hash: digest(data), mtimeMs });
      },
      mkdir: (path) => {
        this.dirFor(split(path));
      },
      remove: (path) => {
        const parts = split(path);
        const name = parts.pop()!;
        if (parts.length === 0) this.workspace.delete(name);
        else {
          const parent = this.lookup(parts);
          if (parent instanceof Directory) parent.contents.delete(name);
        }
      },
    };
  }
}

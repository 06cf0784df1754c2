// Worker side: the guest's file operations, as the JavaScript engine's host functions (host.ts)
// carry them, done on the in-memory workspace (memfs.ts): paths resolve inside /workspace, and
// failures are FsErrors the prelude turns into Node's errors.

import { FsError, type MemFs } from "./memfs.js";

export function fsOp(fs: MemFs, op: string, args: unknown[]): unknown {
  const path = String(args[0]);
  const rel = fs.resolve(path);
  switch (op) {
    case "readText":
      return decoder.decode(fs.read(rel, path));
    case "writeText": {
      writeFile(fs, rel, encoder.encode(String(args[1])), Boolean(args[2]), path);
      return null;
    }
    case "exists":
      return fs.exists(rel);
    case "readdir":
      return fs.readdir(rel, path);
    case "mkdir":
      fs.mkdir(rel, Boolean(args[1]), path);
      return null;
    case "rm":
      fs.rm(rel, Boolean(args[1]), Boolean(args[2]), path);
      return null;
    case "unlink":
      if (fs.stat(rel, path).type === "dir")
        throw new FsError("EISDIR", `illegal operation on a directory, unlink '${path}'`);
      fs.rm(rel, false, false, path);
      return null;
    case "stat":
      return fs.stat(rel, path);
    case "rename": {
      const to = String(args[1]);
      const data = fs.read(rel, path);
      fs.write(fs.resolve(to), data, to);
      fs.rm(rel, false, false, path);
      return null;
    }
    default:
      throw new FsError("ENOSYS", `fs operation ${op} is not supported`);
  }
}

/** Writes `bytes` at `rel`, after what the file holds if `append` and it exists, else over it. */
export function writeFile(
  fs: MemFs,
  rel: string,
  bytes: Uint8Array,
  append: boolean,
  path: string,
): void {
  const prior = append && fs.exists(rel) ? fs.read(rel, path) : new Uint8Array(0);
  const next = new Uint8Array(prior.length + bytes.length);
  next.set(prior);
  next.set(bytes, prior.length);
  fs.write(rel, next, path);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Trusted side: reading host files on a client's behalf (upload_file), the one place where a
// client names a host path. Only paths under the operator's --allow-read grants are read. The
// check runs twice: on the path as written (so a denied path is refused without touching the
// disk, which would tell the client whether it exists), then on its realpath, so a symlink inside
// an allowed directory cannot point outside it. The final open refuses to follow a symlink.
// Trust: the grants come from the operator; the path comes from the client and is hostile.

import { constants as C, realpathSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { PolyboxError } from "../errors.js";
import { formatBytes } from "../limits.js";
import { type LogFn, silentLog } from "../log.js";

export class HostFiles {
  /** Each grant as written (absolute) and as its realpath, when it exists. */
  private readonly roots: { lexical: string; real: string | null }[];

  constructor(
    readonly grants: readonly string[],
    log: LogFn = silentLog,
  ) {
    this.roots = grants.map((grant) => {
      const lexical = path.resolve(grant);
      let real: string | null = null;
      try {
        real = realpathSync(lexical);
      } catch {
        log("warn", `read grant ${lexical} does not exist; nothing under it can be uploaded`);
      }
      return { lexical, real };
    });
  }

  basename(localPath: string): string {
    return typeof localPath === "string" ? path.basename(localPath) : "";
  }

  /** The bytes of a host file under a grant, refusing files bigger than `maxBytes`. */
  async read(localPath: string, maxBytes: number): Promise<Uint8Array> {
    if (typeof localPath !== "string" || localPath === "" || localPath.includes("\0")) {
      throw new PolyboxError("INVALID_ARGUMENT", "local_path must be a non-empty host path");
    }
    const wanted = path.resolve(localPath);
    if (
      !this.roots.some(
        (r) => r.real !== null && (within(r.lexical, wanted) || within(r.real, wanted)),
      )
    ) {
      throw this.denied(wanted);
    }
    let real: string;
    try {
      real = await fs.realpath(wanted);
    } catch {
      throw new PolyboxError("FILE_NOT_FOUND", `no host file at ${wanted}`);
    }
    if (!this.roots.some((r) => r.real !== null && within(r.real, real))) {
      throw this.denied(wanted, ` (it resolves to ${real}, outside every granted path)`);
    }
    const handle = await fs
      .open(real, C.O_RDONLY | (C.O_NOFOLLOW ?? 0))
      .catch((e: NodeJS.ErrnoException) => {
        throw new PolyboxError(
          "FILE_NOT_FOUND",
          `cannot open host file ${wanted}: ${e.code ?? e.message}`,
        );
      });
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new PolyboxError("NOT_A_FILE", `${wanted} is not a regular file`);
      if (stat.size > maxBytes) {
        throw new PolyboxError(
          "QUOTA_EXCEEDED",
          `${wanted} is ${formatBytes(stat.size)}, more than the sandbox's workspace quota (${formatBytes(maxBytes)})`,
        );
      }
      return new Uint8Array(await handle.readFile());
    } finally {
      await handle.close();
    }
  }

  private denied(wanted: string, why = ""): PolyboxError {
    const granted = this.roots.map((r) => r.lexical);
    return new PolyboxError(
      "PERMISSION_DENIED",
      granted.length === 0
        ? `may not read ${wanted}: no host paths are granted for reading (permissions.read)`
        : `may not read ${wanted}${why}: only files under the granted read paths (permissions.read) are allowed (${granted.join(", ")})`,
      { details: { limit: "permissions.read" } },
    );
  }
}

function within(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

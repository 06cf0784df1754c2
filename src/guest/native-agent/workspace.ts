// Untrusted side, native mode: the sandbox's private workspace copy, the tmpfs at /workspace
// the size of the quota, kept in step with the trusted side by a WorkspaceMirror over the disk.
// Names are read as bytes, so a guest's file name that is not UTF-8 still names its file.

import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { GUEST_WORKSPACE as WORKSPACE } from "../../protocol/paths.js";
import { type GuestEntry, type GuestFs, WorkspaceMirror } from "../engines/common/mirror.js";

function diskFs(root: string): GuestFs {
  const abs = (p: string) => path.join(root, p);
  return {
    list() {
      const out = new Map<string, GuestEntry>();
      // Names are read as bytes: a guest's file name need not be UTF-8, and a name decoded with
      // replacement characters names no file.
      const walk = (dir: Buffer, prefix: string) => {
        for (const raw of readdirSync(dir, { encoding: "buffer" })) {
          const name = nameOf(raw);
          const rel = prefix ? `${prefix}/${name}` : name;
          const full = Buffer.concat([dir, SLASH, raw]);
          const st = lstatSync(full);
          if (st.isDirectory()) {
            out.set(rel, { type: "dir", size: 0, mtimeMs: st.mtimeMs });
            walk(full, rel);
          } else if (st.isFile()) {
            out.set(rel, { type: "file", size: st.size, mtimeMs: st.mtimeMs });
          }
        }
      };
      walk(Buffer.from(root), "");
      return out;
    },
    read: (p) => readFileSync(abs(p)),
    write(p, data, mtimeMs) {
      const full = abs(p);
      mkdirSync(path.dirname(full), { recursive: true });
      // Never write through whatever the guest left at this path (a link, say).
      rmSync(full, { force: true, recursive: true });
      writeFileSync(full, data);
      utimesSync(full, mtimeMs / 1000, mtimeMs / 1000);
    },
    mkdir: (p) => void mkdirSync(abs(p), { recursive: true }),
    remove: (p) => rmSync(abs(p), { force: true, recursive: true }),
  };
}

const SLASH = Buffer.from("/");
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A file name's bytes as a string: as UTF-8 when they are, else with each byte from 0x80 up as a
 * lone surrogate U+DC80–U+DCFF (Python's surrogateescape). The trusted side leaves a name with a
 * surrogate out of the workspace, with a note that shows those bytes.
 */
function nameOf(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    let name = "";
    for (const b of raw) name += String.fromCharCode(b < 0x80 ? b : 0xdc00 + b);
    return name;
  }
}

export const mirror = new WorkspaceMirror(diskFs(WORKSPACE));

// Worker side: the tar archive format as GNU tar writes and reads it: GNU's default ("gnu": ustar
// headers with the "ustar  " magic and ././@LongLink entries for names over 100 bytes), pax
// headers read, and gzip inflated through fflate with a bound on its output.

import { Gunzip } from "fflate";

const BLOCK = 512;
/** GNU tar writes archives in records of 20 blocks. */
const RECORD = 20 * BLOCK;

/** One member of an archive. */
export interface Member {
  name: string;
  /** "0" file, "1" hard link, "2" symbolic link, "5" directory, others as the header says. */
  type: string;
  mode: number;
  uid: number;
  gid: number;
  user: string;
  group: string;
  mtime: number;
  link: string;
  data: Uint8Array;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function put(h: Uint8Array, at: number, len: number, text: string): void {
  const bytes = enc.encode(text);
  h.set(bytes.subarray(0, len), at);
}
const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, "0")}\0`;

function header(m: Member, name: string, link: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  put(h, 0, 100, name);
  put(h, 100, 8, octal(m.mode & 0o7777, 8));
  put(h, 108, 8, octal(m.uid, 8));
  put(h, 116, 8, octal(m.gid, 8));
  put(h, 124, 12, octal(size, 12));
  put(h, 136, 12, octal(Math.max(0, Math.floor(m.mtime)), 12));
  put(h, 148, 8, "        ");
  put(h, 156, 1, m.type);
  put(h, 157, 100, link);
  put(h, 257, 8, "ustar  \0");
  put(h, 265, 32, m.user);
  put(h, 297, 32, m.group);
  let sum = 0;
  for (const b of h) sum += b;
  put(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / BLOCK) * BLOCK);
  out.set(data);
  return out;
}

/** A GNU-format archive of the members, padded to whole records as GNU tar pads it. */
export function writeTar(members: Member[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const m of members) {
    for (const [field, type] of [
      [m.link, "K"],
      [m.name, "L"],
    ] as const) {
      const bytes = enc.encode(field);
      if (bytes.length <= 100) continue;
      const long: Member = { ...m, type, mode: 0o644, uid: 0, gid: 0, user: "root", group: "root" };
      const body = new Uint8Array(bytes.length + 1);
      body.set(bytes);
      parts.push(header({ ...long, mtime: 0 }, "././@LongLink", "", body.length), padded(body));
    }
    const size = m.type === "0" ? m.data.length : 0;
    parts.push(header(m, m.name, m.link, size));
    if (size) parts.push(padded(m.data));
  }
  const length = parts.reduce((n, p) => n + p.length, 0) + 2 * BLOCK;
  const out = new Uint8Array(Math.ceil(length / RECORD) * RECORD);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const text = (b: Uint8Array, at: number, len: number) => {
  const field = b.subarray(at, at + len);
  const end = field.indexOf(0);
  return dec.decode(end < 0 ? field : field.subarray(0, end));
};

/** A numeric field: octal digits, or GNU's base-256 when the high bit of the first byte is set. */
function number(b: Uint8Array, at: number, len: number): number {
  if (b[at]! & 0x80) {
    let n = b[at]! & 0x7f;
    for (let k = 1; k < len; k++) n = n * 256 + b[at + k]!;
    return n;
  }
  const digits = text(b, at, len).trim();
  return digits ? Number.parseInt(digits, 8) : 0;
}

function checksumOk(h: Uint8Array): boolean {
  let sum = 0;
  for (let k = 0; k < BLOCK; k++) sum += k >= 148 && k < 156 ? 32 : h[k]!;
  return sum === number(h, 148, 8);
}

export class NotTar extends Error {}

/** The members of an archive: ustar, GNU (long names) and pax (path, linkpath, size) headers. */
export function readTar(archive: Uint8Array): Member[] {
  const members: Member[] = [];
  if (archive.length < BLOCK) throw new NotTar();
  let at = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax: Record<string, string> = {};
  while (at + BLOCK <= archive.length) {
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    if (!checksumOk(h)) {
      if (members.length === 0 && at === 0) throw new NotTar();
      throw new NotTar("Skipping to next header");
    }
    const type = String.fromCharCode(h[156]!) === "\0" ? "0" : String.fromCharCode(h[156]!);
    const size = pax.size !== undefined ? Number(pax.size) : number(h, 124, 12);
    const body = archive.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "L" || type === "K") {
      const value = text(body, 0, body.length);
      if (type === "L") longName = value;
      else longLink = value;
      continue;
    }
    if (type === "x" || type === "g") {
      const fields: Record<string, string> = {};
      let k = 0;
      const all = dec.decode(body);
      while (k < all.length) {
        const space = all.indexOf(" ", k);
        const len = Number.parseInt(all.slice(k, space), 10);
        if (!(len > 0)) break;
        const record = all.slice(space + 1, k + len - 1);
        const eq = record.indexOf("=");
        fields[record.slice(0, eq)] = record.slice(eq + 1);
        k += len;
      }
      if (type === "x") pax = fields;
      continue;
    }
    const prefix = text(h, 257, 6) === "ustar" ? text(h, 345, 155) : "";
    let name = pax.path ?? longName ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    if (type === "5" && !name.endsWith("/")) name += "/";
    members.push({
      name,
      type,
      mode: number(h, 100, 8),
      uid: number(h, 108, 8),
      gid: number(h, 116, 8),
      user: text(h, 265, 32),
      group: text(h, 297, 32),
      mtime: pax.mtime !== undefined ? Number(pax.mtime) : number(h, 136, 12),
      link: pax.linkpath ?? longLink ?? text(h, 157, 100),
      data: type === "0" || type === "7" ? body : new Uint8Array(0),
    });
    longName = longLink = undefined;
    pax = {};
  }
  return members;
}

/** gzip's bytes inflated, refusing more than `limit` bytes of output (a gzip bomb). */
export function gunzip(data: Uint8Array, limit: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const g = new Gunzip((chunk) => {
    total += chunk.length;
    if (total > limit) throw new RangeError("too large");
    chunks.push(chunk);
  });
  g.push(data, true);
  return Buffer.concat(chunks, total);
}

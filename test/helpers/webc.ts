// Writes WEBC containers (the Wasmer registry's package format) for tests: versions 2 and 3 of
// the format, which the `webc` crate inside @wasmer/sdk 0.16 reads (webc 12). No writer for it
// is published for JavaScript, and the sdk cannot serialize a package, so the tests build their
// packages here from the format's description in the crate (`v2::Tag` and its layouts, and v3's
// writer: per-section sha256, timestamps and hashes in volume headers, see volumeParts):
//
//   "\0webc" "002" | "003"                      magic and version
//   sections, each: tag (u8), length (u64 LE), value
//     Index    (2): CBOR { manifest, atoms, volumes: {name: entry}, signature } + padding,
//                   each entry { span: { start, len } (from the file's start), checksum }
//     Manifest (1): CBOR manifest (package annotations, atoms, commands, entrypoint)
//     Atoms    (3): volume header length, header, data length, data
//     Volume   (4): name length, name, then as Atoms
//   volume header: a Directory (30): length, entries (offset in the header, name length, name);
//   a File (31): data start, data end, sha256 of the bytes.
//
// Checksums and signatures are CBOR { tag, value } with the tag's kebab-case name.
import { createHash } from "node:crypto";

// ---- a minimal CBOR encoder (RFC 8949): what the index and manifest need -------------------
type Cbor = number | string | Uint8Array | boolean | null | Cbor[] | { [key: string]: Cbor };

function head(major: number, n: number): number[] {
  const m = major << 5;
  if (n < 24) return [m | n];
  if (n < 0x100) return [m | 24, n];
  if (n < 0x10000) return [m | 25, n >> 8, n & 0xff];
  if (n < 0x1_0000_0000)
    return [m | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  const big = BigInt(n);
  return [m | 27, ...[56, 48, 40, 32, 24, 16, 8, 0].map((s) => Number((big >> BigInt(s)) & 0xffn))];
}

export function cbor(value: Cbor): Uint8Array {
  const out: number[] = [];
  const put = (v: Cbor): void => {
    if (v === null) out.push(0xf6);
    else if (v === true) out.push(0xf5);
    else if (v === false) out.push(0xf4);
    else if (typeof v === "number") {
      if (!Number.isSafeInteger(v) || v < 0)
        throw new Error(`cbor: ${v} is not an unsigned integer`);
      out.push(...head(0, v));
    } else if (typeof v === "string") {
      const bytes = new TextEncoder().encode(v);
      out.push(...head(3, bytes.length), ...bytes);
    } else if (v instanceof Uint8Array) {
      out.push(...head(2, v.length));
      for (const b of v) out.push(b);
    } else if (Array.isArray(v)) {
      out.push(...head(4, v.length));
      for (const item of v) put(item);
    } else {
      const entries = Object.entries(v);
      out.push(...head(5, entries.length));
      for (const [k, item] of entries) {
        put(k);
        put(item);
      }
    }
  };
  put(value);
  return Uint8Array.from(out);
}

// ---- the container ---------------------------------------------------------------------
const TAG = { manifest: 1, index: 2, atoms: 3, volume: 4, directory: 30, file: 31 } as const;
const sha256 = (data: Uint8Array) => new Uint8Array(createHash("sha256").update(data).digest());

function u64(n: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A directory tree: a file is its bytes, a directory an object of entries. */
export interface Tree {
  [name: string]: Uint8Array | Tree;
}

/** Version 3 adds timestamps (accessed, modified, created: u64 each; zero here) and hashes. */
const TIMESTAMPS = new Uint8Array(24);

/**
 * A volume's header and data sections for `tree`. v3: a directory is tag, length (of what
 * follows it), timestamps, sha256 of its entries' hashes, entries (offset, hash, name length,
 * name); a file is tag, start, end, sha256, timestamps.
 */
function volumeParts(tree: Tree, v3: boolean): { header: Uint8Array; data: Uint8Array } {
  const header: number[] = [];
  const data: Uint8Array[] = [];
  let dataLength = 0;
  const put = (at: number, bytes: Uint8Array) => header.splice(at, bytes.length, ...bytes);
  const directory = (dir: Tree): { at: number; hash: Uint8Array } => {
    const start = header.length;
    header.push(TAG.directory, ...u64(0));
    const hashAt = start + 9 + TIMESTAMPS.length;
    if (v3) header.push(...TIMESTAMPS, ...new Uint8Array(32));
    const names = Object.keys(dir).sort();
    const offsets = new Map<string, number>();
    for (const name of names) {
      const bytes = new TextEncoder().encode(name);
      offsets.set(name, header.length);
      header.push(...u64(0), ...(v3 ? new Uint8Array(32) : []), ...u64(bytes.length), ...bytes);
    }
    put(start + 1, u64(header.length - start - 9));
    const hashes: Uint8Array[] = [];
    for (const name of names) {
      const entry = dir[name]!;
      const child = entry instanceof Uint8Array ? file(entry) : directory(entry);
      put(offsets.get(name)!, u64(child.at));
      if (v3) put(offsets.get(name)! + 8, child.hash);
      hashes.push(child.hash);
    }
    const hash = sha256(concat(hashes));
    if (v3) put(hashAt, hash);
    return { at: start, hash };
  };
  const file = (bytes: Uint8Array): { at: number; hash: Uint8Array } => {
    const start = header.length;
    const hash = sha256(bytes);
    header.push(TAG.file, ...u64(dataLength), ...u64(dataLength + bytes.length), ...hash);
    if (v3) header.push(...TIMESTAMPS);
    data.push(bytes);
    dataLength += bytes.length;
    return { at: start, hash };
  };
  directory(tree);
  return { header: Uint8Array.from(header), data: concat(data) };
}

/** A section: tag, [v3, all but the index: sha256 of the value], length, value. */
function section(tag: number, value: Uint8Array, v3: boolean): Uint8Array {
  const hash = v3 && tag !== TAG.index ? sha256(value) : new Uint8Array(0);
  return concat([Uint8Array.of(tag), hash, u64(value.length), value]);
}

export interface WebcCommand {
  /** The atom (module) the command runs. */
  atom: string;
  /** Arguments given before the caller's. */
  mainArgs?: string[];
}

export interface WebcPackage {
  /** `namespace/name`. */
  name: string;
  version: string;
  /** WebAssembly modules by atom name. */
  atoms: Record<string, Uint8Array>;
  commands: Record<string, WebcCommand>;
  entrypoint?: string;
}

/** The manifest the `webc` crate reads: `metadata::Manifest` with WASI runner annotations. */
function manifest(pkg: WebcPackage): Cbor {
  const atoms: Record<string, Cbor> = {};
  for (const [name, bytes] of Object.entries(pkg.atoms))
    atoms[name] = {
      kind: "https://webc.org/kind/wasm",
      signature: `sha256:${Buffer.from(sha256(bytes)).toString("base64")}`,
    };
  const commands: Record<string, Cbor> = {};
  for (const [name, c] of Object.entries(pkg.commands))
    commands[name] = {
      runner: "https://webc.org/runner/wasi",
      annotations: {
        wasi: { atom: c.atom, ...(c.mainArgs ? { "main-args": c.mainArgs } : {}) },
      },
    };
  const out: Record<string, Cbor> = {
    package: {
      wapm: { name: pkg.name, version: pkg.version, description: `${pkg.name} (test package)` },
    },
    atoms,
    commands,
  };
  if (pkg.entrypoint) out.entrypoint = pkg.entrypoint;
  return out;
}

/**
 * The `.webc` bytes of `pkg` (no signature, sha256 section checksums), in format version 2
 * (default) or 3.
 */
export function encodeWebc(pkg: WebcPackage, version: 2 | 3 = 2): Uint8Array {
  const v3 = version === 3;
  // One empty volume: the package's own files (none here), which readers expect to find.
  const volumes: [string, Tree][] = [["atom", {}]];
  const manifestValue = cbor(manifest(pkg));
  const manifestSection = section(TAG.manifest, manifestValue, v3);
  const atomParts = volumeParts(pkg.atoms, v3);
  const atomsValue = concat([
    u64(atomParts.header.length),
    atomParts.header,
    u64(atomParts.data.length),
    atomParts.data,
  ]);
  const atomsSection = section(TAG.atoms, atomsValue, v3);
  const volumeSections = volumes.map(([name, tree]) => {
    const parts = volumeParts(tree, v3);
    const nameBytes = new TextEncoder().encode(name);
    const value = concat([
      u64(nameBytes.length),
      nameBytes,
      u64(parts.header.length),
      parts.header,
      u64(parts.data.length),
      parts.data,
    ]);
    return { name, value, bytes: section(TAG.volume, value, v3) };
  });
  const values = new Map<Uint8Array, Uint8Array>([
    [manifestSection, manifestValue],
    [atomsSection, atomsValue],
    ...volumeSections.map((s) => [s.bytes, s.value] as [Uint8Array, Uint8Array]),
  ]);
  const checksum = (s: Uint8Array) => ({ tag: "checksum-sha256", value: sha256(values.get(s)!) });
  const index = (base: number): Uint8Array => {
    let at = base;
    const entry = (s: Uint8Array) => {
      const e = { span: { start: at, len: s.length }, checksum: checksum(s) };
      at += s.length;
      return e;
    };
    const m = entry(manifestSection);
    const a = entry(atomsSection);
    const v: Record<string, Cbor> = {};
    for (const s of volumeSections) v[s.name] = entry(s.bytes);
    return cbor({
      manifest: m,
      atoms: a,
      volumes: v,
      signature: { tag: "signature-none", value: new Uint8Array(0) },
    });
  };
  // "\0webc" and "002" or "003".
  const magic = Uint8Array.of(0x00, 0x77, 0x65, 0x62, 0x63, 0x30, 0x30, 0x30 + version);
  // The index names offsets past itself: size it with room to spare, then pad it to that size.
  const room = index(0).length + 64;
  const offset = magic.length + 9 + room;
  const encoded = index(offset);
  if (encoded.length > room) throw new Error("webc: index outgrew its room");
  const padded = new Uint8Array(room);
  padded.set(encoded);
  return concat([
    magic,
    section(TAG.index, padded, v3),
    manifestSection,
    atomsSection,
    ...volumeSections.map((s) => s.bytes),
  ]);
}

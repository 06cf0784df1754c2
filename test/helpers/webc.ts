// Writes WEBC containers (the Wasmer registry's package format) for tests: version 2 of the
// format, which the `webc` crate inside @wasmer/sdk 0.16 reads (webc 12). No writer for it is
// published for JavaScript, and the sdk cannot serialize a package, so the tests build their
// packages here from the format's description in the crate (`v2::Tag` and its layouts):
//
//   "\0webc" "002"                              magic and version
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

/** A volume's header and data sections for `tree`. */
function volumeParts(tree: Tree): { header: Uint8Array; data: Uint8Array } {
  const header: number[] = [];
  const data: Uint8Array[] = [];
  let dataLength = 0;
  const patch = (at: number, n: number) => header.splice(at, 8, ...u64(n));
  const directory = (dir: Tree): number => {
    const start = header.length;
    header.push(TAG.directory, ...u64(0));
    const names = Object.keys(dir).sort();
    const offsets = new Map<string, number>();
    for (const name of names) {
      const bytes = new TextEncoder().encode(name);
      offsets.set(name, header.length);
      header.push(...u64(0), ...u64(bytes.length), ...bytes);
    }
    patch(start + 1, header.length - start - 9);
    for (const name of names) {
      const entry = dir[name]!;
      const at = entry instanceof Uint8Array ? file(entry) : directory(entry);
      patch(offsets.get(name)!, at);
    }
    return start;
  };
  const file = (bytes: Uint8Array): number => {
    const start = header.length;
    header.push(TAG.file, ...u64(dataLength), ...u64(dataLength + bytes.length), ...sha256(bytes));
    data.push(bytes);
    dataLength += bytes.length;
    return start;
  };
  directory(tree);
  return { header: Uint8Array.from(header), data: concat(data) };
}

function section(tag: number, value: Uint8Array): Uint8Array {
  return concat([Uint8Array.of(tag), u64(value.length), value]);
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

/** The `.webc` bytes of `pkg` (format v2, no signature, sha256 section checksums). */
export function encodeWebc(pkg: WebcPackage): Uint8Array {
  // One empty volume: the package's own files (none here), which readers expect to find.
  const volumes: [string, Tree][] = [["atom", {}]];
  const manifestSection = section(TAG.manifest, cbor(manifest(pkg)));
  const atomParts = volumeParts(pkg.atoms);
  const atomsSection = section(
    TAG.atoms,
    concat([
      u64(atomParts.header.length),
      atomParts.header,
      u64(atomParts.data.length),
      atomParts.data,
    ]),
  );
  const volumeSections = volumes.map(([name, tree]) => {
    const parts = volumeParts(tree);
    const nameBytes = new TextEncoder().encode(name);
    return {
      name,
      bytes: section(
        TAG.volume,
        concat([
          u64(nameBytes.length),
          nameBytes,
          u64(parts.header.length),
          parts.header,
          u64(parts.data.length),
          parts.data,
        ]),
      ),
    };
  });
  const checksum = (s: Uint8Array) => ({ tag: "checksum-sha256", value: sha256(s.subarray(9)) });
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
  const magic = Uint8Array.of(0x00, 0x77, 0x65, 0x62, 0x63, 0x30, 0x30, 0x32); // "\0webc002"
  // The index names offsets past itself: size it with room to spare, then pad it to that size.
  const room = index(0).length + 64;
  const offset = magic.length + 9 + room;
  const encoded = index(offset);
  if (encoded.length > room) throw new Error("webc: index outgrew its room");
  const padded = new Uint8Array(room);
  padded.set(encoded);
  return concat([
    magic,
    section(TAG.index, padded),
    manifestSection,
    atomsSection,
    ...volumeSections.map((s) => s.bytes),
  ]);
}

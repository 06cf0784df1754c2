// Worker side: the WebAssembly modules ("atoms") of a WEBC package, read so that the wasix
// engine checks their imports before the sdk loads the package, as it checks a workspace module's
// (a package is no more trusted than the code a guest writes). Versions 2 and 3 of the format,
// the ones @wasmer/sdk 0.16 reads; no CBOR is needed, since the sections follow each other:
//
//   "\0webc" + "002" | "003"
//   sections: tag (u8), [v3, every tag but the index: sha256 (32 bytes)], length (u64 LE), value
//   the atoms section (tag 3): header length (u64), header, data length (u64), data
//   header: a directory (tag 30): length (u64), [v3: timestamps (24), sha256 (32)], entries,
//     each: offset in the header (u64), [v3: sha256 (32)], name length (u64), name;
//   a file (tag 31): data start (u64), data end (u64), ... (what follows is not needed here).
//
// Every offset and length is bounds-checked: the bytes are whatever the registry served.

const MAGIC = [0x00, 0x77, 0x65, 0x62, 0x63]; // "\0webc"
const TAG_INDEX = 2;
const TAG_ATOMS = 3;
const TAG_DIRECTORY = 30;
const TAG_FILE = 31;
/** Atoms read at most (a package has a handful). */
const MAX_ATOMS = 1024;

export class WebcFormatError extends Error {}

function fail(why: string): never {
  throw new WebcFormatError(`not a WEBC file this engine reads: ${why}`);
}

class Reader {
  private readonly view: DataView;
  constructor(
    readonly bytes: Uint8Array,
    readonly start = 0,
    readonly end = bytes.length,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8(at: number): number {
    if (at < this.start || at + 1 > this.end) fail("a field lies outside its section");
    return this.bytes[at]!;
  }
  u64(at: number): number {
    if (at < this.start || at + 8 > this.end) fail("a field lies outside its section");
    const n = this.view.getBigUint64(at, true);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) fail("a length is out of range");
    return Number(n);
  }
  /** [at, at + len) within this reader's bounds. */
  span(at: number, len: number): [number, number] {
    if (at < this.start || len < 0 || at + len > this.end) fail("a span lies outside its section");
    return [at, at + len];
  }
}

/** The package's atoms by name (copies), or a WebcFormatError. */
export function webcAtoms(bytes: Uint8Array): Map<string, Uint8Array> {
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b)) fail("no WEBC magic");
  const version = new TextDecoder().decode(bytes.subarray(5, 8));
  if (version !== "002" && version !== "003") fail(`version ${JSON.stringify(version)}`);
  const v3 = version === "003";
  const file = new Reader(bytes);
  let at = 8;
  while (at < bytes.length) {
    const tag = file.u8(at);
    const hashed = v3 && tag !== TAG_INDEX;
    const lengthAt = at + 1 + (hashed ? 32 : 0);
    const length = file.u64(lengthAt);
    const [valueStart, valueEnd] = file.span(lengthAt + 8, length);
    if (tag === TAG_ATOMS) return readAtoms(new Reader(bytes, valueStart, valueEnd), v3);
    at = valueEnd;
  }
  fail("no atoms section");
}

function readAtoms(section: Reader, v3: boolean): Map<string, Uint8Array> {
  const headerLength = section.u64(section.start);
  const [headerStart, headerEnd] = section.span(section.start + 8, headerLength);
  const dataLength = section.u64(headerEnd);
  const [dataStart] = section.span(headerEnd + 8, dataLength);
  const header = new Reader(section.bytes, headerStart, headerEnd);
  const data = new Reader(section.bytes, dataStart, dataStart + dataLength);
  // The root directory of the atoms volume: one level, its files are the atoms.
  if (header.u8(headerStart) !== TAG_DIRECTORY) fail("the atoms volume has no root directory");
  const dirLength = header.u64(headerStart + 1);
  const [entriesStart, entriesEnd] = header.span(headerStart + 9, dirLength);
  let at = entriesStart + (v3 ? 24 + 32 : 0);
  const atoms = new Map<string, Uint8Array>();
  while (at < entriesEnd) {
    if (atoms.size >= MAX_ATOMS) fail(`more than ${MAX_ATOMS} atoms`);
    const offset = header.u64(at);
    at += 8 + (v3 ? 32 : 0);
    const nameLength = header.u64(at);
    const [nameStart, nameEnd] = header.span(at + 8, Math.min(nameLength, entriesEnd - at - 8));
    if (nameEnd - nameStart !== nameLength) fail("an atom's name lies outside its directory");
    const name = new TextDecoder().decode(section.bytes.subarray(nameStart, nameEnd));
    at = nameEnd;
    const entry = headerStart + offset;
    if (header.u8(entry) !== TAG_FILE) continue; // A directory among the atoms: not a module.
    const from = header.u64(entry + 1);
    const to = header.u64(entry + 9);
    if (to < from) fail(`atom ${JSON.stringify(name)} ends before it starts`);
    const [s, e] = data.span(dataStart + from, to - from);
    atoms.set(name, section.bytes.slice(s, e));
  }
  return atoms;
}

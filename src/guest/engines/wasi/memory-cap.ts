// Worker side (and the engine host, for Ruby): caps the linear memory a WebAssembly module may
// grow to, by rewriting the maximum in its binary before it is compiled. A WASI guest grows its
// memory with the `memory.grow` instruction, which never passes through JavaScript, so the L1
// guard on `WebAssembly.Memory.prototype.grow` cannot see it; a declared maximum is the only
// thing that makes the instruction fail (it returns -1, and the guest's malloc reports no memory).
//
// Only the import section (memory imports) and the memory section are rebuilt; every other byte
// is copied as it is. The input is untrusted: anything malformed throws, and the caller reports
// the module as invalid.

const WASM_PAGE = 64 * 1024;
const MIB = 1024 * 1024;
const SECTION_IMPORT = 2;
const SECTION_MEMORY = 5;

export class ModuleFormatError extends Error {}

/** A module whose initial memory is already larger than the cap: it cannot start at all. */
export class InitialMemoryError extends Error {
  constructor(readonly initialBytes: number) {
    super(`the module asks for ${initialBytes} bytes of memory before it starts`);
  }
}

class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.offset >= this.bytes.length) throw new ModuleFormatError("unexpected end of module");
    return this.bytes[this.offset++]!;
  }

  /** An unsigned LEB128 of up to 64 bits, as a number (exact up to 2^53, ample for pages). */
  u(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new ModuleFormatError("LEB128 number too long");
  }

  skip(n: number): void {
    if (n < 0 || this.offset + n > this.bytes.length)
      throw new ModuleFormatError("unexpected end of module");
    this.offset += n;
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}

/** Reads one `limits` and returns it re-encoded with a maximum of at most `maxPages`. */
function cappedLimits(r: Reader, maxPages: number): number[] {
  const flags = r.byte();
  if (flags > 0x07) throw new ModuleFormatError(`unknown memory limits flags ${flags}`);
  const min = r.u();
  const max = flags & 0x01 ? r.u() : Number.POSITIVE_INFINITY;
  if (min > maxPages) throw new InitialMemoryError(min * WASM_PAGE);
  return [flags | 0x01, ...leb(min), ...leb(Math.min(max, maxPages))];
}

function skipLimits(r: Reader): void {
  const flags = r.byte();
  r.u();
  if (flags & 0x01) r.u();
}

function skipName(r: Reader): void {
  r.skip(r.u());
}

function rebuildImports(r: Reader, end: number, maxPages: number): number[] {
  const out: number[] = [];
  const count = r.u();
  out.push(...leb(count));
  for (let i = 0; i < count; i++) {
    const start = r.offset;
    skipName(r);
    skipName(r);
    const kind = r.byte();
    out.push(...r.bytes.subarray(start, r.offset));
    if (kind === 0x02) {
      out.push(...cappedLimits(r, maxPages));
      continue;
    }
    const from = r.offset;
    if (kind === 0x00) r.u();
    else if (kind === 0x01) {
      r.byte();
      skipLimits(r);
    } else if (kind === 0x03) r.skip(2);
    else if (kind === 0x04) {
      r.byte();
      r.u();
    } else throw new ModuleFormatError(`unknown import kind ${kind}`);
    out.push(...r.bytes.subarray(from, r.offset));
  }
  if (r.offset !== end) throw new ModuleFormatError("import section size mismatch");
  return out;
}

function rebuildMemories(r: Reader, end: number, maxPages: number): number[] {
  const count = r.u();
  const out = leb(count);
  for (let i = 0; i < count; i++) out.push(...cappedLimits(r, maxPages));
  if (r.offset !== end) throw new ModuleFormatError("memory section size mismatch");
  return out;
}

/** `bytes` with every memory's maximum lowered to `maxBytes` (rounded down to whole pages). */
export function capMemory(bytes: Uint8Array, maxBytes: number): Uint8Array {
  const maxPages = Math.max(1, Math.floor(maxBytes / WASM_PAGE));
  const r = new Reader(bytes);
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  for (const b of magic) {
    if (r.byte() !== b) throw new ModuleFormatError("not a WebAssembly module (version 1)");
  }
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  while (r.offset < bytes.length) {
    const start = r.offset;
    const id = r.byte();
    const size = r.u();
    const bodyStart = r.offset;
    r.skip(size);
    if (id !== SECTION_IMPORT && id !== SECTION_MEMORY) {
      parts.push(bytes.subarray(start, r.offset));
      continue;
    }
    const body = new Reader(bytes);
    body.offset = bodyStart;
    const content =
      id === SECTION_IMPORT
        ? rebuildImports(body, r.offset, maxPages)
        : rebuildMemories(body, r.offset, maxPages);
    parts.push(Uint8Array.from([id, ...leb(content.length), ...content]));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Whether a module that failed had likely been refused memory: its memory is within one
 * allocator step of the cap. A refused `memory.grow` never reaches JavaScript, so the size left
 * is the only evidence; allocators grow by at least the request (often a whole arena of a few
 * MiB), so a guest refused at the cap stops short of it by up to that step, not by one page.
 */
export function nearMemoryCap(memory: WebAssembly.Memory | undefined, capBytes: number): boolean {
  if (memory === undefined) return false;
  const step = Math.max(MIB, capBytes / 8);
  return memory.buffer.byteLength + step > capBytes;
}

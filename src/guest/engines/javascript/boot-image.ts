// Worker side: the QuickJS boot image. Booting a JavaScript interpreter is cheap for QuickJS
// itself (a runtime and a context take a few ms) but evaluating polybox's set-up in the fresh
// context is not: node-inspect (Node's util.inspect, 51 KB of JS) and the prelude cost ~170 ms of
// CPU in every new interpreter. The image is the interpreter's WebAssembly memory right after
// that set-up, taken once by a process that runs no guest code (make-quickjs-image.ts, spawned by
// the trusted side: src/supervisor/quickjs-image.ts) and restored into each new interpreter in
// place of the evaluation. It holds only the set-up's state: no guest has ever run in it.
//
// A new interpreter is created the deterministic way (module, runtime, context, host functions,
// in the same order), so it holds its runtime, context and global object where the image's did;
// the image is refused unless those pointers match, and unless it was taken of this QuickJS
// build with this set-up source. Only the image's non-zero pages are stored and copied: the
// memory's 5 MB stack region is mostly zero, and pages never touched stay out of the RSS.
//
// QuickJS seeds `Math.random` at context creation (`JSContext.random_state`, a xorshift64*
// state): an image would give every interpreter the builder's seed. The builder finds where that
// state lives (by its xorshift64* step) and records it; each restore writes fresh entropy there.

import { Buffer } from "node:buffer";
import { createHash, randomFillSync } from "node:crypto";

const MAGIC = 0x4249_4250; // "PBIB", little-endian
const VERSION = 1;
/** The granularity of the stored runs: a page of the host's memory. */
export const IMAGE_PAGE = 4096;
const WASM_PAGE = 65536;
/** Emscripten's maximum for this build's memory (2 GiB). */
const MAX_PAGES = 32768;
const MAX_POINTERS = 64;
/** How far past the context pointer the builder looks for the random state. */
const CONTEXT_WINDOW = 4096;

export interface BootImage {
  /** Which QuickJS build and set-up source it was taken with (see `bootImageBuild`). */
  build: string;
  /** The size of the WebAssembly memory it was taken of. */
  memoryBytes: number;
  /** Where the interpreter's wrappers pointed: runtime, context, global, then the set-up's handles. */
  pointers: number[];
  /** The address of the context's `Math.random` state (8 bytes). */
  randomStateAt: number;
  /** Runs of non-zero pages: [first page, page count]; their bytes follow in `data`. */
  runs: [number, number][];
  data: Uint8Array;
}

/** Names what an image depends on: the QuickJS build (a hash of its module) and the set-up source. */
export function bootImageBuild(quickjsBuild: string, setupSource: string): string {
  const setup = createHash("sha256").update(setupSource).digest("hex").slice(0, 32);
  return `boot:${quickjsBuild}:${setup}`;
}

/** Non-zero pages of `heap`, as runs. */
function nonZeroRuns(heap: Uint8Array): [number, number][] {
  const runs: [number, number][] = [];
  const words = new BigUint64Array(heap.buffer, heap.byteOffset, heap.byteLength / 8);
  const perPage = IMAGE_PAGE / 8;
  const pages = heap.byteLength / IMAGE_PAGE;
  for (let page = 0; page < pages; page++) {
    let zero = true;
    for (let i = page * perPage, end = i + perPage; i < end; i++) {
      if (words[i] !== 0n) {
        zero = false;
        break;
      }
    }
    if (zero) continue;
    const last = runs.at(-1);
    if (last && last[0] + last[1] === page) last[1]++;
    else runs.push([page, 1]);
  }
  return runs;
}

/** xorshift64*'s state step, as QuickJS's `js_math_random` takes it. */
function xorshift(x: bigint): bigint {
  const M = (1n << 64n) - 1n;
  x ^= x >> 12n;
  x = (x ^ (x << 25n)) & M;
  x ^= x >> 27n;
  return x;
}

/**
 * Finds the context's `Math.random` state: `draw` calls Math.random once in the context and
 * returns the number; the state is the 8 bytes after the context pointer that moved by exactly
 * one xorshift64* step, and from which that number follows. Throws if there is not exactly one.
 */
export function findRandomState(
  memory: WebAssembly.Memory,
  contextAt: number,
  draw: () => number,
): number {
  const before = new Uint8Array(memory.buffer).slice(contextAt, contextAt + CONTEXT_WINDOW);
  const value = draw();
  const after = new Uint8Array(memory.buffer).slice(contextAt, contextAt + CONTEXT_WINDOW);
  const b = new DataView(before.buffer);
  const a = new DataView(after.buffer);
  const found: number[] = [];
  for (let off = 0; off + 8 <= CONTEXT_WINDOW; off += 8) {
    const x = b.getBigUint64(off, true);
    const y = a.getBigUint64(off, true);
    if (x === 0n || xorshift(x) !== y) continue;
    const mantissa = ((y * 0x2545f4914f6cdd1dn) & ((1n << 64n) - 1n)) >> 12n;
    const bits = new DataView(new ArrayBuffer(8));
    bits.setBigUint64(0, (0x3ffn << 52n) | mantissa, true);
    if (bits.getFloat64(0, true) - 1 === value) found.push(contextAt + off);
  }
  if (found.length !== 1)
    throw new Error(`found ${found.length} candidates for QuickJS's Math.random state, not one`);
  return found[0]!;
}

export function encodeBootImage(
  memory: WebAssembly.Memory,
  image: Omit<BootImage, "runs" | "data" | "memoryBytes">,
): Uint8Array {
  const heap = new Uint8Array(memory.buffer);
  const runs = nonZeroRuns(heap);
  const build = new TextEncoder().encode(image.build);
  const buildWords = Math.ceil(build.length / 4);
  const headerBytes = 4 * (7 + buildWords + image.pointers.length + 2 * runs.length);
  const dataBytes = runs.reduce((s, [, n]) => s + n * IMAGE_PAGE, 0);
  const out = new Uint8Array(headerBytes + dataBytes);
  const view = new DataView(out.buffer);
  let at = 0;
  const u32 = (n: number) => {
    view.setUint32(at, n, true);
    at += 4;
  };
  u32(MAGIC);
  u32(VERSION);
  u32(heap.byteLength);
  u32(build.length);
  out.set(build, at);
  at += buildWords * 4;
  u32(image.pointers.length);
  for (const p of image.pointers) u32(p);
  u32(image.randomStateAt);
  u32(runs.length);
  for (const [first, count] of runs) {
    u32(first);
    u32(count);
  }
  for (const [first, count] of runs) {
    out.set(heap.subarray(first * IMAGE_PAGE, (first + count) * IMAGE_PAGE), at);
    at += count * IMAGE_PAGE;
  }
  return out;
}

/**
 * Reads an image and checks it against this interpreter: its build, and that every page run and
 * the random state lie inside its memory and under `limitBytes`. Throws if it is not one to use.
 */
export function decodeBootImage(bytes: Uint8Array, build: string, limitBytes: number): BootImage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const u32 = () => {
    if (at + 4 > bytes.byteLength) throw new Error("the QuickJS boot image is cut short");
    const n = view.getUint32(at, true);
    at += 4;
    return n;
  };
  if (u32() !== MAGIC || u32() !== VERSION) throw new Error("not a QuickJS boot image");
  const memoryBytes = u32();
  const buildLength = u32();
  if (buildLength > 1024 || at + buildLength > bytes.byteLength)
    throw new Error("not a QuickJS boot image");
  const imageBuild = new TextDecoder().decode(bytes.subarray(at, at + buildLength));
  at += Math.ceil(buildLength / 4) * 4;
  if (imageBuild !== build)
    throw new Error("the boot image was taken of another QuickJS build or set-up; not used");
  if (
    memoryBytes % WASM_PAGE !== 0 ||
    memoryBytes / WASM_PAGE > MAX_PAGES ||
    memoryBytes > limitBytes
  )
    throw new Error("the boot image's memory size is not one this interpreter can take");
  const count = u32();
  if (count > MAX_POINTERS) throw new Error("not a QuickJS boot image");
  const pointers: number[] = [];
  for (let i = 0; i < count; i++) pointers.push(u32());
  const randomStateAt = u32();
  if (randomStateAt % 8 !== 0 || randomStateAt + 8 > memoryBytes)
    throw new Error("the boot image's random state lies outside its memory");
  const runCount = u32();
  const pages = memoryBytes / IMAGE_PAGE;
  const runs: [number, number][] = [];
  let dataBytes = 0;
  let end = 0;
  for (let i = 0; i < runCount; i++) {
    const first = u32();
    const n = u32();
    if (n === 0 || first < end || first + n > pages)
      throw new Error("the boot image's pages are out of order or outside its memory");
    end = first + n;
    runs.push([first, n]);
    dataBytes += n * IMAGE_PAGE;
  }
  if (bytes.byteLength - at !== dataBytes) throw new Error("the QuickJS boot image is cut short");
  return {
    build: imageBuild,
    memoryBytes,
    pointers,
    randomStateAt,
    runs,
    data: bytes.subarray(at),
  };
}

const ZERO_PAGE = new Uint8Array(IMAGE_PAGE);

/**
 * Makes `memory` the image's: its stored pages copied in, every other page zeroed where this
 * interpreter had written it (pages never touched are left alone, so they cost no RSS), and the
 * random state reseeded. The memory must already be at least the image's size; nothing here can
 * fail part way.
 */
export function applyBootImage(memory: WebAssembly.Memory, image: BootImage): void {
  const heap = new Uint8Array(memory.buffer);
  const pages = heap.byteLength / IMAGE_PAGE;
  const zeroIfWritten = (from: number, to: number) => {
    for (let page = from; page < to; page++) {
      const slice = heap.subarray(page * IMAGE_PAGE, (page + 1) * IMAGE_PAGE);
      if (Buffer.compare(slice, ZERO_PAGE) !== 0) slice.fill(0);
    }
  };
  let at = 0;
  let next = 0;
  for (const [first, count] of image.runs) {
    zeroIfWritten(next, first);
    heap.set(image.data.subarray(at, at + count * IMAGE_PAGE), first * IMAGE_PAGE);
    at += count * IMAGE_PAGE;
    next = first + count;
  }
  zeroIfWritten(next, pages);
  const seed = new Uint8Array(8);
  do randomFillSync(seed);
  while (seed.every((b) => b === 0));
  heap.set(seed, image.randomStateAt);
}

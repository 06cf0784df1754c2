// Worker side: a JavaScript interpreter's captured state, the QuickJS instance's WebAssembly
// memory behind a header that says what it can be restored into, and how that memory is grown
// to take an image (the boot image's restore uses the same).

import type { StateAnswer, WorkerInit } from "../../../protocol/messages.js";

const MB = 1024 * 1024;
const WASM_PAGE = 65536;
/** The part of the Emscripten module a restore uses: its allocator, to grow memory its way. */
export interface EmscriptenHeap {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
}

/**
 * Grows the memory to at least `bytes` through the engine's own allocator (so that Emscripten's
 * views follow), then frees what that took.
 */
export function growTo(memory: WebAssembly.Memory, heap: EmscriptenHeap, bytes: number): void {
  const held: number[] = [];
  try {
    while (memory.buffer.byteLength < bytes) {
      const ptr = heap._malloc(bytes - memory.buffer.byteLength + WASM_PAGE);
      if (!ptr) throw new Error("the interpreter's memory limit is below the image's size");
      held.push(ptr);
    }
  } finally {
    for (const ptr of held) heap._free(ptr);
  }
}

/** Emscripten's maximum for this build's memory (2 GiB). */
const MAX_PAGES = 32768;
const IMAGE_MAGIC = 0x4a51_4250; // "PBQJ", little-endian
const IMAGE_VERSION = 1;

/**
 * A captured QuickJS interpreter: its WebAssembly memory (trailing zeros left out), the build it
 * ran on, and the pointers this side held into it. Layout, little-endian u32s: magic, version,
 * memory bytes, build length, build (UTF-8, padded to 4), pointer count, pointers; then the heap.
 */
interface MemoryImage {
  memoryBytes: number;
  build: string;
  pointers: number[];
  heap: Uint8Array;
}

export function captureImage(
  memory: WebAssembly.Memory,
  pointers: number[],
  init: WorkerInit,
  maxBytes: number,
): StateAnswer {
  const heap = new Uint8Array(memory.buffer);
  let end = heap.length;
  while (end > 0 && heap[end - 1] === 0) end--;
  const build = encoder.encode(init.assets.quickjsBuild ?? "");
  const buildWords = Math.ceil(build.length / 4);
  const headerBytes = 4 * (5 + buildWords + pointers.length);
  if (headerBytes + end > maxBytes) {
    return {
      captured: false,
      reason: `the interpreter's memory (${end} bytes) is over the ${maxBytes} bytes a state may hold`,
    };
  }
  const data = new Uint8Array(headerBytes + end);
  const view = new DataView(data.buffer);
  let at = 0;
  const u32 = (n: number) => {
    view.setUint32(at, n, true);
    at += 4;
  };
  u32(IMAGE_MAGIC);
  u32(IMAGE_VERSION);
  u32(heap.length);
  u32(build.length);
  data.set(build, at);
  at += buildWords * 4;
  u32(pointers.length);
  for (const p of pointers) u32(p);
  data.set(heap.subarray(0, end), at);
  return { captured: true, kind: "memory", data, notKept: [] };
}

/** Reads an image's header; throws if it is not one this build and these limits can restore. */
export function parseImage(data: Uint8Array, init: WorkerInit): MemoryImage {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  const u32 = () => {
    if (at + 4 > data.byteLength) throw new Error("the QuickJS image is cut short");
    const n = view.getUint32(at, true);
    at += 4;
    return n;
  };
  if (u32() !== IMAGE_MAGIC || u32() !== IMAGE_VERSION) throw new Error("not a QuickJS image");
  const memoryBytes = u32();
  const buildLength = u32();
  if (at + buildLength > data.byteLength) throw new Error("the QuickJS image is cut short");
  const build = decoder.decode(data.subarray(at, at + buildLength));
  at += Math.ceil(buildLength / 4) * 4;
  if (build !== (init.assets.quickjsBuild ?? ""))
    throw new Error("the image was taken with another QuickJS build; not restored");
  const count = u32();
  if (count > 64) throw new Error("not a QuickJS image");
  const pointers: number[] = [];
  for (let i = 0; i < count; i++) pointers.push(u32());
  const heap = data.subarray(at);
  if (
    memoryBytes % WASM_PAGE !== 0 ||
    memoryBytes / WASM_PAGE > MAX_PAGES ||
    heap.length > memoryBytes ||
    memoryBytes > init.memoryMb * MB
  )
    throw new Error("the QuickJS image's memory size is not one this interpreter can take");
  return { memoryBytes, build, pointers, heap };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

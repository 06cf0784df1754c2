// Worker side: what polybox's data commands (sort, uniq, tr) share. They work on bytes, as GNU's
// do in the C locale: a command's input is one Uint8Array (stdin or a file's content), its output
// one Buffer turned into one latin1 string, the shape just-bash's pipeline passes between
// commands as-is. No JavaScript string is made per line, so a 50 MB input costs a few times
// 50 MB, not the ~40 bytes of heap per line that splitting it into strings costs.

import { latin1FromBytes } from "just-bash";
import type { Ctx, Result } from "./context.js";

export const NEWLINE = 10;

/** A result whose stdout is a byte buffer (one char per byte): the pipeline forwards it as is. */
export function bytesResult(stdout: string, stderr = "", exitCode = 0): Result {
  return { stdout, stderr, exitCode, stdoutKind: "bytes", stdoutEncoding: "binary" };
}

/** The command's stdin as bytes: one copy of the pipeline's latin1 string, made natively. */
export function stdinBytes(ctx: Ctx): Uint8Array {
  return Buffer.from(latin1FromBytes(ctx.stdin), "latin1");
}

/** Why a file operand could not be read, in the words of the C library's strerror. */
export class UnreadableFile extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (text.startsWith("EISDIR")) return "Is a directory";
  if (text.startsWith("EACCES")) return "Permission denied";
  if (text.startsWith("ENOTDIR")) return "Not a directory";
  return "No such file or directory";
}

/**
 * An operand's bytes: `-` is stdin, anything else a file of just-bash's file system. The file
 * system hands back its own buffer, so nothing may write into what this returns.
 */
export async function operandBytes(ctx: Ctx, file: string): Promise<Uint8Array> {
  if (file === "-") return stdinBytes(ctx);
  try {
    return await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, file));
  } catch (error) {
    throw new UnreadableFile(file, reasonOf(error));
  }
}

/**
 * Several inputs as one buffer in which every input ends with the delimiter, as GNU tools treat
 * a last line without its newline. A single input is returned as it is, without a copy.
 */
export function joinInputs(inputs: Uint8Array[], delimiter: number): Uint8Array {
  if (inputs.length === 1) return inputs[0]!;
  let size = 0;
  for (const input of inputs) size += input.length + 1;
  const joined = Buffer.allocUnsafe(size);
  let at = 0;
  for (const input of inputs) {
    if (input.length === 0) continue;
    joined.set(input, at);
    at += input.length;
    if (input[input.length - 1] !== delimiter) joined[at++] = delimiter;
  }
  return joined.subarray(0, at);
}

/** Bytes as one latin1 string (one char per byte), the shape the pipeline passes on. */
export function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("latin1");
}

/**
 * Output bytes collected into one Buffer, grown by doubling when a guess was short, and handed
 * to just-bash as one latin1 string.
 */
export class ByteWriter {
  private buffer: Buffer;
  private size = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(64, capacity));
  }

  get length(): number {
    return this.size;
  }

  private reserve(bytes: number): void {
    if (this.size + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.size + bytes));
    this.buffer.copy(grown, 0, 0, this.size);
    this.buffer = grown;
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.size++] = value;
  }

  /** Bytes [start, end) of `source`. */
  range(source: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    const buffer = this.buffer;
    let size = this.size;
    for (let i = start; i < end; i++) buffer[size++] = source[i]!;
    this.size = size;
  }

  /** ASCII text (numbers, padding). */
  ascii(text: string): void {
    this.reserve(text.length);
    for (let i = 0; i < text.length; i++) this.buffer[this.size++] = text.charCodeAt(i);
  }

  /** The bytes written, as a view of the buffer (for a file). */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.size);
  }

  /** The bytes written, as one latin1 string (for the pipeline). */
  latin1(): string {
    return latin1(this.bytes());
  }
}

/**
 * Writes a command's output to a file (`sort -o`, `uniq IN OUT`) through just-bash's file system.
 * Returns why it could not, in strerror's words, or undefined.
 */
export async function writeOutputFile(
  ctx: Ctx,
  file: string,
  bytes: Uint8Array,
): Promise<string | undefined> {
  try {
    // A copy of exactly these bytes: the buffer they are a view of may be larger.
    await ctx.fs.writeFile(ctx.fs.resolvePath(ctx.cwd, file), new Uint8Array(bytes));
    return undefined;
  } catch (error) {
    return reasonOf(error);
  }
}

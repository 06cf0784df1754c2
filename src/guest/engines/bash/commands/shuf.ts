// Worker side: `shuf`, which just-bash lacks. The random numbers are drawn as GNU's shuf draws
// them (coreutils' randint and randperm), from the bytes of `--random-source=FILE` or else from
// the platform's cryptographic generator, so that the same source file gives GNU's output byte
// for byte: -n, -e, -i, -r, -z, -o.

import { defineCommand } from "just-bash";
import { bytesResult, stdinBytes } from "./shared/bytes.js";
import { type Ctx, fail, failure } from "./shared/context.js";
import { none, parseCommandLine, required, usageError } from "./shared/options.js";

const TABLE = {
  short: { e: none, i: required, n: required, o: required, r: none, z: none },
  long: {
    echo: { id: "e", arg: none },
    "input-range": { id: "i", arg: required },
    "head-count": { id: "n", arg: required },
    output: { id: "o", arg: required },
    "random-source": { id: "random-source", arg: required },
    repeat: { id: "r", arg: none },
    "zero-terminated": { id: "z", arg: none },
    help: { id: "help", arg: none },
    version: { id: "version", arg: none },
  },
} as const;

const MASK = (1n << 64n) - 1n;

class EndOfSource extends Error {}

/**
 * coreutils' randint source: a 64-bit number of random bits (`randnum`, below `randmax + 1`),
 * refilled a byte at a time, the leftover kept between draws.
 */
class RandomInts {
  private randnum = 0n;
  private randmax = 0n;
  private at = 0;
  constructor(private readonly bytes: ((n: number) => Uint8Array) | Uint8Array) {}

  private read(n: number): Uint8Array {
    if (typeof this.bytes === "function") return this.bytes(n);
    if (this.at + n > this.bytes.length) throw new EndOfSource();
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** A uniform number in 0..genmax. */
  genmax(genmax: bigint): bigint {
    let { randnum, randmax } = this;
    const choices = genmax + 1n;
    for (;;) {
      if (randmax < genmax) {
        let i = 0;
        let rmax = randmax;
        do {
          rmax = ((rmax << 8n) + 255n) & MASK;
          i++;
        } while (rmax < genmax);
        const buf = this.read(i);
        i = 0;
        do {
          randnum = ((randnum << 8n) + BigInt(buf[i]!)) & MASK;
          randmax = ((randmax << 8n) + 255n) & MASK;
          i++;
        } while (randmax < genmax);
      }
      if (randmax === genmax) {
        this.randnum = 0n;
        this.randmax = 0n;
        return randnum;
      }
      const excess = randmax - genmax;
      const unusable = excess % choices;
      const lastUsable = randmax - unusable;
      const reduced = randnum % choices;
      if (randnum <= lastUsable) {
        this.randnum = randnum / choices;
        this.randmax = excess / choices;
        return reduced;
      }
      randnum = reduced;
      randmax = unusable - 1n;
    }
  }

  choose(n: number): number {
    return Number(this.genmax(BigInt(n) - 1n));
  }
}

/** The first `h` of a random permutation of 0..n-1, as coreutils' randperm_new draws it. */
function permutation(r: RandomInts, h: number, n: number): number[] {
  if (h === 0) return [];
  if (h === 1) return [r.choose(n)];
  // A map stands for the array 0..n-1, so that a large range costs only what is drawn.
  const v = new Map<number, number>();
  const at = (i: number) => v.get(i) ?? i;
  const out: number[] = [];
  for (let i = 0; i < h; i++) {
    const j = i + r.choose(n - i);
    const t = at(i);
    v.set(i, at(j));
    v.set(j, t);
    out.push(at(i));
  }
  return out;
}

/** Splits input bytes into records ending in `eol` (a missing final one is added). */
function records(data: Uint8Array, eol: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let k = 0; k < data.length; k++) {
    if (data[k] === eol) {
      out.push(data.subarray(start, k));
      start = k + 1;
    }
  }
  if (start < data.length) out.push(data.subarray(start));
  return out;
}

async function readFile(ctx: Ctx, name: string): Promise<Uint8Array> {
  return ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, name));
}

const quoted = (s: string) => `'${s}'`;

/** `shuf [-n N] [-r] [-z] [-o FILE] [--random-source=FILE] [-e ARG... | -i LO-HI | FILE]`. */
export const shuf = defineCommand("shuf", async (args, ctx) => {
  const parsed = parseCommandLine("shuf", args, TABLE, 1);
  if ("exitCode" in parsed) return parsed;
  let echo = false;
  let range: [number, number] | undefined;
  let head = Number.POSITIVE_INFINITY;
  let output: string | undefined;
  let source: string | undefined;
  let repeat = false;
  let eol = 10;
  for (const o of parsed.options) {
    const value = o.value ?? "";
    if (o.id === "e") echo = true;
    else if (o.id === "i") {
      if (range) return fail("shuf", "multiple -i options specified");
      const m = /^(\d+)-(\d+)$/.exec(value);
      if (!m || Number(m[1]) > Number(m[2]) + 1)
        return fail("shuf", `invalid input range: ${quoted(value)}`);
      range = [Number(m[1]), Number(m[2])];
    } else if (o.id === "n") {
      if (!/^\d+$/.test(value)) return fail("shuf", `invalid line count: ${quoted(value)}`);
      head = Math.min(head, Number(value));
    } else if (o.id === "o") output = value;
    else if (o.id === "random-source") {
      if (source !== undefined && source !== value)
        return fail("shuf", "multiple random sources specified");
      source = value;
    } else if (o.id === "r") repeat = true;
    else if (o.id === "z") eol = 0;
    else return fail("shuf", `unsupported option ${o.spelled}`);
  }
  const operands = parsed.operands;
  if (echo && range) return failure(usageError("shuf", "cannot combine -e and -i options"), 1);
  if (range ? operands.length > 0 : !echo && operands.length > 1)
    return failure(usageError("shuf", `extra operand ${quoted(operands[range ? 0 : 1]!)}`), 1);

  let bytes: Uint8Array | ((n: number) => Uint8Array);
  if (source !== undefined) {
    try {
      bytes = await readFile(ctx, source);
    } catch {
      return fail("shuf", `${source}: No such file or directory`);
    }
  } else bytes = (n) => crypto.getRandomValues(new Uint8Array(n));
  const rand = new RandomInts(bytes);

  const enc = new TextEncoder();
  let lines: Uint8Array[] = [];
  let count = 0;
  let numbers = false;
  try {
    if (head === 0) count = 0;
    else if (echo) {
      lines = operands.map((a) => Buffer.from(a, "latin1"));
      count = lines.length;
    } else if (range) {
      numbers = true;
      count = range[1] - range[0] + 1;
    } else {
      const file = operands[0];
      let data: Uint8Array;
      try {
        data = file === undefined || file === "-" ? stdinBytes(ctx) : await readFile(ctx, file);
      } catch {
        return fail("shuf", `${file}: No such file or directory`);
      }
      const all = records(data, eol);
      // GNU reads a pipe by reservoir sampling when -n is given: the first `head` lines, then
      // for each later one a slot drawn (the line replaces it, or is dropped), one draw more than
      // there are later lines. stdin is taken for a pipe: a redirected file is read whole by GNU.
      const fromPipe = file === undefined || file === "-";
      if (!repeat && Number.isFinite(head) && fromPipe && all.length >= head) {
        lines = all.slice(0, head);
        for (let n = head; n <= all.length; n++) {
          const j = rand.choose(n + 1);
          if (n < all.length && j < head) lines[j] = all[n]!;
        }
      } else lines = all;
      count = lines.length;
    }
    const take = repeat ? head : Math.min(head, count);
    const line = (k: number) => (numbers ? enc.encode(String(range![0] + k)) : lines[k]!);
    const out: Uint8Array[] = [];
    const sep = Uint8Array.of(eol);
    if (repeat) {
      if (take > 0 && count === 0) return fail("shuf", "no lines to repeat");
      if (!Number.isFinite(take)) return fail("shuf", "endless output is not supported");
      for (let k = 0; k < take; k++) out.push(line(rand.choose(count)), sep);
    } else for (const k of permutation(rand, take, count)) out.push(line(k), sep);
    const text = Buffer.concat(out).toString("latin1");
    if (output !== undefined) {
      await ctx.fs.writeFile(ctx.fs.resolvePath(ctx.cwd, output), Buffer.from(text, "latin1"));
      return bytesResult("");
    }
    return bytesResult(text);
  } catch (e) {
    if (e instanceof EndOfSource) return fail("shuf", `${quoted(source!)}: end of file`);
    throw e;
  }
});

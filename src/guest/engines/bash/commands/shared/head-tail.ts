// Worker side: what `head` and `tail` (head.ts, tail.ts) share: GNU's options, line positions, and
// the loop over operands. just-bash's read counts with parseInt, so `head -c 1K` gave 1 byte and
// `tail -c +3` the last 3; they had no `head -n -N`, `-z` or `tail +N`; and they read /dev/zero
// and /dev/urandom as files. These count as GNU does (size suffixes, `-N` all but the last N, `+N`
// from the Nth on), take exactly what they are asked for from the endless streams (devices.ts:
// the devices and `yes`), and say so when one would have to be read to its end. Options they do
// not know (`tail -f`, `--help`) go to just-bash's command.

import {
  bytesOutput,
  type Command,
  defineCommand,
  latin1FromBytes,
  unsafeBytesFromLatin1,
} from "just-bash";
import { cutShort, type Devices, deviceOperand, type Endless } from "../../devices.js";
import { type Ctx, fail, original, type Result } from "./context.js";
import { parseSize } from "./size.js";

export type Mode = "bytes" | "lines";

export interface Options {
  mode: Mode;
  count: number;
  /** head: all but the last `count`. tail: from the `count`th on. */
  signed: boolean;
  headers: boolean | null;
  delimiter: string;
  files: string[];
}

/** GNU's options of head and tail; null for an option it leaves to just-bash. */
function parseOptions(name: "head" | "tail", args: string[]): Options | Result | null {
  const options: Options = {
    mode: "lines",
    count: 10,
    signed: false,
    headers: null,
    delimiter: "\n",
    files: [],
  };
  const setCount = (mode: Mode, text: string): Result | undefined => {
    let sign = "";
    if (/^[+-]/.test(text)) {
      sign = text[0]!;
      text = text.slice(1);
    }
    const value = parseSize(text);
    const what = mode === "bytes" ? "bytes" : "lines";
    if (value === null) return fail(name, `invalid number of ${what}: '${sign}${text}'`);
    if (value === "overflow")
      return fail(
        name,
        `invalid number of ${what}: '${sign}${text}': Value too large for defined data type`,
      );
    options.mode = mode;
    options.count = value;
    // head -N is all but the last N; tail +N is from the Nth on (tail -N is the same as N).
    options.signed = name === "head" ? sign === "-" : sign === "+";
    return undefined;
  };
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "--") {
      options.files.push(...args.slice(k + 1));
      break;
    }
    const short = /^-([cn])(.*)$/.exec(a);
    const long = /^--(bytes|lines)(?:=(.*))?$/.exec(a);
    if (short || long) {
      const mode: Mode = short?.[1] === "c" || long?.[1] === "bytes" ? "bytes" : "lines";
      // `-c N` and `--bytes N` take the next word; `-cN` and `--bytes=N` carry it.
      let value = short ? short[2] || undefined : long![2];
      if (value === undefined) {
        if (k + 1 >= args.length)
          return fail(name, `option requires an argument -- '${mode === "bytes" ? "c" : "n"}'`);
        value = args[++k]!;
      }
      const error = setCount(mode, value);
      if (error) return error;
    } else if (/^-\d+$/.test(a) || (name === "tail" && k === 0 && /^\+\d+$/.test(a))) {
      // The obsolete forms: `head -5`, `tail -5`, `tail +5` (from the 5th line on).
      const error = setCount("lines", name === "head" ? a.slice(1) : a);
      if (error) return error;
    } else if (a === "-q" || a === "--quiet" || a === "--silent") options.headers = false;
    else if (a === "-v" || a === "--verbose") options.headers = true;
    else if (a === "-z" || a === "--zero-terminated") options.delimiter = "\0";
    else if (a.startsWith("-") && a !== "-") return null;
    else options.files.push(a);
  }
  return options;
}

/** Where the delimiter that ends the `count`th line is, plus one; -1 if there are fewer. */
export function afterLines(text: string, count: number, delimiter: string): number {
  let at = 0;
  for (let n = 0; n < count; n++) {
    const next = text.indexOf(delimiter, at);
    if (next < 0) return -1;
    at = next + 1;
  }
  return at;
}

/** The start of the last `count` lines (a final line without its delimiter counts). */
export function lastLines(text: string, count: number, delimiter: string): number {
  if (count === 0) return text.length;
  let end = text.length;
  if (text.endsWith(delimiter)) end--;
  for (let n = 0; n < count; n++) {
    const previous = text.lastIndexOf(delimiter, end - 1);
    if (previous < 0) return 0;
    end = previous;
  }
  return end + 1;
}

/** One operand's bytes (latin1), the endless stream it is, or a failure. */
async function readOperand(
  ctx: Ctx,
  devices: Devices,
  name: "head" | "tail",
  file: string,
): Promise<string | { endless: Endless } | { cut: Endless; text: string } | Result> {
  if (file === "-") {
    const stdin = latin1FromBytes(ctx.stdin);
    const endless = devices.claim(stdin);
    if (endless) return { endless };
    const cut = devices.cutFrom(stdin);
    return cut ? { cut, text: stdin } : stdin;
  }
  const endless = await deviceOperand(ctx, file);
  if (endless) return { endless };
  const path = ctx.fs.resolvePath(ctx.cwd, file);
  try {
    if ((await ctx.fs.stat(path)).isDirectory)
      return fail(name, `error reading '${file}': Is a directory`);
    if (ctx.fs.readFileBytes) return latin1FromBytes(await ctx.fs.readFileBytes(path));
    return Buffer.from(await ctx.fs.readFileBuffer(path)).toString("latin1");
  } catch {
    return fail(name, `cannot open '${file}' for reading: No such file or directory`);
  }
}

/** What one of the two commands takes from an input. */
export interface Taker {
  /** From a whole input (latin1). */
  text(input: string, o: Options): string;
  /** From an endless stream named `label`, or why it cannot. */
  endless(ctx: Ctx, source: Endless, label: string, o: Options): string | Result;
}

/** `head` or `tail`, reading the endless streams through `devices`. */
export function headTailCommand(name: "head" | "tail", devices: Devices, take: Taker): Command {
  return defineCommand(name, async (args, ctx) => {
    const parsed = parseOptions(name, args);
    if (parsed === null) return original(ctx, name, args);
    if ("exitCode" in parsed) return parsed;
    const o = parsed;
    const files = o.files.length ? o.files : ["-"];
    const headers = o.headers ?? files.length > 1;
    const out: string[] = [];
    let stderr = "";
    let exitCode = 0;
    let shown = 0;
    for (const file of files) {
      const label = file === "-" ? "standard input" : file;
      const input = await readOperand(ctx, devices, name, file);
      let text: string;
      if (typeof input === "string") text = take.text(input, o);
      else if ("cut" in input) {
        text = take.text(input.text, o);
        // Past the cut the stream goes on: a tail, a head of all but the last part, or a head
        // that took the whole input would have read on in bash. A shorter head is exact.
        if (name === "tail" || o.signed || text.length === input.text.length) {
          stderr += cutShort(name, label, input.cut);
          exitCode = 1;
          continue;
        }
      } else if ("endless" in input) {
        const taken = take.endless(ctx, input.endless, label, o);
        if (typeof taken !== "string") {
          stderr += taken.stderr;
          exitCode = 1;
          continue;
        }
        text = taken;
      } else {
        stderr += input.stderr;
        exitCode = 1;
        continue;
      }
      if (headers)
        out.push(`${shown > 0 ? "\n" : ""}==> ${Buffer.from(label).toString("latin1")} <==\n`);
      out.push(text);
      shown++;
    }
    return { ...bytesOutput(unsafeBytesFromLatin1(out.join(""))), stderr, exitCode };
  });
}

// Worker side: `head` and `tail` as GNU's, byte-exact. just-bash's read counts with parseInt, so
// `head -c 1K` gave 1 byte and `tail -c +3` the last 3; they had no `head -n -N`, `-z` or
// `tail +N`; and they read /dev/zero and /dev/urandom as files. These count as GNU does (size
// suffixes, `-N` all but the last N, `+N` from the Nth on), take exactly what they are asked for
// from the endless streams (devices.ts: the devices and `yes`), and say so when one would have to
// be read to its end. Options they do not know (`tail -f`, `--help`) go to just-bash's command.

import {
  bytesOutput,
  type Command,
  defineCommand,
  latin1FromBytes,
  unsafeBytesFromLatin1,
} from "just-bash";
import { type Devices, deviceOperand, type Endless, endlessBytes, reserve } from "./devices.js";
import type { Ctx, Result } from "./unix-commands.js";

/** Multipliers of GNU's size suffixes (`K`, `KiB`: 1024; `kB`: 1000; `b`: 512; ...). */
const POWERS = "KMGTPEZYRQ";

/**
 * A count as coreutils reads one (xstrtoumax): digits, then an optional `b` (512) or a power
 * letter, alone or with `iB` (powers of 1024) or `B` (powers of 1000). `extra` adds command
 * suffixes (dd's `c` and `w`). Infinity for a count past 2^53 that coreutils would still take
 * (up to 2^64), "overflow" past that, null if it is not a count.
 */
export function parseSize(
  text: string,
  extra: Readonly<Record<string, number>> = {},
): number | "overflow" | null {
  const m = /^(\d+)([A-Za-z]*)$/.exec(text);
  if (!m) return null;
  const digits = Number(m[1]);
  const suffix = m[2]!;
  let factor = 1;
  if (suffix === "b") factor = 512;
  else if (suffix in extra) factor = extra[suffix]!;
  else if (suffix) {
    const power = POWERS.indexOf(suffix[0]!.toUpperCase()) + 1;
    const rest = suffix.slice(1);
    // `k` and `m` are accepted lower-case (as K and M); the others are not.
    if (power === 0 || (suffix[0] !== suffix[0]!.toUpperCase() && !"km".includes(suffix[0]!)))
      return null;
    if (rest === "" || rest === "iB") factor = 1024 ** power;
    else if (rest === "B" || rest === "D") factor = 1000 ** power;
    else return null;
  }
  const value = digits * factor;
  if (value > 2 ** 64 - 1) return "overflow";
  return Number.isSafeInteger(value) ? value : Number.POSITIVE_INFINITY;
}

type Mode = "bytes" | "lines";

interface Options {
  mode: Mode;
  count: number;
  /** head: all but the last `count`. tail: from the `count`th on. */
  signed: boolean;
  headers: boolean | null;
  delimiter: string;
  files: string[];
}

const fail = (name: string, message: string, exitCode = 1): Result => ({
  stdout: "",
  stderr: `${name}: ${message}\n`,
  exitCode,
});

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
function afterLines(text: string, count: number, delimiter: string): number {
  let at = 0;
  for (let n = 0; n < count; n++) {
    const next = text.indexOf(delimiter, at);
    if (next < 0) return -1;
    at = next + 1;
  }
  return at;
}

/** The start of the last `count` lines (a final line without its delimiter counts). */
function lastLines(text: string, count: number, delimiter: string): number {
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

function headOf(text: string, o: Options): string {
  if (o.mode === "bytes")
    return o.signed ? text.slice(0, Math.max(0, text.length - o.count)) : text.slice(0, o.count);
  if (o.signed) return text.slice(0, lastLines(text, o.count, o.delimiter));
  const end = afterLines(text, o.count, o.delimiter);
  return end < 0 ? text : text.slice(0, end);
}

function tailOf(text: string, o: Options): string {
  if (o.mode === "bytes") {
    if (o.signed) return text.slice(Math.max(0, o.count - 1));
    return o.count === 0 ? "" : text.slice(Math.max(0, text.length - o.count));
  }
  if (o.signed) {
    if (o.count <= 1) return text;
    const start = afterLines(text, o.count - 1, o.delimiter);
    return start < 0 ? "" : text.slice(start);
  }
  return text.slice(lastLines(text, o.count, o.delimiter));
}

/** Random bytes up to and including the `count`th delimiter. */
function randomLines(ctx: Ctx, count: number, delimiter: string, site: string): string {
  const chunks: string[] = [];
  let held = 0;
  let found = 0;
  const code = delimiter.charCodeAt(0);
  while (found < count) {
    const size = 64 * 1024;
    reserve(ctx, 2 * (held + size), site);
    const chunk = endlessBytes({ kind: "random" }, size);
    let end = size;
    for (let i = 0; i < size; i++)
      if (chunk.charCodeAt(i) === code && ++found === count) {
        end = i + 1;
        break;
      }
    chunks.push(end === size ? chunk : chunk.slice(0, end));
    held += end;
  }
  return chunks.join("");
}

/** What `head` takes from an endless stream, or a failure. */
function headOfEndless(ctx: Ctx, source: Endless, name: string, o: Options): string | Result {
  if (o.signed)
    return fail(
      "head",
      `${name} never ends: all but its last ${o.count} ${o.mode} would never come (bash would read it forever)`,
    );
  const site = `head: ${o.count} ${o.mode} of ${name}`;
  if (o.mode === "bytes") {
    reserve(ctx, 2 * o.count, site);
    return endlessBytes(source, o.count);
  }
  if (o.count === 0) return "";
  if (source.kind === "random") return randomLines(ctx, o.count, o.delimiter, site);
  const unit = source.kind === "zero" ? "\0" : source.unit;
  const perUnit = unit.split(o.delimiter).length - 1;
  // No line end ever comes: GNU's head reads on, holding it all, until memory runs out.
  if (perUnit === 0) reserve(ctx, Number.POSITIVE_INFINITY, `head: ${name} has no line ends`);
  const units = Math.ceil(o.count / perUnit);
  reserve(ctx, 2 * units * unit.length, site);
  const text = endlessBytes(source, units * unit.length);
  return text.slice(0, afterLines(text, o.count, o.delimiter));
}

/** One operand's bytes (latin1), the endless stream it is, or a failure. */
async function readOperand(
  ctx: Ctx,
  devices: Devices,
  name: "head" | "tail",
  file: string,
): Promise<string | { endless: Endless } | Result> {
  if (file === "-") {
    const stdin = latin1FromBytes(ctx.stdin);
    const endless = devices.claim(stdin);
    return endless ? { endless } : stdin;
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

function command(name: "head" | "tail", devices: Devices): Command {
  return defineCommand(name, async (args, ctx) => {
    const parsed = parseOptions(name, args);
    if (parsed === null) {
      if (!ctx.origCommand) return fail(name, "not available", 127);
      return ctx.origCommand(args);
    }
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
      if (typeof input === "string") text = name === "head" ? headOf(input, o) : tailOf(input, o);
      else if ("endless" in input) {
        const taken =
          name === "head"
            ? headOfEndless(ctx, input.endless, label, o)
            : fail("tail", `${label} never ends: it has no last part (bash would read it forever)`);
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

/** `head` and `tail`, reading the endless streams through `devices`. */
export function headTail(devices: Devices): Command[] {
  return [command("head", devices), command("tail", devices)];
}

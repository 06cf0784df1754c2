// Worker side: `dd`, which just-bash lacks (`dd if=/dev/urandom bs=1024 count=200 | wc -c` was
// "command not found" and 0). GNU's operands: if= of= bs= ibs= obs= count= skip= seek=, the
// conv= flags that change bytes or the output file (notrunc, sync, ucase, lcase, swab, excl,
// nocreat; noerror, fsync, fdatasync and sparse change nothing here), iflag=count_bytes,
// skip_bytes, fullblock, oflag=seek_bytes, append, status=none/noxfer/progress, and GNU's record
// counts and summary on stderr. Input arrives whole (just-bash passes whole outputs between
// commands), so every read is a full block, as with iflag=fullblock. The endless devices (and
// `yes`) give exactly count blocks (devices.ts); without count= they never end, which dd says.

import {
  bytesOutput,
  type Command,
  defineCommand,
  latin1FromBytes,
  unsafeBytesFromLatin1,
} from "just-bash";
import {
  cutShort,
  type Devices,
  deviceOperand,
  type Endless,
  endlessBytes,
  reserve,
} from "../devices.js";
import { type Ctx, failure, type Result } from "./shared/context.js";
import { parseSize } from "./shared/size.js";

const CONVERSIONS = new Set([
  "notrunc",
  "sync",
  "ucase",
  "lcase",
  "swab",
  "excl",
  "nocreat",
  "noerror",
  "fsync",
  "fdatasync",
  "sparse",
]);
/** GNU's other conversions (character sets, fixed-length records), which polybox lacks. */
const UNSUPPORTED_CONVERSIONS = new Set(["ascii", "ebcdic", "ibm", "block", "unblock"]);
/** Flags that only change how the kernel is asked: nothing to do in an in-memory file system. */
const IO_FLAGS = [
  "direct",
  "dsync",
  "sync",
  "nocache",
  "nonblock",
  "noatime",
  "noctty",
  "nofollow",
  "binary",
  "text",
  "directory",
  "cio",
];
const IFLAGS = new Set([...IO_FLAGS, "fullblock", "count_bytes", "skip_bytes"]);
const OFLAGS = new Set([...IO_FLAGS, "append", "seek_bytes"]);

/** dd's sizes: coreutils' suffixes plus `c` (1) and `w` (2), and products `AxB`. */
function ddSize(text: string): number | null {
  let product = 1;
  for (const part of text.split("x")) {
    const n = parseSize(part, { c: 1, w: 2 });
    if (n === null || n === "overflow") return null;
    product *= n;
  }
  return product;
}

/**
 * A size as coreutils' human_readable prints it for dd: autoscaled to one of base's powers, one
 * decimal below 10, rounded to nearest with ties to even (gnulib human.c, in integers).
 */
function human(n: number, base: 1000 | 1024): string {
  let amt = Math.floor(n);
  if (amt < base) return `${amt} B`;
  const prefixes = base === 1000 ? "kMGTPEZYRQ" : "KMGTPEZYRQ";
  let tenths = 0;
  // 0: exact; 1: less than half; 2: half; 3: more than half.
  let rounding = 0;
  let power = 0;
  do {
    const r10 = (amt % base) * 10 + tenths;
    const r2 = (r10 % base) * 2 + (rounding >> 1);
    amt = Math.floor(amt / base);
    tenths = Math.floor(r10 / base);
    rounding = r2 < base ? (r2 + rounding !== 0 ? 1 : 0) : 2 + (base < r2 + rounding ? 1 : 0);
    power++;
  } while (base <= amt && power < prefixes.length);
  let decimal = "";
  if (amt < 10) {
    if (2 < rounding + (tenths & 1)) {
      tenths++;
      rounding = 0;
      if (tenths === 10) {
        amt++;
        tenths = 0;
      }
    }
    if (amt < 10) {
      decimal = `.${tenths}`;
      tenths = 0;
      rounding = 0;
    }
  }
  if (5 < tenths + (0 < rounding + (amt & 1) ? 1 : 0)) {
    amt++;
    if (amt === base && power < prefixes.length) {
      power++;
      amt = 1;
      decimal = ".0";
    }
  }
  return `${amt}${decimal} ${prefixes[power - 1]}${base === 1024 ? "iB" : "B"}`;
}

/** printf's %g: six significant digits, an exponent below 1e-4. */
function g(x: number): string {
  if (x === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(x)));
  if (e < -4 || e >= 6) {
    const [m, ex] = x.toExponential(5).split("e") as [string, string];
    const n = Number(ex);
    return `${m.replace(/\.?0+$/, "")}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return String(Number(x.toPrecision(6)));
}

/** GNU's summary: records in, records out, and (unless noxfer) bytes, time and rate. */
function summary(
  inFull: number,
  inPartial: number,
  outFull: number,
  outPartial: number,
  bytes: number,
  seconds: number,
  xfer: boolean,
): string {
  let text = `${inFull}+${inPartial} records in\n${outFull}+${outPartial} records out\n`;
  if (!xfer) return text;
  const si = human(bytes, 1000);
  const iec = human(bytes, 1024);
  const size =
    bytes < 1000
      ? `${bytes} byte${bytes === 1 ? "" : "s"}`
      : bytes < 1024
        ? `${bytes} bytes (${si})`
        : `${bytes} bytes (${si}, ${iec})`;
  const rate = bytes === 0 || seconds <= 0 ? "0.0 kB/s" : `${human(bytes / seconds, 1000)}/s`;
  text += `${size} copied, ${g(seconds)} s, ${rate === "0 B/s" ? "0.0 kB/s" : rate}\n`;
  return text;
}

const fail = (message: string): Result => failure(`dd: ${message}\n`, 1);

interface Operands {
  input?: string;
  output?: string;
  ibs: number;
  obs: number;
  /** bs= given: each input block is written as it was read. */
  bs: boolean;
  count?: number;
  skip: number;
  seek: number;
  conv: Set<string>;
  iflag: Set<string>;
  oflag: Set<string>;
  status: "default" | "none" | "noxfer";
}

function parseOperands(args: string[]): Operands | Result {
  const o: Operands = {
    ibs: 512,
    obs: 512,
    bs: false,
    skip: 0,
    seek: 0,
    conv: new Set(),
    iflag: new Set(),
    oflag: new Set(),
    status: "default",
  };
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq < 0) return fail(`unrecognized operand '${arg}'\nTry 'dd --help' for more information.`);
    const key = arg.slice(0, eq);
    const value = arg.slice(eq + 1);
    const size = () => ddSize(value);
    switch (key) {
      case "if":
        o.input = value;
        break;
      case "of":
        o.output = value;
        break;
      case "bs":
      case "ibs":
      case "obs": {
        const n = size();
        if (n === null || n < 1 || !Number.isSafeInteger(n))
          return fail(`invalid number: '${value}'`);
        if (key !== "obs") o.ibs = n;
        if (key !== "ibs") o.obs = n;
        if (key === "bs") o.bs = true;
        break;
      }
      case "cbs":
        if (size() === null) return fail(`invalid number: '${value}'`);
        break;
      case "count":
      case "skip":
      case "iseek":
      case "seek":
      case "oseek": {
        const n = size();
        if (n === null) return fail(`invalid number: '${value}'`);
        if (key === "count") o.count = n;
        else if (key === "skip" || key === "iseek") o.skip = n;
        else o.seek = n;
        break;
      }
      case "conv":
      case "iflag":
      case "oflag":
        for (const flag of value.split(",").filter(Boolean)) {
          if (key === "conv") {
            if (UNSUPPORTED_CONVERSIONS.has(flag))
              return fail(
                `conv=${flag} is not supported in polybox's WASM bash (just-bash); run dd in a native sandbox (engine: "native")`,
              );
            if (!CONVERSIONS.has(flag))
              return fail(`invalid conversion: '${flag}'\nTry 'dd --help' for more information.`);
            o.conv.add(flag);
          } else if (!(key === "iflag" ? IFLAGS : OFLAGS).has(flag))
            return fail(
              `invalid ${key === "iflag" ? "input" : "output"} flag: '${flag}'\nTry 'dd --help' for more information.`,
            );
          else (key === "iflag" ? o.iflag : o.oflag).add(flag);
        }
        break;
      case "status":
        if (value === "none" || value === "noxfer") o.status = value;
        else if (value === "progress" || value === "default") o.status = "default";
        else return fail(`invalid status level: '${value}'\nTry 'dd --help' for more information.`);
        break;
      default:
        return fail(`unrecognized operand '${arg}'\nTry 'dd --help' for more information.`);
    }
  }
  for (const [a, b] of [
    ["ucase", "lcase"],
    ["excl", "nocreat"],
  ] as const)
    if (o.conv.has(a) && o.conv.has(b)) return fail(`cannot combine ${a} and ${b}`);
  return o;
}

/** The bytes read (latin1), after skip= and up to count=; or a failure. */
async function readInput(
  ctx: Ctx,
  devices: Devices,
  o: Operands,
  notes: string[],
): Promise<string | { endless: Endless; bytes: number; name: string } | Result> {
  const skip = o.iflag.has("skip_bytes") ? o.skip : o.skip * o.ibs;
  const count =
    o.count === undefined ? undefined : o.iflag.has("count_bytes") ? o.count : o.count * o.ibs;
  let source: string | { endless: Endless };
  const name = o.input ?? "standard input";
  if (o.input === undefined) {
    const stdin = latin1FromBytes(ctx.stdin);
    const endless = devices.claim(stdin);
    source = endless ? { endless } : stdin;
    // Bytes made from a window: past their end the stream goes on, which dd would read.
    const cut = endless ? undefined : devices.cutFrom(stdin);
    if (cut && (count === undefined || skip + count > stdin.length))
      return { stdout: "", stderr: cutShort("dd", "'standard input'", cut), exitCode: 1 };
  } else {
    const endless = await deviceOperand(ctx, o.input);
    if (endless) source = { endless };
    else {
      const path = ctx.fs.resolvePath(ctx.cwd, o.input);
      try {
        if ((await ctx.fs.stat(path)).isDirectory)
          return fail(`error reading '${o.input}': Is a directory`);
        source = ctx.fs.readFileBytes
          ? latin1FromBytes(await ctx.fs.readFileBytes(path))
          : Buffer.from(await ctx.fs.readFileBuffer(path)).toString("latin1");
      } catch {
        return fail(`failed to open '${o.input}': No such file or directory`);
      }
    }
  }
  if (typeof source !== "string") {
    if (count === undefined)
      return fail(
        `${name} never ends: give count= (bash's dd would copy until the disk is full, or forever)`,
      );
    return { endless: source.endless, bytes: count, name };
  }
  if (skip > source.length) {
    notes.push(
      `dd: ${o.input === undefined ? "'standard input'" : o.input}: cannot skip to specified offset\n`,
    );
    return "";
  }
  return source.slice(skip, count === undefined ? undefined : skip + count);
}

function convert(data: string, o: Operands): string {
  if (o.conv.has("swab")) {
    const b = Buffer.from(data, "latin1");
    for (let i = 0; i + 1 < b.length; i += 2) [b[i], b[i + 1]] = [b[i + 1]!, b[i]!];
    data = b.toString("latin1");
  }
  if (o.conv.has("ucase")) data = data.replace(/[a-z]+/g, (s) => s.toUpperCase());
  if (o.conv.has("lcase")) data = data.replace(/[A-Z]+/g, (s) => s.toLowerCase());
  return data;
}

/** Whether of= throws the bytes away (/dev/null, or a device, as the kernel's do). */
async function discards(ctx: Ctx, file: string): Promise<boolean> {
  return (
    ctx.fs.resolvePath(ctx.cwd, file) === "/dev/null" ||
    (await deviceOperand(ctx, file)) !== undefined
  );
}

/** Writes to of= (a file); a failure, or undefined. */
async function writeOutput(ctx: Ctx, o: Operands, data: string): Promise<Result | undefined> {
  const file = o.output!;
  const path = ctx.fs.resolvePath(ctx.cwd, file);
  const exists = await ctx.fs.exists(path);
  if (exists && o.conv.has("excl")) return fail(`failed to open '${file}': File exists`);
  if (!exists && o.conv.has("nocreat"))
    return fail(`failed to open '${file}': No such file or directory`);
  let old: Uint8Array = new Uint8Array(0);
  if (exists) {
    if ((await ctx.fs.stat(path)).isDirectory)
      return fail(`failed to open '${file}': Is a directory`);
    old = await ctx.fs.readFileBuffer(path);
  }
  const seek = o.oflag.has("seek_bytes") ? o.seek : o.seek * o.obs;
  const at = o.oflag.has("append") ? old.length : seek;
  const keep = o.oflag.has("append") || o.conv.has("notrunc");
  const size = Math.max(at + data.length, keep ? old.length : 0);
  reserve(ctx, size, `dd: ${file}`);
  const out = new Uint8Array(size);
  out.set(old.subarray(0, keep ? old.length : Math.min(old.length, at)));
  out.set(Buffer.from(data, "latin1"), at);
  try {
    await ctx.fs.writeFile(path, out);
  } catch (error) {
    return fail(`failed to open '${file}': ${String((error as Error).message ?? error)}`);
  }
  return undefined;
}

/** `dd`, reading the endless devices through `devices`. */
export function dd(devices: Devices): Command {
  return defineCommand("dd", async (args, ctx) => {
    if (args[0] === "--help" || args[0] === "--version")
      return {
        stdout:
          "Usage: dd [OPERAND]...\nCopy a file, converting and formatting according to the operands:\n" +
          "if= of= bs= ibs= obs= count= skip= seek= conv= iflag= oflag= status=\n",
        stderr: "",
        exitCode: 0,
      };
    const started = performance.now();
    const parsed = parseOperands(args);
    if ("exitCode" in parsed) return parsed;
    const o = parsed;
    const notes: string[] = [];
    const input = await readInput(ctx, devices, o, notes);
    if (typeof input !== "string" && "exitCode" in input) return input;
    const toStdout =
      o.output === undefined || ctx.fs.resolvePath(ctx.cwd, o.output) === "/dev/stdout";
    if (toStdout && o.seek > 0) return fail("'standard output': cannot seek: Illegal seek");
    const discarded = !toStdout && (await discards(ctx, o.output!));
    // Bytes of an endless stream are made only if they go somewhere (`of=/dev/null` is counted).
    let data: string | null;
    if (typeof input === "string") data = input;
    else if (discarded) data = null;
    else {
      reserve(ctx, 2 * input.bytes, `dd: ${input.bytes} bytes from ${input.name}`);
      data = endlessBytes(input.endless, input.bytes);
    }
    const read = typeof input === "string" ? input.length : input.bytes;
    const inFull = Math.floor(read / o.ibs);
    const inPartial = read % o.ibs ? 1 : 0;
    const padding = inPartial && o.conv.has("sync") ? o.ibs - (read % o.ibs) : 0;
    const length = read + padding;
    if (data !== null) data = convert(data + "\0".repeat(padding), o);
    // bs= writes each block as read; otherwise the bytes are cut into obs-sized blocks.
    const direct = o.bs;
    const outFull = direct
      ? inFull + (o.conv.has("sync") ? inPartial : 0)
      : Math.floor(length / o.obs);
    const outPartial = direct ? (o.conv.has("sync") ? 0 : inPartial) : length % o.obs ? 1 : 0;
    let stdout = "";
    if (toStdout) stdout = data ?? "";
    else if (!discarded) {
      const error = await writeOutput(ctx, o, data ?? "");
      if (error) return { ...error, stderr: notes.join("") + error.stderr };
    }
    const seconds = (performance.now() - started) / 1000;
    const stderr =
      notes.join("") +
      (o.status === "none"
        ? ""
        : summary(inFull, inPartial, outFull, outPartial, length, seconds, o.status === "default"));
    return { ...bytesOutput(unsafeBytesFromLatin1(stdout)), stderr, exitCode: 0 };
  });
}

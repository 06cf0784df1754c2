// Worker side: `uniq`, GNU's in the C locale, in place of just-bash's (one string per line, counts
// padded to 4 columns where GNU pads to 7, no -f/-s/-w, a second operand read as input). One
// linear scan over the input buffer: each line is compared with the first line of its group.
// Supported: -c -d -D -u -i -f -s -w -z, the obsolete -N and +N, [INPUT [OUTPUT]]. --group and
// --all-repeated=prepend|separate are run by just-bash's uniq.

import { defineCommand } from "just-bash";
import {
  ByteWriter,
  bytesResult,
  NEWLINE,
  operandBytes,
  UnreadableFile,
  writeOutputFile,
} from "./shared/bytes.js";
import { type Ctx, failure, original, type Result } from "./shared/context.js";
import {
  none,
  type OptionTable,
  optional,
  parseCommandLine,
  required,
  usageError,
} from "./shared/options.js";
import { FOLD } from "./sort/keys.js";

const OPTIONS: OptionTable = {
  short: {
    c: none,
    d: none,
    D: none,
    f: required,
    i: none,
    s: required,
    u: none,
    w: required,
    z: none,
    ...Object.fromEntries([..."0123456789"].map((d) => [d, none])),
  },
  long: {
    count: { id: "c", arg: none },
    repeated: { id: "d", arg: none },
    "all-repeated": { id: "D", arg: optional },
    group: { id: "group", arg: optional },
    "ignore-case": { id: "i", arg: none },
    unique: { id: "u", arg: none },
    "skip-fields": { id: "f", arg: required },
    "skip-chars": { id: "s", arg: required },
    "check-chars": { id: "w", arg: required },
    "zero-terminated": { id: "z", arg: none },
    help: { id: "help", arg: none },
    version: { id: "version", arg: none },
  },
};

interface Plan {
  count: boolean;
  /** Print groups of one line, groups of several (their first line), every line of those. */
  singles: boolean;
  repeated: boolean;
  allRepeated: boolean;
  fold: boolean;
  skipFields: number;
  skipChars: number;
  checkChars: number;
  delimiter: number;
  input: string;
  output: string | undefined;
}

const error = (message: string) => failure(`uniq: ${message}\n`, 1);

/** A count option's value: a non-negative decimal, as GNU's size parsing takes it. */
function size(value: string): number | undefined {
  if (!/^\s*\+?\d+$/.test(value)) return undefined;
  return Math.min(Number(value.replace(/[\s+]/g, "")), Number.MAX_SAFE_INTEGER);
}

const SIZE_ERRORS: Record<string, string> = {
  f: "invalid number of fields to skip",
  s: "invalid number of bytes to skip",
  w: "invalid number of bytes to compare",
};

function planOf(args: string[]): Plan | Result | "delegate" {
  const parsed = parseCommandLine("uniq", args, OPTIONS, 1);
  if ("exitCode" in parsed) return parsed;
  const plan: Plan = {
    count: false,
    singles: true,
    repeated: true,
    allRepeated: false,
    fold: false,
    skipFields: 0,
    skipChars: 0,
    checkChars: Number.POSITIVE_INFINITY,
    delimiter: NEWLINE,
    input: "-",
    output: undefined,
  };
  let digits = "";
  let digitsWord = -1;
  for (const { id, value, word } of parsed.options) {
    // Obsolete -N: skip N fields; the digits of one word (-12) make one number.
    if (id >= "0" && id <= "9") {
      digits = word === digitsWord ? digits + id : id;
      digitsWord = word;
      plan.skipFields = Number(digits);
      continue;
    }
    if (id === "group" || id === "help" || id === "version") return "delegate";
    if (id === "D" && value !== undefined && value !== "none") return "delegate";
    if (id === "c") plan.count = true;
    else if (id === "d") plan.singles = false;
    else if (id === "u") plan.repeated = false;
    else if (id === "D") {
      plan.allRepeated = true;
      plan.singles = false;
    } else if (id === "i") plan.fold = true;
    else if (id === "z") plan.delimiter = 0;
    else {
      const n = size(value ?? "");
      if (n === undefined) return error(`${value}: ${SIZE_ERRORS[id]}`);
      if (id === "f") plan.skipFields = n;
      else if (id === "s") plan.skipChars = n;
      else plan.checkChars = n;
    }
  }
  if (plan.allRepeated && plan.count)
    return failure(
      usageError("uniq", "printing all duplicated lines and repeat counts is meaningless"),
      1,
    );
  return operandsOf(plan, parsed.operands);
}

function operandsOf(plan: Plan, operands: string[]): Plan | Result {
  const files: string[] = [];
  for (const operand of operands) {
    // Obsolete +N: skip N bytes.
    const skip = /^\+\d+$/.test(operand) ? Number(operand.slice(1)) : undefined;
    if (skip !== undefined) plan.skipChars = skip;
    else if (files.length === 2)
      return failure(usageError("uniq", `extra operand '${operand}'`), 1);
    else files.push(operand);
  }
  plan.input = files[0] ?? "-";
  plan.output = files[1];
  return plan;
}

const BLANK = (c: number | undefined) => c === 0x20 || c === 0x09;

/** Where the compared part of the line [start, end) begins: after -f fields and -s bytes. */
function fieldStart(data: Uint8Array, start: number, end: number, plan: Plan): number {
  if (plan.skipFields === 0 && plan.skipChars === 0) return start;
  let p = start;
  for (let f = 0; f < plan.skipFields && p < end; f++) {
    while (p < end && BLANK(data[p])) p++;
    while (p < end && !BLANK(data[p])) p++;
  }
  return Math.min(end, p + plan.skipChars);
}

function sameKey(
  data: Uint8Array,
  a: number,
  aEnd: number,
  b: number,
  bEnd: number,
  fold: boolean,
): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; i < aEnd - a; i++) {
    const x = data[a + i]!;
    const y = data[b + i]!;
    if (x !== y && (!fold || FOLD[x] !== FOLD[y])) return false;
  }
  return true;
}

/** One pass: groups of equal lines, each written as the options ask. */
function scan(data: Uint8Array, plan: Plan): ByteWriter {
  const { delimiter } = plan;
  const out = new ByteWriter(data.length + (plan.count ? data.length / 2 : 0) + 1);
  const length = data.length;
  let groupStart = 0;
  let groupEnd = 0;
  let groupKey = 0;
  let groupKeyEnd = 0;
  let members = 0;
  const writeLine = (start: number, end: number) => {
    out.range(data, start, end);
    out.byte(delimiter);
  };
  const flush = () => {
    if (members === 0) return;
    if (members === 1 ? !plan.singles : !plan.repeated) return;
    if (plan.count) out.ascii(`${String(members).padStart(7)} `);
    if (!plan.allRepeated) writeLine(groupStart, groupEnd);
    else {
      // -D: every line of the group, which lies contiguous in the input.
      let p = groupStart;
      for (let m = 0; m < members; m++) {
        let e = p;
        while (e < length && data[e] !== delimiter) e++;
        writeLine(p, e);
        p = e + 1;
      }
    }
  };
  let p = 0;
  while (p < length) {
    let end = p;
    while (end < length && data[end] !== delimiter) end++;
    const key = fieldStart(data, p, end, plan);
    const keyEnd = Math.min(end, key + plan.checkChars);
    if (members > 0 && sameKey(data, groupKey, groupKeyEnd, key, keyEnd, plan.fold)) members++;
    else {
      flush();
      groupStart = p;
      groupEnd = end;
      groupKey = key;
      groupKeyEnd = keyEnd;
      members = 1;
    }
    p = end + 1;
  }
  flush();
  return out;
}

async function runUniq(args: string[], ctx: Ctx): Promise<Result> {
  const plan = planOf(args);
  if (plan === "delegate")
    return original(ctx, "uniq", args, error("this option is not supported"));
  if (!("delimiter" in plan)) return plan;
  let data: Uint8Array;
  try {
    data = await operandBytes(ctx, plan.input);
  } catch (e) {
    if (!(e instanceof UnreadableFile)) throw e;
    return error(e.reason === "Is a directory" ? `error reading '${e.file}'` : e.message);
  }
  const out = scan(data, plan);
  if (plan.output === undefined || plan.output === "-") return bytesResult(out.latin1());
  const problem = await writeOutputFile(ctx, plan.output, out.bytes());
  return problem ? error(`${plan.output}: ${problem}`) : bytesResult("");
}

export const uniq = defineCommand("uniq", runUniq);

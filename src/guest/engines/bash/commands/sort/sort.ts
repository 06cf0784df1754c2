// Worker side: `sort`, GNU's in the C locale (the sandbox sets no locale), in place of just-bash's,
// which splits its input into one string per line and compares with localeCompare: 20 MB of words
// passed the default memoryMb. Here the lines stay in one buffer and are ordered as positions
// (line-sort.ts). Supported: -b -f -n -r -s -u -z -c/-C -k -t -o, and -S -T --parallel (accepted,
// no effect). Options GNU has and this does not (-d -g -h -i -M -R -V -m, --sort, ...) are run by
// just-bash's own sort, as before.

import { defineCommand } from "just-bash";
import {
  bytesResult,
  joinInputs,
  latin1,
  NEWLINE,
  operandBytes,
  UnreadableFile,
  writeOutputFile,
} from "../shared/bytes.js";
import { type Ctx, failure, original, type Result } from "../shared/context.js";
import { none, type OptionTable, optional, parseCommandLine, required } from "../shared/options.js";
import {
  compareBytes,
  compareKeys,
  FOLD,
  hasOrdering,
  type Key,
  keyEnd,
  keyStart,
  NO_TAB,
  numericValue,
  parseKeySpec,
  wholeLineKey,
} from "./keys.js";
import { mergeSortLines, numericSortLines, radixSortLines } from "./line-sort.js";

/** GNU sort's options, long ones in GNU's order (that order shows in "ambiguous" messages). */
const OPTIONS: OptionTable = {
  short: {
    b: none,
    c: none,
    C: none,
    d: none,
    f: none,
    g: none,
    h: none,
    i: none,
    k: required,
    m: none,
    M: none,
    n: none,
    o: required,
    r: none,
    R: none,
    s: none,
    S: required,
    t: required,
    T: required,
    u: none,
    V: none,
    y: required,
    z: none,
  },
  long: {
    "ignore-leading-blanks": { id: "b", arg: none },
    check: { id: "check", arg: optional },
    "compress-program": { id: "compress-program", arg: required },
    debug: { id: "debug", arg: none },
    "dictionary-order": { id: "d", arg: none },
    "ignore-case": { id: "f", arg: none },
    "files0-from": { id: "files0-from", arg: required },
    "general-numeric-sort": { id: "g", arg: none },
    "ignore-nonprinting": { id: "i", arg: none },
    key: { id: "k", arg: required },
    merge: { id: "m", arg: none },
    "month-sort": { id: "M", arg: none },
    "numeric-sort": { id: "n", arg: none },
    "human-numeric-sort": { id: "h", arg: none },
    "version-sort": { id: "V", arg: none },
    "random-sort": { id: "R", arg: none },
    "random-source": { id: "random-source", arg: required },
    sort: { id: "sort", arg: required },
    output: { id: "o", arg: required },
    reverse: { id: "r", arg: none },
    stable: { id: "s", arg: none },
    "batch-size": { id: "batch-size", arg: required },
    "buffer-size": { id: "S", arg: required },
    "field-separator": { id: "t", arg: required },
    "temporary-directory": { id: "T", arg: required },
    unique: { id: "u", arg: none },
    "zero-terminated": { id: "z", arg: none },
    parallel: { id: "parallel", arg: required },
    help: { id: "help", arg: none },
    version: { id: "version", arg: none },
  },
};

/** Left to just-bash's sort: orderings this one does not implement, help and version. */
const DELEGATED = new Set(
  "d h i m M R V compress-program debug files0-from random-source sort help version".split(" "),
);
/** Tuning GNU accepts that changes nothing in the output. */
const IGNORED = new Set(["S", "T", "y", "batch-size", "parallel"]);

interface Plan {
  keys: Key[];
  /** GNU's global key: the options given outside -k, which keys without options take. */
  global: Key;
  unique: boolean;
  stable: boolean;
  check: "" | "c" | "C";
  output: string | undefined;
  tab: number;
  delimiter: number;
  files: string[];
}

const EXIT = 2;
const error = (message: string) => failure(`sort: ${message}\n`, EXIT);

function setTab(plan: Plan, value: string): Result | undefined {
  if (value === "") return error("empty tab");
  let tab: number;
  if (value === "\\0") tab = 0;
  else if (Buffer.byteLength(value, "utf8") > 1) return error(`multi-character tab '${value}'`);
  else tab = value.charCodeAt(0);
  if (plan.tab !== NO_TAB && plan.tab !== tab) return error("incompatible tabs");
  plan.tab = tab;
  return undefined;
}

function setCheck(plan: Plan, mode: "c" | "C"): Result | undefined {
  if (plan.check !== "" && plan.check !== mode) return error("options '-cC' are incompatible");
  plan.check = mode;
  return undefined;
}

function checkMode(value: string | undefined): "c" | "C" | undefined {
  if (value === undefined) return "c";
  if (value !== "" && "diagnose-first".startsWith(value)) return "c";
  if (value !== "" && ("quiet".startsWith(value) || "silent".startsWith(value))) return "C";
  return undefined;
}

const BAD_CHECK = (value: string) =>
  failure(
    `sort: invalid argument '${value}' for '--check'\nValid arguments are:\n  - 'quiet', 'silent'\n  - 'diagnose-first'\nTry 'sort --help' for more information.\n`,
    EXIT,
  );

/** Reads the command line into a plan, an error to print, or "delegate" (not ours to run). */
function planOf(args: string[]): Plan | Result | "delegate" {
  const parsed = parseCommandLine("sort", args, OPTIONS, EXIT);
  if ("exitCode" in parsed) return parsed;
  const plan: Plan = {
    keys: [],
    global: wholeLineKey(),
    unique: false,
    stable: false,
    check: "",
    output: undefined,
    tab: NO_TAB,
    delimiter: NEWLINE,
    files: parsed.operands,
  };
  const g = plan.global;
  for (const { id, value = "" } of parsed.options) {
    if (DELEGATED.has(id)) return "delegate";
    if (IGNORED.has(id)) continue;
    let problem: Result | undefined;
    if (id === "b") g.skipStartBlanks = g.skipEndBlanks = true;
    else if (id === "f") g.fold = true;
    else if (id === "n") g.numeric = true;
    else if (id === "g") g.general = true;
    else if (id === "r") g.reverse = true;
    else if (id === "s") plan.stable = true;
    else if (id === "u") plan.unique = true;
    else if (id === "z") plan.delimiter = 0;
    else if (id === "c" || id === "C") problem = setCheck(plan, id);
    else if (id === "check") {
      const mode = checkMode(value || undefined);
      problem = mode ? setCheck(plan, mode) : BAD_CHECK(value);
    } else if (id === "t") problem = setTab(plan, value);
    else if (id === "o") {
      if (plan.output !== undefined && plan.output !== value)
        problem = error("multiple output files specified");
      plan.output = value;
    } else if (id === "k") {
      const key = parseKeySpec(value);
      if ("delegate" in key) return "delegate";
      if ("error" in key) problem = error(key.error);
      else plan.keys.push(key.key);
    }
    if (problem) return problem;
  }
  return finishPlan(plan);
}

function finishPlan(plan: Plan): Plan | Result {
  if (plan.check !== "") {
    if (plan.files.length > 1)
      return error(`extra operand '${plan.files[1]}' not allowed with -${plan.check}`);
    if (plan.output !== undefined) return error(`options '-${plan.check}o' are incompatible`);
  }
  const g = plan.global;
  for (const key of plan.keys) {
    if (hasOrdering(key) || key.reverse) continue;
    key.skipStartBlanks = g.skipStartBlanks;
    key.skipEndBlanks = g.skipEndBlanks;
    key.fold = g.fold;
    key.numeric = g.numeric;
    key.general = g.general;
    key.reverse = g.reverse;
  }
  if (plan.keys.length === 0 && hasOrdering(g)) plan.keys.push(g);
  if (plan.files.length === 0) plan.files.push("-");
  return plan;
}

/** Offsets where lines start, plus one past the last line's delimiter (real or not). */
function lineStarts(data: Uint8Array, delimiter: number): Int32Array {
  const length = data.length;
  let n = 0;
  for (let i = 0; i < length; i++) if (data[i] === delimiter) n++;
  const open = length > 0 && data[length - 1] !== delimiter;
  if (open) n++;
  const starts = new Int32Array(n + 1);
  let line = 1;
  for (let i = 0; i < length; i++) if (data[i] === delimiter && line < n) starts[line++] = i + 1;
  starts[n] = open ? length + 1 : length;
  return starts;
}

/** Whole-line byte order, possibly case folded: the radix sort's case. */
function radixPlan(plan: Plan): Key | undefined {
  if (plan.keys.length === 0) return { ...wholeLineKey(), reverse: plan.global.reverse };
  if (plan.keys.length > 1) return undefined;
  const key = plan.keys[0]!;
  const whole =
    key.startField === 0 && key.startChar === 0 && key.endField === Number.POSITIVE_INFINITY;
  if (!whole || key.numeric || key.general || key.skipStartBlanks || key.skipEndBlanks)
    return undefined;
  return key.reverse === plan.global.reverse ? key : undefined;
}

/**
 * The first key's value as a double per line, when that key is numeric, negated when it is
 * reversed: ascending order of these is the first key's order, up to equal values.
 */
function numericValues(data: Uint8Array, starts: Int32Array, plan: Plan): Float64Array | null {
  const key = plan.keys[0];
  if (!key?.numeric || key.general) return null;
  const n = starts.length - 1;
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const start = starts[i]!;
    const end = starts[i + 1]! - 1;
    const from = keyStart(data, start, end, key, plan.tab);
    const to = Math.max(from, keyEnd(data, start, end, key, plan.tab));
    const value = numericValue(data, from, to);
    values[i] = key.reverse && value !== 0 ? -value : value;
  }
  return values;
}

/** GNU's compare(): the keys, then (unless -s or -u) the whole line's bytes as a last resort. */
function lineComparator(data: Uint8Array, starts: Int32Array, plan: Plan) {
  const { keys, tab, unique, stable } = plan;
  const reverse = plan.global.reverse;
  return (x: number, y: number): number => {
    const aStart = starts[x]!;
    const aEnd = starts[x + 1]! - 1;
    const bStart = starts[y]!;
    const bEnd = starts[y + 1]! - 1;
    if (keys.length > 0) {
      const diff = compareKeys(data, aStart, aEnd, bStart, bEnd, keys, tab);
      if (diff !== 0 || unique || stable) return diff;
    }
    const diff = compareBytes(data, aStart, aEnd, bStart, bEnd, null);
    return reverse ? -diff : diff;
  };
}

/** Sorted whole lines by the radix sort; the output is a view of a buffer. */
function sortByRadix(data: Uint8Array, starts: Int32Array, plan: Plan, key: Key): Uint8Array {
  const lines = starts.subarray(0, starts.length - 1);
  const table = key.fold ? FOLD : null;
  radixSortLines(data, lines, {
    delimiter: plan.delimiter,
    table: table ?? identity(),
    reverse: key.reverse,
    rawTieBreak: key.fold && !plan.stable && !plan.unique,
  });
  const { delimiter, unique } = plan;
  const length = data.length;
  // The output is the input's lines again (or fewer), each with its delimiter.
  const out = Buffer.allocUnsafe(length + 1);
  let size = 0;
  let previousStart = -1;
  let previousEnd = -1;
  for (const start of lines) {
    let end = start;
    while (end < length && data[end] !== delimiter) end++;
    if (unique && previousStart >= 0) {
      if (compareBytes(data, previousStart, previousEnd, start, end, table) === 0) continue;
    }
    previousStart = start;
    previousEnd = end;
    for (let i = start; i < end; i++) out[size++] = data[i]!;
    out[size++] = delimiter;
  }
  return out.subarray(0, size);
}

let identityTable: Uint8Array | undefined;
function identity(): Uint8Array {
  if (!identityTable) {
    identityTable = new Uint8Array(256);
    for (let c = 0; c < 256; c++) identityTable[c] = c;
  }
  return identityTable;
}

/** Sorted lines by GNU's comparison (a numeric first key by value first); a view of a buffer. */
function sortByComparison(data: Uint8Array, starts: Int32Array, plan: Plan): Uint8Array {
  const n = starts.length - 1;
  const lines = new Int32Array(n);
  for (let i = 0; i < n; i++) lines[i] = i;
  const compare = lineComparator(data, starts, plan);
  const values = numericValues(data, starts, plan);
  if (values) numericSortLines(lines, values, compare);
  else mergeSortLines(lines, compare);
  const out = Buffer.allocUnsafe(data.length + 1);
  let size = 0;
  let previous = -1;
  for (const line of lines) {
    if (plan.unique && previous >= 0 && compare(previous, line) === 0) continue;
    previous = line;
    const end = starts[line + 1]! - 1;
    for (let i = starts[line]!; i < end; i++) out[size++] = data[i]!;
    out[size++] = plan.delimiter;
  }
  return out.subarray(0, size);
}

/** -c / -C: the first line out of order, as GNU reports it. */
function check(data: Uint8Array, starts: Int32Array, plan: Plan): Result {
  const compare = lineComparator(data, starts, plan);
  const n = starts.length - 1;
  for (let i = 1; i < n; i++) {
    const diff = compare(i - 1, i);
    if (plan.unique ? diff < 0 : diff <= 0) continue;
    if (plan.check === "C") return failure("", 1);
    const text = new TextDecoder().decode(data.subarray(starts[i]!, starts[i + 1]! - 1));
    return failure(`sort: ${plan.files[0]}:${i + 1}: disorder: ${text}\n`, 1);
  }
  return bytesResult("");
}

async function readAll(ctx: Ctx, plan: Plan): Promise<Uint8Array | Result> {
  const inputs: Uint8Array[] = [];
  for (const file of plan.files) {
    try {
      inputs.push(await operandBytes(ctx, file));
    } catch (e) {
      if (!(e instanceof UnreadableFile)) throw e;
      const what = e.reason === "Is a directory" ? "read failed" : "cannot read";
      return error(`${what}: ${e.file}: ${e.reason}`);
    }
  }
  const data = joinInputs(inputs, plan.delimiter);
  // Line offsets are 32-bit; no input this large fits within memoryMb anyway.
  if (data.length >= 2 ** 31 - 1) return error("input too large for polybox's sort");
  return data;
}

async function runSort(args: string[], ctx: Ctx): Promise<Result> {
  const plan = planOf(args);
  if (plan === "delegate")
    return original(ctx, "sort", args, error("this option is not supported"));
  if (!("keys" in plan)) return plan;
  const data = await readAll(ctx, plan);
  if (!(data instanceof Uint8Array)) return data;
  const starts = lineStarts(data, plan.delimiter);
  if (plan.check !== "") return check(data, starts, plan);
  const radixKey = radixPlan(plan);
  const out = radixKey
    ? sortByRadix(data, starts, plan, radixKey)
    : sortByComparison(data, starts, plan);
  if (plan.output === undefined) return bytesResult(latin1(out));
  const problem = await writeOutputFile(ctx, plan.output, out);
  return problem ? error(`open failed: ${plan.output}: ${problem}`) : bytesResult("");
}

export const sort = defineCommand("sort", runSort);

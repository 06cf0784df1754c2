// Worker side: `tr`, GNU's in the C locale, in place of just-bash's, which decodes its input and
// builds its output one character at a time. Here SET1 and SET2 become 256-entry tables
// (translate, delete, squeeze) applied in one pass over the input bytes. Bytes outside the sets —
// UTF-8 sequences included — pass through unchanged. Sets spelled with non-ASCII characters
// (`tr 'é' 'e'`) are left to just-bash's tr, which works on characters where GNU's would
// translate each byte of them.

import { defineCommand } from "just-bash";
import { bytesResult, stdinBytes } from "./shared/bytes.js";
import { type Ctx, failure, original, type Result } from "./shared/context.js";
import { none, type OptionTable, parseCommandLine, usageError } from "./shared/options.js";

const OPTIONS: OptionTable = {
  short: { c: none, C: none, d: none, s: none, t: none },
  long: {
    complement: { id: "c", arg: none },
    delete: { id: "d", arg: none },
    "squeeze-repeats": { id: "s", arg: none },
    "truncate-set1": { id: "t", arg: none },
    help: { id: "help", arg: none },
    version: { id: "version", arg: none },
  },
  // GNU tr stops reading options at its first operand: `tr a -d` has two sets.
  inOrder: true,
};

const N = 256;

const CLASSES: Readonly<Record<string, (c: number) => boolean>> = {
  alnum: (c) => isDigit(c) || isUpper(c) || isLower(c),
  alpha: (c) => isUpper(c) || isLower(c),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => isDigit(c),
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: (c) => isLower(c),
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !isDigit(c) && !isUpper(c) && !isLower(c),
  space: (c) => (c >= 0x09 && c <= 0x0d) || c === 0x20,
  upper: (c) => isUpper(c),
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isUpper(c: number): boolean {
  return c >= 0x41 && c <= 0x5a;
}
function isLower(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}

/** One construct of a set, in the order GNU expands them. */
type Element =
  | { kind: "char"; c: number }
  | { kind: "range"; from: number; to: number }
  | { kind: "class"; name: string; members: number[] }
  | { kind: "equiv"; c: number }
  | { kind: "repeat"; c: number; count: number; indefinite: boolean };

class TrError extends Error {}

/** A set's bytes with, for each, whether it came from a backslash escape (GNU's unquote). */
function unquote(text: string): { bytes: number[]; escaped: boolean[]; warning: string } {
  const bytes: number[] = [];
  const escaped: boolean[] = [];
  let warning = "";
  const SIMPLE: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11 };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch !== "\\") {
      bytes.push(text.charCodeAt(i));
      escaped.push(false);
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) {
      warning += "tr: warning: an unescaped backslash at end of string is not portable\n";
      bytes.push(0x5c);
      escaped.push(false);
      continue;
    }
    i++;
    let value: number;
    if (next in SIMPLE) value = SIMPLE[next]!;
    else if (next >= "0" && next <= "7") {
      value = Number(next);
      // Up to three octal digits, as long as the value fits in a byte.
      for (let k = 0; k < 2; k++) {
        const d = text[i + 1];
        if (d === undefined || d < "0" || d > "7" || value * 8 + Number(d) >= N) break;
        value = value * 8 + Number(d);
        i++;
      }
    } else value = text.charCodeAt(i);
    bytes.push(value);
    escaped.push(true);
  }
  return { bytes, escaped, warning };
}

const printable = (c: number) =>
  c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : `\\${c.toString(8).padStart(3, "0")}`;

/** GNU's build_spec_list: constructs [:class:], [=c=], [c*n], c1-c2 and single bytes. */
function parseSet(text: string): { elements: Element[]; warning: string } {
  const { bytes: s, escaped, warning } = unquote(text);
  const is = (i: number, c: string) => s[i] === c.charCodeAt(0) && !escaped[i];
  const elements: Element[] = [];
  let i = 0;
  while (i + 2 < s.length) {
    if (is(i, "[")) {
      const bracketed = parseBracketed(s, escaped, i, is);
      if (bracketed) {
        elements.push(bracketed.element);
        i = bracketed.next;
        continue;
      }
    }
    if (is(i + 1, "-")) {
      const from = s[i]!;
      const to = s[i + 2]!;
      if (from > to)
        throw new TrError(
          `range-endpoints of '${printable(from)}-${printable(to)}' are in reverse collating sequence order`,
        );
      elements.push({ kind: "range", from, to });
      i += 3;
    } else elements.push({ kind: "char", c: s[i++]! });
  }
  for (; i < s.length; i++) elements.push({ kind: "char", c: s[i]! });
  return { elements, warning };
}

function parseBracketed(
  s: number[],
  escaped: boolean[],
  i: number,
  is: (i: number, c: string) => boolean,
): { element: Element; next: number } | undefined {
  if (is(i + 1, ":") || is(i + 1, "=")) {
    const delim = String.fromCharCode(s[i + 1]!);
    let close = -1;
    for (let k = i + 2; k + 1 < s.length; k++)
      if (is(k, delim) && is(k + 1, "]")) {
        close = k;
        break;
      }
    if (close >= 0) {
      const operand = String.fromCharCode(...s.slice(i + 2, close));
      if (operand === "")
        throw new TrError(
          delim === ":"
            ? "missing character class name '[::]'"
            : "missing equivalence class character '[==]'",
        );
      const element = classOrEquiv(delim, operand);
      if (element) return { element, next: close + 2 };
      if (!looksLikeRepeat(s, escaped, i + 2)) {
        throw new TrError(
          delim === ":"
            ? `invalid character class '${operand}'`
            : `${operand}: equivalence class operand must be a single character`,
        );
      }
    }
  }
  return parseRepeat(s, escaped, i);
}

function classOrEquiv(delim: string, operand: string): Element | undefined {
  if (delim === "=")
    return operand.length === 1 ? { kind: "equiv", c: operand.charCodeAt(0) } : undefined;
  const test = Object.hasOwn(CLASSES, operand) ? CLASSES[operand] : undefined;
  if (!test) return undefined;
  const members: number[] = [];
  for (let c = 0; c < N; c++) if (test(c)) members.push(c);
  return { kind: "class", name: operand, members };
}

/** GNU's star_digits_closebracket: `*`, digits, `]` from `at` (so `[:*3]` is a repeat of ':'). */
function looksLikeRepeat(s: number[], escaped: boolean[], at: number): boolean {
  if (s[at] !== 0x2a || escaped[at]) return false;
  let k = at + 1;
  while (k < s.length && isDigit(s[k]!) && !escaped[k]) k++;
  return k < s.length && s[k] === 0x5d && !escaped[k];
}

/** `[c*n]` or `[c*]` at `i`; undefined when it is not one (then `[` is an ordinary byte). */
function parseRepeat(
  s: number[],
  escaped: boolean[],
  i: number,
): { element: Element; next: number } | undefined {
  if (i + 2 >= s.length || s[i + 2] !== 0x2a || escaped[i + 2]) return undefined;
  for (let k = i + 3; k < s.length && !escaped[k]; k++) {
    if (s[k] !== 0x5d) continue;
    const digits = String.fromCharCode(...s.slice(i + 3, k));
    let count = 0;
    if (digits !== "") {
      const octal = digits.startsWith("0");
      if (!(octal ? /^[0-7]+$/ : /^\d+$/).test(digits))
        throw new TrError(`invalid repeat count '${digits}' in [c*n] construct`);
      count = Number.parseInt(digits, octal ? 8 : 10);
      if (!Number.isSafeInteger(count))
        throw new TrError(`invalid repeat count '${digits}' in [c*n] construct`);
    }
    return {
      element: { kind: "repeat", c: s[i + 1]!, count, indefinite: count === 0 },
      next: k + 1,
    };
  }
  return undefined;
}

function elementLength(e: Element): number {
  switch (e.kind) {
    case "char":
    case "equiv":
      return 1;
    case "range":
      return e.to - e.from + 1;
    case "class":
      return e.members.length;
    case "repeat":
      return e.count;
  }
}

type CaseClass = "" | "upper" | "lower";

/** GNU's get_next: walks a set byte by byte, saying when a byte comes from [:upper:]/[:lower:]. */
class SetWalker {
  private index = 0;
  private offset = 0;
  caseClass: CaseClass = "";

  constructor(private readonly elements: Element[]) {}

  /** Whether the next byte starts a construct. */
  get atNewElement(): boolean {
    return this.offset === 0;
  }

  next(): number {
    this.caseClass = "";
    for (;;) {
      const e = this.elements[this.index];
      if (e === undefined) return -1;
      if (e.kind === "repeat" && e.count === 0) {
        this.skip();
        continue;
      }
      if (e.kind === "class" && (e.name === "upper" || e.name === "lower")) this.caseClass = e.name;
      const c = this.byteAt(e, this.offset++);
      if (this.offset >= elementLength(e)) this.skip();
      return c;
    }
  }

  private byteAt(e: Element, k: number): number {
    switch (e.kind) {
      case "char":
      case "equiv":
        return e.c;
      case "range":
        return e.from + k;
      case "class":
        return e.members[k]!;
      case "repeat":
        return e.c;
    }
  }

  /** Moves past the current construct (GNU's skip_construct). */
  skip(): void {
    this.index++;
    this.offset = 0;
  }
}

/** Every byte a set names, complemented on request (GNU's set_initialize). */
function membership(elements: Element[], complement: boolean): Uint8Array {
  const set = new Uint8Array(N);
  const walker = new SetWalker(elements);
  for (let c = walker.next(); c !== -1; c = walker.next()) set[c] = 1;
  if (complement) for (let c = 0; c < N; c++) set[c] = set[c] ? 0 : 1;
  return set;
}

interface Plan {
  complement: boolean;
  delete: boolean;
  squeeze: boolean;
  truncate: boolean;
  sets: string[];
}

/** Operand counts GNU accepts for the options given, with its messages. */
function checkOperands(plan: Plan): Result | undefined {
  const n = plan.sets.length;
  const min = plan.delete === plan.squeeze ? 2 : 1;
  const max = plan.delete && !plan.squeeze ? 1 : 2;
  if (n < min) {
    if (n === 0) return failure(usageError("tr", "missing operand"), 1);
    const why = plan.squeeze
      ? "Two strings must be given when both deleting and squeezing repeats."
      : "Two strings must be given when translating.";
    return failure(usageError("tr", `missing operand after '${plan.sets[n - 1]}'\n${why}`), 1);
  }
  if (n > max) {
    const why =
      n === 2 ? "\nOnly one string may be given when deleting without squeezing repeats." : "";
    return failure(usageError("tr", `extra operand '${plan.sets[max]}'${why}`), 1);
  }
  return undefined;
}

interface Tables {
  map: Uint8Array;
  drop: Uint8Array;
  squeeze: Uint8Array;
}

/** What SET2 holds once its indefinite [c*] is sized (GNU's get_s2_spec_stats). */
function fitSet2(elements: Element[], set1Length: number, translating: boolean): number {
  const indefinite = elements.filter((e) => e.kind === "repeat" && e.indefinite);
  if (indefinite.length > 1)
    throw new TrError("only one [c*] repeat construct may appear in string2");
  if (indefinite.length === 1 && !translating)
    throw new TrError("the [c*] construct may appear in string2 only when translating");
  let length = 0;
  for (const e of elements) length += elementLength(e);
  const repeat = indefinite[0];
  if (repeat?.kind === "repeat" && set1Length >= length) {
    repeat.count = set1Length - length;
    length = set1Length;
  }
  return length;
}

/** The last byte SET2 names, which pads it to SET1's length (GNU's string2_extend). */
function lastByte(elements: Element[]): number {
  const e = elements.at(-1)!;
  if (e.kind === "range") return e.to;
  if (e.kind === "class") return e.members.at(-1)!;
  return e.c;
}

function checkCaseClasses(set1: Element[], set2: Element[]): { s1: number; s2: number } {
  // Aligned [:upper:]/[:lower:] pairs count once, not 26 times (GNU's validate_case_classes).
  const a = new SetWalker(set1);
  const b = new SetWalker(set2);
  let s1 = 0;
  let s2 = 0;
  for (;;) {
    const newA = a.atNewElement;
    const newB = b.atNewElement;
    const ca = a.next();
    const cb = b.next();
    if (newB && b.caseClass !== "" && !(newA && a.caseClass !== ""))
      throw new TrError("misaligned [:upper:] and/or [:lower:] construct");
    if (b.caseClass !== "") {
      a.skip();
      b.skip();
      s1 += 25;
      s2 += 25;
    }
    if (ca === -1 || cb === -1) return { s1, s2 };
  }
}

function translation(plan: Plan, set1: Element[], set2: Element[]): Uint8Array {
  const map = new Uint8Array(N);
  for (let c = 0; c < N; c++) map[c] = c;
  const walker2 = new SetWalker(set2);
  if (plan.complement) {
    const in1 = membership(set1, false);
    for (let c = 0; c < N; c++) {
      if (in1[c]) continue;
      const to = walker2.next();
      if (to === -1) break;
      map[c] = to;
    }
    return map;
  }
  const walker1 = new SetWalker(set1);
  for (;;) {
    const from = walker1.next();
    const to = walker2.next();
    const class1 = walker1.caseClass;
    const class2 = walker2.caseClass;
    if (class1 === "lower" && class2 === "upper") {
      for (let c = 0x61; c <= 0x7a; c++) map[c] = c - 32;
    } else if (class1 === "upper" && class2 === "lower") {
      for (let c = 0x41; c <= 0x5a; c++) map[c] = c + 32;
    } else {
      if (from === -1 || to === -1) break;
      map[from] = to;
    }
    if (class2 !== "") {
      walker1.skip();
      walker2.skip();
    }
  }
  return map;
}

function complementLength(elements: Element[]): number {
  const in1 = membership(elements, false);
  let n = 0;
  for (let c = 0; c < N; c++) if (!in1[c]) n++;
  return n;
}

/** GNU's validate, then the tables for one pass. */
function tablesOf(plan: Plan, set1: Element[], set2: Element[] | undefined): Tables {
  if (set1.some((e) => e.kind === "repeat" && e.indefinite))
    throw new TrError("the [c*] repeat construct may not appear in string1");
  const translating = set2 !== undefined && !plan.delete;
  const tables: Tables = {
    map: Uint8Array.from({ length: N }, (_, c) => c),
    drop: new Uint8Array(N),
    squeeze: new Uint8Array(N),
  };
  let set1Length = plan.complement ? complementLength(set1) : 0;
  if (!plan.complement) for (const e of set1) set1Length += elementLength(e);
  if (set2 !== undefined) {
    let set2Length = fitSet2(set2, set1Length, translating);
    if (translating) {
      set2Length = checkTranslation(plan, set1, set2, set1Length, set2Length);
      tables.map = translation(plan, set1, set2);
    }
  }
  if (plan.delete) tables.drop = membership(set1, plan.complement);
  if (plan.squeeze) {
    // Squeezed: SET1 when it is the only set, else what SET2 names.
    tables.squeeze =
      set2 === undefined ? membership(set1, plan.complement) : membership(set2, false);
  }
  return tables;
}

function checkTranslation(
  plan: Plan,
  set1: Element[],
  set2: Element[],
  set1Length: number,
  set2Length: number,
): number {
  if (set2.some((e) => e.kind === "equiv"))
    throw new TrError("[=c=] expressions may not appear in string2 when translating");
  if (set2.some((e) => e.kind === "class" && e.name !== "upper" && e.name !== "lower"))
    throw new TrError(
      "when translating, the only character classes that may appear in\nstring2 are 'upper' and 'lower'",
    );
  let length1 = set1Length;
  let length2 = set2Length;
  if (!plan.complement && set2.some((e) => e.kind === "class")) {
    const saved = checkCaseClasses(set1, set2);
    length1 -= saved.s1;
    length2 -= saved.s2;
  }
  if (length1 > length2 && !plan.truncate) {
    if (length2 === 0) throw new TrError("when not truncating set1, string2 must be non-empty");
    set2.push({ kind: "repeat", c: lastByte(set2), count: length1 - length2, indefinite: false });
    length2 = length1;
  }
  if (plan.complement && set1.some((e) => e.kind === "class")) {
    const bytes = new Set<number>();
    const walker = new SetWalker(set2);
    for (let c = walker.next(); c !== -1; c = walker.next()) bytes.add(c);
    if (length2 !== length1 || bytes.size > 1)
      throw new TrError(
        "when translating with complemented character classes,\nstring2 must map all characters in the domain to one",
      );
  }
  return length2;
}

/** The one pass: delete, translate, squeeze runs of what was written. Output is never longer. */
function apply(input: Uint8Array, tables: Tables): string {
  const { map, drop, squeeze } = tables;
  const out = Buffer.allocUnsafe(input.length);
  let size = 0;
  let last = -1;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (drop[c]) continue;
    const to = map[c]!;
    if (to === last && squeeze[to]) continue;
    out[size++] = to;
    last = to;
  }
  return out.toString("latin1", 0, size);
}

function planOf(args: string[]): Plan | Result | "delegate" {
  const parsed = parseCommandLine("tr", args, OPTIONS, 1);
  if ("exitCode" in parsed) return parsed;
  const plan: Plan = {
    complement: false,
    delete: false,
    squeeze: false,
    truncate: false,
    sets: parsed.operands,
  };
  for (const { id } of parsed.options) {
    if (id === "help" || id === "version") return "delegate";
    if (id === "c" || id === "C") plan.complement = true;
    else if (id === "d") plan.delete = true;
    else if (id === "s") plan.squeeze = true;
    else if (id === "t") plan.truncate = true;
  }
  return checkOperands(plan) ?? plan;
}

async function runTr(args: string[], ctx: Ctx): Promise<Result> {
  const plan = planOf(args);
  // Characters beyond ASCII in a set: just-bash's tr matches them as characters.
  const delegate =
    plan === "delegate" || ("sets" in plan && plan.sets.some((s) => /[^\x00-\x7f]/.test(s)));
  if (delegate)
    return original(
      ctx,
      "tr",
      args,
      failure("tr: sets with characters beyond ASCII are not supported\n", 1),
    );
  if (!("sets" in plan)) return plan;
  let tables: Tables;
  let warnings = "";
  try {
    const one = parseSet(plan.sets[0]!);
    const two = plan.sets[1] === undefined ? undefined : parseSet(plan.sets[1]);
    warnings = one.warning + (two?.warning ?? "");
    tables = tablesOf(plan, one.elements, two?.elements);
  } catch (e) {
    if (e instanceof TrError) return failure(`${warnings}tr: ${e.message}\n`, 1);
    throw e;
  }
  return bytesResult(apply(stdinBytes(ctx), tables), warnings);
}

export const tr = defineCommand("tr", runTr);

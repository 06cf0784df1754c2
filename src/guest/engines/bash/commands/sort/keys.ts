// Worker side: sort keys as GNU sort defines them in the C locale: where a key starts and ends in
// a line (`-k POS1[,POS2]`, fields split by `-t` or by runs of blanks) and how two keys compare
// (bytes, case folded with `-f`, or as numbers with `-n`). Lines are byte ranges [start, end) of
// one buffer; nothing here makes a string.

import { compareGeneral } from "./general.js";

export interface Key {
  /** Zero-based field the key starts in. */
  startField: number;
  /** Zero-based byte offset in that field. */
  startChar: number;
  /** Zero-based field the key ends in; Infinity: the key runs to the end of the line. */
  endField: number;
  /** Bytes of the end field the key keeps; 0: all of it. */
  endChar: number;
  skipStartBlanks: boolean;
  skipEndBlanks: boolean;
  fold: boolean;
  numeric: boolean;
  /** `-g`: general numeric order (sort/general.ts). */
  general: boolean;
  reverse: boolean;
}

/** A key from the start of the line to its end, with no ordering options. */
export function wholeLineKey(): Key {
  return {
    startField: 0,
    startChar: 0,
    endField: Number.POSITIVE_INFINITY,
    endChar: 0,
    skipStartBlanks: false,
    skipEndBlanks: false,
    fold: false,
    numeric: false,
    general: false,
    reverse: false,
  };
}

/** Whether a key has ordering options of its own (else it takes the global ones, as in GNU). */
export function hasOrdering(key: Key): boolean {
  return key.skipStartBlanks || key.skipEndBlanks || key.fold || key.numeric || key.general;
}

/** Modifiers GNU sort knows that polybox's sort leaves to just-bash's: d h i M R V. */
const DELEGATED_MODIFIERS = "dhiMRV";

export type KeyParse = { key: Key } | { error: string } | { delegate: true };

/** A leading count, as GNU's parse_field_count reads it. */
function count(text: string, at: number): { value: number; next: number } | undefined {
  const m = /^\d+/.exec(text.slice(at));
  if (!m) return undefined;
  return { value: Math.min(Number(m[0]), Number.MAX_SAFE_INTEGER), next: at + m[0].length };
}

/** Applies modifier letters from `at`; returns where they stop. */
function modifiers(
  spec: string,
  at: number,
  key: Key,
  end: boolean,
): { next: number; delegate: boolean } {
  let i = at;
  for (; i < spec.length; i++) {
    const c = spec[i]!;
    if (c === "b") {
      if (end) key.skipEndBlanks = true;
      else key.skipStartBlanks = true;
    } else if (c === "f") key.fold = true;
    else if (c === "n") key.numeric = true;
    else if (c === "g") key.general = true;
    else if (c === "r") key.reverse = true;
    else if (DELEGATED_MODIFIERS.includes(c)) return { next: i, delegate: true };
    else break;
  }
  return { next: i, delegate: false };
}

const invalidSpec = (spec: string, why: string) => `${why}: invalid field specification '${spec}'`;
const invalidCount = (why: string, rest: string) => `${why}: invalid count at start of '${rest}'`;

/** `-k POS1[,POS2]`, POS being F[.C][OPTS], with GNU's messages for what it rejects. */
export function parseKeySpec(spec: string): KeyParse {
  const key = wholeLineKey();
  const field = count(spec, 0);
  if (!field) return { error: invalidCount("invalid number at field start", spec) };
  if (field.value === 0) return { error: invalidSpec(spec, "field number is zero") };
  key.startField = field.value - 1;
  let at = field.next;
  if (spec[at] === ".") {
    const char = count(spec, at + 1);
    if (!char) return { error: invalidCount("invalid number after '.'", spec.slice(at + 1)) };
    if (char.value === 0) return { error: invalidSpec(spec, "character offset is zero") };
    key.startChar = char.value - 1;
    at = char.next;
  }
  let mods = modifiers(spec, at, key, false);
  if (mods.delegate) return { delegate: true };
  at = mods.next;
  if (spec[at] === ",") {
    const end = count(spec, at + 1);
    if (!end) return { error: invalidCount("invalid number after ','", spec.slice(at + 1)) };
    if (end.value === 0) return { error: invalidSpec(spec, "field number is zero") };
    key.endField = end.value - 1;
    at = end.next;
    if (spec[at] === ".") {
      const char = count(spec, at + 1);
      if (!char) return { error: invalidCount("invalid number after '.'", spec.slice(at + 1)) };
      key.endChar = char.value;
      at = char.next;
    }
    mods = modifiers(spec, at, key, true);
    if (mods.delegate) return { delegate: true };
    at = mods.next;
  }
  if (at < spec.length) return { error: invalidSpec(spec, "stray character in field spec") };
  return { key };
}

/** Blanks in the C locale, as GNU sort's field splitting sees them (newline too, for -z). */
export const BLANK = (() => {
  const table = new Uint8Array(256);
  table[0x20] = 1;
  table[0x09] = 1;
  table[0x0a] = 1;
  return table;
})();

/** toupper in the C locale: what `-f` compares. */
export const FOLD = (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 256; c++) table[c] = c >= 0x61 && c <= 0x7a ? c - 32 : c;
  return table;
})();

/** No tab given: fields are separated by runs of blanks, which belong to the following field. */
export const NO_TAB = -1;

/** Where `key` starts in the line [start, end): GNU's begfield. */
export function keyStart(data: Uint8Array, start: number, end: number, key: Key, tab: number) {
  let p = start;
  let fields = key.startField;
  if (tab !== NO_TAB) {
    while (p < end && fields-- > 0) {
      while (p < end && data[p] !== tab) p++;
      if (p < end) p++;
    }
  } else {
    while (p < end && fields-- > 0) {
      while (p < end && BLANK[data[p]!]) p++;
      while (p < end && !BLANK[data[p]!]) p++;
    }
  }
  if (key.skipStartBlanks) while (p < end && BLANK[data[p]!]) p++;
  return Math.min(end, p + key.startChar);
}

/** Where `key` ends in the line [start, end): GNU's limfield. */
export function keyEnd(data: Uint8Array, start: number, end: number, key: Key, tab: number) {
  if (key.endField === Number.POSITIVE_INFINITY) return end;
  let p = start;
  const chars = key.endChar;
  // Without a character position the key runs to the end of its last field: one field further.
  let fields = chars === 0 ? key.endField + 1 : key.endField;
  if (tab !== NO_TAB) {
    while (p < end && fields-- > 0) {
      while (p < end && data[p] !== tab) p++;
      if (p < end && (fields > 0 || chars !== 0)) p++;
    }
  } else {
    while (p < end && fields-- > 0) {
      while (p < end && BLANK[data[p]!]) p++;
      while (p < end && !BLANK[data[p]!]) p++;
    }
  }
  if (chars !== 0) {
    if (key.skipEndBlanks) while (p < end && BLANK[data[p]!]) p++;
    p = Math.min(end, p + chars);
  }
  return p;
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

/**
 * A number as `-n` reads it at the start of [p, end): blanks, an optional '-', digits, an
 * optional '.' and digits. No '+', exponent or thousands separator, as in the C locale; text that
 * is not a number is zero. Leading zeros of the integer and trailing zeros of the fraction are
 * left out, so equal values have equal digits.
 */
interface Num {
  negative: boolean;
  intStart: number;
  intEnd: number;
  fracStart: number;
  fracEnd: number;
}

function readNumber(data: Uint8Array, p: number, end: number, into: Num): void {
  while (p < end && (data[p] === 0x20 || data[p] === 0x09)) p++;
  let negative = false;
  if (p < end && data[p] === 0x2d) {
    negative = true;
    p++;
  }
  while (p < end && data[p] === 0x30) p++;
  const intStart = p;
  while (p < end && isDigit(data[p])) p++;
  const intEnd = p;
  let fracStart = p;
  let fracEnd = p;
  if (p < end && data[p] === 0x2e) {
    fracStart = ++p;
    while (p < end && isDigit(data[p])) p++;
    fracEnd = p;
    while (fracEnd > fracStart && data[fracEnd - 1] === 0x30) fracEnd--;
  }
  into.negative = negative && (intEnd > intStart || fracEnd > fracStart);
  into.intStart = intStart;
  into.intEnd = intEnd;
  into.fracStart = fracStart;
  into.fracEnd = fracEnd;
}

const numA: Num = { negative: false, intStart: 0, intEnd: 0, fracStart: 0, fracEnd: 0 };
const numB: Num = { negative: false, intStart: 0, intEnd: 0, fracStart: 0, fracEnd: 0 };

/** Compares the magnitudes of two numbers read by readNumber. */
function compareMagnitude(data: Uint8Array, a: Num, b: Num): number {
  const lengths = a.intEnd - a.intStart - (b.intEnd - b.intStart);
  if (lengths !== 0) return lengths;
  for (let i = a.intStart, j = b.intStart; i < a.intEnd; i++, j++) {
    const diff = data[i]! - data[j]!;
    if (diff !== 0) return diff;
  }
  let i = a.fracStart;
  let j = b.fracStart;
  for (; i < a.fracEnd && j < b.fracEnd; i++, j++) {
    const diff = data[i]! - data[j]!;
    if (diff !== 0) return diff;
  }
  // Trailing zeros are gone: whichever fraction has digits left is larger.
  return a.fracEnd - i - (b.fracEnd - j);
}

/** GNU's numcompare in the C locale: exact, whatever the number of digits. */
export function compareNumbers(
  data: Uint8Array,
  aStart: number,
  aEnd: number,
  bStart: number,
  bEnd: number,
): number {
  readNumber(data, aStart, aEnd, numA);
  readNumber(data, bStart, bEnd, numB);
  const zeroA = numA.intEnd === numA.intStart && numA.fracEnd === numA.fracStart;
  const zeroB = numB.intEnd === numB.intStart && numB.fracEnd === numB.fracStart;
  const signA = zeroA ? 0 : numA.negative ? -1 : 1;
  const signB = zeroB ? 0 : numB.negative ? -1 : 1;
  if (signA !== signB) return signA - signB;
  if (signA === 0) return 0;
  const magnitude = compareMagnitude(data, numA, numB);
  return signA < 0 ? -magnitude : magnitude;
}

/** Significant digits kept of a number read for its approximate value. */
const KEPT_DIGITS = 15;

/**
 * The number at the start of [start, end) as a double that keeps order: its first 15
 * significant digits, correctly rounded. Neither cutting digits nor correct rounding ever puts
 * a smaller number above a larger one, so where two values differ the numbers compare the same
 * way; where they are equal, only compareNumbers can tell. Zero is +0, so that -0 and 0 are
 * equal here as they are to GNU.
 */
export function numericValue(data: Uint8Array, start: number, end: number): number {
  readNumber(data, start, end, numA);
  let digits = 0;
  let kept = 0;
  // Position of the decimal point relative to the digits kept: value = digits * 10^scale.
  let scale = 0;
  for (let i = numA.intStart; i < numA.intEnd; i++) {
    if (kept < KEPT_DIGITS) {
      digits = digits * 10 + data[i]! - 0x30;
      kept++;
    } else scale++;
  }
  for (let i = numA.fracStart; i < numA.fracEnd && kept < KEPT_DIGITS; i++) {
    digits = digits * 10 + data[i]! - 0x30;
    if (digits > 0) kept++;
    scale--;
  }
  // One product or quotient by an exact power of ten (up to 10^22) is correctly rounded, as is
  // JavaScript's own reading of a decimal, used for the rare larger scales.
  let value: number;
  if (scale === 0) value = digits;
  else if (scale > 0 && scale <= 22) value = digits * 10 ** scale;
  else if (scale < 0 && scale >= -22) value = digits / 10 ** -scale;
  else value = Number(`${digits}e${scale}`);
  return numA.negative && value !== 0 ? -value : value;
}

/** Byte order, shorter first on a common prefix; through `table` (FOLD) when given. */
export function compareBytes(
  data: Uint8Array,
  aStart: number,
  aEnd: number,
  bStart: number,
  bEnd: number,
  table: Uint8Array | null,
): number {
  const lengthA = aEnd - aStart;
  const lengthB = bEnd - bStart;
  const common = lengthA < lengthB ? lengthA : lengthB;
  if (table === null) {
    for (let i = 0; i < common; i++) {
      const diff = data[aStart + i]! - data[bStart + i]!;
      if (diff !== 0) return diff;
    }
  } else {
    for (let i = 0; i < common; i++) {
      const diff = table[data[aStart + i]!]! - table[data[bStart + i]!]!;
      if (diff !== 0) return diff;
    }
  }
  return lengthA - lengthB;
}

/** GNU's keycompare: the keys in order, each reversed by its own `r`; 0 when all are equal. */
export function compareKeys(
  data: Uint8Array,
  aStart: number,
  aEnd: number,
  bStart: number,
  bEnd: number,
  keys: readonly Key[],
  tab: number,
): number {
  for (const key of keys) {
    const ka = keyStart(data, aStart, aEnd, key, tab);
    const kb = keyStart(data, bStart, bEnd, key, tab);
    // A key that ends before it starts is empty.
    const la = Math.max(ka, keyEnd(data, aStart, aEnd, key, tab));
    const lb = Math.max(kb, keyEnd(data, bStart, bEnd, key, tab));
    const diff = key.general
      ? compareGeneral(data, ka, la, kb, lb)
      : key.numeric
        ? compareNumbers(data, ka, la, kb, lb)
        : compareBytes(data, ka, la, kb, lb, key.fold ? FOLD : null);
    if (diff !== 0) return key.reverse ? -diff : diff;
  }
  return 0;
}

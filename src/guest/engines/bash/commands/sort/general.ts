// Worker side: `sort -g`, GNU's general numeric order: each key read as strtod reads a number
// (leading blanks, a sign, decimals with an exponent, hexadecimal, inf, infinity, nan); keys
// that are no number come first, then NaNs, then the numbers in order, -0 equal to 0. One
// linear pass over the key's bytes; GNU reads long doubles, this reads doubles.

/** What a key reads as: no number, NaN, or a number. */
const NONE = 0;
const NAN = 1;
const NUMBER = 2;

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
const lower = (c: number) => c | 0x20;

/** Whether the bytes at `at` spell `word` (lowercase ASCII), case ignored. */
function spells(data: Uint8Array, at: number, end: number, word: string): boolean {
  if (end - at < word.length) return false;
  for (let k = 0; k < word.length; k++)
    if (lower(data[at + k]!) !== word.charCodeAt(k)) return false;
  return true;
}

let kind = NONE;

/** The key's value as strtod reads it; `kind` tells NONE, NAN or NUMBER. */
function read(data: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end && isSpace(data[i]!)) i++;
  let negative = false;
  if (i < end && (data[i] === 0x2b || data[i] === 0x2d)) negative = data[i++] === 0x2d;
  kind = NUMBER;
  if (spells(data, i, end, "inf")) return negative ? -Infinity : Infinity;
  if (spells(data, i, end, "nan")) {
    kind = NAN;
    return Number.NaN;
  }
  if (data[i] === 0x30 && i + 1 < end && lower(data[i + 1]!) === 0x78) {
    let value = 0;
    let digits = 0;
    let scale = 0;
    let k = i + 2;
    for (; k < end && isHex(data[k]!); k++, digits++) value = value * 16 + hexValue(data[k]!);
    if (k < end && data[k] === 0x2e)
      for (k++; k < end && isHex(data[k]!); k++, digits++) {
        value = value * 16 + hexValue(data[k]!);
        scale -= 4;
      }
    // "0x" with no hex digit is the number 0 followed by "x".
    if (digits === 0) return negative ? -0 : 0;
    if (k < end && lower(data[k]!) === 0x70) {
      const e = exponent(data, k + 1, end);
      if (e !== null) scale += e;
    }
    const v = value * 2 ** scale;
    return negative ? -v : v;
  }
  let text = "";
  let digits = 0;
  let k = i;
  for (; k < end && isDigit(data[k]!); k++, digits++) text += String.fromCharCode(data[k]!);
  if (k < end && data[k] === 0x2e) {
    text += ".";
    for (k++; k < end && isDigit(data[k]!); k++, digits++) text += String.fromCharCode(data[k]!);
  }
  if (digits === 0) {
    kind = NONE;
    return 0;
  }
  if (k < end && lower(data[k]!) === 0x65) {
    const e = exponent(data, k + 1, end);
    if (e !== null) text += `e${e}`;
  }
  const v = Number(text);
  return negative ? -v : v;
}

function hexValue(c: number): number {
  return isDigit(c) ? c - 0x30 : lower(c) - 0x61 + 10;
}

/** An exponent's signed digits at `at`, or null when there are none (the `e` is not read). */
function exponent(data: Uint8Array, at: number, end: number): number | null {
  let k = at;
  let sign = 1;
  if (k < end && (data[k] === 0x2b || data[k] === 0x2d)) sign = data[k++] === 0x2d ? -1 : 1;
  let value = 0;
  const from = k;
  // Beyond a few thousand the value is 0 or infinite either way.
  for (; k < end && isDigit(data[k]!); k++) value = Math.min(value * 10 + data[k]! - 0x30, 1e6);
  return k === from ? null : sign * value;
}

/** GNU's general_numcompare of two keys [aStart, aEnd) and [bStart, bEnd). */
export function compareGeneral(
  data: Uint8Array,
  aStart: number,
  aEnd: number,
  bStart: number,
  bEnd: number,
): number {
  const a = read(data, aStart, aEnd);
  const kindA = kind;
  const b = read(data, bStart, bEnd);
  const kindB = kind;
  if (kindA !== NUMBER || kindB !== NUMBER) return kindA - kindB;
  return a < b ? -1 : a > b ? 1 : 0;
}

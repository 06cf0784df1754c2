// Worker side: the two ways polybox's sort orders the lines of one buffer, both stable and both
// working on typed arrays of positions rather than on strings.
//   - radixSortLines: for whole lines in byte order (optionally case folded, optionally
//     reversed): an MSD radix sort on line start offsets. Each pass reads one byte per line, so
//     the work is bounded by the bytes that tell lines apart — linear in the input — and many
//     equal lines (words, categories) cost one pass per byte of them.
//   - mergeSortLines: for everything else (keys, numbers): a merge sort of line numbers with a
//     comparison function, O(n log n) comparisons.

/** Below this many lines a range is finished by insertion sort instead of another pass. */
const SMALL = 32;

export interface RadixOrder {
  /** The line delimiter: newline, or NUL with -z. */
  delimiter: number;
  /** Maps each byte to the value it sorts by (identity, or case folding for -f). */
  table: Uint8Array;
  reverse: boolean;
  /**
   * Lines equal through `table` that are not identical are ordered by their raw bytes (GNU's
   * last-resort comparison), rather than kept in input order.
   */
  rawTieBreak: boolean;
}

const IDENTITY = (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 256; c++) table[c] = c;
  return table;
})();

/** Compares the lines starting at `a` and `b` from byte `depth` on, through `table`. */
function compareFrom(
  data: Uint8Array,
  delimiter: number,
  table: Uint8Array,
  a: number,
  b: number,
  depth: number,
): number {
  const length = data.length;
  let i = a + depth;
  let j = b + depth;
  for (;;) {
    const endA = i >= length || data[i] === delimiter;
    const endB = j >= length || data[j] === delimiter;
    if (endA || endB) return (endA ? 0 : 1) - (endB ? 0 : 1);
    const diff = table[data[i]!]! - table[data[j]!]!;
    if (diff !== 0) return diff;
    i++;
    j++;
  }
}

/** Growable stack of pending ranges: lo, hi, depth, phase (0: through the table, 1: raw bytes). */
class RangeStack {
  private items = new Int32Array(4 * 256);
  private top = 0;

  get empty(): boolean {
    return this.top === 0;
  }

  push(lo: number, hi: number, depth: number, phase: number): void {
    if (this.top + 4 > this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.top++] = lo;
    this.items[this.top++] = hi;
    this.items[this.top++] = depth;
    this.items[this.top++] = phase;
  }

  /** Pops into `into` as [lo, hi, depth, phase]. */
  pop(into: Int32Array): void {
    this.top -= 4;
    for (let i = 0; i < 4; i++) into[i] = this.items[this.top + i]!;
  }
}

/**
 * Sorts `starts` (offsets of line starts in `data`) in place. Pending ranges are disjoint, so
 * the stack never holds more entries than there are lines, whatever the lines' length.
 */
export function radixSortLines(data: Uint8Array, starts: Int32Array, order: RadixOrder): void {
  const n = starts.length;
  if (n < 2) return;
  const { delimiter, reverse, rawTieBreak } = order;
  const length = data.length;
  const scratch = new Int32Array(n);
  const keys = new Uint16Array(n);
  const counts = new Int32Array(257);
  const next = new Int32Array(257);
  const range = new Int32Array(4);
  const stack = new RangeStack();
  const sign = reverse ? -1 : 1;

  const insertionSort = (lo: number, hi: number, depth: number, phase: number) => {
    const table = phase === 0 ? order.table : IDENTITY;
    for (let i = lo + 1; i < hi; i++) {
      const line = starts[i]!;
      let p = i - 1;
      for (; p >= lo; p--) {
        const other = starts[p]!;
        let diff = compareFrom(data, delimiter, table, other, line, depth);
        if (diff === 0 && phase === 0 && rawTieBreak)
          diff = compareFrom(data, delimiter, IDENTITY, other, line, 0);
        if (sign * diff <= 0) break;
        starts[p + 1] = other;
      }
      starts[p + 1] = line;
    }
  };

  stack.push(0, n, 0, 0);
  while (!stack.empty) {
    stack.pop(range);
    const lo = range[0]!;
    const hi = range[1]!;
    const depth = range[2]!;
    const phase = range[3]!;
    if (hi - lo < SMALL) {
      insertionSort(lo, hi, depth, phase);
      continue;
    }
    const table = phase === 0 ? order.table : IDENTITY;
    counts.fill(0);
    // Key 0: the line ends here; 1 + byte value otherwise.
    for (let i = lo; i < hi; i++) {
      const p = starts[i]! + depth;
      const c = p < length ? data[p]! : delimiter;
      const key = c === delimiter ? 0 : table[c]! + 1;
      keys[i] = key;
      counts[key]!++;
    }
    const first = keys[lo]!;
    if (counts[first] === hi - lo) {
      // One bucket: nothing moves; go a byte deeper, or on to the raw bytes of equal lines.
      if (first !== 0) stack.push(lo, hi, depth + 1, phase);
      else if (phase === 0 && rawTieBreak) stack.push(lo, hi, 0, 1);
      continue;
    }
    let at = lo;
    if (reverse)
      for (let k = 256; k >= 0; k--) {
        next[k] = at;
        at += counts[k]!;
      }
    else
      for (let k = 0; k <= 256; k++) {
        next[k] = at;
        at += counts[k]!;
      }
    for (let i = lo; i < hi; i++) scratch[next[keys[i]!]!++] = starts[i]!;
    starts.set(scratch.subarray(lo, hi), lo);
    // next[k] is now the end of bucket k.
    for (let k = 1; k <= 256; k++)
      if (counts[k]! > 1) stack.push(next[k]! - counts[k]!, next[k]!, depth + 1, phase);
    if (counts[0]! > 1 && phase === 0 && rawTieBreak)
      stack.push(next[0]! - counts[0]!, next[0]!, 0, 1);
  }
}

/** Runs this long are sorted by insertion before merging. */
const RUN = 16;

/**
 * Sorts `lines` (line numbers) in place by `compare`, stably: bottom-up merge sort over runs
 * sorted by insertion, O(n log n) comparisons whatever the input.
 */
export function mergeSortLines(lines: Int32Array, compare: (a: number, b: number) => number) {
  const n = lines.length;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo + 1; i < hi; i++) {
      const line = lines[i]!;
      let p = i - 1;
      for (; p >= lo && compare(lines[p]!, line) > 0; p--) lines[p + 1] = lines[p]!;
      lines[p + 1] = line;
    }
  }
  if (n <= RUN) return;
  let from = lines;
  let to: Int32Array = new Int32Array(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      mergeRuns(from, to, lo, mid, hi, compare);
    }
    [from, to] = [to, from];
  }
  if (from !== lines) lines.set(from);
}

function mergeRuns(
  from: Int32Array,
  to: Int32Array,
  lo: number,
  mid: number,
  hi: number,
  compare: (a: number, b: number) => number,
): void {
  // Already in order (common for nearly sorted input): one copy, no comparisons but one.
  if (mid >= hi || compare(from[mid - 1]!, from[mid]!) <= 0) {
    to.set(from.subarray(lo, hi), lo);
    return;
  }
  let i = lo;
  let j = mid;
  let o = lo;
  while (i < mid && j < hi) {
    // Taking from the left run on ties keeps equal lines in input order.
    if (compare(from[j]!, from[i]!) < 0) to[o++] = from[j++]!;
    else to[o++] = from[i++]!;
  }
  while (i < mid) to[o++] = from[i++]!;
  while (j < hi) to[o++] = from[j++]!;
}

/** Below this many lines the numeric radix sort's fixed cost (its counts) is not worth it. */
const NUMERIC_RADIX_MIN = 4096;
const DIGIT_BITS = 16;
const DIGITS = 1 << DIGIT_BITS;

/**
 * Sorts `lines` in place by `values[line]` ascending, stably, then orders each run of equal
 * values by `compare` (stably too). `values` must order lines as `compare` does wherever they
 * differ: then the result is what a stable sort by `compare` alone gives. An LSD radix sort over
 * the doubles' bits (made to sort as unsigned integers) does the bulk in four linear passes.
 */
export function numericSortLines(
  lines: Int32Array,
  values: Float64Array,
  compare: (a: number, b: number) => number,
): void {
  const n = lines.length;
  if (n < NUMERIC_RADIX_MIN) {
    mergeSortLines(lines, (a, b) => {
      const va = values[a]!;
      const vb = values[b]!;
      return va < vb ? -1 : va > vb ? 1 : compare(a, b);
    });
    return;
  }
  const words = sortableWords(values);
  let from = lines;
  let to: Int32Array = new Int32Array(n);
  const counts = new Int32Array(DIGITS);
  // Low 16 bits of the low word first, high 16 bits of the high word last.
  for (const [word, shift] of [
    [0, 0],
    [0, DIGIT_BITS],
    [1, 0],
    [1, DIGIT_BITS],
  ] as const) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(words[2 * from[i]! + word]! >>> shift) & (DIGITS - 1)]!++;
    // Every line has the same digit here: the pass would not move anything.
    if (counts[(words[2 * from[0]! + word]! >>> shift) & (DIGITS - 1)] === n) continue;
    let at = 0;
    for (let d = 0; d < DIGITS; d++) {
      const c = counts[d]!;
      counts[d] = at;
      at += c;
    }
    for (let i = 0; i < n; i++) {
      const line = from[i]!;
      to[counts[(words[2 * line + word]! >>> shift) & (DIGITS - 1)]!++] = line;
    }
    [from, to] = [to, from];
  }
  if (from !== lines) lines.set(from);
  sortEqualRuns(lines, values, compare);
}

/**
 * The doubles' bits as pairs of 32-bit words (low, high) that sort as unsigned 64-bit integers
 * in the doubles' order: the sign bit flipped for positives, every bit for negatives.
 */
function sortableWords(values: Float64Array): Uint32Array {
  const words = new Uint32Array(values.length * 2);
  new Float64Array(words.buffer).set(values);
  // Float64Array and Uint32Array share the platform's byte order; the high word is second on
  // little-endian machines, where Node runs.
  for (let i = 0; i < words.length; i += 2) {
    const high = words[i + 1]!;
    if (high & 0x80000000) {
      words[i] = ~words[i]! >>> 0;
      words[i + 1] = ~high >>> 0;
    } else words[i + 1] = (high | 0x80000000) >>> 0;
  }
  return words;
}

function sortEqualRuns(
  lines: Int32Array,
  values: Float64Array,
  compare: (a: number, b: number) => number,
): void {
  let start = 0;
  for (let i = 1; i <= lines.length; i++) {
    if (i < lines.length && values[lines[i]!] === values[lines[start]!]) continue;
    if (i - start > 1) mergeSortLines(lines.subarray(start, i), compare);
    start = i;
  }
}

// Worker side: counts and sizes as coreutils reads them, with GNU's suffixes: what head, tail
// and dd take (`head -c 1K`, `dd bs=1M`).

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

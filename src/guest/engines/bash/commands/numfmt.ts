// Worker side: `numfmt`, which just-bash lacks: numbers to and from GNU's human-readable units.

import { defineCommand, latin1FromBytes } from "just-bash";
import { fail, ok } from "./shared/context.js";

/** numfmt's unit systems: SI (1000) and IEC (1024, optionally with an `i` after the letter). */
const SCALES = { si: 1000, iec: 1024, "iec-i": 1024 } as const;
type Scale = keyof typeof SCALES;
const PREFIXES = "KMGTPEZY";

/** Rounds away from zero to `digits` decimals, GNU numfmt's default `--round=from-zero`. */
function fromZero(value: number, digits: number): number {
  const f = 10 ** digits;
  // The epsilon keeps a value that is already exact (1.5 * 10) from being pushed up a step.
  return (Math.sign(value) * Math.ceil(Math.abs(value) * f - 1e-9)) / f;
}

/** A number with an optional unit letter (`2K`, `1.5Mi`) in the `from` system, or null. */
function parseScaled(text: string, from: Scale | "auto" | null): number | null {
  const m = /^([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)([KMGTPEZY])?(i)?$/i.exec(text);
  if (!m) return null;
  const value = Number(m[1]);
  if (!m[2]) return value;
  if (from === null) return null;
  const power = PREFIXES.indexOf(m[2].toUpperCase()) + 1;
  const base = from === "auto" ? (m[3] ? 1024 : 1000) : SCALES[from];
  if (from === "iec-i" && !m[3]) return null;
  return value * base ** power;
}

/** A number in the `to` system, as GNU prints it: one decimal below 10, else a whole number. */
function formatScaled(value: number, to: Scale | null, precision: number | null): string {
  if (to === null)
    return precision === null ? String(fromZero(value, 0)) : value.toFixed(precision);
  const base = SCALES[to];
  let power = 0;
  let scaled = value;
  while (Math.abs(scaled) >= base && power < PREFIXES.length) {
    scaled /= base;
    power++;
  }
  if (power === 0)
    return precision === null ? String(fromZero(value, 0)) : value.toFixed(precision);
  const digits = precision ?? (Math.abs(scaled) < 10 ? 1 : 0);
  let rounded = fromZero(scaled, digits);
  if (precision === null && digits === 1 && Math.abs(rounded) >= 10) rounded = fromZero(scaled, 0);
  const text =
    precision === null && Math.abs(rounded) >= 10 ? String(rounded) : rounded.toFixed(digits);
  return `${text}${PREFIXES[power - 1]}${to === "iec-i" ? "i" : ""}`;
}

/**
 * `numfmt [--from=UNIT] [--to=UNIT] [--suffix=S] [--format=%.Nf] [--field=N] [--header[=N]]
 * [NUMBER...]`: numbers to and from human-readable units (`--to=iec 1048576` → `1.0M`), from the
 * arguments or, one per line, from stdin. UNIT is si, iec, iec-i (and auto for --from).
 */
export const numfmt = defineCommand("numfmt", async (args, ctx) => {
  let from: Scale | "auto" | null = null;
  let to: Scale | null = null;
  let suffix = "";
  let precision: number | null = null;
  let field = 1;
  let header = 0;
  const numbers: string[] = [];
  const unit = (value: string, auto: boolean): Scale | "auto" | undefined =>
    value in SCALES || (auto && value === "auto") ? (value as Scale | "auto") : undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const value = () => inline ?? args[++i] ?? "";
    if (a === "--") {
      numbers.push(...args.slice(i + 1));
      break;
    } else if (flag === "--from") {
      const u = unit(value(), true);
      if (u === undefined) return fail("numfmt", `invalid argument for --from`);
      from = u;
    } else if (flag === "--to") {
      const u = unit(value(), false);
      if (u === undefined || u === "auto") return fail("numfmt", `invalid argument for --to`);
      to = u;
    } else if (flag === "--suffix") suffix = value();
    else if (flag === "--format") {
      const m = /%[-0#' ]*\d*(?:\.(\d+))?f/.exec(value());
      if (!m) return fail("numfmt", "invalid format");
      precision = m[1] === undefined ? null : Number(m[1]);
    } else if (flag === "--field") field = Number(value()) || 1;
    else if (flag === "--header") header = inline === undefined ? 1 : Number(inline) || 1;
    else if (a.startsWith("-") && a !== "-" && !/^-\d/.test(a))
      return fail("numfmt", `unsupported option ${a}`);
    else numbers.push(a);
  }
  const convert = (token: string): string | null => {
    const value = parseScaled(token, from);
    return value === null ? null : `${formatScaled(value, to, precision)}${suffix}`;
  };
  const out: string[] = [];
  if (numbers.length > 0) {
    for (const n of numbers) {
      const text = convert(n);
      if (text === null)
        return {
          stdout: out.map((l) => `${l}\n`).join(""),
          stderr: `numfmt: invalid number: '${n}'\n`,
          exitCode: 2,
        };
      out.push(text);
    }
  } else {
    const lines = latin1FromBytes(ctx.stdin).split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    for (const [k, line] of lines.entries()) {
      if (k < header) {
        out.push(line);
        continue;
      }
      // Fields are runs of non-blanks; the blanks between them are kept as they were.
      const parts = line.split(/(\s+)/);
      const lead = parts[0] === "" ? 2 : 0;
      const at = lead + (field - 1) * 2;
      const text = parts[at] === undefined ? null : convert(parts[at]);
      if (text === null)
        return {
          stdout: out.map((l) => `${l}\n`).join(""),
          stderr: `numfmt: invalid number: '${parts[at] ?? ""}'\n`,
          exitCode: 2,
        };
      parts[at] = text;
      out.push(parts.join(""));
    }
  }
  return ok(out.map((l) => `${l}\n`).join(""));
});

// Worker side: more wrappers in front of just-bash's commands, for forms where its output differs
// from GNU's (`grep -e A -e B`, `awk -v OFS=…`, `date -d '… +1 month'`). Like wrappers.ts, each
// handles only those forms and hands every other call to just-bash's command unchanged.

import { type Command, defineCommand, latin1FromBytes } from "just-bash";
import { type Ctx, fail, type Result } from "./unix-commands.js";

function original(ctx: Ctx, name: string, args: string[]): Promise<Result> {
  if (!ctx.origCommand) return Promise.resolve(fail(name, "not available", 127));
  return ctx.origCommand(args);
}

/**
 * `grep -e A -e B`: just-bash keeps only the last `-e`. Several patterns become one, joined the
 * way GNU matches them (a line matches if any pattern does), in the pattern syntax asked for.
 */
const grep = defineCommand("grep", async (args, ctx) => {
  const patterns: string[] = [];
  const rest: string[] = [];
  let mode: "basic" | "extended" | "fixed" | "perl" = "basic";
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "--") {
      rest.push(...args.slice(k));
      break;
    }
    if (a === "-e" || a === "--regexp") {
      if (k + 1 < args.length) patterns.push(args[++k]!);
      continue;
    }
    if (a.startsWith("--regexp=")) {
      patterns.push(a.slice("--regexp=".length));
      continue;
    }
    if (/^-[a-zA-Z]*e.+/.test(a) && !a.startsWith("--")) {
      // -ie PATTERN clusters: flags before e, pattern after (GNU: -ePATTERN).
      const at = a.indexOf("e");
      const flags = a.slice(1, at);
      if (flags) rest.push(`-${flags}`);
      patterns.push(a.slice(at + 1));
      continue;
    }
    if (/^-[a-zA-Z]*e$/.test(a) && a.length > 2) {
      rest.push(a.slice(0, -1));
      if (k + 1 < args.length) patterns.push(args[++k]!);
      continue;
    }
    if (a.startsWith("-") && !a.startsWith("--")) {
      if (a.includes("E")) mode = "extended";
      if (a.includes("F")) mode = "fixed";
      if (a.includes("P")) mode = "perl";
    } else if (a === "--extended-regexp") mode = "extended";
    else if (a === "--fixed-strings") mode = "fixed";
    else if (a === "--perl-regexp") mode = "perl";
    rest.push(a);
  }
  if (patterns.length <= 1) return original(ctx, "grep", args);
  let pattern: string;
  const out = [...rest];
  if (mode === "fixed") {
    pattern = patterns.map((p) => `(${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")})`).join("|");
    // -F is dropped: the escaped alternation is an extended expression.
    for (let k = 0; k < out.length; k++) {
      const a = out[k]!;
      if (a === "--fixed-strings") out[k] = "-E";
      else if (/^-[a-zA-Z]+$/.test(a) && a.includes("F")) out[k] = `${a.replace(/F/g, "")}E`;
    }
  } else if (mode === "basic") pattern = patterns.join("\\|");
  else if (mode === "perl") pattern = patterns.map((p) => `(?:${p})`).join("|");
  else pattern = patterns.map((p) => `(${p})`).join("|");
  return original(ctx, "grep", ["-e", pattern, ...out]);
});

/** awk's special variables, which `-v` must set as the program would (just-bash sets plain ones). */
const AWK_SPECIAL = new Set(["OFS", "ORS", "FS", "OFMT", "CONVFMT", "SUBSEP", "RS"]);

/** An awk string literal with the same escapes `-v` would process. */
const awkString = (value: string) => `"${value.replace(/"/g, '\\"')}"`;

/**
 * `awk -v OFS=… 'program'`: the special variables become a BEGIN rule in front of the program,
 * which runs before the program's own BEGIN rules, as `-v` assignments do.
 */
const awk = defineCommand("awk", async (args, ctx) => {
  const special: string[] = [];
  const out: string[] = [];
  let k = 0;
  for (; k < args.length; k++) {
    const a = args[k]!;
    if (a === "--") {
      out.push(a);
      k++;
      break;
    }
    const assign = a === "-v" ? args[k + 1] : a.startsWith("-v") ? a.slice(2) : null;
    if (assign != null) {
      const m = /^([A-Z]+)=(.*)$/s.exec(assign);
      if (m && AWK_SPECIAL.has(m[1]!)) special.push(`${m[1]}=${awkString(m[2]!)}`);
      else out.push("-v", assign);
      if (a === "-v") k++;
      continue;
    }
    if (a === "-f" || a.startsWith("-f") || a === "--file") return original(ctx, "awk", args);
    if (a === "-F") {
      out.push(a, args[++k] ?? "");
      continue;
    }
    if (a.startsWith("-") && a !== "-") {
      out.push(a);
      continue;
    }
    break;
  }
  if (special.length === 0 || k >= args.length) return original(ctx, "awk", args);
  const program = `BEGIN { ${special.join("; ")} }\n${args[k]}`;
  return original(ctx, "awk", [...out, program, ...args.slice(k + 1)]);
});

// ---- date -d with GNU's relative items -------------------------------------------------------

const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  sec: 1,
  minute: 60,
  min: 60,
  hour: 3600,
};
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, fortnight: 14 };
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const ORDINALS: Record<string, number> = { last: -1, this: 0, next: 1 };

interface Relative {
  years: number;
  months: number;
  days: number;
  seconds: number;
  weekday: { day: number; ordinal: number } | null;
}

function unitOf(word: string): string | null {
  const w = word.toLowerCase().replace(/s$/, "");
  if (w in UNIT_SECONDS || w in UNIT_DAYS || w === "month" || w === "year") return w;
  return null;
}

function weekdayOf(word: string): number {
  const w = word.toLowerCase().replace(/,$/, "");
  return WEEKDAYS.findIndex((d) => d === w || (w.length >= 3 && d.startsWith(w) && w.length <= 4));
}

function addUnit(rel: Relative, unit: string, n: number): void {
  if (unit === "year") rel.years += n;
  else if (unit === "month") rel.months += n;
  else if (unit in UNIT_DAYS) rel.days += n * UNIT_DAYS[unit]!;
  else rel.seconds += n * UNIT_SECONDS[unit]!;
}

/**
 * Splits GNU date's relative items off a date string: `+1 month`, `3 days ago`, `yesterday`,
 * `next monday`, `last week`. Returns the rest (the base date, "" for now) and the items, or null
 * when the string has none (then just-bash's date reads it as it is).
 */
function splitRelative(input: string): { base: string; rel: Relative; tz: string | null } | null {
  const words = input.trim().split(/\s+/).filter(Boolean);
  const rel: Relative = { years: 0, months: 0, days: 0, seconds: 0, weekday: null };
  const base: string[] = [];
  let found = false;
  let tz: string | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const lower = w.toLowerCase();
    if (lower === "yesterday" || lower === "tomorrow" || lower === "today" || lower === "now") {
      rel.days += lower === "yesterday" ? -1 : lower === "tomorrow" ? 1 : 0;
      found = true;
      continue;
    }
    if (lower === "ago") {
      // Negates everything so far (GNU: the items before it).
      rel.years = -rel.years;
      rel.months = -rel.months;
      rel.days = -rel.days;
      rel.seconds = -rel.seconds;
      found = true;
      continue;
    }
    if (lower in ORDINALS && i + 1 < words.length) {
      const next = words[i + 1]!;
      const day = weekdayOf(next);
      if (day >= 0) {
        rel.weekday = { day, ordinal: ORDINALS[lower]! };
        i++;
        found = true;
        continue;
      }
      const unit = unitOf(next);
      if (unit) {
        addUnit(rel, unit, ORDINALS[lower]!);
        i++;
        found = true;
        continue;
      }
    }
    const num = /^([+-]?)(\d+)$/.exec(w);
    if (num) {
      const unit = i + 1 < words.length ? unitOf(words[i + 1]!) : null;
      // After a time of day, a signed number is a zone offset (`12:00 +3 days` is 12:00 at
      // UTC+3, plus one day), as GNU reads it.
      const afterTime = base.length > 0 && /^\d{1,2}:\d{2}(:\d{2})?$/.test(base.at(-1)!);
      if (num[1] && afterTime && tz === null) {
        const digits = num[2]!;
        const hours = digits.length <= 2 ? Number(digits) : Number(digits.slice(0, -2));
        const minutes = digits.length <= 2 ? 0 : Number(digits.slice(-2));
        tz = `${num[1]}${String(hours).padStart(2, "0")}:${String(minutes).padStart(2, "0")}`;
        found = true;
        continue;
      }
      if (unit) {
        addUnit(rel, unit, Number(`${num[1]}${num[2]}`));
        i++;
        found = true;
        continue;
      }
    }
    const unit = unitOf(w);
    if (unit && (found || base.length > 0)) {
      addUnit(rel, unit, 1);
      found = true;
      continue;
    }
    const day = weekdayOf(w);
    if (day >= 0 && base.length === 0 && words.length <= 2) {
      rel.weekday = { day, ordinal: 0 };
      found = true;
      continue;
    }
    base.push(w);
  }
  return found ? { base: base.join(" "), rel, tz } : null;
}

function applyRelative(epochSeconds: number, rel: Relative): number {
  const d = new Date(epochSeconds * 1000);
  if (rel.years || rel.months || rel.days) {
    // Fields overflow as GNU's mktime does: Jan 31 + 1 month is Feb 31, that is Mar 2.
    d.setUTCFullYear(
      d.getUTCFullYear() + rel.years,
      d.getUTCMonth() + rel.months,
      d.getUTCDate() + rel.days,
    );
  }
  if (rel.weekday) {
    const { day, ordinal } = rel.weekday;
    const today = d.getUTCDay();
    let delta = (day - today + 7) % 7;
    if (ordinal === 1 && delta === 0) delta = 7;
    if (ordinal === -1) delta = delta === 0 ? -7 : delta - 7;
    d.setUTCDate(d.getUTCDate() + delta);
    // A weekday names the start of that day.
    d.setUTCHours(0, 0, 0, 0);
  }
  return Math.floor(d.getTime() / 1000) + rel.seconds;
}

/** `date -d STRING` where STRING has GNU relative items. */
const date = defineCommand("date", async (args, ctx) => {
  const at = args.findIndex(
    (a) => a === "-d" || a === "--date" || a.startsWith("--date=") || /^-d./.test(a),
  );
  if (at < 0) return original(ctx, "date", args);
  const flag = args[at]!;
  const value =
    flag === "-d" || flag === "--date" ? args[at + 1] : flag.replace(/^-d|^--date=/, "");
  if (value === undefined) return original(ctx, "date", args);
  const parsed = splitRelative(value);
  if (!parsed) return original(ctx, "date", args);
  const others = [
    ...args.slice(0, at),
    ...args.slice(flag === "-d" || flag === "--date" ? at + 2 : at + 1),
  ];
  const utc = others.includes("-u") || others.includes("--utc") || others.includes("--universal");
  let base: number;
  if (parsed.base === "") {
    base = Math.floor(Date.now() / 1000);
    // "today", "yesterday" keep the time of day; a bare weekday is handled in applyRelative.
  } else {
    const baseText = parsed.tz ? `${parsed.base} ${parsed.tz}` : parsed.base;
    const r = await original(ctx, "date", [...(utc ? ["-u"] : []), "-d", baseText, "+%s"]);
    if (r.exitCode !== 0)
      return { stdout: "", stderr: `date: invalid date '${value}'\n`, exitCode: 1 };
    base = Number(r.stdout.trim());
  }
  return original(ctx, "date", [...others, "-d", `@${applyRelative(base, parsed.rel)}`]);
});

/**
 * `od`: just-bash puts one space too many after the offset column (and in front of the lines
 * of a second format); GNU's fields carry their own leading blanks.
 */
const od = defineCommand("od", async (args, ctx) => {
  // GNU takes `-tx1` and `-Ad` as one word; just-bash wants `-t x1`.
  args = args.flatMap((a) => (/^-t.+/.test(a) ? ["-t", a.slice(2)] : [a]));
  const r = await original(ctx, "od", args);
  if (r.exitCode !== 0 || args.some((a) => a === "-An" || a === "-A")) return r;
  const stdout = r.stdout.replace(
    /^([0-7]{7}) (?= )|^ {8}(?= )/gm,
    (_m, offset?: string) => offset ?? "       ",
  );
  return { ...r, stdout };
});

/**
 * `ls A B` with files only: just-bash separates them with blank lines, as it does directory
 * listings; GNU prints the files together (one per line when not a terminal), sorted.
 */
const ls = defineCommand("ls", async (args, ctx) => {
  const flags = args.filter((a) => a.startsWith("-") && a !== "-");
  const names = args.filter((a) => !a.startsWith("-") || a === "-");
  if (names.length < 2 || !flags.every((f) => /^-[1a]+$/.test(f))) return original(ctx, "ls", args);
  const files: string[] = [];
  let stderr = "";
  for (const name of names) {
    try {
      const st = await ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, name));
      if (st.isDirectory) return original(ctx, "ls", args);
      files.push(name);
    } catch {
      stderr += `ls: cannot access '${name}': No such file or directory\n`;
    }
  }
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    stdout: files.map((f) => `${f}\n`).join(""),
    stderr,
    exitCode: stderr ? 2 : 0,
  };
});

/** printf's %e/%f/%g (with flags, width, precision) for one number, as C formats it. */
function formatFloat(spec: string, value: number): string | null {
  const m = /^%([-+ #0]*)(\d*)(?:\.(\d+))?([eEfFgG])$/.exec(spec);
  if (!m) return null;
  const [, flags = "", width = "", precision, conv = "g"] = m;
  const p = precision === undefined ? 6 : Number(precision);
  let body: string;
  const abs = Math.abs(value);
  const lower = conv.toLowerCase();
  const exp = (digits: number) => {
    const [mant, e = "0"] = abs.toExponential(digits).split("e");
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  };
  if (lower === "f") body = abs.toFixed(p);
  else if (lower === "e") body = exp(p);
  else {
    const P = p === 0 ? 1 : p;
    const e = abs === 0 ? 0 : Math.floor(Math.log10(abs));
    body = e < -4 || e >= P ? exp(P - 1) : abs.toFixed(Math.max(0, P - 1 - e));
    if (!flags.includes("#"))
      body = body.replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
  }
  if (conv === conv.toUpperCase()) body = body.toUpperCase();
  const sign =
    value < 0 || Object.is(value, -0)
      ? "-"
      : flags.includes("+")
        ? "+"
        : flags.includes(" ")
          ? " "
          : "";
  const w = Number(width || 0);
  if (flags.includes("-")) return (sign + body).padEnd(w);
  if (flags.includes("0")) return sign + body.padStart(w - sign.length, "0");
  return (sign + body).padStart(w);
}

/** `seq -f FORMAT`: each number through the format's one floating-point conversion. */
const seq = defineCommand("seq", async (args, ctx) => {
  const at = args.findIndex((a) => a === "-f" || a.startsWith("--format") || /^-f./.test(a));
  if (at < 0) return original(ctx, "seq", args);
  const flag = args[at]!;
  const separate = flag === "-f" || flag === "--format";
  const format = separate ? args[at + 1] : flag.replace(/^-f|^--format=/, "");
  if (format === undefined) return original(ctx, "seq", args);
  const rest = [...args.slice(0, at), ...args.slice(separate ? at + 2 : at + 1)];
  const conv = /%[-+ #0]*\d*(?:\.\d+)?[eEfFgG]/.exec(format);
  if (!conv || format.replace(conv[0], "").replace(/%%/g, "").includes("%"))
    return fail("seq", `format '${format}' has no % directive or more than one`);
  let sep = "\n";
  const numbers: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!;
    if (a === "-s") sep = rest[++k] ?? "\n";
    else if (a.startsWith("-s")) sep = a.slice(2);
    else if (a === "-w")
      return fail("seq", "format string may not be specified when printing equal width strings");
    else numbers.push(a);
  }
  const values = numbers.map(Number);
  if (values.length === 0 || values.length > 3 || values.some((v) => !Number.isFinite(v)))
    return original(ctx, "seq", args);
  const [first, step, last] =
    values.length === 1
      ? [1, 1, values[0]!]
      : values.length === 2
        ? [values[0]!, 1, values[1]!]
        : (values as [number, number, number]);
  if (step === 0) return fail("seq", "invalid Zero increment value: '0'");
  const out: string[] = [];
  const decimals = Math.max(
    ...numbers.map((n) => (n.includes(".") ? n.length - n.indexOf(".") - 1 : 0)),
  );
  for (let k = 0; ; k++) {
    const v = Number((first + k * step).toFixed(decimals));
    if (step > 0 ? v > last : v < last) break;
    if (out.length >= 10_000_000) return fail("seq", "too many numbers");
    out.push(format.replace(conv[0], formatFloat(conv[0], v)!).replace(/%%/g, "%"));
  }
  return { stdout: out.length ? `${out.join(sep)}\n` : "", stderr: "", exitCode: 0 };
});

/** The positions a cut list names (`1,3-4,6-`), as a test. */
function cutList(list: string): ((n: number) => boolean) | null {
  const ranges: [number, number][] = [];
  for (const part of list.split(",")) {
    const m = /^(\d*)(-?)(\d*)$/.exec(part);
    if (!m || (!m[1] && !m[3])) return null;
    const lo = m[1] ? Number(m[1]) : 1;
    const hi = m[2] ? (m[3] ? Number(m[3]) : Number.POSITIVE_INFINITY) : lo;
    ranges.push([lo, hi]);
  }
  return (n) => ranges.some(([lo, hi]) => n >= lo && n <= hi);
}

/** `cut --complement`: everything but the fields (-f) or characters (-c/-b) listed. */
const cut = defineCommand("cut", async (args, ctx) => {
  if (!args.includes("--complement")) return original(ctx, "cut", args);
  let delim = "\t";
  let list: string | null = null;
  let chars = false;
  let onlyDelimited = false;
  let outDelim: string | null = null;
  const files: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "--complement") continue;
    if (a === "-d") delim = args[++k] ?? "\t";
    else if (a.startsWith("-d")) delim = a.slice(2);
    else if (a.startsWith("--delimiter=")) delim = a.slice(12);
    else if (a === "-f" || a === "-c" || a === "-b") {
      chars = a !== "-f";
      list = args[++k] ?? "";
    } else if (/^-[fcb]./.test(a)) {
      chars = a[1] !== "f";
      list = a.slice(2);
    } else if (a === "-s" || a === "--only-delimited") onlyDelimited = true;
    else if (a.startsWith("--output-delimiter=")) outDelim = a.slice(19);
    else if (a.startsWith("-") && a !== "-") return original(ctx, "cut", args);
    else files.push(a);
  }
  const picked = list === null ? null : cutList(list);
  if (!picked) return fail("cut", "you must specify a list of bytes, characters, or fields");
  let stdout = "";
  for (const file of files.length ? files : ["-"]) {
    let text: string;
    try {
      text =
        file === "-"
          ? Buffer.from(latin1FromBytes(ctx.stdin), "latin1").toString("utf8")
          : await ctx.fs.readFile(ctx.fs.resolvePath(ctx.cwd, file));
    } catch {
      return fail("cut", `${file}: No such file or directory`);
    }
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    for (const line of lines) {
      if (chars) {
        stdout += `${[...line].filter((_c, k) => !picked(k + 1)).join("")}\n`;
        continue;
      }
      if (!line.includes(delim)) {
        if (!onlyDelimited) stdout += `${line}\n`;
        continue;
      }
      const kept = line.split(delim).filter((_f, k) => !picked(k + 1));
      stdout += `${kept.join(outDelim ?? delim)}\n`;
    }
  }
  return { stdout, stderr: "", exitCode: 0 };
});

export const gnuWrappers: Command[] = [grep, awk, date, od, ls, seq, cut];

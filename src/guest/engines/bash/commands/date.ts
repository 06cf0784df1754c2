// Worker side: `date -d` with GNU's relative items (`+1 month`, `3 days ago`, `next monday`), in
// front of just-bash's date: the base date is just-bash's, the items are applied here.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { original } from "./shared/context.js";

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

const MONTHS = /^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i;

/** Whether a date string names a calendar day: `2024-05-15`, `5/15/2024`, `15 May`, `@N`. */
function hasCalendarDate(base: string): boolean {
  return base
    .split(/\s+/)
    .some((w) => /^\d+-\d+/.test(w) || /^\d+\/\d+/.test(w) || MONTHS.test(w) || w.startsWith("@"));
}

/** `date -d STRING` where STRING has GNU relative items. */
export const date = defineCommand("date", async (args, ctx) => {
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
  // GNU moves to a weekday only when no calendar date is given (`2024-05-15 next monday` is
  // 2024-05-15).
  if (hasCalendarDate(parsed.base)) parsed.rel.weekday = null;
  return original(ctx, "date", [...others, "-d", `@${applyRelative(base, parsed.rel)}`]);
});

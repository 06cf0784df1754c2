// Worker side: `xargs` with GNU's options, in front of just-bash's (which lacks -n, -I, -L, -0).
// Like every wrapper here, it handles only the forms just-bash gets wrong or refuses and hands
// every other call to just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand, latin1FromBytes } from "just-bash";
import { fail, original, shellQuote } from "./shared/context.js";

/**
 * `xargs` with GNU's options: `-n N` (at most N arguments per command), `-I R` (one command per
 * line, R replaced), `-d D` / `-0` (items split at D or NUL), `-r` (nothing to do → no command),
 * `-L N` (N lines per command), `-t` (print each command to stderr). Items are split as GNU
 * splits them: at blanks and newlines, with quotes and backslashes honoured.
 */
export const xargs = defineCommand("xargs", async (args, ctx) => {
  let maxArgs = 0;
  let maxLines = 0;
  let replace: string | null = null;
  let delimiter: string | null = null;
  let noRunIfEmpty = false;
  let trace = false;
  let i = 0;
  const value = (flag: string): string | null => {
    const a = args[i]!;
    if (a.length > flag.length) return a.slice(flag.length).replace(/^=/, "");
    i++;
    return args[i] ?? null;
  };
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (a.startsWith("-n") || a.startsWith("--max-args")) {
      const v = Number(value(a.startsWith("-n") ? "-n" : "--max-args"));
      if (!Number.isInteger(v) || v < 1) return fail("xargs", "invalid number for -n option");
      maxArgs = v;
    } else if (a.startsWith("-L") || a.startsWith("--max-lines")) {
      const v = Number(value(a.startsWith("-L") ? "-L" : "--max-lines"));
      if (!Number.isInteger(v) || v < 1) return fail("xargs", "invalid number for -L option");
      maxLines = v;
    } else if (a.startsWith("-I") || a.startsWith("--replace")) {
      replace = value(a.startsWith("-I") ? "-I" : "--replace") ?? "{}";
    } else if (a === "-i") {
      replace = "{}";
    } else if (a.startsWith("-d") || a.startsWith("--delimiter")) {
      const d = value(a.startsWith("-d") ? "-d" : "--delimiter") ?? "\n";
      delimiter = d === "\\n" ? "\n" : d === "\\t" ? "\t" : d === "\\0" ? "\0" : d;
    } else if (a === "-0" || a === "--null") {
      delimiter = "\0";
    } else if (a === "-r" || a === "--no-run-if-empty") {
      noRunIfEmpty = true;
    } else if (a === "-t" || a === "--verbose") {
      trace = true;
    } else if (/^-[0rt]+$/.test(a)) {
      if (a.includes("0")) delimiter = "\0";
      if (a.includes("r")) noRunIfEmpty = true;
      if (a.includes("t")) trace = true;
    } else if (a.startsWith("-") && a !== "-") {
      return original(ctx, "xargs", args);
    } else break;
  }
  const command = args.slice(i);
  if (command.length === 0) command.push("echo");
  const input = latin1FromBytes(ctx.stdin);
  // Groups of items, each group one command.
  let groups: string[][];
  if (replace !== null) {
    const lines = (delimiter !== null ? input.split(delimiter) : input.split("\n"))
      .map((l) => (delimiter === null ? l.replace(/^[ \t]+/, "") : l))
      .filter((l) => l !== "");
    groups = lines.map((l) => [l]);
  } else {
    const items =
      delimiter !== null
        ? input.split(delimiter).filter((s, k, all) => s !== "" || k < all.length - 1)
        : splitItems(input);
    if (items === null)
      return fail(
        "xargs",
        "unmatched quote; by default quotes are special to xargs unless you use the -0 option",
      );
    if (maxLines > 0 && delimiter === null) {
      const lines = input.split("\n").filter((l) => l.trim() !== "");
      groups = [];
      for (let k = 0; k < lines.length; k += maxLines)
        groups.push(splitItems(lines.slice(k, k + maxLines).join("\n")) ?? []);
    } else {
      const size = maxArgs > 0 ? maxArgs : Math.max(1, items.length);
      groups = [];
      for (let k = 0; k < items.length; k += size) groups.push(items.slice(k, k + size));
    }
    if (groups.length === 0 && !noRunIfEmpty) groups = [[]];
  }
  let stdout = "";
  let stderr = "";
  let status = 0;
  for (const group of groups) {
    const words =
      replace !== null
        ? command.map((w) => w.split(replace!).join(group[0] ?? ""))
        : [...command, ...group];
    if (trace) stderr += `${words.join(" ")}\n`;
    if (!ctx.exec) return fail("xargs", "cannot run commands here", 127);
    const r = await ctx.exec(words.map(shellQuote).join(" "), { cwd: ctx.cwd });
    stdout += r.stdout;
    stderr += r.stderr;
    if (r.exitCode === 255) return { stdout, stderr, exitCode: 124 };
    if (r.exitCode === 126 || r.exitCode === 127) return { stdout, stderr, exitCode: r.exitCode };
    if (r.exitCode !== 0) status = 123;
  }
  return { stdout, stderr, exitCode: status };
});

/** Items as GNU xargs reads them: blank-separated, quotes and backslashes honoured. */
function splitItems(input: string): string[] | null {
  const items: string[] = [];
  let current = "";
  let inItem = false;
  for (let k = 0; k < input.length; k++) {
    const c = input[k]!;
    if (c === "'" || c === '"') {
      const end = input.indexOf(c, k + 1);
      if (end < 0) return null;
      current += input.slice(k + 1, end);
      inItem = true;
      k = end;
    } else if (c === "\\" && k + 1 < input.length) {
      current += input[++k];
      inItem = true;
    } else if (c === " " || c === "\t" || c === "\n") {
      if (inItem) items.push(current);
      current = "";
      inItem = false;
    } else {
      current += c;
      inItem = true;
    }
  }
  if (inItem) items.push(current);
  return items;
}

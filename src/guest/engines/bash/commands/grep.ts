// Worker side: `grep -e A -e B`, in front of just-bash's grep, which keeps only the last `-e`.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { original } from "./shared/context.js";

/**
 * `grep -e A -e B`: just-bash keeps only the last `-e`. Several patterns become one, joined the
 * way GNU matches them (a line matches if any pattern does), in the pattern syntax asked for.
 */
export const grep = defineCommand("grep", async (args, ctx) => {
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

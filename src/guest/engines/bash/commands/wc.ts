// Worker side: `wc -L` and `wc -c` of stdin, in front of just-bash's wc.
// Like every wrapper here, it handles only the forms just-bash gets wrong or refuses and hands
// every other call to just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand, latin1FromBytes } from "just-bash";
import { fail, original, readText } from "./shared/context.js";

/**
 * `wc -L` (alone): the longest line's width, a tab reaching the next multiple of 8. And `wc -c`
 * of stdin, counted as its length: just-bash's wc splits the text into lines and words whatever
 * it is asked (2.4 s for 32 MiB of text).
 */
export const wc = defineCommand("wc", async (args, ctx) => {
  const flags = args.filter((a) => a.startsWith("-") && a !== "-");
  if (args.length > 0 && args.every((a) => a === "-c" || a === "--bytes"))
    return { stdout: `${latin1FromBytes(ctx.stdin).length}\n`, stderr: "", exitCode: 0 };
  if (flags.length === 0 || !flags.every((a) => a === "-L" || a === "--max-line-length"))
    return original(ctx, "wc", args);
  const files = args.filter((a) => !a.startsWith("-") || a === "-");
  const targets = files.length > 0 ? files : ["-"];
  const widths: number[] = [];
  for (const file of targets) {
    let text: string;
    try {
      text = Buffer.from(await readText(ctx, file), "latin1").toString("utf8");
    } catch {
      return fail("wc", `${file}: No such file or directory`);
    }
    let max = 0;
    for (const line of text.split("\n")) {
      let w = 0;
      for (const ch of line) w = ch === "\t" ? w + 8 - (w % 8) : w + 1;
      max = Math.max(max, w);
    }
    widths.push(max);
  }
  if (files.length === 0) return { stdout: `${widths[0]}\n`, stderr: "", exitCode: 0 };
  const rows = targets.map((f, k) => [String(widths[k]), f]);
  if (targets.length > 1) rows.push([String(Math.max(...widths)), "total"]);
  const pad = Math.max(...rows.map(([n]) => n!.length));
  return {
    stdout: rows.map(([n, f]) => `${n!.padStart(pad)} ${f}\n`).join(""),
    stderr: "",
    exitCode: 0,
  };
});

// Worker side: `od` with GNU's spacing and `-tx1`, in front of just-bash's od.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { original } from "./shared/context.js";

/**
 * `od`: just-bash puts one space too many after the offset column (and in front of the lines
 * of a second format); GNU's fields carry their own leading blanks.
 */
export const od = defineCommand("od", async (args, ctx) => {
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

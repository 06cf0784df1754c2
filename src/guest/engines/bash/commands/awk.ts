// Worker side: `awk -v OFS=…`, in front of just-bash's awk, which sets awk's special variables
// as plain ones. Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { original } from "./shared/context.js";

/** awk's special variables, which `-v` must set as the program would (just-bash sets plain ones). */
const AWK_SPECIAL = new Set(["OFS", "ORS", "FS", "OFMT", "CONVFMT", "SUBSEP", "RS"]);

/** An awk string literal with the same escapes `-v` would process. */
const awkString = (value: string) => `"${value.replace(/"/g, '\\"')}"`;

/**
 * `awk -v OFS=… 'program'`: the special variables become a BEGIN rule in front of the program,
 * which runs before the program's own BEGIN rules, as `-v` assignments do.
 */
export const awk = defineCommand("awk", async (args, ctx) => {
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

// Worker side: `ls` with several file operands, in front of just-bash's ls.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { type Ctx, original } from "./shared/context.js";

/**
 * `ls A B` with files only: just-bash separates them with blank lines, as it does directory
 * listings; GNU prints the files together (one per line when not a terminal), sorted, and with
 * `-l` one long line each, still without blank lines (it puts those only between directory
 * listings). A long line is just-bash's own, for that file alone.
 */
export const ls = defineCommand("ls", async (args, ctx) => {
  const flags = args.filter((a) => a.startsWith("-") && a !== "-");
  const names = args.filter((a) => !a.startsWith("-") || a === "-");
  if (names.length < 2 || !flags.every((f) => /^-[1al]+$/.test(f))) return justBashLs(ctx, args);
  const files: string[] = [];
  let stderr = "";
  for (const name of names) {
    try {
      const st = await ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, name));
      if (st.isDirectory) return justBashLs(ctx, args);
      files.push(name);
    } catch {
      stderr += cannotAccess(name);
    }
  }
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let stdout = files.map((f) => `${f}\n`).join("");
  if (flags.some((f) => f.includes("l"))) {
    stdout = "";
    for (const file of files) {
      const line = await original(ctx, "ls", [...flags, "--", file]);
      if (line.exitCode !== 0) return justBashLs(ctx, args);
      stdout += line.stdout;
    }
  }
  return { stdout, stderr, exitCode: stderr ? 2 : 0 };
});

/** GNU's words for a missing operand, the name quoted as its error messages quote names. */
function cannotAccess(name: string): string {
  const quoted = name.includes("'") ? `"${name}"` : `'${name}'`;
  return `ls: cannot access ${quoted}: No such file or directory\n`;
}

/** just-bash's ls, with a missing operand reported in GNU's words (it says `ls: X: No such…`). */
async function justBashLs(ctx: Ctx, args: string[]) {
  const r = await original(ctx, "ls", args);
  if (!r.stderr.includes(": No such file or directory")) return r;
  const stderr = r.stderr
    .split("\n")
    .map((line) => {
      const m = /^ls: (.*): No such file or directory$/.exec(line);
      return m ? cannotAccess(m[1] ?? "").slice(0, -1) : line;
    })
    .join("\n");
  return { ...r, stderr };
}

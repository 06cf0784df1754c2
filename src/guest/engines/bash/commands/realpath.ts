// Worker side: `realpath`, which just-bash lacks.

import { defineCommand } from "just-bash";
import { fail } from "./shared/context.js";

/** `realpath [-m] PATH...`: the absolute path with symlinks, `.` and `..` resolved. */
export const realpath = defineCommand("realpath", async (args, ctx) => {
  const missingOk = args.includes("-m");
  const paths = args.filter((a) => a !== "-m" && a !== "-e" && a !== "--");
  if (paths.length === 0) return fail("realpath", "missing operand");
  let stdout = "";
  let stderr = "";
  for (const path of paths) {
    const absolute = ctx.fs.resolvePath(ctx.cwd, path);
    try {
      stdout += `${await ctx.fs.realpath(absolute)}\n`;
    } catch {
      if (missingOk) stdout += `${absolute}\n`;
      else stderr += `realpath: ${path}: No such file or directory\n`;
    }
  }
  return { stdout, stderr, exitCode: stderr ? 1 : 0 };
});

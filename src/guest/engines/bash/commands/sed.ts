// Worker side: `sed -i.SUFFIX` and GNU's one-line `a\text`, in front of just-bash's sed.
// Like every wrapper here, it handles only the forms just-bash gets wrong or refuses and hands
// every other call to just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { original } from "./shared/context.js";

/** Whether sed's argument k is a script: after -e, or the first operand when there is no -e. */
function isSedScript(args: string[], k: number): boolean {
  if (args[k - 1] === "-e" || args[k - 1] === "--expression") return true;
  if (args.some((a) => a === "-e" || a === "-f" || /^--(expression|file)/.test(a))) return false;
  const first = args.findIndex((a, j) => !a.startsWith("-") && args[j - 1] !== "-l");
  return first === k;
}

/**
 * GNU's one-line `a\text`, `i\text`, `c\text` (the text on the command's own line, its leading
 * blanks kept): written in the POSIX form, backslash and newline, which just-bash reads.
 */
function oneLineText(script: string): string {
  const address = String.raw`(?:\d+|\$|/(?:[^/\\]|\\.)*/)`;
  const head = new RegExp(
    String.raw`^(\s*(?:${address}(?:\s*,\s*${address})?)?\s*!?\s*[aic])\\(?=[^\n])`,
    "gm",
  );
  return script.replace(head, "$1\\\n");
}

/** `sed -i.bak …` / `--in-place=.bak`: keeps a copy of each file with that suffix first. */
export const sed = defineCommand("sed", async (args, ctx) => {
  args = args.map((a, k) => (isSedScript(args, k) ? oneLineText(a) : a));
  const at = args.findIndex((a) => /^-i.+/.test(a) || /^--in-place=.+/.test(a));
  if (at < 0) return original(ctx, "sed", args);
  const suffix = args[at]!.replace(/^-i|^--in-place=/, "");
  const rest = [...args.slice(0, at), "-i", ...args.slice(at + 1)];
  // The files are the operands after the script (the first operand, unless -e/-f gave it).
  const scripted = rest.some((a) => a === "-e" || a === "-f" || /^--(expression|file)/.test(a));
  const operands: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!;
    if (a === "-e" || a === "-f" || a === "-l") k++;
    else if (!a.startsWith("-") || a === "-") operands.push(a);
  }
  for (const file of scripted ? operands : operands.slice(1)) {
    const from = ctx.fs.resolvePath(ctx.cwd, file);
    const to = suffix.includes("*")
      ? ctx.fs.resolvePath(ctx.cwd, suffix.replace(/\*/g, file.split("/").pop()!))
      : `${from}${suffix}`;
    try {
      await ctx.fs.writeFile(to, await ctx.fs.readFileBuffer(from));
    } catch {
      // sed itself reports the missing file.
    }
  }
  return original(ctx, "sed", rest);
});

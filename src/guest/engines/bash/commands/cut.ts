// Worker side: `cut --complement`, in front of just-bash's cut, which lacks it.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand, latin1FromBytes } from "just-bash";
import { fail, original } from "./shared/context.js";

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
export const cut = defineCommand("cut", async (args, ctx) => {
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

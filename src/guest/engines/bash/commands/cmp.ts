// Worker side: `cmp`, which just-bash lacks, as GNU diffutils' (its messages and exit codes).

import { defineCommand } from "just-bash";
import { fail, ok, readInput } from "./shared/context.js";

const missing = (name: string, file: string) => fail(name, `${file}: No such file or directory`);

/** `cmp [-s] FILE1 [FILE2]`: the first byte where two files differ. */
export const cmp = defineCommand("cmp", async (args, ctx) => {
  const silent = args.includes("-s") || args.includes("--silent") || args.includes("--quiet");
  const files = args.filter((a) => !a.startsWith("-") || a === "-");
  if (files.length === 0) return fail("cmp", "missing operand", 2);
  const [a, b = "-"] = files as [string, string?];
  let x: Uint8Array;
  let y: Uint8Array;
  try {
    x = await readInput(ctx, a);
  } catch {
    return { ...missing("cmp", a), exitCode: 2 };
  }
  try {
    y = await readInput(ctx, b);
  } catch {
    return { ...missing("cmp", b), exitCode: 2 };
  }
  let line = 1;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i])
      return {
        stdout: silent ? "" : `${a} ${b} differ: byte ${i + 1}, line ${line}\n`,
        stderr: "",
        exitCode: 1,
      };
    if (x[i] === 10) line++;
  }
  if (x.length === y.length) return ok("");
  const shorter = x.length < y.length ? a : b;
  return {
    stdout: "",
    stderr: silent
      ? ""
      : `cmp: EOF on ${shorter} after byte ${n}, line ${line - (n > 0 && x[n - 1] === 10 ? 1 : 0)}\n`,
    exitCode: 1,
  };
});

// Worker side: `bc`, the arbitrary-precision calculator, as GNU bc behaves: `scale` (digits kept
// after the point, results truncated), `-l` (scale 20 and the math library s, c, a, l, e), ibase
// and obase, variables and arrays, if/while/for, break/continue, functions with `auto`, strings,
// `print`, comments. Numbers are decimal.js values; the scale of each result follows bc's rules.
// The program is read by lexer.ts and parser.ts and run by interp.ts.

import { defineCommand, latin1FromBytes } from "just-bash";
import { type Ctx, fail, type Result } from "../shared/context.js";
import { Interp, Signal } from "./interp.js";
import { BcError, lex } from "./lexer.js";
import { Parser, type Stmt } from "./parser.js";

/** `bc [-l] [-q] [FILE...]`: files first, then standard input. */
export const bc = defineCommand("bc", async (args, ctx: Ctx): Promise<Result> => {
  let mathLib = false;
  const files: string[] = [];
  for (const a of args) {
    if (a === "-l" || a === "--mathlib") mathLib = true;
    else if (/^-[lqsw]+$/.test(a)) mathLib ||= a.includes("l");
    else if (a === "-q" || a === "--quiet" || a === "-s" || a === "--standard") continue;
    else if (a.startsWith("-")) return fail("bc", `invalid option -- '${a.slice(1)}'`);
    else files.push(a);
  }
  const sources: string[] = [];
  for (const f of files) {
    try {
      sources.push(await ctx.fs.readFile(ctx.fs.resolvePath(ctx.cwd, f)));
    } catch {
      return fail("bc", `File ${f} is unavailable.`);
    }
  }
  sources.push(Buffer.from(latin1FromBytes(ctx.stdin), "latin1").toString("utf8"));
  const lineLength = Number(ctx.env.get("BC_LINE_LENGTH") ?? 70);
  const interp = new Interp(mathLib, Number.isFinite(lineLength) ? lineLength : 70);
  let stderr = "";
  // bc reads and runs its input a statement at a time: an error reports and moves on.
  for (const source of sources) {
    let program: Stmt[];
    try {
      program = new Parser(lex(source)).program();
    } catch (error) {
      stderr += `(standard_in) 1: ${error instanceof BcError ? error.message : String(error)}\n`;
      continue;
    }
    for (const stmt of program) {
      try {
        interp.exec(stmt);
      } catch (error) {
        if (error instanceof Signal && error.kind === "quit")
          return { stdout: interp.out, stderr, exitCode: 0 };
        if (error instanceof Signal) continue;
        if (error instanceof BcError) {
          stderr += `Runtime error: ${error.message}\n`;
          if (error.message === "too many steps" || error.message === "output too large")
            return { stdout: interp.out, stderr, exitCode: 1 };
          continue;
        }
        throw error;
      }
    }
  }
  return { stdout: interp.out, stderr, exitCode: 0 };
});

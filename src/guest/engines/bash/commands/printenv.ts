// Worker side: `printenv` lists the *exported* variables, where just-bash's lists every shell
// variable (see env.ts).

import { defineCommand } from "just-bash";
import { exported, lines } from "./env.js";
import { fail } from "./shared/context.js";

/** `printenv [-0] [NAME]...`: the exported variables, or the named ones' values (1 if any is not). */
export const printenv = defineCommand("printenv", async (args, ctx) => {
  let terminator = "\n";
  const names: string[] = [];
  for (const a of args) {
    if (a === "-0" || a === "--null") terminator = "\0";
    else if (a.startsWith("-") && a !== "-") return fail("printenv", `invalid option -- '${a}'`, 2);
    else names.push(a);
  }
  const vars = exported(ctx);
  if (names.length === 0)
    return { stdout: lines(Object.entries(vars), terminator), stderr: "", exitCode: 0 };
  let stdout = "";
  let missing = false;
  for (const name of names) {
    const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
    if (value === undefined) missing = true;
    else stdout += `${value}${terminator}`;
  }
  return { stdout, stderr: "", exitCode: missing ? 1 : 0 };
});

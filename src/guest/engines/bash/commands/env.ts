// Worker side: `env` lists the *exported* variables, as bash's children see them. just-bash's
// own lists every shell variable (`?`, IFS, OPTIND, BASHOPTS…), which no real `env` prints. `env`
// with a command to run goes to just-bash's command unchanged.

import { defineCommand } from "just-bash";
import { type Ctx, fail, original, shellQuote } from "./shared/context.js";

/** The exported variables (printenv.ts lists them too). */
export const exported = (ctx: Ctx): Record<string, string> => ctx.exportedEnv ?? {};

/** Variables as `NAME=VALUE` lines. */
export const lines = (vars: Iterable<[string, string]>, terminator: string) =>
  Array.from(vars, ([name, value]) => `${name}=${value}${terminator}`).join("");

/**
 * `env [-i] [-u NAME]... [-0] [NAME=VALUE]...` with no command prints that environment; any
 * other form (a command to run, --help) is just-bash's.
 */
export const env = defineCommand("env", async (args, ctx) => {
  let ignore = false;
  let terminator = "\n";
  const unset: string[] = [];
  const assigned = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-i" || a === "--ignore-environment" || a === "-") ignore = true;
    else if (a === "-0" || a === "--null") terminator = "\0";
    else if (a === "-u" && i + 1 < args.length) unset.push(args[++i]!);
    else if (a.startsWith("--unset=")) unset.push(a.slice("--unset=".length));
    else if (a.startsWith("-u") && a.length > 2) unset.push(a.slice(2));
    else if (!a.startsWith("-") && a.includes("=") && a.indexOf("=") > 0)
      assigned.set(a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1));
    else if (a.startsWith("-") || ignore || unset.length > 0 || terminator !== "\n") {
      // An option this form does not know, or a command in a changed environment: just-bash's.
      return original(ctx, "env", args);
    } else {
      // `env NAME=VALUE... COMMAND ARGS`: the command runs as `NAME=VALUE COMMAND ARGS` would,
      // so what it lists as exported includes the assignments.
      const run = ctx.execWithInheritedStdin ?? ctx.exec;
      if (!run) return fail("env", "cannot run commands here", 127);
      const words = [
        ...Array.from(assigned, ([n, v]) => `${n}=${shellQuote(v)}`),
        ...args.slice(i).map(shellQuote),
      ];
      return run(words.join(" "), { cwd: ctx.cwd });
    }
  }
  const vars = new Map(ignore ? [] : Object.entries(exported(ctx)));
  for (const name of unset) vars.delete(name);
  for (const [name, value] of assigned) vars.set(name, value);
  return { stdout: lines(vars, terminator), stderr: "", exitCode: 0 };
});

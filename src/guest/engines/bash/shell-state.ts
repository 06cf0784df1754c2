// Worker side: a Bash sandbox's shell variables from one run to the next, exported or not.
// just-bash runs each script in a new shell, so the engine carries the variables itself. A new
// `Bash` exports every variable it is given, so only the exported ones go in that way; the
// others go in through `exec`'s own `env`, which sets plain shell variables. Neither is script
// text: just-bash's parser refuses a script over 1 000 000 characters, so a variable of that
// size carried as an assignment would make every later run of the sandbox fail. Which variables
// a script left exported is asked at its end by a command the engine appends to it; a script
// that ends early (`exit`, `set -e`) keeps the previous run's answer.

import { type Command, defineCommand } from "just-bash";
import { HOST_NAME } from "./commands/shared/identity.js";

/** Shell-internal variables that describe one exec and must not be carried to the next. */
const TRANSIENT = new Set([
  "?",
  "_",
  "OLDPWD",
  "SHLVL",
  "BASHPID",
  "RANDOM",
  "LINENO",
  "SECONDS",
  "PPID",
  // Read-only in bash: a new shell sets them from its options.
  "SHELLOPTS",
  "BASHOPTS",
]);

/** What a new just-bash shell sets by itself: not carried unless the script changed it. */
const SHELL_DEFAULTS: Record<string, string> = {
  IFS: " \t\n",
  OSTYPE: "linux-gnu",
  MACHTYPE: "x86_64-pc-linux-gnu",
  HOSTTYPE: "x86_64",
  HOSTNAME: HOST_NAME,
  OPTIND: "1",
};

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The name of the command appended to each script; not one a script would use. */
export const EXPORTS_PROBE = "__polybox_exports";

export class ShellState {
  private vars: Record<string, string> = {};
  /** Names exported at the end of the last run that said; null: none has run yet. */
  private exported: Set<string> | null = null;
  /** Set by the probe during a run, taken by `update`. */
  private probed: string[] | null = null;

  /** The probe: records the exported names, and ends with the status it is given. */
  readonly probe: Command = defineCommand(EXPORTS_PROBE, async (args, ctx) => {
    this.probed = Object.keys(ctx.exportedEnv ?? {});
    return { stdout: "", stderr: "", exitCode: Number(args[0]) || 0 };
  });

  /** The environment a new shell starts with: the exported variables. */
  environment(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.vars))
      if (this.exported === null || this.exported.has(name)) out[name] = value;
    return out;
  }

  /** The variables that were not exported: set, unexported, in the next run's shell. */
  unexported(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.exported === null) return out;
    for (const [name, value] of Object.entries(this.vars)) {
      if (this.exported.has(name) || !NAME.test(name) || SHELL_DEFAULTS[name] === value) continue;
      out[name] = value;
    }
    return out;
  }

  /** After a run: its final variables, and what the probe saw if the script reached it. */
  update(env: Record<string, string>): void {
    this.vars = Object.fromEntries(Object.entries(env).filter(([k]) => !TRANSIENT.has(k)));
    if (this.probed !== null) this.exported = new Set(this.probed);
    else if (this.exported === null) this.exported = new Set(Object.keys(this.vars));
    this.probed = null;
  }
}

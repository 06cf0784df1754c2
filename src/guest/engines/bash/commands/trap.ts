// Worker side: `trap`, a builtin just-bash lacks. The engine runs the EXIT handler when the script
// ends (engine.ts); just-bash, patched, runs the ERR handler through its `errTrap` option.

import { type Command, defineCommand } from "just-bash";
import { fail, shellQuote } from "./shared/context.js";

/**
 * What `trap` recorded in one run: the EXIT handler, and the ERR handler (just-bash runs it
 * through its `errTrap` option, after a command fails where `set -e` would exit). Signals are
 * accepted and never raised.
 */
export interface Traps {
  exit: string | null;
  err: string | null;
}

const SIGNALS = [
  "EXIT",
  "HUP",
  "INT",
  "QUIT",
  "TERM",
  "ERR",
  "DEBUG",
  "RETURN",
  "USR1",
  "USR2",
  "PIPE",
  "ALRM",
  "CHLD",
];

/**
 * `trap [-p] [HANDLER] SIGNAL…`: an EXIT handler runs when the script ends, however it ends
 * (the engine runs it: see engine.ts); an ERR handler runs after a failing command, as bash's
 * does (not inside functions or subshells: no `set -E`). Other signals are accepted, since no
 * signal reaches a sandboxed script; DEBUG and RETURN handlers are recorded and never run.
 */
export function trap(traps: Traps): Command {
  const others = new Map<string, string>();
  return defineCommand("trap", async (args) => {
    if (args.length === 0 || args[0] === "-p") {
      const only = new Set(args.slice(1).map((a) => a.toUpperCase().replace(/^SIG/, "")));
      const shown = (sig: string) => only.size === 0 || only.has(sig);
      const lines: string[] = [];
      if (traps.exit !== null && shown("EXIT"))
        lines.push(`trap -- ${shellQuote(traps.exit)} EXIT`);
      for (const [sig, handler] of others)
        if (shown(sig)) lines.push(`trap -- ${shellQuote(handler)} SIG${sig}`);
      if (traps.err !== null && shown("ERR")) lines.push(`trap -- ${shellQuote(traps.err)} ERR`);
      return { stdout: lines.length ? `${lines.join("\n")}\n` : "", stderr: "", exitCode: 0 };
    }
    if (args[0] === "-l") return { stdout: `${SIGNALS.join(" ")}\n`, stderr: "", exitCode: 0 };
    const rest = args[0] === "--" ? args.slice(1) : args;
    // `trap SIGNAL` alone (or `trap - SIGNAL`) resets.
    const reset = rest.length === 1 || rest[0] === "-";
    const handler = reset ? null : rest[0]!;
    for (const raw of reset && rest[0] !== "-" ? rest : rest.slice(1)) {
      const sig = raw.toUpperCase().replace(/^SIG/, "");
      if (sig === "EXIT" || sig === "0") traps.exit = handler;
      else if (sig === "ERR") traps.err = handler;
      else if (SIGNALS.includes(sig) || /^\d+$/.test(sig)) {
        if (handler === null) others.delete(sig);
        else others.set(sig, handler);
      } else return fail("trap", `${raw}: invalid signal specification`);
    }
    return { stdout: "", stderr: "", exitCode: 0 };
  });
}

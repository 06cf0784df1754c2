// Worker side: which of just-bash's commands a guest gets. Some of its commands load their
// dependencies through CommonJS `require` (node builtins, CJS packages, native addons); the
// worker's hardening (L1, src/guest/engine-host/harden.ts) closes the CommonJS loader, so they could
// only fail — and a failed load left the interpreter to crash on the next run. They are left
// out, and in their place a command answers as an unknown one would (exit 127) with a message
// saying what to use instead.

import { type CommandName, defineCommand, getCommandNames } from "just-bash";

const NATIVE = 'or a native sandbox (engine: "native"), which runs the real tool';

/** Commands that need CommonJS `require` in the worker, with what to use instead. */
export const UNAVAILABLE: Readonly<Record<string, string>> = {
  yq: `use jq for JSON, Python (yaml is not in its standard library; json, tomllib are), ${NATIVE}`,
  sqlite3: `use Python's sqlite3 module (language "python"), ${NATIVE}`,
  "html-to-markdown": `use Python's html.parser, ${NATIVE}`,
};

/** just-bash's commands polybox writes its own of (tar.ts, file-command.ts), for the same reason. */
const REPLACED = new Set(["tar", "file"]);

export const AVAILABLE = getCommandNames().filter(
  (name) => !(name in UNAVAILABLE) && !REPLACED.has(name),
) as CommandName[];

export const unavailableCommands = Object.entries(UNAVAILABLE).map(([name, instead]) =>
  defineCommand(name, async () => ({
    stdout: "",
    stderr: `bash: ${name}: command not available in polybox's WASM bash (just-bash); ${instead}\n`,
    exitCode: 127,
  })),
);

// Worker side: just-bash's commands a guest cannot have. Some of its commands load their
// dependencies through CommonJS `require` (node builtins, CJS packages, native addons); the
// worker's hardening (L1, src/guest/engine-host/harden.ts) closes the CommonJS loader, so they could
// only fail — and a failed load left the interpreter to crash on the next run. They are left
// out (registry.ts), and in their place a command answers as an unknown one would (exit 127)
// with a message saying what to use instead.

import { type Command, defineCommand } from "just-bash";

const NATIVE = 'or a native sandbox (engine: "native"), which runs the real tool';

/** A command that needs CommonJS `require` in the worker, answering with what to use instead. */
function unavailable(name: string, instead: string): Command {
  return defineCommand(name, async () => ({
    stdout: "",
    stderr: `bash: ${name}: command not available in polybox's WASM bash (just-bash); ${instead}\n`,
    exitCode: 127,
  }));
}

export const yq = unavailable(
  "yq",
  `use jq for JSON, Python (yaml is not in its standard library; json, tomllib are), ${NATIVE}`,
);
export const sqlite3 = unavailable(
  "sqlite3",
  `use Python's sqlite3 module (language "python"), ${NATIVE}`,
);
export const htmlToMarkdown = unavailable(
  "html-to-markdown",
  `use Python's html.parser, ${NATIVE}`,
);

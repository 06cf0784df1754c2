// Worker side: `mkfifo`, which cannot be real here: just-bash runs a pipeline's commands one after
// another, so a FIFO could never have a reader and a writer at once. It says so and fails.

import { defineCommand } from "just-bash";
import { fail } from "./shared/context.js";

/** `mkfifo`: not possible here (see the top of this file). */
export const mkfifo = defineCommand("mkfifo", async (args) =>
  fail(
    "mkfifo",
    `cannot create fifo '${args.filter((a) => !a.startsWith("-")).join(" ")}': named pipes are not supported in polybox's WASM bash (its pipelines run one command after another); use a pipe (|), a temporary file, or a native sandbox`,
  ),
);

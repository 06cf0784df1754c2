// Worker side: polybox's own sort, uniq and tr, registered over just-bash's commands of the same
// names. They keep a pipeline's data in one buffer per stage instead of one string per line, so
// everyday data work (word frequencies of a 50 MB file) fits within the default memoryMb and
// timeoutMs. What they do not implement they hand to just-bash's own command (`origCommand`).

import { defineCommand } from "just-bash";
import { runSort } from "./sort.js";
import { runTr } from "./tr.js";
import { runUniq } from "./uniq.js";

export const dataCommands = [
  defineCommand("sort", runSort),
  defineCommand("uniq", runUniq),
  defineCommand("tr", runTr),
];

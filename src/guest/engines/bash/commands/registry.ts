// Worker side: the one table of the commands polybox adds to just-bash or puts in place of its
// own, each with why. The engine registers them from here (commandsFor) and gives the guest
// just-bash's other commands (AVAILABLE); docs/architecture.md lists this table, and
// test/docs/bash-commands.test.ts checks that the two agree. A command lives in
// `commands/<name>.ts`, or in a folder of its family when it needs several files (sort/, tar/,
// bc/); what several commands share is in shared/.

import { type Command, type CommandName, getCommandNames } from "just-bash";
import type { Devices } from "../devices.js";
import { awk } from "./awk.js";
import { bash, sh } from "./bash.js";
import { bc } from "./bc/bc.js";
import { cksum } from "./cksum.js";
import { cmp } from "./cmp.js";
import { cut } from "./cut.js";
import { date } from "./date.js";
import { dd } from "./dd.js";
import { diff } from "./diff.js";
import { env } from "./env.js";
import { file } from "./file.js";
import { grep } from "./grep.js";
import { head } from "./head.js";
import { iconv } from "./iconv.js";
import { id } from "./id.js";
import { ls } from "./ls.js";
import { mkfifo } from "./mkfifo.js";
import { mktemp } from "./mktemp.js";
import { numfmt } from "./numfmt.js";
import { od } from "./od.js";
import { paste } from "./paste.js";
import { printenv } from "./printenv.js";
import { realpath } from "./realpath.js";
import { sed } from "./sed.js";
import { seq } from "./seq.js";
import { shuf } from "./shuf.js";
import { sort } from "./sort/sort.js";
import { tail } from "./tail.js";
import { tar } from "./tar/tar.js";
import { tr } from "./tr.js";
import { type Traps, trap } from "./trap.js";
import { uname } from "./uname.js";
import { htmlToMarkdown, sqlite3, yq } from "./unavailable.js";
import { uniq } from "./uniq.js";
import { unzip } from "./unzip.js";
import { wc } from "./wc.js";
import { whoami } from "./whoami.js";
import { xargs } from "./xargs.js";
import { xxd } from "./xxd.js";
import { yes } from "./yes.js";
import { zip } from "./zip.js";

/** What a command needs from the run it is made for. */
export interface RunParts {
  /** The endless streams: head, tail, dd and yes read them. */
  devices: Devices;
  /** What `trap` records, for the engine to run. */
  traps: Traps;
}

/**
 * What becomes of just-bash's command of the same name:
 * - `none`: just-bash has no such command.
 * - `kept`: polybox's is in front of it and hands it the calls it does not handle itself
 *   (`ctx.origCommand`), so the rest of the command stays just-bash's.
 * - `left out`: it cannot run in the worker (its module loads through CommonJS `require`).
 */
export type JustBashCommand = "none" | "kept" | "left out";

export interface CommandEntry {
  name: string;
  justBash: JustBashCommand;
  /** Why polybox has its own, in a few words. */
  reason: string;
  /** The command, or how to make it for one run. */
  command: Command | ((run: RunParts) => Command);
}

const LACKS = "just-bash lacks it";
const NEEDS_REQUIRE = "just-bash's loads through CommonJS `require`, which the worker closes";
const STUB = `${NEEDS_REQUIRE}: exit 127 with what to use instead`;
const EXPORTED = "GNU behaviour differs: the exported variables, not every shell variable";

/** Every command polybox adds or replaces, by name. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "awk",
    justBash: "kept",
    reason: "GNU behaviour differs: `-v OFS=…` (special variables) set as the program would",
    command: awk,
  },
  {
    name: "bash",
    justBash: "kept",
    reason: "GNU behaviour differs: option flags before a script (`bash -e script`)",
    command: bash,
  },
  {
    name: "bc",
    justBash: "none",
    reason: `${LACKS} (numbers in decimal.js, bc's scale rules and output format)`,
    command: bc,
  },
  { name: "cksum", justBash: "none", reason: LACKS, command: cksum },
  { name: "cmp", justBash: "none", reason: LACKS, command: cmp },
  {
    name: "cut",
    justBash: "kept",
    reason: "GNU behaviour differs: `--complement`",
    command: cut,
  },
  {
    name: "date",
    justBash: "kept",
    reason: "GNU behaviour differs: `-d` with relative items (`+1 month`, `3 days ago`)",
    command: date,
  },
  {
    name: "dd",
    justBash: "none",
    reason: `${LACKS} (GNU's operands, conversions and summary); reads devices`,
    command: ({ devices }) => dd(devices),
  },
  {
    name: "diff",
    justBash: "kept",
    reason: "GNU behaviour differs: the normal format by default, `-r`, `-N`, `-q`",
    command: diff,
  },
  { name: "env", justBash: "kept", reason: EXPORTED, command: env },
  {
    name: "file",
    justBash: "left out",
    reason: `${NEEDS_REQUIRE} (libmagic); a magic-number table of file(1) 5.44's answers`,
    command: file,
  },
  {
    name: "grep",
    justBash: "kept",
    reason: "GNU behaviour differs: several `-e` patterns (just-bash's keeps the last)",
    command: grep,
  },
  {
    name: "head",
    justBash: "kept",
    reason: "GNU behaviour differs: size suffixes, `-n -N`, `-c -N`, `-z`; reads devices",
    command: ({ devices }) => head(devices),
  },
  { name: "html-to-markdown", justBash: "left out", reason: STUB, command: htmlToMarkdown },
  {
    name: "iconv",
    justBash: "none",
    reason: `${LACKS} (the platform's TextDecoder tables: iconv-lite is CommonJS)`,
    command: iconv,
  },
  { name: "id", justBash: "none", reason: LACKS, command: id },
  {
    name: "ls",
    justBash: "kept",
    reason: "GNU behaviour differs: several file operands listed together, no blank lines",
    command: ls,
  },
  {
    name: "mkfifo",
    justBash: "none",
    reason: `${LACKS}; fails with the reason (a pipeline's commands run one after another)`,
    command: mkfifo,
  },
  { name: "mktemp", justBash: "none", reason: LACKS, command: mktemp },
  { name: "numfmt", justBash: "none", reason: LACKS, command: numfmt },
  {
    name: "od",
    justBash: "kept",
    reason: "GNU behaviour differs: spacing after the offset, `-tx1` as one word",
    command: od,
  },
  {
    name: "paste",
    justBash: "kept",
    reason: "GNU behaviour differs: `-sd,` clustered, stdin by default, `paste - - -`",
    command: paste,
  },
  { name: "printenv", justBash: "kept", reason: EXPORTED, command: printenv },
  { name: "realpath", justBash: "none", reason: LACKS, command: realpath },
  {
    name: "sed",
    justBash: "kept",
    reason: "GNU behaviour differs: `-i.SUFFIX`, one-line `a\\text`, `i\\text`, `c\\text`",
    command: sed,
  },
  { name: "seq", justBash: "kept", reason: "GNU behaviour differs: `-f FORMAT`", command: seq },
  {
    name: "sh",
    justBash: "kept",
    reason: "GNU behaviour differs: option flags before a script (`sh -x script`)",
    command: sh,
  },
  { name: "shuf", justBash: "none", reason: LACKS, command: shuf },
  {
    name: "sort",
    justBash: "kept",
    reason: "GNU behaviour differs: C-locale byte order; large inputs held in one buffer",
    command: sort,
  },
  { name: "sqlite3", justBash: "left out", reason: STUB, command: sqlite3 },
  {
    name: "tail",
    justBash: "kept",
    reason: "GNU behaviour differs: size suffixes, `+N`, `-c +N`, `-z`; reads devices",
    command: ({ devices }) => tail(devices),
  },
  {
    name: "tar",
    justBash: "left out",
    reason: `${NEEDS_REQUIRE}; GNU-format archives, gzip through fflate`,
    command: tar,
  },
  {
    name: "tr",
    justBash: "kept",
    reason: "GNU behaviour differs: byte tables in the C locale; large inputs in one pass",
    command: tr,
  },
  {
    name: "trap",
    justBash: "none",
    reason: `${LACKS} (a builtin: the engine runs the EXIT and ERR handlers)`,
    command: ({ traps }) => trap(traps),
  },
  { name: "uname", justBash: "none", reason: LACKS, command: uname },
  {
    name: "uniq",
    justBash: "kept",
    reason: "GNU behaviour differs: counts padded to 7, `-f`/`-s`/`-w`, an OUTPUT operand",
    command: uniq,
  },
  { name: "unzip", justBash: "none", reason: `${LACKS} (fflate)`, command: unzip },
  {
    name: "wc",
    justBash: "kept",
    reason: "GNU behaviour differs: `-L`; `-c` of stdin counted without splitting it",
    command: wc,
  },
  {
    name: "whoami",
    justBash: "kept",
    reason: "the sandbox's one user, as `id` and /etc/passwd name it",
    command: whoami,
  },
  {
    name: "xargs",
    justBash: "kept",
    reason: "GNU behaviour differs: `-n`, `-I`, `-L`, `-0`, `-d`, `-r`, `-t`",
    command: xargs,
  },
  { name: "xxd", justBash: "none", reason: LACKS, command: xxd },
  {
    name: "yes",
    justBash: "none",
    reason: `${LACKS}; its endless output is read by head, tail and dd as a device is`,
    command: ({ devices }) => yes(devices),
  },
  { name: "yq", justBash: "left out", reason: STUB, command: yq },
  { name: "zip", justBash: "none", reason: `${LACKS} (fflate)`, command: zip },
];

/** The table's commands, made for one run. */
export function commandsFor(run: RunParts): Command[] {
  return COMMANDS.map((entry) =>
    typeof entry.command === "function" ? entry.command(run) : entry.command,
  );
}

const LEFT_OUT = new Set(COMMANDS.filter((c) => c.justBash === "left out").map((c) => c.name));

/** just-bash's commands a guest gets: all but those left out. */
export const AVAILABLE = getCommandNames().filter((name) => !LEFT_OUT.has(name)) as CommandName[];

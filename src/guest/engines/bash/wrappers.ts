// Worker side: GNU behaviour that just-bash's own commands lack, added in front of them. Each
// wrapper handles only the forms just-bash gets wrong or refuses (`xargs -n`/`-I`,
// `wc -L`, `paste -sd,`, `sed -i.bak`, `bash -e script`) and hands every other call to
// just-bash's command unchanged (`ctx.origCommand`), so the rest of each command stays just-bash's.
// `trap` is a builtin just-bash lacks; its EXIT handler is run by the engine when the script ends.

import { type Command, defineCommand, latin1FromBytes } from "just-bash";
import { type Ctx, fail, type Result, readInput, shellQuote } from "./unix-commands.js";

function original(ctx: Ctx, name: string, args: string[]): Promise<Result> {
  if (!ctx.origCommand) return Promise.resolve(fail(name, "not available", 127));
  return ctx.origCommand(args);
}

/** stdin, or a file's text (`-` is stdin); latin-1 keeps bytes as they are. */
async function readText(ctx: Ctx, file: string): Promise<string> {
  return Buffer.from(await readInput(ctx, file)).toString("latin1");
}

/**
 * `xargs` with GNU's options: `-n N` (at most N arguments per command), `-I R` (one command per
 * line, R replaced), `-d D` / `-0` (items split at D or NUL), `-r` (nothing to do → no command),
 * `-L N` (N lines per command), `-t` (print each command to stderr). Items are split as GNU
 * splits them: at blanks and newlines, with quotes and backslashes honoured.
 */
const xargs = defineCommand("xargs", async (args, ctx) => {
  let maxArgs = 0;
  let maxLines = 0;
  let replace: string | null = null;
  let delimiter: string | null = null;
  let noRunIfEmpty = false;
  let trace = false;
  let i = 0;
  const value = (flag: string): string | null => {
    const a = args[i]!;
    if (a.length > flag.length) return a.slice(flag.length).replace(/^=/, "");
    i++;
    return args[i] ?? null;
  };
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (a.startsWith("-n") || a.startsWith("--max-args")) {
      const v = Number(value(a.startsWith("-n") ? "-n" : "--max-args"));
      if (!Number.isInteger(v) || v < 1) return fail("xargs", "invalid number for -n option");
      maxArgs = v;
    } else if (a.startsWith("-L") || a.startsWith("--max-lines")) {
      const v = Number(value(a.startsWith("-L") ? "-L" : "--max-lines"));
      if (!Number.isInteger(v) || v < 1) return fail("xargs", "invalid number for -L option");
      maxLines = v;
    } else if (a.startsWith("-I") || a.startsWith("--replace")) {
      replace = value(a.startsWith("-I") ? "-I" : "--replace") ?? "{}";
    } else if (a === "-i") {
      replace = "{}";
    } else if (a.startsWith("-d") || a.startsWith("--delimiter")) {
      const d = value(a.startsWith("-d") ? "-d" : "--delimiter") ?? "\n";
      delimiter = d === "\\n" ? "\n" : d === "\\t" ? "\t" : d === "\\0" ? "\0" : d;
    } else if (a === "-0" || a === "--null") {
      delimiter = "\0";
    } else if (a === "-r" || a === "--no-run-if-empty") {
      noRunIfEmpty = true;
    } else if (a === "-t" || a === "--verbose") {
      trace = true;
    } else if (/^-[0rt]+$/.test(a)) {
      if (a.includes("0")) delimiter = "\0";
      if (a.includes("r")) noRunIfEmpty = true;
      if (a.includes("t")) trace = true;
    } else if (a.startsWith("-") && a !== "-") {
      return original(ctx, "xargs", args);
    } else break;
  }
  const command = args.slice(i);
  if (command.length === 0) command.push("echo");
  const input = latin1FromBytes(ctx.stdin);
  // Groups of items, each group one command.
  let groups: string[][];
  if (replace !== null) {
    const lines = (delimiter !== null ? input.split(delimiter) : input.split("\n"))
      .map((l) => (delimiter === null ? l.replace(/^[ \t]+/, "") : l))
      .filter((l) => l !== "");
    groups = lines.map((l) => [l]);
  } else {
    const items =
      delimiter !== null
        ? input.split(delimiter).filter((s, k, all) => s !== "" || k < all.length - 1)
        : splitItems(input);
    if (items === null)
      return fail(
        "xargs",
        "unmatched quote; by default quotes are special to xargs unless you use the -0 option",
      );
    if (maxLines > 0 && delimiter === null) {
      const lines = input.split("\n").filter((l) => l.trim() !== "");
      groups = [];
      for (let k = 0; k < lines.length; k += maxLines)
        groups.push(splitItems(lines.slice(k, k + maxLines).join("\n")) ?? []);
    } else {
      const size = maxArgs > 0 ? maxArgs : Math.max(1, items.length);
      groups = [];
      for (let k = 0; k < items.length; k += size) groups.push(items.slice(k, k + size));
    }
    if (groups.length === 0 && !noRunIfEmpty) groups = [[]];
  }
  let stdout = "";
  let stderr = "";
  let status = 0;
  for (const group of groups) {
    const words =
      replace !== null
        ? command.map((w) => w.split(replace!).join(group[0] ?? ""))
        : [...command, ...group];
    if (trace) stderr += `${words.join(" ")}\n`;
    if (!ctx.exec) return fail("xargs", "cannot run commands here", 127);
    const r = await ctx.exec(words.map(shellQuote).join(" "), { cwd: ctx.cwd });
    stdout += r.stdout;
    stderr += r.stderr;
    if (r.exitCode === 255) return { stdout, stderr, exitCode: 124 };
    if (r.exitCode === 126 || r.exitCode === 127) return { stdout, stderr, exitCode: r.exitCode };
    if (r.exitCode !== 0) status = 123;
  }
  return { stdout, stderr, exitCode: status };
});

/** Items as GNU xargs reads them: blank-separated, quotes and backslashes honoured. */
function splitItems(input: string): string[] | null {
  const items: string[] = [];
  let current = "";
  let inItem = false;
  for (let k = 0; k < input.length; k++) {
    const c = input[k]!;
    if (c === "'" || c === '"') {
      const end = input.indexOf(c, k + 1);
      if (end < 0) return null;
      current += input.slice(k + 1, end);
      inItem = true;
      k = end;
    } else if (c === "\\" && k + 1 < input.length) {
      current += input[++k];
      inItem = true;
    } else if (c === " " || c === "\t" || c === "\n") {
      if (inItem) items.push(current);
      current = "";
      inItem = false;
    } else {
      current += c;
      inItem = true;
    }
  }
  if (inItem) items.push(current);
  return items;
}

/**
 * `wc -L` (alone): the longest line's width, a tab reaching the next multiple of 8. And `wc -c`
 * of stdin, counted as its length: just-bash's wc splits the text into lines and words whatever
 * it is asked (2.4 s for 32 MiB of text).
 */
const wc = defineCommand("wc", async (args, ctx) => {
  const flags = args.filter((a) => a.startsWith("-") && a !== "-");
  if (args.length > 0 && args.every((a) => a === "-c" || a === "--bytes"))
    return { stdout: `${latin1FromBytes(ctx.stdin).length}\n`, stderr: "", exitCode: 0 };
  if (flags.length === 0 || !flags.every((a) => a === "-L" || a === "--max-line-length"))
    return original(ctx, "wc", args);
  const files = args.filter((a) => !a.startsWith("-") || a === "-");
  const targets = files.length > 0 ? files : ["-"];
  const widths: number[] = [];
  for (const file of targets) {
    let text: string;
    try {
      text = Buffer.from(await readText(ctx, file), "latin1").toString("utf8");
    } catch {
      return fail("wc", `${file}: No such file or directory`);
    }
    let max = 0;
    for (const line of text.split("\n")) {
      let w = 0;
      for (const ch of line) w = ch === "\t" ? w + 8 - (w % 8) : w + 1;
      max = Math.max(max, w);
    }
    widths.push(max);
  }
  if (files.length === 0) return { stdout: `${widths[0]}\n`, stderr: "", exitCode: 0 };
  const rows = targets.map((f, k) => [String(widths[k]), f]);
  if (targets.length > 1) rows.push([String(Math.max(...widths)), "total"]);
  const pad = Math.max(...rows.map(([n]) => n!.length));
  return {
    stdout: rows.map(([n, f]) => `${n!.padStart(pad)} ${f}\n`).join(""),
    stderr: "",
    exitCode: 0,
  };
});

/** `paste -sd,`: GNU takes clustered flags with the delimiter attached; just-bash wants them apart. */
const paste = defineCommand("paste", async (args, ctx) => {
  const out: string[] = [];
  for (const a of args) {
    const m = /^-([sz]*)d(.*)$/.exec(a) ?? /^-(s+)()$/.exec(a);
    if (m && a !== "-") {
      for (const f of m[1]!) out.push(`-${f}`);
      if (a.includes("d")) out.push("-d", ...(m[2] ? [m[2]] : []));
    } else out.push(a);
  }
  // GNU reads stdin when no file is named; just-bash asks for one.
  const isOperand = (a: string, k: number) =>
    (a === "-" || !a.startsWith("-")) && out[k - 1] !== "-d";
  if (!out.some(isOperand)) out.push("-");
  // `paste - - -`: N columns from stdin's lines in turn (just-bash gets three or more wrong).
  const operands = out.filter(isOperand);
  const serial = out.includes("-s");
  if (operands.length >= 2 && operands.every((a) => a === "-") && !serial) {
    const at = out.indexOf("-d");
    const delims =
      at >= 0 ? (out[at + 1] ?? "\t").replace(/\\t/g, "\t").replace(/\\n/g, "\n") : "\t";
    const text = latin1FromBytes(ctx.stdin);
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    let stdout = "";
    for (let k = 0; k < lines.length; k += operands.length) {
      for (let c = 0; c < operands.length; c++) {
        if (c > 0) stdout += delims[(c - 1) % delims.length] ?? "\t";
        stdout += lines[k + c] ?? "";
      }
      stdout += "\n";
    }
    return { stdout: Buffer.from(stdout, "latin1").toString("utf8"), stderr: "", exitCode: 0 };
  }
  return original(ctx, "paste", out);
});

/** Whether sed's argument k is a script: after -e, or the first operand when there is no -e. */
function isSedScript(args: string[], k: number): boolean {
  if (args[k - 1] === "-e" || args[k - 1] === "--expression") return true;
  if (args.some((a) => a === "-e" || a === "-f" || /^--(expression|file)/.test(a))) return false;
  const first = args.findIndex((a, j) => !a.startsWith("-") && args[j - 1] !== "-l");
  return first === k;
}

/**
 * GNU's one-line `a\text`, `i\text`, `c\text` (the text on the command's own line, its leading
 * blanks kept): written in the POSIX form, backslash and newline, which just-bash reads.
 */
function oneLineText(script: string): string {
  const address = String.raw`(?:\d+|\$|/(?:[^/\\]|\\.)*/)`;
  const head = new RegExp(
    String.raw`^(\s*(?:${address}(?:\s*,\s*${address})?)?\s*!?\s*[aic])\\(?=[^\n])`,
    "gm",
  );
  return script.replace(head, "$1\\\n");
}

/** `sed -i.bak …` / `--in-place=.bak`: keeps a copy of each file with that suffix first. */
const sed = defineCommand("sed", async (args, ctx) => {
  args = args.map((a, k) => (isSedScript(args, k) ? oneLineText(a) : a));
  const at = args.findIndex((a) => /^-i.+/.test(a) || /^--in-place=.+/.test(a));
  if (at < 0) return original(ctx, "sed", args);
  const suffix = args[at]!.replace(/^-i|^--in-place=/, "");
  const rest = [...args.slice(0, at), "-i", ...args.slice(at + 1)];
  // The files are the operands after the script (the first operand, unless -e/-f gave it).
  const scripted = rest.some((a) => a === "-e" || a === "-f" || /^--(expression|file)/.test(a));
  const operands: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!;
    if (a === "-e" || a === "-f" || a === "-l") k++;
    else if (!a.startsWith("-") || a === "-") operands.push(a);
  }
  for (const file of scripted ? operands : operands.slice(1)) {
    const from = ctx.fs.resolvePath(ctx.cwd, file);
    const to = suffix.includes("*")
      ? ctx.fs.resolvePath(ctx.cwd, suffix.replace(/\*/g, file.split("/").pop()!))
      : `${from}${suffix}`;
    try {
      await ctx.fs.writeFile(to, await ctx.fs.readFileBuffer(from));
    } catch {
      // sed itself reports the missing file.
    }
  }
  return original(ctx, "sed", rest);
});

/**
 * `bash -e script`, `bash -eu -o pipefail script`, `sh -x script`: just-bash takes only `-c` and
 * a script path; shell options before the script become a `set` line in front of it.
 */
function shell(name: "bash" | "sh"): Command {
  return defineCommand(name, async (args, ctx) => {
    const options: string[] = [];
    let k = 0;
    for (; k < args.length; k++) {
      const a = args[k]!;
      if (a === "-o" || a === "+o") {
        options.push(a, args[++k] ?? "");
      } else if (/^[-+][euxvfnC]+$/.test(a)) options.push(a);
      else break;
    }
    if (options.length === 0) return original(ctx, name, args);
    const rest = args.slice(k);
    if (rest[0] === "-c") {
      const [, script = "", ...positional] = rest;
      return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`, ...positional]);
    }
    if (rest.length === 0) {
      const script = latin1FromBytes(ctx.stdin);
      return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`]);
    }
    const [file, ...positional] = rest as [string, ...string[]];
    let script: string;
    try {
      script = Buffer.from(await readText(ctx, file), "latin1").toString("utf8");
    } catch {
      return fail(name, `${file}: No such file or directory`, 127);
    }
    return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`, file, ...positional]);
  });
}

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
export function trapCommand(traps: Traps): Command {
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

export const wrapperCommands: Command[] = [xargs, wc, paste, sed, shell("bash"), shell("sh")];

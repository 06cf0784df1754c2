// Worker side: command-line parsing as GNU's getopt_long does it, so that polybox's data
// commands accept what GNU's accept: clustered short options (`-rn`), an option's argument in the
// same word or the next (`-t,` `-t ,`), long options abbreviated to any unambiguous prefix, with
// `=` or the next word as argument, options after operands, and `--` to end them. The tables list
// every option GNU knows, including those polybox leaves to just-bash's own command, so that an
// abbreviation resolves (or is ambiguous) exactly as it is with GNU.

import { failure, type Result } from "./context.js";

export type ArgKind = "none" | "required" | "optional";

export interface OptionTable {
  /** Short options: the letter and whether it takes an argument. */
  short: Readonly<Record<string, ArgKind>>;
  /** Long options: the name, the id it stands for (a short letter or the name), its argument. */
  long: Readonly<Record<string, { id: string; arg: ArgKind }>>;
  /** Options end at the first operand (tr), instead of being looked for after operands too. */
  inOrder?: boolean;
}

export interface ParsedOption {
  id: string;
  /** How the user spelled it, for messages (`-k`, `--key`). */
  spelled: string;
  /** Which word of the command line it came from. */
  word: number;
  value?: string;
}

export type ParseResult =
  | { ok: true; options: ParsedOption[]; operands: string[] }
  | { ok: false; message: string };

/** GNU getopt's diagnostics, without the command's name and the "Try --help" line. */
const messages = {
  invalid: (c: string) => `invalid option -- '${c}'`,
  needsArg: (c: string) => `option requires an argument -- '${c}'`,
  unrecognized: (o: string) => `unrecognized option '${o}'`,
  ambiguous: (o: string, names: string[]) =>
    `option '${o}' is ambiguous; possibilities:${names.map((n) => ` '--${n}'`).join("")}`,
  longNeedsArg: (n: string) => `option '--${n}' requires an argument`,
  longNoArg: (n: string) => `option '--${n}' doesn't allow an argument`,
};

function parseLong(
  word: string,
  next: string | undefined,
  table: OptionTable,
): { option: Omit<ParsedOption, "word">; usedNext: boolean } | string {
  const eq = word.indexOf("=");
  const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
  const inline = eq < 0 ? undefined : word.slice(eq + 1);
  const names = Object.keys(table.long);
  let match = names.find((n) => n === name);
  if (match === undefined) {
    const candidates = names.filter((n) => n.startsWith(name));
    // Prefixes of several names are still one option when they all mean the same thing.
    const ids = new Set(candidates.map((n) => table.long[n]!.id));
    if (candidates.length === 0) return messages.unrecognized(word);
    if (ids.size > 1) return messages.ambiguous(word, candidates);
    match = candidates[0]!;
  }
  const { id, arg } = table.long[match]!;
  const spelled = `--${match}`;
  if (arg === "none") {
    if (inline !== undefined) return messages.longNoArg(match);
    return { option: { id, spelled }, usedNext: false };
  }
  if (inline !== undefined) return { option: { id, spelled, value: inline }, usedNext: false };
  if (arg === "optional") return { option: { id, spelled }, usedNext: false };
  if (next === undefined) return messages.longNeedsArg(match);
  return { option: { id, spelled, value: next }, usedNext: true };
}

/** Parses `args`; operands keep their order, options keep theirs. */
export function parseOptions(args: readonly string[], table: OptionTable): ParseResult {
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (word.startsWith("--")) {
      const parsed = parseLong(word, args[i + 1], table);
      if (typeof parsed === "string") return { ok: false, message: parsed };
      options.push({ ...parsed.option, word: i });
      if (parsed.usedNext) i++;
      continue;
    }
    if (!word.startsWith("-") || word === "-") {
      if (table.inOrder) {
        operands.push(...args.slice(i));
        break;
      }
      operands.push(word);
      continue;
    }
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      const arg = table.short[letter];
      if (arg === undefined) return { ok: false, message: messages.invalid(letter) };
      if (arg === "none") {
        options.push({ id: letter, spelled: `-${letter}`, word: i });
        continue;
      }
      // The rest of the word is the argument; without one, the next word (if required).
      const rest = word.slice(k + 1);
      if (rest !== "" || arg === "optional") {
        const value = rest === "" ? undefined : rest;
        options.push({ id: letter, spelled: `-${letter}`, value, word: i });
      } else {
        const value = args[i + 1];
        if (value === undefined) return { ok: false, message: messages.needsArg(letter) };
        options.push({ id: letter, spelled: `-${letter}`, value, word: i });
        i++;
      }
      break;
    }
  }
  return { ok: true, options, operands };
}

/** A usage error as GNU prints it: the diagnostic, then where to find help. */
export function usageError(name: string, message: string): string {
  return `${name}: ${message}\nTry '${name} --help' for more information.\n`;
}

/** How an option takes its argument, as the tables spell it. */
export const none = "none" as const;
export const required = "required" as const;
export const optional = "optional" as const;

/**
 * A data command's command line read by `table`, or GNU's usage error (with `exitCode`) when it
 * does not parse: the preamble sort, uniq and tr share.
 */
export function parseCommandLine(
  name: string,
  args: readonly string[],
  table: OptionTable,
  exitCode: number,
): { options: ParsedOption[]; operands: string[] } | Result {
  const parsed = parseOptions(args, table);
  if (!parsed.ok) return failure(usageError(name, parsed.message), exitCode);
  return parsed;
}

// Trusted side: reads Python requirement specifiers (PEP 508) from callers and from guest code's
// PEP 723 blocks, and chooses versions by PEP 440. The text may be hostile, so parsing is one
// pass over a bounded string; specifier matching and version order are @renovatebot/pep440's.
// Supported: a name, extras (accepted; their extra dependencies are not resolved) and version
// specifiers, bare or in parentheses. Refused with INVALID_ARGUMENT: direct URLs (`name @ URL`)
// and environment markers (`; python_version < "3.12"`), which polybox does not evaluate.

import { maxSatisfying, satisfies, valid, validRange } from "@renovatebot/pep440";
import { PolyboxError } from "../errors.js";

/** Longer than any real requirement; bounds what the version matcher is given. */
export const MAX_REQUIREMENT_LENGTH = 1000;

export interface Requirement {
  /** PEP 503 normalized distribution name. */
  name: string;
  /** PEP 440 specifier set without spaces, e.g. `>=1.0,<2`; empty for any version. */
  specifier: string;
  extras: string[];
  /** The requirement as written, for messages. */
  text: string;
}

const EXAMPLES = 'e.g. "numpy", "six==1.16.0", "attrs>=23,<25"';

/** PEP 503 normalization: `Foo_Bar.baz` → `foo-bar-baz`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

const isAlnum = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isNameChar = (c: number) => isAlnum(c) || c === 45 || c === 46 || c === 95; // - . _
const isSpace = (c: number) => c === 32 || c === 9;

/** A PEP 508 distribution name: letters, digits, `-_.`, starting and ending alphanumeric. */
export function isDistributionName(text: string): boolean {
  if (text.length === 0 || !isAlnum(text.charCodeAt(0))) return false;
  if (!isAlnum(text.charCodeAt(text.length - 1))) return false;
  for (let i = 1; i < text.length; i++) if (!isNameChar(text.charCodeAt(i))) return false;
  return true;
}

/** Parses one requirement; throws INVALID_ARGUMENT saying what is wrong with it. */
export function parseRequirement(text: string): Requirement {
  const fail = (why: string) =>
    new PolyboxError(
      "INVALID_ARGUMENT",
      `${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)} is not a valid requirement: ${why} (${EXAMPLES})`,
    );
  if (text.length > MAX_REQUIREMENT_LENGTH)
    throw fail(`it is longer than ${MAX_REQUIREMENT_LENGTH} characters`);
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  };
  const word = () => {
    const start = i;
    while (i < text.length && isNameChar(text.charCodeAt(i))) i++;
    return text.slice(start, i);
  };
  skipSpace();
  const name = word();
  if (!isDistributionName(name)) throw fail("it does not start with a package name");
  skipSpace();
  const extras: string[] = [];
  if (text[i] === "[") {
    i++;
    for (;;) {
      skipSpace();
      if (text[i] === "]" && extras.length === 0) break;
      const extra = word();
      if (!isDistributionName(extra)) throw fail("the extras in [...] are not names");
      extras.push(normalizeName(extra));
      skipSpace();
      if (text[i] !== ",") break;
      i++;
    }
    if (text[i] !== "]") throw fail("the extras' [ is not closed by ]");
    i++;
    skipSpace();
  }
  if (text[i] === "@")
    throw fail(
      "direct references (name @ URL) are not supported; put the wheel in a package source",
    );
  const semicolon = text.indexOf(";", i);
  let specifier = (semicolon < 0 ? text.slice(i) : text.slice(i, semicolon)).trim();
  if (specifier.startsWith("(") && specifier.endsWith(")")) specifier = specifier.slice(1, -1);
  if (specifier !== "" && !validRange(specifier))
    throw fail(`${JSON.stringify(specifier)} is not a PEP 440 version specifier`);
  specifier = specifier.replace(/[ \t]+/g, "");
  if (semicolon >= 0) throw fail("environment markers (after ;) are not supported");
  return { name: normalizeName(name), specifier, extras, text: text.trim() };
}

/** `name` or `name<specifier>` for messages. */
export function describeRequirement(r: Pick<Requirement, "name" | "specifier">): string {
  return `${r.name}${r.specifier}`;
}

/** Whether `version` meets `specifier`; an empty specifier accepts any version. */
export function versionSatisfies(version: string, specifier: string): boolean {
  return specifier === "" || (valid(version) !== null && satisfies(version, specifier));
}

/**
 * The highest of `versions` that meets `specifier`, by PEP 440 order. Pre-releases only when the
 * specifier names one or nothing else matches, as pip does.
 */
export function bestVersion(versions: string[], specifier: string): string | null {
  return maxSatisfying(
    versions.filter((v) => valid(v) !== null),
    specifier,
  );
}

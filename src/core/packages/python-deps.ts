// Trusted side: which Python packages a piece of code asks for. PEP 723 inline metadata
// (`# /// script` … `dependencies = [...]`) is a requirement: if it cannot be met the run does
// not start. Imports that match a package in Pyodide's lock file are a wish: installed when a
// source has them, otherwise the import fails in the guest as it would anywhere.
//
// The code is guest-controlled and scanned on the server's main thread before every Python run,
// so both scanners here make one pass over its lines (no backtracking regex over the whole text):
// their cost is linear in the code's length, which maxCodeBytes bounds.

import { parse as parseToml } from "smol-toml";
import { PolyboxError } from "../errors.js";
import { formatBytes, PACKAGE_LIMITS } from "../limits.js";
import { parseRequirement, type Requirement } from "./requirements.js";

const isSpace = (c: number) => c === 32 || c === 9;
const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentChar = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57);

/** Index of the first character at or after `i` that is not a space or tab. */
function skipSpaces(line: string, i: number): number {
  while (i < line.length && isSpace(line.charCodeAt(i))) i++;
  return i;
}

/** Index just past the identifier starting at `i` (or `i` if none starts there). */
function identifierEnd(line: string, i: number): number {
  if (i >= line.length || !isIdentStart(line.charCodeAt(i))) return i;
  let k = i + 1;
  while (k < line.length && isIdentChar(line.charCodeAt(k))) k++;
  return k;
}

/** Whether `line` has keyword `word` at `i`, followed by a space or tab. */
function keywordAt(line: string, i: number, word: string): boolean {
  return line.startsWith(word, i) && isSpace(line.charCodeAt(i + word.length));
}

/**
 * Top-level modules named by `import a.b, c as d` and `from a.b import x` statements that start a
 * line. A heuristic (statements after `;` or inside strings are not told apart), not a parser.
 */
export function importedModules(code: string): Set<string> {
  const found = new Set<string>();
  for (const line of code.split("\n")) {
    const start = skipSpaces(line, 0);
    if (keywordAt(line, start, "from")) {
      const name = skipSpaces(line, start + 4);
      const nameEnd = identifierEnd(line, name);
      if (nameEnd === name) continue;
      let k = nameEnd;
      while (k < line.length && (isIdentChar(line.charCodeAt(k)) || line[k] === ".")) k++;
      const keyword = skipSpaces(line, k);
      if (keyword > k && line.startsWith("import", keyword)) found.add(line.slice(name, nameEnd));
    } else if (keywordAt(line, start, "import")) {
      // The names run to the first character that cannot be part of `a.b as c, d`.
      let k = start + 6;
      let name = skipSpaces(line, k);
      for (; k <= line.length; k++) {
        const c = line.charCodeAt(k);
        if (k < line.length && (isIdentChar(c) || isSpace(c) || c === 46)) continue;
        const end = identifierEnd(line, name);
        if (end > name) found.add(line.slice(name, end));
        if (c !== 44) break; // ,
        name = skipSpaces(line, k + 1);
      }
    }
  }
  return found;
}

/** The type of a PEP 723 opening line `# /// TYPE` (type: letters, digits, `-`), or null. */
function blockType(line: string): string | null {
  if (!line.startsWith("# /// ")) return null;
  const type = line.slice(6).trimEnd();
  if (type === "") return null;
  for (let i = 0; i < type.length; i++) {
    const c = type.charCodeAt(i);
    if (!(isIdentChar(c) && c !== 95) && c !== 45) return null;
  }
  return type;
}

const isCommentLine = (line: string) => line === "#" || line.startsWith("# ");
const isClosingLine = (line: string) => line.startsWith("# ///") && line.slice(5).trim() === "";

/**
 * The TOML of the code's PEP 723 `script` block, or null if it has none. As in the PEP's
 * reference regex, a block runs from `# /// TYPE` over the comment lines that follow and ends at
 * the last `# ///` among them; two `script` blocks are an error.
 */
export function scriptMetadata(code: string): string | null {
  const lines = code.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  let found: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const type = blockType(lines[i]!);
    if (type === null) continue;
    let end = -1;
    let j = i + 1;
    for (; j < lines.length && isCommentLine(lines[j]!); j++) if (isClosingLine(lines[j]!)) end = j;
    if (end < 0) {
      // No closing line in this run of comments, so no opening line inside it has one either.
      i = j - 1;
      continue;
    }
    if (type === "script") {
      if (found !== null)
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          "the script has more than one PEP 723 `# /// script` block",
        );
      found = lines
        .slice(i + 1, end)
        .map((l) => l.slice(2))
        .join("\n");
    }
    i = end;
  }
  return found;
}

/** Requirements from a PEP 723 `script` block, pins kept; throws INVALID_ARGUMENT if malformed. */
export function inlineDependencies(code: string): Requirement[] {
  const toml = scriptMetadata(code);
  if (toml === null) return [];
  const { maxScriptMetadataBytes } = PACKAGE_LIMITS;
  if (Buffer.byteLength(toml) > maxScriptMetadataBytes)
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the script's PEP 723 block is over ${formatBytes(maxScriptMetadataBytes)}, polybox's limit for script metadata`,
    );
  let metadata: Record<string, unknown>;
  try {
    metadata = parseToml(toml);
  } catch (error) {
    // A parser error (or a nesting too deep for it) on guest text is bad input, not a host fault.
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `the script's PEP 723 block is not valid TOML: ${why}`,
      { cause: error },
    );
  }
  const deps = metadata.dependencies;
  if (deps === undefined) return [];
  if (!Array.isArray(deps) || !deps.every((d) => typeof d === "string"))
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      "`dependencies` in the script's PEP 723 block must be a list of strings",
    );
  return parseRequirements(deps, "the script's PEP 723 block");
}

/** Requirements from a caller: one string or a non-empty list; throws INVALID_ARGUMENT. */
export function packageRequirements(input: unknown): Requirement[] {
  const list = typeof input === "string" ? [input] : input;
  if (!Array.isArray(list) || list.length === 0 || !list.every((i) => typeof i === "string")) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      'packages must be a requirement or a non-empty list of them (e.g. "numpy" or ["attrs", "six==1.16.0"])',
    );
  }
  return parseRequirements(list, "one call");
}

function parseRequirements(list: string[], where: string): Requirement[] {
  const { maxRequirements } = PACKAGE_LIMITS;
  if (list.length > maxRequirements)
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `${where} names ${list.length} requirements, over polybox's limit of ${maxRequirements}`,
    );
  return list.map((text) => parseRequirement(text));
}

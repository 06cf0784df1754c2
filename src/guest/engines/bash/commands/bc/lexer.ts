// Worker side: bc's lexer: a program's text as tokens (numbers, strings, names, operators, line
// ends); comments and line continuations dropped.

export type Tok =
  | { t: "num"; v: string }
  | { t: "str"; v: string }
  | { t: "id"; v: string }
  | { t: "op"; v: string }
  | { t: "nl" }
  | { t: "eof" };

const OPS = [
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "+",
  "-",
  "*",
  "/",
  "%",
  "^",
  "=",
  "<",
  ">",
  "!",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ",",
  ";",
];

export class BcError extends Error {}

export function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "\n") {
      out.push({ t: "nl" });
      i++;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      if (end < 0) throw new BcError("comment end not found");
      i = end + 2;
      continue;
    }
    if (c === '"') {
      const end = src.indexOf('"', i + 1);
      if (end < 0) throw new BcError("string end not found");
      out.push({ t: "str", v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (/[0-9A-F.]/.test(c) && !(c === "." && !/[0-9A-F]/.test(src[i + 1] ?? ""))) {
      let j = i;
      while (
        j < src.length &&
        (/[0-9A-F.]/.test(src[j]!) || (src[j] === "\\" && src[j + 1] === "\n"))
      )
        j++;
      out.push({ t: "num", v: src.slice(i, j).replace(/\\\n/g, "") });
      i = j;
      continue;
    }
    if (c === ".") {
      out.push({ t: "id", v: "last" });
      i++;
      continue;
    }
    if (/[a-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[a-z0-9_]/.test(src[j]!)) j++;
      out.push({ t: "id", v: src.slice(i, j) });
      i = j;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new BcError(`illegal character: ${c}`);
    out.push({ t: "op", v: op });
    i += op.length;
  }
  out.push({ t: "eof" });
  return out;
}

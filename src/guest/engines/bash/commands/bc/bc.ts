// Worker side: `bc`, the arbitrary-precision calculator, as GNU bc behaves: `scale` (digits kept
// after the point, results truncated), `-l` (scale 20 and the math library s, c, a, l, e), ibase
// and obase, variables and arrays, if/while/for, break/continue, functions with `auto`, strings,
// `print`, comments. Numbers are decimal.js values; the scale of each result follows bc's rules.

import DecimalDefault, { type Decimal as DecimalClass } from "decimal.js";
import { defineCommand, latin1FromBytes } from "just-bash";
import { type Ctx, fail, type Result } from "../shared/context.js";

const Decimal = DecimalDefault as unknown as typeof DecimalClass;

/** Enough significant digits for any everyday result; operations then truncate to bc's scale. */
const D = Decimal.clone({
  precision: 2000,
  rounding: Decimal.ROUND_DOWN,
  toExpPos: 9e15,
  toExpNeg: -9e15,
});
type Dec = InstanceType<typeof D>;

/** A bc number: its value and its scale (the digits after the point it carries). */
interface Num {
  v: Dec;
  s: number;
}

const num = (v: Dec | number | string, s: number): Num => {
  const d = new D(v);
  return { v: d.toDecimalPlaces(s, D.ROUND_DOWN), s };
};
const ZERO: Num = { v: new D(0), s: 0 };
const bool = (b: boolean): Num => ({ v: new D(b ? 1 : 0), s: 0 });

// ---- lexer ----------------------------------------------------------------------------------

type Tok =
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

class BcError extends Error {}

function lex(src: string): Tok[] {
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

// ---- parser ---------------------------------------------------------------------------------

type Expr =
  | { k: "num"; v: string }
  | { k: "var"; name: string }
  | { k: "elem"; name: string; index: Expr }
  | { k: "un"; op: string; e: Expr }
  | { k: "bin"; op: string; l: Expr; r: Expr }
  | { k: "assign"; op: string; target: Expr; e: Expr }
  | { k: "incdec"; op: string; prefix: boolean; target: Expr }
  | { k: "call"; name: string; args: Expr[] };

type Stmt =
  | { k: "expr"; e: Expr }
  | { k: "str"; v: string }
  | { k: "print"; items: (Expr | string)[] }
  | { k: "block"; body: Stmt[] }
  | { k: "if"; cond: Expr; then: Stmt; else: Stmt | null }
  | { k: "while"; cond: Expr; body: Stmt }
  | { k: "for"; init: Expr | null; cond: Expr | null; step: Expr | null; body: Stmt }
  | { k: "break" }
  | { k: "continue" }
  | { k: "return"; e: Expr | null }
  | { k: "quit" }
  | { k: "halt" }
  | {
      k: "define";
      name: string;
      params: { name: string; array: boolean }[];
      autos: string[];
      body: Stmt[];
    }
  | { k: "empty" };

class Parser {
  private p = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.p]!;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === "op" && t.v === v;
  }
  private isId(v: string): boolean {
    const t = this.peek();
    return t.t === "id" && t.v === v;
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) throw new BcError(`syntax error: expected '${v}'`);
    this.p++;
  }
  private skipNewlines(): void {
    while (this.peek().t === "nl" || this.isOp(";")) this.p++;
  }

  program(): Stmt[] {
    const out: Stmt[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.peek().t === "eof") return out;
      out.push(this.statement());
      const t = this.peek();
      if (!(t.t === "nl" || t.t === "eof" || (t.t === "op" && (t.v === ";" || t.v === "}"))))
        throw new BcError("syntax error");
    }
  }

  private statement(): Stmt {
    const t = this.peek();
    if (t.t === "str") {
      this.p++;
      return { k: "str", v: t.v };
    }
    if (t.t === "op" && t.v === "{") {
      this.p++;
      const body: Stmt[] = [];
      for (;;) {
        this.skipNewlines();
        if (this.isOp("}")) break;
        if (this.peek().t === "eof") throw new BcError("syntax error: missing '}'");
        body.push(this.statement());
      }
      this.p++;
      return { k: "block", body };
    }
    if (t.t === "op" && t.v === ";") return { k: "empty" };
    if (t.t === "id") {
      switch (t.v) {
        case "if": {
          this.p++;
          this.expectOp("(");
          const cond = this.expr();
          this.expectOp(")");
          this.skipBlank();
          const then = this.statement();
          const save = this.p;
          this.skipNewlinesOnly();
          if (this.isId("else")) {
            this.p++;
            this.skipBlank();
            return { k: "if", cond, then, else: this.statement() };
          }
          this.p = save;
          return { k: "if", cond, then, else: null };
        }
        case "while": {
          this.p++;
          this.expectOp("(");
          const cond = this.expr();
          this.expectOp(")");
          this.skipBlank();
          return { k: "while", cond, body: this.statement() };
        }
        case "for": {
          this.p++;
          this.expectOp("(");
          const init = this.isOp(";") ? null : this.expr();
          this.expectOp(";");
          const cond = this.isOp(";") ? null : this.expr();
          this.expectOp(";");
          const step = this.isOp(")") ? null : this.expr();
          this.expectOp(")");
          this.skipBlank();
          return { k: "for", init, cond, step, body: this.statement() };
        }
        case "break":
        case "continue":
        case "quit":
        case "halt":
          this.p++;
          return { k: t.v };
        case "return": {
          this.p++;
          const n = this.peek();
          if (n.t === "nl" || n.t === "eof" || (n.t === "op" && (n.v === ";" || n.v === "}")))
            return { k: "return", e: null };
          return { k: "return", e: this.expr() };
        }
        case "print": {
          this.p++;
          const items: (Expr | string)[] = [];
          do {
            const s = this.peek();
            if (s.t === "str") {
              this.p++;
              items.push(s.v);
            } else items.push(this.expr());
          } while (this.isOp(",") && ++this.p);
          return { k: "print", items };
        }
        case "define":
          return this.define();
      }
    }
    return { k: "expr", e: this.expr() };
  }

  private skipBlank(): void {
    while (this.peek().t === "nl") this.p++;
  }
  private skipNewlinesOnly(): void {
    while (this.peek().t === "nl" || this.isOp(";")) this.p++;
  }

  private define(): Stmt {
    this.p++;
    const name = this.peek();
    if (name.t !== "id") throw new BcError("syntax error: function name");
    this.p++;
    this.expectOp("(");
    const params: { name: string; array: boolean }[] = [];
    while (!this.isOp(")")) {
      const id = this.peek();
      if (id.t !== "id") throw new BcError("syntax error: parameter");
      this.p++;
      let array = false;
      if (this.isOp("[")) {
        this.p++;
        this.expectOp("]");
        array = true;
      }
      params.push({ name: id.v, array });
      if (this.isOp(",")) this.p++;
    }
    this.p++;
    this.skipBlank();
    this.expectOp("{");
    const body: Stmt[] = [];
    const autos: string[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.isOp("}")) break;
      if (this.peek().t === "eof") throw new BcError("syntax error: missing '}'");
      if (this.isId("auto")) {
        this.p++;
        do {
          const id = this.peek();
          if (id.t !== "id") throw new BcError("syntax error: auto");
          this.p++;
          if (this.isOp("[")) {
            this.p++;
            this.expectOp("]");
          }
          autos.push(id.v);
        } while (this.isOp(",") && ++this.p);
        continue;
      }
      body.push(this.statement());
    }
    this.p++;
    return { k: "define", name: name.v, params, autos, body };
  }

  expr(): Expr {
    return this.assignment();
  }

  private assignment(): Expr {
    const left = this.or();
    const t = this.peek();
    if (t.t === "op" && ["=", "+=", "-=", "*=", "/=", "%=", "^="].includes(t.v)) {
      if (left.k !== "var" && left.k !== "elem") throw new BcError("syntax error: assignment");
      this.p++;
      return { k: "assign", op: t.v, target: left, e: this.assignment() };
    }
    return left;
  }
  private or(): Expr {
    let l = this.and();
    while (this.isOp("||")) {
      this.p++;
      l = { k: "bin", op: "||", l, r: this.and() };
    }
    return l;
  }
  private and(): Expr {
    let l = this.not();
    while (this.isOp("&&")) {
      this.p++;
      l = { k: "bin", op: "&&", l, r: this.not() };
    }
    return l;
  }
  private not(): Expr {
    if (this.isOp("!")) {
      this.p++;
      return { k: "un", op: "!", e: this.not() };
    }
    return this.rel();
  }
  private rel(): Expr {
    let l = this.add();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && ["<", ">", "<=", ">=", "==", "!="].includes(t.v)) {
        this.p++;
        l = { k: "bin", op: t.v, l, r: this.add() };
      } else return l;
    }
  }
  private add(): Expr {
    let l = this.mul();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "+" || t.v === "-")) {
        this.p++;
        l = { k: "bin", op: t.v, l, r: this.mul() };
      } else return l;
    }
  }
  private mul(): Expr {
    let l = this.pow();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "*" || t.v === "/" || t.v === "%")) {
        this.p++;
        l = { k: "bin", op: t.v, l, r: this.pow() };
      } else return l;
    }
  }
  private pow(): Expr {
    const base = this.unary();
    if (this.isOp("^")) {
      this.p++;
      return { k: "bin", op: "^", l: base, r: this.pow() };
    }
    return base;
  }
  private unary(): Expr {
    if (this.isOp("-")) {
      this.p++;
      return { k: "un", op: "-", e: this.unary() };
    }
    if (this.isOp("++") || this.isOp("--")) {
      const op = (this.peek() as { v: string }).v;
      this.p++;
      const target = this.postfix();
      if (target.k !== "var" && target.k !== "elem") throw new BcError("syntax error");
      return { k: "incdec", op, prefix: true, target };
    }
    return this.postfix();
  }
  private postfix(): Expr {
    const e = this.primary();
    if ((e.k === "var" || e.k === "elem") && (this.isOp("++") || this.isOp("--"))) {
      const op = (this.peek() as { v: string }).v;
      this.p++;
      return { k: "incdec", op, prefix: false, target: e };
    }
    return e;
  }
  private primary(): Expr {
    const t = this.peek();
    if (t.t === "num") {
      this.p++;
      return { k: "num", v: t.v };
    }
    if (t.t === "op" && t.v === "(") {
      this.p++;
      const e = this.expr();
      this.expectOp(")");
      return e;
    }
    if (t.t === "id") {
      this.p++;
      if (this.isOp("(")) {
        this.p++;
        const args: Expr[] = [];
        while (!this.isOp(")")) {
          const a = this.peek();
          // An array argument: `f(a[])`.
          if (
            a.t === "id" &&
            this.toks[this.p + 1]?.t === "op" &&
            (this.toks[this.p + 1] as { v: string }).v === "[" &&
            this.toks[this.p + 2]?.t === "op" &&
            (this.toks[this.p + 2] as { v: string }).v === "]"
          ) {
            this.p += 3;
            args.push({ k: "var", name: `${a.v}[]` });
          } else args.push(this.expr());
          if (this.isOp(",")) this.p++;
          else if (!this.isOp(")")) throw new BcError("syntax error: arguments");
        }
        this.p++;
        return { k: "call", name: t.v, args };
      }
      if (this.isOp("[")) {
        this.p++;
        const index = this.expr();
        this.expectOp("]");
        return { k: "elem", name: t.v, index };
      }
      return { k: "var", name: t.v };
    }
    throw new BcError("syntax error");
  }
}

// ---- interpreter ----------------------------------------------------------------------------

class Signal {
  constructor(
    readonly kind: "break" | "continue" | "return" | "quit",
    readonly value: Num = ZERO,
  ) {}
}

interface Fn {
  params: { name: string; array: boolean }[];
  autos: string[];
  body: Stmt[];
}

const MATH_LIBRARY = new Set(["s", "c", "a", "l", "e", "j"]);
const MAX_STEPS = 50_000_000;
const MAX_OUTPUT = 16 * 1024 * 1024;

class Interp {
  scale = 0;
  ibase = 10;
  obase = 10;
  last: Num = ZERO;
  out = "";
  steps = 0;
  /** Variable scopes: the globals, then one per active function call (its params and autos). */
  private scopes: Map<string, Num | Map<string, Num>>[] = [new Map()];
  private fns = new Map<string, Fn>();

  constructor(
    private readonly mathLib: boolean,
    private readonly lineLength: number,
  ) {
    if (mathLib) this.scale = 20;
  }

  private lookup(name: string): Map<string, Num | Map<string, Num>> {
    for (let i = this.scopes.length - 1; i > 0; i--)
      if (this.scopes[i]!.has(name)) return this.scopes[i]!;
    return this.scopes[0]!;
  }
  private getVar(name: string): Num {
    if (name === "scale") return num(this.scale, 0);
    if (name === "ibase") return num(this.ibase, 0);
    if (name === "obase") return num(this.obase, 0);
    if (name === "last") return this.last;
    const v = this.lookup(name).get(name);
    return v instanceof Map || v === undefined ? ZERO : v;
  }
  private setVar(name: string, value: Num): void {
    const n = value.v.trunc().toNumber();
    if (name === "scale") {
      if (n < 0 || n > 10000) throw new BcError("scale out of range");
      this.scale = n;
    } else if (name === "ibase") {
      if (n < 2 || n > 16) throw new BcError("ibase out of range");
      this.ibase = n;
    } else if (name === "obase") {
      if (n < 2 || n > 999) throw new BcError("obase out of range");
      this.obase = n;
    } else if (name === "last") this.last = value;
    else this.lookup(name).set(name, value);
  }
  private array(name: string): Map<string, Num> {
    const key = `${name}[]`;
    const scope = this.lookup(key);
    let a = scope.get(key);
    if (!(a instanceof Map)) {
      a = new Map();
      scope.set(key, a);
    }
    return a;
  }

  private parseNumber(text: string): Num {
    if (this.ibase === 10 && /^[0-9]*\.?[0-9]*$/.test(text)) {
      const s = text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
      return { v: new D(text === "." ? "0" : text.startsWith(".") ? `0${text}` : text), s };
    }
    // Another input base: digits above the base still count at their value (bc's rule for
    // single digits is to clamp; multi-digit numbers use the value).
    if (text.length === 1 && /[0-9A-F]/.test(text)) return num(Number.parseInt(text, 16), 0);
    const [int = "", frac = ""] = text.split(".");
    let v = new D(0);
    for (const ch of int) v = v.times(this.ibase).plus(Number.parseInt(ch, 16));
    let f = new D(0);
    let place = new D(1);
    for (const ch of frac) {
      place = place.div(this.ibase);
      f = f.plus(place.times(Number.parseInt(ch, 16)));
    }
    return num(v.plus(f), frac.length);
  }

  private cmp(a: Num, b: Num): number {
    return a.v.cmp(b.v);
  }

  private arith(op: string, a: Num, b: Num): Num {
    switch (op) {
      case "+":
        return { v: a.v.plus(b.v), s: Math.max(a.s, b.s) };
      case "-":
        return { v: a.v.minus(b.v), s: Math.max(a.s, b.s) };
      case "*": {
        const s = Math.min(a.s + b.s, Math.max(this.scale, a.s, b.s));
        return num(a.v.times(b.v), s);
      }
      case "/":
        if (b.v.isZero()) throw new BcError("divide by zero");
        return num(a.v.div(b.v), this.scale);
      case "%": {
        if (b.v.isZero()) throw new BcError("divide by zero");
        const q = a.v.div(b.v).toDecimalPlaces(this.scale, D.ROUND_DOWN);
        const s = Math.max(this.scale + b.s, a.s);
        return num(a.v.minus(q.times(b.v)), s);
      }
      case "^": {
        if (!b.v.isInteger()) throw new BcError("non-zero scale in exponent");
        const e = b.v.toNumber();
        if (Math.abs(e) > 1_000_000) throw new BcError("exponent too large");
        if (e >= 0) {
          const s = Math.min(a.s * e, Math.max(this.scale, a.s));
          return num(a.v.pow(e), s);
        }
        if (a.v.isZero()) throw new BcError("divide by zero");
        return num(new D(1).div(a.v.pow(-e)), this.scale);
      }
    }
    throw new BcError(`unknown operator ${op}`);
  }

  private truthy(n: Num): boolean {
    return !n.v.isZero();
  }

  private tick(): void {
    if (++this.steps > MAX_STEPS) throw new BcError("too many steps");
  }

  eval(e: Expr): Num {
    this.tick();
    switch (e.k) {
      case "num":
        return this.parseNumber(e.v);
      case "var":
        return this.getVar(e.name);
      case "elem":
        return this.array(e.name).get(this.index(e.index)) ?? ZERO;
      case "un":
        if (e.op === "!") return bool(!this.truthy(this.eval(e.e)));
        {
          const v = this.eval(e.e);
          return { v: v.v.neg(), s: v.s };
        }
      case "bin": {
        if (e.op === "&&") return bool(this.truthy(this.eval(e.l)) && this.truthy(this.eval(e.r)));
        if (e.op === "||") return bool(this.truthy(this.eval(e.l)) || this.truthy(this.eval(e.r)));
        const a = this.eval(e.l);
        const b = this.eval(e.r);
        switch (e.op) {
          case "<":
            return bool(this.cmp(a, b) < 0);
          case ">":
            return bool(this.cmp(a, b) > 0);
          case "<=":
            return bool(this.cmp(a, b) <= 0);
          case ">=":
            return bool(this.cmp(a, b) >= 0);
          case "==":
            return bool(this.cmp(a, b) === 0);
          case "!=":
            return bool(this.cmp(a, b) !== 0);
        }
        return this.arith(e.op, a, b);
      }
      case "assign": {
        let v = this.eval(e.e);
        if (e.op !== "=") v = this.arith(e.op.slice(0, -1), this.eval(e.target), v);
        this.store(e.target, v);
        return v;
      }
      case "incdec": {
        const old = this.eval(e.target);
        const v = { v: e.op === "++" ? old.v.plus(1) : old.v.minus(1), s: old.s };
        this.store(e.target, v);
        return e.prefix ? v : old;
      }
      case "call":
        return this.call(e.name, e.args);
    }
  }

  private index(e: Expr): string {
    const i = this.eval(e).v.trunc();
    if (i.isNeg() || i.gt(16_777_215)) throw new BcError("array index out of range");
    return i.toString();
  }

  private store(target: Expr, v: Num): void {
    if (target.k === "var") this.setVar(target.name, v);
    else if (target.k === "elem") this.array(target.name).set(this.index(target.index), v);
  }

  private call(name: string, args: Expr[]): Num {
    if (name === "length" && args.length === 1) {
      const v = this.eval(args[0]!);
      if (v.v.isZero()) return num(v.s || 1, 0);
      const digits = v.v.abs().toFixed(v.s).replace(".", "").replace(/^0+/, "");
      return num(Math.max(digits.length, v.s), 0);
    }
    if (name === "scale" && args.length === 1) return num(this.eval(args[0]!).s, 0);
    if (name === "sqrt" && args.length === 1) {
      const v = this.eval(args[0]!);
      if (v.v.isNeg()) throw new BcError("square root of a negative number");
      return num(v.v.sqrt(), Math.max(this.scale, v.s));
    }
    if (this.mathLib && MATH_LIBRARY.has(name) && !this.fns.has(name)) return this.math(name, args);
    const fn = this.fns.get(name);
    if (!fn) throw new BcError(`Function ${name} not defined.`);
    if (fn.params.length !== args.length) throw new BcError(`Parameter number mismatch in ${name}`);
    const scope = new Map<string, Num | Map<string, Num>>();
    fn.params.forEach((p, k) => {
      const a = args[k]!;
      if (p.array) {
        if (a.k !== "var" || !a.name.endsWith("[]")) throw new BcError("array parameter expected");
        scope.set(`${p.name}[]`, new Map(this.array(a.name.slice(0, -2))));
      } else scope.set(p.name, this.eval(a));
    });
    for (const auto of fn.autos) {
      scope.set(auto, ZERO);
      scope.set(`${auto}[]`, new Map());
    }
    if (this.scopes.length > 1000) throw new BcError("function call nesting too deep");
    this.scopes.push(scope);
    try {
      this.block(fn.body);
      return ZERO;
    } catch (s) {
      if (s instanceof Signal && s.kind === "return") return s.value;
      throw s;
    } finally {
      this.scopes.pop();
    }
  }

  /** The -l library: s(x), c(x), a(x), l(x), e(x), j(n,x), truncated to scale as bc's are. */
  private math(name: string, args: Expr[]): Num {
    const x = this.eval(args[0] ?? { k: "num", v: "0" }).v;
    const P = D.clone({ precision: this.scale + 30, rounding: D.ROUND_HALF_EVEN });
    const px = new P(x.toString());
    let r: InstanceType<typeof P>;
    switch (name) {
      case "s":
        r = px.sin();
        break;
      case "c":
        r = px.cos();
        break;
      case "a":
        r = px.atan();
        break;
      case "l":
        if (px.lte(0)) throw new BcError("l(x): x must be positive");
        r = px.ln();
        break;
      case "e":
        r = px.exp();
        break;
      default:
        throw new BcError(`Function ${name} not available.`);
    }
    return num(r.toString(), this.scale);
  }

  format(n: Num): string {
    if (this.obase !== 10) return this.formatBase(n);
    if (n.v.isZero()) return "0";
    let s = n.v.toFixed(n.s);
    s = s.replace(/^(-?)0\./, "$1.");
    return s;
  }

  private formatBase(n: Num): string {
    const neg = n.v.isNeg();
    let int = n.v.abs().trunc();
    const frac = n.v.abs().minus(int);
    const digit = (d: number) =>
      this.obase <= 16
        ? "0123456789ABCDEF"[d]!
        : ` ${String(d).padStart(String(this.obase - 1).length, "0")}`;
    let out = "";
    if (int.isZero() && (n.s === 0 || frac.isZero())) out = this.obase <= 16 ? "0" : digit(0);
    while (!int.isZero()) {
      const d = int.mod(this.obase).toNumber();
      out = digit(d) + out;
      int = int.div(this.obase).trunc();
    }
    if (n.s > 0 && !frac.isZero()) {
      out += ".";
      let f = frac;
      // As many output digits as it takes to show the scale's precision.
      let place = new D(1);
      const limit = new D(10).pow(-n.s);
      while (place.gt(limit)) {
        f = f.times(this.obase);
        const d = f.trunc().toNumber();
        out += digit(d);
        f = f.minus(d);
        place = place.div(this.obase);
      }
    }
    if (out === "0" && neg) return "0";
    return (neg ? "-" : "") + out;
  }

  /** Writes a number as bc does: lines longer than the line length end with a backslash. */
  emitNumber(n: Num): void {
    const s = this.format(n);
    // GNU bc: lines of BC_LINE_LENGTH - 1 characters, the last a backslash.
    const width = this.lineLength - 2;
    if (this.lineLength > 1 && s.length > width) {
      let rest = s;
      while (rest.length > width) {
        this.write(`${rest.slice(0, width)}\\\n`);
        rest = rest.slice(width);
      }
      this.write(`${rest}\n`);
    } else this.write(`${s}\n`);
  }

  write(s: string): void {
    this.out += s;
    if (this.out.length > MAX_OUTPUT) throw new BcError("output too large");
  }

  block(body: Stmt[]): void {
    for (const s of body) this.exec(s);
  }

  exec(s: Stmt): void {
    this.tick();
    switch (s.k) {
      case "expr": {
        const v = this.eval(s.e);
        if (s.e.k !== "assign") {
          this.emitNumber(v);
          this.last = v;
        }
        return;
      }
      case "str":
        this.write(s.v);
        return;
      case "print":
        for (const item of s.items) {
          if (typeof item === "string")
            this.write(
              item.replace(
                /\\([abfnrtq\\e])/g,
                (_m, c: string) =>
                  ({
                    a: "\x07",
                    b: "\b",
                    f: "\f",
                    n: "\n",
                    r: "\r",
                    t: "\t",
                    q: '"',
                    "\\": "\\",
                    e: "\\",
                  })[c]!,
              ),
            );
          else {
            const v = this.eval(item);
            this.last = v;
            this.write(this.format(v));
          }
        }
        return;
      case "block":
        this.block(s.body);
        return;
      case "if":
        if (this.truthy(this.eval(s.cond))) this.exec(s.then);
        else if (s.else) this.exec(s.else);
        return;
      case "while":
        while (this.truthy(this.eval(s.cond))) {
          try {
            this.exec(s.body);
          } catch (sig) {
            if (sig instanceof Signal && sig.kind === "break") break;
            if (sig instanceof Signal && sig.kind === "continue") continue;
            throw sig;
          }
        }
        return;
      case "for":
        if (s.init) this.eval(s.init);
        while (s.cond === null || this.truthy(this.eval(s.cond))) {
          try {
            this.exec(s.body);
          } catch (sig) {
            if (sig instanceof Signal && sig.kind === "break") break;
            if (!(sig instanceof Signal && sig.kind === "continue")) throw sig;
          }
          if (s.step) this.eval(s.step);
        }
        return;
      case "break":
      case "continue":
        throw new Signal(s.k);
      case "return":
        throw new Signal("return", s.e ? this.eval(s.e) : ZERO);
      case "quit":
      case "halt":
        throw new Signal("quit");
      case "define":
        this.fns.set(s.name, { params: s.params, autos: s.autos, body: s.body });
        return;
      case "empty":
        return;
    }
  }
}

/** `bc [-l] [-q] [FILE...]`: files first, then standard input. */
export const bc = defineCommand("bc", async (args, ctx: Ctx): Promise<Result> => {
  let mathLib = false;
  const files: string[] = [];
  for (const a of args) {
    if (a === "-l" || a === "--mathlib") mathLib = true;
    else if (/^-[lqsw]+$/.test(a)) mathLib ||= a.includes("l");
    else if (a === "-q" || a === "--quiet" || a === "-s" || a === "--standard") continue;
    else if (a.startsWith("-")) return fail("bc", `invalid option -- '${a.slice(1)}'`);
    else files.push(a);
  }
  const sources: string[] = [];
  for (const f of files) {
    try {
      sources.push(await ctx.fs.readFile(ctx.fs.resolvePath(ctx.cwd, f)));
    } catch {
      return fail("bc", `File ${f} is unavailable.`);
    }
  }
  sources.push(Buffer.from(latin1FromBytes(ctx.stdin), "latin1").toString("utf8"));
  const lineLength = Number(ctx.env.get("BC_LINE_LENGTH") ?? 70);
  const interp = new Interp(mathLib, Number.isFinite(lineLength) ? lineLength : 70);
  let stderr = "";
  // bc reads and runs its input a statement at a time: an error reports and moves on.
  for (const source of sources) {
    let program: Stmt[];
    try {
      program = new Parser(lex(source)).program();
    } catch (error) {
      stderr += `(standard_in) 1: ${error instanceof BcError ? error.message : String(error)}\n`;
      continue;
    }
    for (const stmt of program) {
      try {
        interp.exec(stmt);
      } catch (error) {
        if (error instanceof Signal && error.kind === "quit")
          return { stdout: interp.out, stderr, exitCode: 0 };
        if (error instanceof Signal) continue;
        if (error instanceof BcError) {
          stderr += `Runtime error: ${error.message}\n`;
          if (error.message === "too many steps" || error.message === "output too large")
            return { stdout: interp.out, stderr, exitCode: 1 };
          continue;
        }
        throw error;
      }
    }
  }
  return { stdout: interp.out, stderr, exitCode: 0 };
});

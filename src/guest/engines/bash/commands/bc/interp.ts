// Worker side: bc's interpreter: statements (parser.ts) run over decimal.js numbers, with bc's
// scale rules (each result's digits after the point), ibase/obase, variables, arrays, functions
// and the math library of `-l`. Steps and output are bounded.

import DecimalDefault, { type Decimal as DecimalClass } from "decimal.js";
import { BcError } from "./lexer.js";
import type { Expr, Stmt } from "./parser.js";

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

export class Signal {
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

export class Interp {
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

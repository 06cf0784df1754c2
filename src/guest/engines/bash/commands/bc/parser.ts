// Worker side: bc's parser: tokens (lexer.ts) as statements and expressions, with bc's precedence
// and its statement forms (if/while/for, define with `auto`, print, strings).

import { BcError, type Tok } from "./lexer.js";

export type Expr =
  | { k: "num"; v: string }
  | { k: "var"; name: string }
  | { k: "elem"; name: string; index: Expr }
  | { k: "un"; op: string; e: Expr }
  | { k: "bin"; op: string; l: Expr; r: Expr }
  | { k: "assign"; op: string; target: Expr; e: Expr }
  | { k: "incdec"; op: string; prefix: boolean; target: Expr }
  | { k: "call"; name: string; args: Expr[] };

export type Stmt =
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

export class Parser {
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

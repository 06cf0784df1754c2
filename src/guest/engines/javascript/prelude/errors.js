// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// V8's wording and stacks for QuickJS's errors, and what Node's inspect asks V8 of iterators.

// Errors as V8 words and shows them. QuickJS fixes an error's message and stack when it makes
// the error, in its own words ("'x' is not defined", a stack of frames alone); a program sees
// an error where it catches it, so each catch clause of the program calls `fixError` first
// (see `prepare` below), as do rejection handlers and the printing of an uncaught error.
// The table maps one class of QuickJS message to V8's; each pattern is anchored and has no
// nested quantifier, so a message is matched in time linear in its length.
const OriginalError = Error;
const made = new WeakSet();
const fixed = new WeakSet();
let mainSource = "";
const sourceAt = (frames) => {
  // Where the first frame of the program's own file points: line and column, 1-based.
  const m = /\((?:\/workspace\/)?main\.[jt]s:(\d+):(\d+)\)/.exec(frames);
  if (!m) return -1;
  let at = 0;
  for (let line = 1; line < Number(m[1]); line++) {
    at = mainSource.indexOf("\n", at) + 1;
    if (at === 0) return -1;
  }
  return at + Number(m[2]) - 1;
};
// The callee V8 names in "x is not a function": the text before the call's "(", with the
// arguments of an earlier call shown as "(...)".
let calleeIsNew = false;
const calleeAt = (frames) => {
  const at = sourceAt(frames);
  if (at < 1 || mainSource[at] !== "(") return null;
  let i = at, text = "";
  while (i > 0) {
    const c = mainSource[i - 1];
    if (/[\w$.#?]/.test(c) || c.charCodeAt(0) > 127) { text = c + text; i--; continue; }
    if (c !== ")" && c !== "]") break;
    const open = c === ")" ? "(" : "[";
    let depth = 0, j = i - 1;
    for (; j >= 0; j--) {
      if (mainSource[j] === c) depth++;
      else if (mainSource[j] === open && --depth === 0) break;
    }
    if (j < 0) break;
    text = (c === ")" ? "(...)" : mainSource.slice(j, i)) + text;
    i = j;
  }
  text = text.replace(/^[.?]+/, "");
  calleeIsNew = /(?:^|[^\w$.])new\s+$/.test(mainSource.slice(Math.max(0, i - 10), i));
  return text && !/^\d/.test(text) ? text : null;
};
const frameName = (frames) => { const m = /^ {4}at (\S+) /.exec(frames); return m ? m[1] : "anonymous"; };
// The expression V8 names in "x is not iterable": QuickJS points at it in a for...of and a
// spread; a name or a chain of property names only.
const iteratedAt = (frames) => {
  const at = sourceAt(frames);
  if (at < 0) return null;
  const m = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$#][\w$]*)*/.exec(mainSource.slice(at, at + 200));
  return m && (!/[\w$.]/.test(mainSource[at - 1] || "") || mainSource.slice(at - 3, at) === "...") && !/^\s*[([\x60]/.test(mainSource.slice(at + m[0].length, at + m[0].length + 20)) ? m[0] : null;
};
// The key V8 names in "Cannot read properties of null (reading 'k')" when QuickJS names none:
// known where the program wrote it, a number or a quoted string in brackets.
const keyAt = (frames) => {
  const at = sourceAt(frames);
  if (at < 0) return null;
  const m = /^\[\s*(?:(\d+)|"([^"\\]*)"|'([^'\\]*)')\s*\]/.exec(mainSource.slice(at, at + 200));
  return m ? m[1] ?? m[2] ?? m[3] : null;
};
// The property an assignment or a delete names where QuickJS points: ".name", or a literal key.
const propertyAt = (frames) => {
  const at = sourceAt(frames);
  if (at < 0) return null;
  const m = /^\s*\.\s*([A-Za-z_$][\w$]*)/.exec(mainSource.slice(at, at + 200));
  return m ? m[1] : keyAt(frames);
};
// A call's one argument, where the program wrote it as a number.
const numberArgAt = (frames) => {
  const at = sourceAt(frames);
  if (at < 0) return null;
  const m = /^\(\s*(-?(?:\d+(?:\.\d+)?|Infinity))\s*\)/.exec(mainSource.slice(at, at + 50));
  return m ? String(Number(m[1])) : null;
};
const isNativeFrame = (frames) => /^ {4}at \S+ \(native\)/.test(frames);
// QuickJS says "'a' is read-only" of a constant and of a read-only property alike: the text
// where it points tells which.
const isPropertyAt = (frames) => {
  const at = sourceAt(frames);
  return at > 0 && /[.\]]\s*$/.test(mainSource.slice(Math.max(0, at - 20), at + 1).replace(/[\w$]+$/, ""));
};
/** @type {[RegExp, (m: RegExpExecArray, frames: string) => string | null][]} */
const MESSAGES = [
  [/^'([^']*)' is not defined$/, (m) => m[1] + " is not defined"],
  [/^cannot read property 'Symbol\.iterator' of (undefined|null)$/, (m) => m[1] + " is not iterable"],
  [/^cannot read property '([^']*)' of (undefined|null)$/, (m) => "Cannot read properties of " + m[2] + " (reading '" + m[1] + "')"],
  [/^cannot read property of (undefined|null)$/, (m, frames) => { const key = keyAt(frames); return key === null ? null : "Cannot read properties of " + m[1] + " (reading '" + key + "')"; }],
  [/^cannot set property '([^']*)' of (undefined|null)$/, (m) => "Cannot set properties of " + m[2] + " (setting '" + m[1] + "')"],
  [/^this is not initialized$/, () => "Must call super constructor in derived class before accessing 'this' or returning from derived constructor"],
  [/^([\w$]+) is not initialized$/, (m) => "Cannot access '" + m[1] + "' before initialization"],
  [/^'([^']*)' is read-only$/, (m, frames) => (isPropertyAt(frames) ? "Cannot assign to read only property '" + m[1] + "' of object '#<Object>'" : "Assignment to constant variable.")],
  [/^not a function$/, (m, frames) => { const callee = calleeAt(frames); return callee ? callee + (calleeIsNew ? " is not a constructor" : " is not a function") : null; }],
  [/^value is not iterable$/, (m, frames) => { const name = iteratedAt(frames); return name === null ? null : name + " is not iterable"; }],
  [/^cannot convert to object$/, (m, frames) => (isNativeFrame(frames) ? "Cannot convert undefined or null to object" : null)],
  [/^cannot convert symbol to number$/, () => "Cannot convert a Symbol value to a number"],
  [/^object is not extensible$/, (m, frames) => { const name = isNativeFrame(frames) ? null : propertyAt(frames); return name === null ? null : "Cannot add property " + name + ", object is not extensible"; }],
  [/^could not delete property$/, (m, frames) => { const name = propertyAt(frames); return name === null ? null : "Cannot delete property '" + name + "' of #<Object>"; }],
  [/^radix must be between 2 and 36$/, () => "toString() radix argument must be between 2 and 36"],
  [/^invalid repeat count$/, (m, frames) => { const count = numberArgAt(frames); return count === null ? null : "Invalid count value: " + count; }],
  [/^class constructors must be invoked with 'new'$/, (m, frames) => "Class constructor " + frameName(frames) + " cannot be invoked without 'new'"],
  [/^invalid array length$/, () => "Invalid array length"],
  [/^invalid number of digits$/, () => "toFixed() digits argument must be between 0 and 100"],
  [/^cannot convert bigint to number$/, () => "Cannot mix BigInt and other types, use explicit conversions"],
  [/^cannot convert symbol to string$/, () => "Cannot convert a Symbol value to a string"],
  [/^circular reference$/, () => "Converting circular structure to JSON"],
  [/^empty array$/, () => "Reduce of empty array with no initial value"],
  [/^expecting hex digit$/, () => "URI malformed"],
  [/^stack overflow$/, () => "Maximum call stack size exceeded"],
];
const v8Message = (message, frames) => {
  for (const [pattern, to] of MESSAGES) {
    const m = pattern.exec(message);
    if (m) return to(m, frames);
  }
  return null;
};
// A stack as V8 prints one: "Name: message", then frames in Node's shape, the program's file
// by its full path; the prelude's own frames are left out.
const nodeFrame = (line) => {
  const m = /^ {4}at (\S+) \(([^()]*)\)$/.exec(line);
  if (!m) return line.startsWith("    at ") ? line : null;
  const [, name, where] = m;
  if (where.startsWith("polybox:")) return null;
  const place = where === "native" ? "<anonymous>" : where.startsWith("<") || where.startsWith("/") ? where : "/workspace/" + where;
  if (name === "<anonymous>") return "    at " + place;
  return "    at " + (name === "<eval>" ? "Object.<anonymous>" : name) + " (" + place + ")";
};
const nodeFrames = (frames) => frames.split("\n").map(nodeFrame).filter((l) => l !== null).join("\n");
const headOf = (e) => {
  try {
    // Node's own errors (AssertionError here) show their code beside their name.
    if (e instanceof AssertionError) return String(e.name) + " [" + e.code + "]: " + String(e.message);
    return OriginalError.prototype.toString.call(e);
  } catch {
    return "Error";
  }
};
const setStack = (e, frames) => {
  let text = null;
  Object.defineProperty(e, "stack", {
    get() { if (text === null) { const body = nodeFrames(frames); text = headOf(e) + (body ? "\n" + body : ""); } return text; },
    set(value) { Object.defineProperty(e, "stack", hidden(value)); },
    configurable: true,
    enumerable: false,
  });
};
// The frames below the trap that made an error: Reflect.construct's and the prelude's own.
const fromCaller = (frames) => {
  const lines = frames.split("\n");
  let skip = 0;
  while (skip < lines.length && (lines[skip].endsWith("(native)") || lines[skip].includes("(polybox:"))) skip++;
  return lines.slice(skip).join("\n");
};
const framesOf = (e) => {
  const own = Object.getOwnPropertyDescriptor(e, "stack");
  return own && typeof own.value === "string" && !/^\S/.test(own.value) ? own.value : null;
};
const fixError = (e) => {
  if (e === null || typeof e !== "object" || fixed.has(e) || !(e instanceof OriginalError)) return e;
  fixed.add(e);
  // Promise.any's error, which QuickJS leaves without a message.
  if (!made.has(e) && e.message === "" && e instanceof AggregateError) Object.defineProperty(e, "message", hidden("All promises were rejected"));
  const frames = framesOf(e);
  if (frames === null) return e;
  if (!made.has(e) && typeof e.message === "string") {
    const message = v8Message(e.message, frames);
    if (message !== null) Object.defineProperty(e, "message", hidden(message));
    if (e.name === "InternalError" && e.message === "Maximum call stack size exceeded") Object.setPrototypeOf(e, RangeError.prototype);
  }
  setStack(e, frames);
  return e;
};
// An error the program makes itself keeps its message; its stack starts as V8's does, with
// the name and message it has when the stack is first read.
for (const name of ["Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError"]) {
  const Native = globalThis[name];
  const Made = new Proxy(Native, {
    construct(target, args, newTarget) {
      const e = Reflect.construct(target, args, newTarget === Made ? target : newTarget);
      made.add(e);
      fixed.add(e);
      const frames = framesOf(e);
      if (frames !== null) setStack(e, fromCaller(frames));
      return e;
    },
    apply(target, self, args) { return Reflect.construct(Made, args); },
  });
  Object.defineProperty(Native.prototype, "constructor", hidden(Made));
  Object.defineProperty(globalThis, name, hidden(Made));
}
Object.defineProperty(globalThis, "__polyboxCaught", { value: fixError, writable: false, configurable: false, enumerable: false });
const nativeThen = NativePromise.prototype.then;
Object.defineProperty(NativePromise.prototype, "then", hidden({
  then(onFulfilled, onRejected) {
    return nativeThen.call(this, onFulfilled, typeof onRejected === "function" ? (reason) => onRejected(fixError(reason)) : onRejected);
  },
}.then));

// JSON.parse's errors in V8's words, which name the position QuickJS reports.
const nativeParse = JSON.parse;
const jsonContext = (text, at) => {
  if (text.length < 21) return '"' + text + '"';
  const from = Math.max(0, at - 10), to = Math.min(text.length, at + 10);
  return (from > 0 ? "..." : "") + '"' + text.slice(from, to) + '"' + (to < text.length ? "..." : "");
};
const jsonMessage = (message, text, at) => {
  const before = text.slice(0, at).trimEnd().slice(-1);
  switch (message) {
    case "expecting property name": return (before === "," ? "Expected double-quoted property name" : "Expected property name or '}'") + " in JSON at position " + at;
    case "expecting '}'": return "Expected ',' or '}' after property value in JSON at position " + at;
    case "expecting ']'": return "Expected ',' or ']' after array element in JSON at position " + at;
    case "expecting ':'": return "Expected ':' after property name in JSON at position " + at;
    case "unexpected data at the end": return "Unexpected non-whitespace character after JSON at position " + at;
    case "Unexpected end of JSON input": {
      // V8 says so of a text that ends inside a string: an odd number of unescaped quotes.
      let quotes = 0;
      for (let i = 0; i < text.length; i++) if (text[i] === "\\") i++; else if (text[i] === '"') quotes++;
      return quotes % 2 === 1 ? "Unterminated string in JSON at position " + text.length : null;
    }
    default:
      if (!message.startsWith("unexpected token")) return null;
      if (text === "undefined") return '"undefined" is not valid JSON';
      // V8 reads a literal (true, false, null) as far as it matches, and names what follows.
      for (const word of ["true", "false", "null"]) {
        if (text[at] !== word[0]) continue;
        let k = 1;
        while (k < word.length && text[at + k] === word[k]) k++;
        if (k < word.length) at += k;
        break;
      }
      if (at >= text.length) return "Unexpected end of JSON input";
      return "Unexpected token '" + text[at] + "', " + jsonContext(text, at) + " is not valid JSON";
  }
};
Object.defineProperty(JSON, "parse", hidden({
  parse(text, reviver) {
    try {
      return nativeParse(text, reviver);
    } catch (e) {
      const frames = e instanceof SyntaxError ? framesOf(e) : null;
      const where = frames && /^ {4}at <input>:(\d+):(\d+)/.exec(frames);
      if (where) {
        const source = String(text);
        let at = 0;
        for (let line = 1; line < Number(where[1]) && at >= 0; line++) at = source.indexOf("\n", at) + 1;
        const message = jsonMessage(e.message, source, at + Number(where[2]) - 1);
        if (message !== null) { Object.defineProperty(e, "message", hidden(message)); made.add(e); }
        fixError(e);
      }
      throw e;
    }
  },
}.parse));


// Function.prototype.toString: V8 writes a native function's body on one line, "{ [native code] }".
const functionToString = Function.prototype.toString;
Object.defineProperty(Function.prototype, "toString", hidden({
  toString() {
    if (builtins.has(this)) return "function " + String(this.name) + "() { [native code] }";
    const text = functionToString.call(this);
    if (!text.endsWith("\n    [native code]\n}")) return text;
    // A bound function's name is "bound f"; V8's text names none.
    return text.startsWith("function bound ") ? "function () { [native code] }" : text.slice(0, -20) + " [native code] }";
  },
}.toString));

// Node's inspect shows a proxy as its target (V8 tells it which that is): the proxies a
// program makes are noted here, with their handlers, for inspect alone.
const NativeProxy = Proxy;
const proxyDetails = new WeakMap();
const revocable = function revocable(target, handler) {
  const r = NativeProxy.revocable(target, handler);
  proxyDetails.set(r.proxy, [target, handler]);
  const revoke = r.revoke;
  r.revoke = function () { proxyDetails.set(r.proxy, [null, null]); revoke(); };
  return r;
};
builtins.add(revocable);
const TrackedProxy = new NativeProxy(NativeProxy, {
  construct(target, args, newTarget) {
    const p = Reflect.construct(target, args, newTarget === TrackedProxy ? target : newTarget);
    proxyDetails.set(p, [args[0], args[1]]);
    return p;
  },
  get(target, key, receiver) { return key === "revocable" ? revocable : Reflect.get(target, key, receiver); },
});
Object.defineProperty(globalThis, "Proxy", hidden(TrackedProxy));
inspectHooks.proxy = (value, full) => {
  const d = proxyDetails.get(value);
  if (d === undefined) return undefined;
  if (d[0] === null) return null;
  return full ? d : d[0];
};

// What a Map's or Set's iterator has left, as Node's inspect lists it ("[Map Iterator] { 'a' }"):
// an iterator that keys(), values() or entries() makes is noted with its source, and counts
// its steps through a prototype of its own. One that for...of makes (Symbol.iterator) is not,
// and steps at the engine's full speed.
const iterations = new WeakMap();
for (const [Kind, names] of /** @type {[{ prototype: any, new (): Map<unknown, unknown> | Set<unknown> }, string[]][]} */ ([[Map, ["keys", "values", "entries"]], [Set, ["values", "entries"]]])) {
  const proto = Kind.prototype;
  const iteratorProto = Object.getPrototypeOf(new Kind()[Symbol.iterator]());
  const next = iteratorProto.next;
  const counted = Object.create(iteratorProto, { next: hidden({ next() { const r = next.call(this); const it = iterations.get(this); if (it !== undefined) it.at++; return r; } }.next) });
  const made = {};
  for (const name of names) {
    const original = proto[name];
    made[name] = { [name]() { const it = original.call(this); iterations.set(it, { source: this, kind: name, at: 0 }); Object.setPrototypeOf(it, counted); return it; } }[name];
    Object.defineProperty(proto, name, hidden(made[name]));
  }
  if (Kind === Set) Object.defineProperty(proto, "keys", hidden(made.values));
}
inspectHooks.preview = (value, isIterator) => {
  const it = iterations.get(value);
  if (it === undefined) return isIterator ? [[], false] : [];
  const rest = [];
  let i = 0;
  it.source.forEach((v, k) => {
    if (i++ < it.at) return;
    if (it.kind === "entries") rest.push(k, v);
    else rest.push(it.kind === "keys" ? k : v);
  });
  return isIterator ? [rest, it.kind === "entries"] : rest;
};

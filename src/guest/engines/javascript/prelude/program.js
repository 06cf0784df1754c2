// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// The rewriting of the program before it runs, the globals installed, and what the engine keeps.

// The program's source as Node would run it, changed only where a token calls for it: each
// catch clause first hands its error to fixError (above), a top-level `this` is what Node
// gives (module.exports in a script, undefined in a module), and a program Node runs as an ES
// module (it had static imports, or awaits at its top level) runs in strict mode as there. One
// pass over the text, which tells code from strings, comments, templates and regular
// expressions; the engine checks that the result compiles, and runs the program as it was if not.
const REGEX_AFTER = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);
const BLOCK_HEADS = new Set(["if", "for", "while", "switch", "catch", "with"]);
const isIdStart = (c) => /[A-Za-z_$#]/.test(c) || c.charCodeAt(0) > 127;
const isIdPart = (c) => /[\w$]/.test(c) || c.charCodeAt(0) > 127;
const prepare = (source, hadImports) => {
  mainSource = source;
  const n = source.length;
  /** @type {[number, number, string][]} */
  const edits = [];
  const recent = [];
  const push = (t) => { recent.push(t); if (recent.length > 4) recent.shift(); };
  const last = () => recent[recent.length - 1];
  const braces = [];
  const parenHeads = [];
  let closedHead, closedFrom = 0, closedTo = 0;
  let bodies = 0, functions = 0, classPending = false, module = hadImports;
  let i = 0;
  const skipString = (q) => { i++; while (i < n && source[i] !== q && source[i] !== "\n") i += source[i] === "\\" ? 2 : 1; i++; };
  const skipTemplate = () => {
    while (i < n) {
      const c = source[i];
      if (c === "\\") { i += 2; continue; }
      if (c === "\x60") { i++; return; }
      if (c === "$" && source[i + 1] === "{") { i += 2; braces.push("template"); return; }
      i++;
    }
  };
  while (i < n) {
    const c = source[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") { i++; continue; }
    if (c === "/" && source[i + 1] === "/") { while (i < n && source[i] !== "\n") i++; continue; }
    if (c === "/" && source[i + 1] === "*") { const end = source.indexOf("*/", i + 2); i = end < 0 ? n : end + 2; continue; }
    if (c === "'" || c === '"') { skipString(c); push("str"); continue; }
    if (c === "\x60") { i++; skipTemplate(); push("str"); continue; }
    if (isIdStart(c)) {
      const start = i;
      // A private name's "#" starts it; the loop below would not step past it.
      if (c === "#") i++;
      while (i < n && isIdPart(source[i])) i++;
      const word = source.slice(start, i);
      const dotted = last() === ".";
      if (!dotted && word === "this" && bodies === 0) edits.push([start, i, module ? "undefined" : "module.exports"]);
      else if (!dotted && word === "class") classPending = true;
      else if (!dotted && word === "await" && functions === 0 && last() !== "=>") module = true;
      push(dotted ? "name" : word);
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(source[i + 1] || ""))) { while (i < n && /[\w.]/.test(source[i])) i++; push("num"); continue; }
    if (c === "/") {
      const t = last();
      const division = t !== undefined && (t === ")" || t === "]" || t === "str" || t === "num" || t === "name" || (/^[\w$#]/.test(t) && !REGEX_AFTER.has(t)));
      if (!division) {
        i++;
        let inClass = false;
        while (i < n && source[i] !== "\n") {
          const r = source[i];
          if (r === "\\") { i += 2; continue; }
          if (r === "[") inClass = true;
          else if (r === "]") inClass = false;
          else if (r === "/" && !inClass) break;
          i++;
        }
        i++;
        while (i < n && isIdPart(source[i])) i++;
        push("str");
        continue;
      }
    }
    if (c === "=" && source[i + 1] === ">") { i += 2; push("=>"); continue; }
    if (c === "(") parenHeads.push([last(), i + 1]);
    if (c === ")") [closedHead, closedFrom] = parenHeads.pop() || [], closedTo = i;
    if (c === "{") {
      let kind = "block";
      const t = last();
      if (t === "=>") kind = "arrow";
      else if (t === ")" && !BLOCK_HEADS.has(closedHead)) kind = "function";
      else if (classPending) kind = "class";
      classPending = false;
      if (t === ")" && closedHead === "catch") {
        // A pattern binds after the error is fixed: "catch ({ message })" becomes a plain
        // binding and a "let" of the pattern.
        const binding = source.slice(closedFrom, closedTo).trim();
        if (/^[A-Za-z_$][\w$]*$/.test(binding)) edits.push([i + 1, i + 1, "__polyboxCaught(" + binding + ");"]);
        else if (binding.startsWith("{") || binding.startsWith("[")) {
          edits.push([closedFrom, closedTo, "__polyboxError"]);
          edits.push([i + 1, i + 1, "let " + binding + " = __polyboxCaught(__polyboxError);"]);
        }
      }
      braces.push(kind);
      if (kind !== "block") functions++;
      if (kind === "function" || kind === "class") bodies++;
    }
    if (c === "}") {
      const kind = braces.pop();
      if (kind !== "block" && kind !== "template" && kind !== undefined) functions--;
      if (kind === "function" || kind === "class") bodies--;
      if (kind === "template") { i++; skipTemplate(); push("str"); continue; }
    }
    i++;
    push(c);
  }
  let out = "", at = 0;
  for (const [from, to, text] of edits) {
    if (text === "module.exports" && module) { out += source.slice(at, from) + "undefined"; at = to; continue; }
    out += source.slice(at, from) + text;
    at = to;
  }
  out += source.slice(at);
  mainSource = module && !source.startsWith("#!") ? '"use strict";' + out : out;
  return mainSource;
};

Object.assign(globalThis, { fetch, Headers, Request, Response, console, require, process, setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate, queueMicrotask, atob, btoa, TextEncoder, TextDecoder, display, performance });
for (const [name, value] of Object.entries({ global: globalThis, crypto: webcrypto, Event, EventTarget, CustomEvent, AbortController, AbortSignal, DOMException, Blob, module, exports: module.exports, __filename: module.filename, __dirname: module.path }))
  Object.defineProperty(globalThis, name, hidden(value));
lazyGlobals(["Buffer"], () => Object.defineProperty(globalThis, "Buffer", hidden(BufferOf())));
// What the engine keeps of the prelude (engine.ts): prelude.ts's wrapper returns it.
const forEngine = {
  fire(id) { const fn = timers.get(id); timers.delete(id); if (fn) fn(); },
  runTicks() { let ran = 0; while (ticks.length > 0) { ran++; ticks.shift()(); } return ran; },
  prepare,
  setEnv(json) { process.env = JSON.parse(json); process.exitCode = undefined; exitSignal.exited = false; exitEmitted = false; ticks.length = 0; },
  exitSignal,
  inspect,
};

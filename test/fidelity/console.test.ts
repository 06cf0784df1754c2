// Differential: what JavaScript prints in a polybox sandbox against what the machine's Node
// prints for the same program: console.log and friends format as Node's util.inspect/format.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { differential } from "../helpers/differential.js";
import { type Runtime, run, testRuntime } from "../helpers/runtime.js";

const THRESHOLD = 0.9;

const PROGRAMS: [string, string][] = [
  [
    "format specifiers",
    `console.log("%s|%d|%i|%f|%j|%o|%O|%%", "a", 4.5, 4.5, "1.5", {x: 1}, [1], {y: 2});`,
  ],
  [
    "a non-string first argument is not a format",
    `console.log({}, "%s"); console.log("%s", "x", "extra");`,
  ],
  [
    "nested objects, depth and quoting",
    `console.log({a: "x", b: [1, 2, {c: new Map([[1, {d: {e: 1}}]])}], s: Symbol("q"), u: undefined, n: null});`,
  ],
  [
    "collections and primitives",
    `console.log(new Map([["a", {b: 1}]]), new Set([1, "2"]), 10n, -0, [undefined, null], function foo() {}, class A {});`,
  ],
  [
    "strings inside and outside objects",
    `console.log("a\\nb", ["a\\nb"], "quote's", ['quote\\'s', 'dq"'], {"key with space": 1, valid_id: 2});`,
  ],
  [
    "long arrays and lines wrap as Node wraps them",
    `console.log(Array.from({length: 120}, (_, i) => i)); console.log("x".repeat(100), ["y".repeat(100)]); console.log({alpha: "a".repeat(30), beta: "b".repeat(30), gamma: "c".repeat(30)});`,
  ],
  [
    "typed arrays, dates, regexps, errors' messages",
    `console.log(new Uint8Array([1, 2, 3]), new Date(0), /a+b/gi, new RangeError("bad").message);`,
  ],
  [
    "class instances and getters",
    `class P { constructor() { this.x = 1; } get y() { return 2; } } console.log(new P(), Object.create(null), {get g() { return 1; }});`,
  ],
  [
    "console.error and console.warn go to stderr; console.info to stdout",
    `console.info("info"); console.error("to stderr"); console.warn({w: 1});`,
  ],
  ["numbers", `console.log(0.1 + 0.2, 1e21, -1e-7, NaN, Infinity, 2 ** 53, [1.5, -0]);`],
  [
    "timers and microtasks run in order",
    `setTimeout(() => console.log("timeout"), 0); queueMicrotask(() => console.log("micro")); Promise.resolve().then(() => console.log("then")); console.log("sync"); const id = setInterval(() => { console.log("tick"); if (++globalThis.n >= 3) clearInterval(id); }, 1); globalThis.n = 0;`,
  ],
  [
    "atob and btoa",
    `console.log(btoa("hello, world"), atob("aGVsbG8sIHdvcmxk"), btoa(""), atob("YQ=="), btoa("\\xff\\xfe"));`,
  ],
];

/** More programs: the ratio over all of them must stay at or over THRESHOLD. */
const MORE: [string, string][] = [
  [
    "ArrayBuffer and DataView print their lengths as plain keys",
    `console.log(new ArrayBuffer(4), new ArrayBuffer(0), new DataView(new ArrayBuffer(2)), {buf: new ArrayBuffer(1)});`,
  ],
  ["symbol keys in brackets", `console.log({[Symbol("k")]: 1, a: 2}, {[Symbol.iterator]: 0});`],
  [
    "Buffers print as Node's",
    `console.log(Buffer.from([1, 2, 255]), Buffer.alloc(60), Buffer.alloc(51), [Buffer.from("hi")], {b: Buffer.alloc(0)});`,
  ],
  ["Blob values", `console.log(new Blob(["abc"]), [new Blob([], {type: "text/plain"})]);`],
  [
    "deeply nested objects stop at depth 2",
    `console.log({l1: {l2: {l3: {l4: {l5: 1}}}}}); console.log([[[[[1]]]]]);`,
  ],
  [
    "arrays over 6 items and over 72 characters",
    `console.log([1, 2, 3, 4, 5, 6, 7]); console.log(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]); console.log(Array.from({length: 30}, (_, i) => "item" + i));`,
  ],
  ["more than 100 array items", `console.log(Array.from({length: 150}, (_, i) => i % 7));`],
  [
    "objects that wrap over 72 characters",
    `console.log({firstName: "Alexander", lastName: "Hamilton", occupation: "Treasury Secretary", born: 1755});`,
  ],
  [
    "array of objects",
    `console.log([{id: 1, name: "Ann", tags: ["a", "b"]}, {id: 2, name: "Bob", tags: []}, {id: 3, name: "Cy", tags: ["c"]}]);`,
  ],
  [
    "Maps nested and empty",
    `console.log(new Map(), new Map([["k", new Map([["inner", [1, 2]]])]]), new Map([[{a: 1}, "objkey"]]));`,
  ],
  [
    "Sets nested and empty",
    `console.log(new Set(), new Set([new Set([1]), [2, 3], {x: 1}]), new Set("hello"));`,
  ],
  [
    "WeakMap WeakSet and Promise states",
    `console.log(new WeakMap(), new WeakSet(), Promise.resolve(42), Promise.reject(new Error("no")).catch(() => {}) && "", new Promise(() => {}));`,
  ],
  [
    "class instances with inheritance",
    `class Animal { constructor(n) { this.name = n; } } class Dog extends Animal { constructor(n) { super(n); this.tricks = ["sit"]; } } console.log(new Dog("Rex"), [new Animal("a")]);`,
  ],
  [
    "class instance with private and static fields",
    `class Counter { #count = 0; static instances = 0; label = "c"; } console.log(new Counter(), Counter);`,
  ],
  [
    "class and function values",
    `console.log(class {}, class Named extends Array {}, function () {}, () => {}, async function af() {}, function* gen() {}, Math.max);`,
  ],
  [
    "errors printed with stack-less output",
    `const e = new TypeError("bad type"); e.stack = "TypeError: bad type"; console.log(e); console.log({err: e});`,
  ],
  [
    "error with extra properties",
    `const e = new Error("with props"); e.stack = "Error: with props"; e.code = "E_CODE"; e.status = 404; console.log(e);`,
  ],
  [
    "errors in console.error",
    `const e = new RangeError("out of range"); e.stack = "RangeError: out of range"; console.error(e); console.error("failed:", e.message);`,
  ],
  [
    "symbols everywhere",
    `const s = Symbol("tag"); console.log(s, Symbol(), Symbol.iterator, {[s]: 1, [Symbol.for("reg")]: "v"}, [s]);`,
  ],
  [
    "%s with objects, numbers and symbols",
    `console.log("%s|%s|%s|%s|%s|%s", {a: 1}, [1, [2]], 42, -0, Symbol("x"), 5n); console.log("%s", null, undefined, "tail");`,
  ],
  [
    "%s with class instance and error",
    `class Foo { constructor() { this.x = 1; } } console.log("%s", new Foo()); console.log("%s", new Error("msg").message);`,
  ],
  [
    "%d and %i with many kinds",
    `console.log("%d %d %d %d %d", "42", 3.9, "abc", 10n, {}); console.log("%i %i %i", 3.9, -3.9, "077");`,
  ],
  ["%f with strings and numbers", `console.log("%f %f %f %f", "3.5abc", 1, "x", -0.5);`],
  [
    "%j JSON and circular",
    `const o = {a: [1, 2]}; console.log("%j", o); const c = {}; c.self = c; console.log("%j", c);`,
  ],
  ["%o with nested values", `console.log("%o", {a: [1, 2, {b: "c"}], f() {}});`],
  ["%O with depth", `console.log("%O", {a: {b: {c: {d: {e: 1}}}}});`],
  ["%c is dropped", `console.log("%cstyled%c text", "color: red", "font-weight: bold");`],
  [
    "missing and extra format arguments",
    `console.log("%s and %s", "one"); console.log("%d%%", 50, "extra", {k: 1}); console.log("100%", "done");`,
  ],
  ["console.table with array of objects", `console.table([{a: 1, b: "x"}, {a: 2, c: true}]);`],
  ["console.table with array of arrays", `console.table([[1, 2], [3, 4, 5]]);`],
  [
    "console.table with object of objects",
    `console.table({alice: {age: 30, city: "Paris"}, bob: {age: 25, city: "Rome"}});`,
  ],
  [
    "console.table with columns filter",
    `console.table([{name: "a", x: 1, y: 2}, {name: "b", x: 3, y: 4}], ["name", "y"]);`,
  ],
  [
    "console.table with primitives",
    `console.table([10, "twenty", null]); console.table("not tabular"); console.table(5);`,
  ],
  [
    "console.error console.warn console.info console.debug",
    `console.debug("debug line"); console.info("info %d", 1); console.warn("warn", {w: [1]}); console.error("error", new Map([[1, 2]]));`,
  ],
  [
    "console.dir with depth",
    `const deep = {a: {b: {c: {d: {e: {f: 1}}}}}}; console.dir(deep); console.dir(deep, {depth: 0}); console.dir(deep, {depth: null}); console.dir(deep, {depth: 4});`,
  ],
  [
    "console.dir of strings and arrays",
    `console.dir("a string"); console.dir([1, "two", {three: 3}]);`,
  ],
  [
    "circular references",
    `const a = {name: "a"}; a.self = a; a.list = [a, {back: a}]; console.log(a); const arr = [1]; arr.push(arr); console.log(arr);`,
  ],
  [
    "getters and setters",
    `const o = {get g() { return 1; }, set s(v) {}, get gs() { return 2; }, set gs(v) {}, plain: 3}; console.log(o); class C { get prop() { return "p"; } } console.log(new C());`,
  ],
  [
    "strings with quotes and escapes in objects",
    `console.log({a: "it's", b: 'say "hi"', c: \`both ' and "\`, d: "tab\\there", e: "uni\\u0001code", f: "é😀"});`,
  ],
  ["multiline strings in arrays", `console.log(["line1\\nline2", "x"], {text: "a\\nb\\nc"});`],
  [
    "long strings in objects",
    `console.log({long: "x".repeat(120)}); console.log(["y".repeat(20), "z".repeat(20), "w".repeat(20), "v".repeat(20)]);`,
  ],
  [
    "numbers in objects",
    `console.log({int: 1, neg: -5, float: 3.14, exp: 1e25, small: 1e-10, nan: NaN, inf: -Infinity, negz: -0, big: 123n});`,
  ],
  [
    "sparse arrays and array extras",
    `const a = [1, , 3]; a[10] = 5; console.log(a); const b = [1, 2]; b.extra = "x"; console.log(b); console.log(new Array(5));`,
  ],
  [
    "object with numeric and symbol keys order",
    `console.log({b: 1, 2: "two", a: 3, 1: "one", "key-with-dash": 4, "": 5});`,
  ],
  [
    "null prototype and Object.create",
    `const o = Object.create(null); o.x = 1; console.log(o, Object.create({inherited: 1}), Object.create(Array.prototype));`,
  ],
  [
    "boxed primitives",
    `console.log(new String("boxed"), new Number(5), new Boolean(false), Object(Symbol("s")), Object(1n));`,
  ],
  [
    "dates in objects and invalid date",
    `console.log({when: new Date(Date.UTC(2024, 0, 15, 10, 30))}, new Date(NaN), [new Date(86400000)]);`,
  ],
  [
    "typed arrays and buffers",
    `console.log(new Float64Array([1.5, -2]), new Int8Array(3), new ArrayBuffer(4), new DataView(new ArrayBuffer(2)), new Uint8Array(120));`,
  ],
  [
    "functions with properties",
    `function f() {} f.meta = {v: 1}; console.log(f, {handler: f}); const bound = f.bind(null); console.log(bound);`,
  ],
  [
    "regexps in objects and with flags",
    `console.log({re: /^a.*z$/gimsuy}, [/x/], new RegExp("a/b"));`,
  ],
  [
    "arguments object and iterators",
    `(function () { console.log(arguments); })(1, "a"); console.log([1, 2][Symbol.iterator](), new Map([[1, 2]]).entries(), new Set([1]).values());`,
  ],
  [
    "generators and async functions objects",
    `function* g() { yield 1; } console.log(g(), (async () => {})());`,
  ],
  [
    "Proxy and global objects",
    `console.log(new Proxy({a: 1}, {}), new Proxy([1, 2], {}), Math, JSON, globalThis === globalThis);`,
  ],
  [
    "console.log with no arguments and empty strings",
    `console.log(); console.log(""); console.log("", ""); console.log(" ");`,
  ],
  [
    "multiple arguments of mixed types",
    `console.log("str", 42, true, null, undefined, [1], {a: 1}, () => 1, Symbol("s"), 10n);`,
  ],
  [
    "objects with many keys wrap one per line",
    `const o = {}; for (let i = 0; i < 30; i++) o["key" + i] = i; console.log(o);`,
  ],
  [
    "nested arrays of numbers group into columns",
    `console.log(Array.from({length: 26}, (_, i) => i * 1000)); console.log(Array.from({length: 10}, (_, i) => [i, i * i]));`,
  ],
  [
    "Map with more than 100 entries truncates",
    `console.log(new Map(Array.from({length: 105}, (_, i) => [i, i])).size); console.log(new Set(Array.from({length: 103}, (_, i) => i)));`,
  ],
  [
    "util.inspect through console of class with toString",
    `class Money { constructor(v) { this.v = v; } toString() { return "$" + this.v; } } const m = new Money(5); console.log(m, String(m), \`\${m}\`, "" + m);`,
  ],
  [
    "custom inspect is not Node's symbol here",
    `const o = {toJSON() { return "json"; }, valueOf() { return 1; }}; console.log(o, JSON.stringify(o), +o);`,
  ],
  [
    "object keys needing quotes",
    `console.log({"a b": 1, "3d": 2, $dollar: 3, _under: 4, "ünï": 5, "with'quote": 6, 'dq"': 7});`,
  ],
  [
    "empty collections",
    `console.log([], {}, new Map(), new Set(), [[]], [{}], {a: {}}, {a: []}, "");`,
  ],
];

/** Programs that cannot print as under Node by design, and why. */
const EXCLUDED: Record<string, string> = {};

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 2, bash: 0 } });
});
afterAll(async () => {
  await runtime?.close();
});

describe("JavaScript prints as Node prints", () => {
  it.each(PROGRAMS)("%s", async (_label, code) => {
    const node = spawnSync(process.execPath, ["-e", code], { encoding: "utf8" });
    const r = await run({ language: "javascript", code, runtime });
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({
      stdout: node.stdout,
      stderr: node.stderr,
    });
  });

  it(`at least ${THRESHOLD * 100}% of ${PROGRAMS.length + MORE.length} programs print byte for byte as Node does`, async () => {
    const both = (stdout: string, stderr: string) => `${stdout}--- stderr:\n${stderr}`;
    const tally = await differential(
      "console output",
      [...PROGRAMS, ...MORE],
      EXCLUDED,
      (code) => {
        const r = spawnSync(process.execPath, ["-e", code], {
          encoding: "utf8",
          env: { ...process.env, TZ: "UTC" },
        });
        return { stdout: both(r.stdout, r.stderr), exitCode: r.status ?? -1 };
      },
      async (code) => {
        const r = await run({ language: "javascript", code, runtime });
        return { stdout: both(r.stdout, r.stderr), exitCode: r.exitCode };
      },
    );
    expect(PROGRAMS.length + MORE.length).toBeGreaterThanOrEqual(60);
    expect(tally.ratio).toBeGreaterThanOrEqual(THRESHOLD);
  }, 1_800_000);
});

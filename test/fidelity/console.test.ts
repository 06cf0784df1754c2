// Differential: what JavaScript prints in a polybox sandbox against what the machine's Node
// prints for the same program: console.log and friends format as Node's util.inspect/format.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

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

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 1, bash: 0 } });
});
afterAll(async () => {
  await runtime?.close();
});

describe("JavaScript prints as Node prints", () => {
  it.each(PROGRAMS)("%s", async (_label, code) => {
    const node = spawnSync(process.execPath, ["-e", code], { encoding: "utf8" });
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("javascript", code);
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({
      stdout: node.stdout,
      stderr: node.stderr,
    });
  });
});

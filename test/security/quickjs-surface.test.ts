// T13 QuickJS surface: what guest JavaScript can touch. Its `process` is a small fake (not the
// host's), `require` serves only the modules the prelude implements in the guest (fs and
// fs/promises workspace-only, path, buffer, crypto, os...), and no function it can reach leads to
// a host Function or realm: every constructor chain ends in QuickJS's own.
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;

beforeAll(async () => {
  rt = await securityRuntime();
  sb = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
});

async function value(code: string): Promise<string | null> {
  const r = await sb.run("javascript", code);
  expect(r.status, r.stderr).toBe("ok");
  return r.value;
}

/** The JSON text a run's value holds: values print as Node's util.inspect, in single quotes. */
function json(inspected: string | null): unknown {
  expect(inspected).toMatch(/^'.*'$/s);
  return JSON.parse(inspected!.slice(1, -1));
}

it("T13 QuickJS process: the guest's process is a fake: no binding, dlopen, getBuiltinModule or mainModule, and its facts are constants", async () => {
  expect(
    await value(
      "JSON.stringify([typeof process.binding, typeof process.dlopen, typeof process.getBuiltinModule, typeof process.mainModule, typeof process.kill, typeof process.chdir, process.platform, process.pid, process.versions, process.execPath])",
    ),
  ).toBe(
    `'["undefined","undefined","undefined","undefined","undefined","undefined","linux",1,{"node":"20.0.0","quickjs":"2024-01-13"},"/usr/bin/node"]'`,
  );
});

it("T13 QuickJS require: only the modules the sandbox implements load; every other fails", async () => {
  const denied = [
    "child_process",
    "node:child_process",
    "net",
    "http",
    "https",
    "http2",
    "vm",
    "worker_threads",
    "module",
    "v8",
    "inspector",
    "dns",
    "dgram",
    "tls",
    "process",
    "wasi",
    "cluster",
    "../../dist/index.js",
    "/etc/passwd",
    "ws",
    "undici",
    "pyodide",
    "just-bash",
    "quickjs-emscripten",
  ];
  const out = await value(
    `JSON.stringify(${JSON.stringify(denied)}.map((m) => { try { require(m); return m + ": LOADED"; } catch (e) { return e.code; } }))`,
  );
  expect(json(out)).toEqual(denied.map(() => "MODULE_NOT_FOUND"));
  expect(
    await value(
      "[typeof require('fs').readFileSync, typeof require('node:fs/promises').readFile, require('path').join('a', 'b'), require('os').hostname(), require('os').cpus().length]",
    ),
  ).toBe("[ 'function', 'function', 'a/b', 'localhost', 1 ]");
});

it("T13 QuickJS Function-to-host: constructors of every provided function are QuickJS's own Function", async () => {
  const out = await value(`{
    const fs = require("fs");
    const fns = [console.log, require, process.exit, process.cwd, process.stdout.write, fs.readFileSync, fs.promises.readFile, setTimeout, TextEncoder, require("path").join, fetch, Headers, Request, Response, crypto.getRandomValues, require("crypto").createHash, require("crypto").randomBytes, require("os").cpus, require("util").promisify, require("assert").strictEqual, Buffer.from, Buffer.alloc, require("events").prototype.emit, EventTarget, AbortController, Blob];
    const hostError = (() => { try { fs.readFileSync("/etc/passwd"); } catch (e) { return e; } })();
    const realm = Function("return this")();
    JSON.stringify({
      allOwnFunction: fns.every((f) => f.constructor === Function && Object.getPrototypeOf(f) === Function.prototype),
      errorIsOwn: hostError instanceof Error && hostError.constructor === Error,
      realmIsGlobal: realm === globalThis,
      hostGlobals: ["__polybox", "WebAssembly", "importScripts", "Deno", "Bun", "__polyboxNode"].filter((k) => k in realm),
      // Node's CommonJS globals are the guest's own values, not the host's.
      commonjs: [global === globalThis, typeof module.exports, Object.getPrototypeOf(module) === Object.prototype, __dirname, Buffer.from("x").constructor === Buffer, Object.getPrototypeOf(Buffer.prototype) === Uint8Array.prototype],
      viaConstructor: this.constructor.constructor("return typeof __polybox + ',' + typeof WebAssembly")(),
      viaAsync: typeof (async () => {}).constructor("return 1"),
      viaGenerator: typeof (function* () {}).constructor("yield 1"),
    });
  }`);
  expect(json(out)).toEqual({
    allOwnFunction: true,
    errorIsOwn: true,
    realmIsGlobal: true,
    hostGlobals: [],
    commonjs: [true, "object", true, "/workspace", true, true],
    viaConstructor: "undefined,undefined",
    viaAsync: "function",
    viaGenerator: "function",
  });
  await expectRuntimeAnswers(rt);
});

it("T13 QuickJS Function-to-host: poisoning Object/JSON/Array prototypes does not hand the guest the host bridge", async () => {
  const r = await sb.run(
    "javascript",
    `{
      const seen = [];
      const origParse = JSON.parse;
      JSON.parse = function (s) { seen.push(typeof this); return origParse(s); };
      Object.defineProperty(Object.prototype, "host", { set(v) { seen.push("host:" + typeof v); }, configurable: true });
      Array.prototype.push = function (...a) { seen[seen.length] = "push:" + a.map((x) => typeof x).join("/"); return 0; };
      try { require("fs").readdirSync("/workspace"); } catch (e) {}
      console.log("calls", seen.length, typeof globalThis.__polybox);
      JSON.parse = origParse;
    }`,
  );
  expect(r.stdout).toMatch(/calls \d+ undefined/);
  await expectRuntimeAnswers(rt);
});

// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// The CommonJS scope, process and its exit, timers, atob and btoa, TextEncoder and TextDecoder, and
// display.

// The CommonJS scope a script has under Node: the program is /workspace/main.js, run as the
// main module (so "require.main === module" holds, as for `node main.js`).
const module = { id: ".", path: "/workspace", exports: {}, filename: "/workspace/main.js", loaded: false, children: [], paths: ["/workspace/node_modules", "/node_modules"] };
require.main = module;
module.require = require;

// Thrown by process.exit; its `finish` gives the exit code a run that ends by itself ends with.
const exitSignal = {};
// The 'exit' event, once, as Node emits it: from process.exit, or when nothing is left to run
// (the engine calls `finish` then); a listener may still change process.exitCode, and one
// that throws ends the run as an uncaught error does.
let exitEmitted = false;
const emitExit = (code) => {
  if (exitEmitted) return code;
  exitEmitted = true;
  process.exitCode = code;
  try {
    process.emit("exit", code);
  } catch (e) {
    if (e === exitSignal) return exitSignal.code;
    throw e;
  }
  return typeof process.exitCode === "number" ? process.exitCode : code;
};
Object.defineProperty(exitSignal, "finish", { value: () => (exitSignal.exited ? exitSignal.code : emitExit(typeof process.exitCode === "number" ? process.exitCode : 0)) });
const listeners = new Map();
const startedAt = Date.now();
const process = {
  argv: ["polybox", "main.js"], argv0: "node", execArgv: [], env: {}, platform: "linux", arch: "x64",
  // The Node release whose behaviour the sandbox follows; versions.quickjs says what runs it.
  version: "v20.0.0", versions: { node: "20.0.0", quickjs: "2024-01-13" }, release: { name: "node" },
  pid: 1, ppid: 0, title: "node", execPath: "/usr/bin/node",
  cwd: () => "/workspace",
  exitCode: undefined,
  exit: (code) => {
    if (exitSignal.exited) throw exitSignal;
    exitSignal.code = emitExit(code === undefined ? process.exitCode ?? 0 : code);
    // Called inside a callback or an async function the throw ends only that; the run ends
    // once nothing is left to run, and nothing is: no timer fires after this.
    exitSignal.exited = true;
    for (const id of timers.keys()) host.clearTimer(id);
    timers.clear();
    intervals.clear();
    ticks.length = 0;
    throw exitSignal;
  },
  stdout: { write: (s) => (write("stdout", String(s)), true), isTTY: false, columns: 80 },
  stderr: { write: (s) => (write("stderr", String(s)), true), isTTY: false, columns: 80 },
  // Node runs the nextTick queue before the promise jobs, whenever a callback has returned:
  // the engine calls runTicks then, and again once the jobs are done, until both are empty.
  nextTick: (fn, ...args) => { if (typeof fn !== "function") throw argError('The "callback" argument must be of type function. Received ' + nodeUtil.inspect(fn)); ticks.push(() => fn(...args)); },
  hrtime: Object.assign((previous) => {
    const ns = Math.round(performance.now() * 1e6);
    let sec = Math.floor(ns / 1e9), nsec = ns % 1e9;
    if (previous) { sec -= previous[0]; nsec -= previous[1]; if (nsec < 0) { sec--; nsec += 1e9; } }
    return [sec, nsec];
  }, { bigint: () => BigInt(Math.round(performance.now() * 1e6)) }),
  uptime: () => (Date.now() - startedAt) / 1000,
  memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
  cpuUsage: () => ({ user: Math.round(performance.now() * 1000), system: 0 }),
  umask: () => 0o22, getuid: () => 1000, getgid: () => 1000,
  emitWarning: (warning, type) => emit("stderr", "(node:" + process.pid + ") " + (warning instanceof Error ? warning.name + ": " + warning.message : (typeof type === "string" ? type : "Warning") + ": " + warning) + "\n"),
  // Listeners are kept; of process events the sandbox emits only 'exit'.
  on: (event, fn) => { if (!listeners.has(event)) listeners.set(event, []); listeners.get(event).push(fn); return process; },
  off: (event, fn) => { const l = listeners.get(event) || []; const i = l.indexOf(fn); if (i >= 0) l.splice(i, 1); return process; },
  listeners: (event) => (listeners.get(event) || []).slice(),
  listenerCount: (event) => (listeners.get(event) || []).length,
  emit: (event, ...args) => { const l = (listeners.get(event) || []).slice(); for (const fn of l) fn.apply(process, args); return l.length > 0; },
};
process.once = process.on;
process.addListener = process.on;
process.removeListener = process.off;
process.removeAllListeners = (event) => { if (event === undefined) listeners.clear(); else listeners.delete(event); return process; };

const ticks = [];
const timers = new Map();
let nextTimer = 1;
// An immediate (ms null) runs in the check phase of the host's own event loop, as in Node:
// after the timers that are due, before a timer set by one of them.
const schedule = (fn, ms, args) => { if (exitSignal.exited) return 0; const id = nextTimer++; timers.set(id, () => fn(...args)); if (ms === null) host.setImmediate(id); else host.setTimer(id, Number(ms) || 0); return id; };
const unschedule = (id) => { timers.delete(id); host.clearTimer(id); };
// Timers are objects as Node's are (ref, unref, hasRef, refresh; a number where one is needed).
const timerIds = new WeakMap();
const idOf = (t) => (timerIds.has(t) ? timerIds.get(t).id : Number(t));
class Timeout {
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
  refresh() { const t = timerIds.get(this); if (timers.has(t.id)) { unschedule(t.id); t.id = schedule(t.fn, t.ms, t.args); } return this; }
  close() { clearTimeout(this); return this; }
  [Symbol.toPrimitive]() { return timerIds.get(this).handle; }
}
class Immediate {
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
}
const timerOf = (Kind, fn, ms, args) => {
  if (typeof fn !== "function") throw argError('The "callback" argument must be of type function. Received ' + nodeUtil.inspect(fn));
  const t = new Kind();
  const id = schedule(fn, ms, args);
  timerIds.set(t, { id, handle: id, fn, ms, args });
  return t;
};
const setTimeout = (fn, ms = 0, ...args) => timerOf(Timeout, fn, ms, args);
const clearTimeout = (t) => { if (t !== null && t !== undefined) unschedule(idOf(t)); };
const setImmediate = (fn, ...args) => timerOf(Immediate, fn, null, args);
const clearImmediate = clearTimeout;
const intervals = new Map();
const setInterval = (fn, ms = 0, ...args) => {
  const t = timerOf(Timeout, () => {}, ms, []);
  const state = timerIds.get(t);
  unschedule(state.id);
  const tick = () => { state.id = schedule(tick, ms, []); intervals.set(state.handle, state.id); fn(...args); };
  state.id = schedule(tick, ms, []);
  intervals.set(state.handle, state.id);
  return t;
};
const clearInterval = (t) => {
  if (t === null || t === undefined) return;
  const handle = timerIds.has(t) ? timerIds.get(t).handle : Number(t);
  if (intervals.has(handle)) { unschedule(intervals.get(handle)); intervals.delete(handle); } else clearTimeout(t);
};
const queueMicrotask = (fn) => { Promise.resolve().then(fn); };
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const invalidCharacter = (what) => Object.assign(new Error("Invalid character"), { name: "InvalidCharacterError", what });
const btoa = (input) => {
  const s = String(input);
  let out = "";
  for (let i = 0; i < s.length; i += 3) {
    const c = [s.charCodeAt(i), s.charCodeAt(i + 1), s.charCodeAt(i + 2)];
    if (c.some((x) => x > 255)) throw invalidCharacter("btoa");
    const n = (c[0] << 16) | ((c[1] || 0) << 8) | (c[2] || 0);
    out += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "=");
  }
  return out;
};
const atob = (input) => {
  const s = String(input).replace(/[\t\n\f\r ]/g, "").replace(/==?$/, "");
  if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw invalidCharacter("atob");
  let out = "";
  for (let i = 0; i < s.length; i += 4) {
    const n = [0, 1, 2, 3].reduce((acc, k) => (acc << 6) | (i + k < s.length ? B64.indexOf(s[i + k]) : 0), 0);
    out += String.fromCharCode(n >> 16);
    if (i + 2 < s.length) out += String.fromCharCode((n >> 8) & 255);
    if (i + 3 < s.length) out += String.fromCharCode(n & 255);
  }
  return out;
};

class TextEncoder {
  get encoding() { return "utf-8"; }
  encode(text = "") { return new Uint8Array(host.encode(String(text))); }
}
class TextDecoder {
  get encoding() { return "utf-8"; }
  decode(bytes) {
    if (bytes === undefined) return "";
    const view = ArrayBuffer.isView(bytes) ? bytes : new Uint8Array(bytes);
    return host.decode(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
  }
}

/** @type {[number[], string][]} */
const SIGNATURES = [[[0x89, 0x50, 0x4e, 0x47], "image/png"], [[0xff, 0xd8, 0xff], "image/jpeg"], [[0x47, 0x49, 0x46, 0x38], "image/gif"]];
const display = (...values) => {
  for (const value of values) {
    if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
      const bytes = value instanceof Uint8Array ? value : new Uint8Array(value);
      const hit = SIGNATURES.find(([sig]) => sig.every((b, i) => bytes[i] === b));
      if (hit) {
        host.display(hit[1], "[" + hit[1] + " image, " + bytes.length + " bytes]", bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
        continue;
      }
    }
    if (typeof value === "string" && value.trimStart().startsWith("<svg")) {
      host.display("image/svg+xml", "[image/svg+xml image, " + value.length + " chars]", value);
    } else if (value !== null && typeof value === "object") {
      let json;
      try { json = JSON.stringify(value, null, 2); } catch { json = undefined; }
      if (json !== undefined) host.display("application/json", json.slice(0, 8192), json);
      else host.display("text/plain", inspect(value));
    } else host.display("text/plain", inspect(value));
  }
};

// Guest side of the JavaScript engine: source evaluated inside each QuickJS context before any
// user code. It builds `console`, `require`, a small `process`, and the workspace-only `fs` and
// `path` modules on top of the host functions in `__polybox`, then deletes that global so user
// code holds only what the prelude chose to give it. Evaluates to the timer-firing function.
// Values print as Node prints them: `util.inspect` and `util.format` come from
// node-inspect-extracted (Node's own code, packaged for other runtimes), evaluated first.

import { MACHINE } from "../common/machine.js";

/** The locales with Intl data besides en, one bundle each (wasm/polyfills.mjs builds them). */
export const INTL_LOCALES = [
  "de",
  "fr",
  "es",
  "it",
  "pt",
  "nl",
  "ja",
  "zh",
  "ko",
  "ru",
  "en-GB",
  "en-IN",
];

export const PRELUDE_SOURCE = String.raw`
(() => {
  const host = globalThis.__polybox;
  delete globalThis.__polybox;
  // Nothing is written once process.exit was called, even by callbacks already queued.
  const write = (stream, text) => { if (!exitSignal.exited) host.out(stream, text); };

  // Node's own util.inspect and util.format (node-inspect-extracted, evaluated just before this
  // prelude), so console output and values look as they do under Node.
  const nodeUtil = globalThis.util;
  delete globalThis.util;
  // What Node's inspect asks V8 and the bundle cannot (engine.ts): a proxy's target, and the
  // entries a Map or Set iterator has left. The prelude answers both (below).
  const inspectHooks = nodeUtil.__hooks;
  delete nodeUtil.__hooks;
  const inspect = (value) => nodeUtil.inspect(value);
  // QuickJS's \`stack\` holds only the frames; Node's starts with "Name: message", and so does
  // the way errors print here.
  // Inspection sees a stack that starts so for as long as it runs; Node's own code does the rest
  // (brackets around a stack with no frames, the error's own properties after it).
  Object.defineProperty(Error.prototype, nodeUtil.inspect.custom, {
    value(depth, options) {
      fixError(this);
      // Node's own errors (AssertionError here) show their code beside their name.
      const head = String(this.name) + (this instanceof AssertionError ? " [" + this.code + "]" : "") + ": " + String(this.message);
      const frames = typeof this.stack === "string" ? this.stack.trimEnd() : "";
      const stack = frames.startsWith(head) || /^\w*(Error|Exception)\b/.test(frames) ? frames : frames ? head + "\n" + frames : head;
      const own = Object.getOwnPropertyDescriptor(this, "stack");
      try {
        Object.defineProperty(this, "stack", { value: stack, writable: true, configurable: true, enumerable: false });
        return nodeUtil.inspect(this, { ...options, depth, customInspect: false });
      } catch {
        return stack;
      } finally {
        if (own) Object.defineProperty(this, "stack", own);
        else delete this.stack;
      }
    },
    writable: true,
    configurable: true,
  });
  const format = (args) => nodeUtil.format(...args) + "\n";


  // console.table as Node prints it: lib/internal/console/constructor.js and lib/internal/cli_table.js.
  const widthOf = (s) => { let w = 0; for (const c of String(s).normalize("NFC")) { const n = c.codePointAt(0); if (/\p{M}/u.test(c) || n === 0x200b) continue; w += (n >= 0x1100 && (n <= 0x115f || (n >= 0x2e80 && n <= 0xa4cf) || (n >= 0xac00 && n <= 0xd7a3) || (n >= 0xf900 && n <= 0xfaff) || (n >= 0xfe30 && n <= 0xfe4f) || (n >= 0xff00 && n <= 0xff60) || (n >= 0xffe0 && n <= 0xffe6) || (n >= 0x1f300 && n <= 0x1f64f) || (n >= 0x1f900 && n <= 0x1f9ff) || (n >= 0x20000 && n <= 0x3fffd))) ? 2 : 1; } return w; };
  const renderRow = (row, widths) => {
    let out = "│ ";
    for (let i = 0; i < row.length; i++) {
      out += row[i] + " ".repeat(widths[i] - widthOf(row[i]));
      if (i !== row.length - 1) out += " │ ";
    }
    return out + " │";
  };
  const renderTable = (head, columns) => {
    const rows = [];
    const widths = head.map((h) => widthOf(h));
    const longest = Math.max(...columns.map((a) => a.length));
    for (let i = 0; i < head.length; i++) {
      const column = columns[i];
      for (let j = 0; j < longest; j++) {
        if (rows[j] === undefined) rows[j] = [];
        const value = (rows[j][i] = Object.prototype.hasOwnProperty.call(column, j) ? column[j] : "");
        widths[i] = Math.max(widths[i] || 0, widthOf(value));
      }
    }
    const divider = widths.map((w) => "─".repeat(w + 2));
    let result = "┌" + divider.join("┬") + "┐\n" + renderRow(head, widths) + "\n├" + divider.join("┼") + "┤\n";
    for (const row of rows) result += renderRow(row, widths) + "\n";
    return result + "└" + divider.join("┴") + "┘";
  };
  const tableOf = (data, properties) => {
    if (properties !== undefined && !Array.isArray(properties)) {
      const e = new TypeError('The "properties" argument must be an instance of Array.' + " Received " + nodeUtil.inspect(properties));
      e.code = "ERR_INVALID_ARG_TYPE";
      throw e;
    }
    if (data === null || typeof data !== "object") return nodeUtil.format(data);
    const cell = (v) => nodeUtil.inspect(v, { depth: v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 2 ? -1 : 0, maxArrayLength: 3, breakLength: Infinity });
    const indexes = (n) => Array.from({ length: n }, (_, i) => cell(i));
    if (data instanceof Map) {
      const keys = [], values = [];
      for (const [k, v] of data) { keys.push(cell(k)); values.push(cell(v)); }
      return renderTable(["(iteration index)", "Key", "Values"], [indexes(keys.length), keys, values]);
    }
    if (data instanceof Set) {
      const values = [...data].map(cell);
      return renderTable(["(iteration index)", "Values"], [indexes(values.length), values]);
    }
    const map = Object.create(null);
    let hasPrimitives = false;
    const valuesColumn = [];
    const indexColumn = Object.keys(data);
    for (let i = 0; i < indexColumn.length; i++) {
      const item = data[indexColumn[i]];
      const primitive = item === null || (typeof item !== "function" && typeof item !== "object");
      if (properties === undefined && primitive) {
        hasPrimitives = true;
        valuesColumn[i] = cell(item);
      } else {
        for (const key of properties || Object.keys(item)) {
          map[key] ??= [];
          map[key][i] = (primitive && properties) || !Object.prototype.hasOwnProperty.call(item, key) ? "" : cell(item[key]);
        }
      }
    }
    const head = Object.keys(map);
    const columns = Object.values(map);
    if (hasPrimitives) { head.push("Values"); columns.push(valuesColumn); }
    head.unshift("(index)");
    columns.unshift(indexColumn);
    return renderTable(head, columns);
  };

  // console as Node's: group indents every line written after it, count/time keep their labels.
  let indent = "";
  const emit = (stream, text) => write(stream, indent ? text.replace(/^(?=.)/gm, indent) : text);
  const counts = new Map();
  const timings = new Map();
  const elapsed = (label) => {
    const ms = performance.now() - timings.get(label);
    return ms >= 1000 ? (ms / 1000).toFixed(3) + "s" : ms.toFixed(3) + "ms";
  };
  const warnOnce = (text) => emit("stderr", "(node:" + process.pid + ") Warning: " + text + "\n");
  const console = {
    log: (...a) => emit("stdout", format(a)),
    info: (...a) => emit("stdout", format(a)),
    debug: (...a) => emit("stdout", format(a)),
    error: (...a) => emit("stderr", format(a)),
    warn: (...a) => emit("stderr", format(a)),
    table: (data, properties) => emit("stdout", tableOf(data, properties) + "\n"),
    dir: (v, options) => emit("stdout", nodeUtil.inspect(v, { customInspect: false, ...options }) + "\n"),
    dirxml: (...a) => emit("stdout", format(a)),
    group: (...a) => { if (a.length) emit("stdout", format(a)); indent += "  "; },
    groupCollapsed: (...a) => { if (a.length) emit("stdout", format(a)); indent += "  "; },
    groupEnd: () => { indent = indent.slice(0, -2); },
    count: (label = "default") => { label = String(label); counts.set(label, (counts.get(label) || 0) + 1); emit("stdout", label + ": " + counts.get(label) + "\n"); },
    countReset: (label = "default") => { label = String(label); if (counts.has(label)) counts.set(label, 0); else warnOnce("Count for '" + label + "' does not exist"); },
    time: (label = "default") => { label = String(label); if (timings.has(label)) warnOnce("Label '" + label + "' already exists for console.time()"); else timings.set(label, performance.now()); },
    timeLog: (label = "default", ...a) => { label = String(label); if (!timings.has(label)) return warnOnce("No such label '" + label + "' for console.timeLog()"); emit("stdout", format([label + ": " + elapsed(label), ...a])); },
    timeEnd: (label = "default") => { label = String(label); if (!timings.has(label)) return warnOnce("No such label '" + label + "' for console.timeEnd()"); emit("stdout", label + ": " + elapsed(label) + "\n"); timings.delete(label); },
    assert: (ok, ...a) => { if (!ok) { if (typeof a[0] === "string") a[0] = "Assertion failed: " + a[0]; else a.unshift("Assertion failed"); emit("stderr", format(a)); } },
    trace: (...a) => {
      const frames = String(new Error().stack || "").split("\n").slice(1).filter(Boolean).join("\n");
      emit("stderr", "Trace" + (a.length ? ": " + nodeUtil.format(...a) : "") + (frames ? "\n" + frames : "") + "\n");
    },
  };

  // A failed file operation throws as Node's does: "CODE: description, syscall 'path'", with
  // errno, code, syscall and path as the error's own properties, in that order.
  const ERRNO = { ENOENT: -2, EACCES: -13, EEXIST: -17, ENOTDIR: -20, EISDIR: -21, EINVAL: -22, ENOSPC: -28, ENOTEMPTY: -39 };
  const SYSCALLS = { readText: "open", writeText: "open", readBytes: "open", writeBytes: "open", readdir: "scandir", mkdir: "mkdir", rm: "rm", unlink: "unlink", stat: "stat", rename: "rename" };
  const systemError = (message, op, path) => {
    const m = /^(E[A-Z]+): ([^,']*), '/.exec(message);
    if (!m) return Object.assign(new Error(message), /^E[A-Z]+:/.test(message) ? { code: message.slice(0, message.indexOf(":")) } : {});
    const syscall = SYSCALLS[op] || op;
    const e = new Error(m[1] + ": " + m[2] + ", " + syscall + " '" + message.slice(m[0].length));
    if (m[1] in ERRNO) e.errno = ERRNO[m[1]];
    e.code = m[1];
    e.syscall = syscall;
    if (typeof path === "string") e.path = path;
    return e;
  };
  const call = (op, ...args) => {
    const reply = JSON.parse(host.fs(op, JSON.stringify(args)));
    if (reply.error) {
      const e = systemError(reply.error.message, op, args[0]);
      if (e.code === undefined) e.code = reply.error.code;
      throw e;
    }
    return reply.ok;
  };
  const hostCall = (op, fn, path, ...rest) => {
    try {
      return fn(path, ...rest);
    } catch (e) {
      throw e instanceof OriginalError && typeof e.message === "string" ? systemError(e.message, op, path) : e;
    }
  };
  const encodingOf = (options) => (typeof options === "string" ? options : options && options.encoding);
  const toBytes = (data) => {
    if (typeof data === "string") return data;
    if (data instanceof ArrayBuffer) return data;
    if (ArrayBuffer.isView(data)) return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    return String(data);
  };
  const makeStat = (s) => ({
    size: s.size, mtimeMs: s.mtimeMs, mtime: new Date(s.mtimeMs),
    isFile: () => s.type === "file", isDirectory: () => s.type === "dir", isSymbolicLink: () => false,
  });
  const sync = {
    readFileSync(path, options) {
      const enc = encodingOf(options);
      if (path === 0 || path === "/dev/stdin") {
        const text = host.stdin();
        return enc ? text : BufferOf().from(host.encode(text));
      }
      if (enc) return call("readText", path);
      return BufferOf().from(hostCall("readBytes", host.readBytes, path));
    },
    writeFileSync(path, data) { const d = toBytes(data); typeof d === "string" ? call("writeText", path, d, false) : hostCall("writeBytes", host.writeBytes, path, d, false); },
    appendFileSync(path, data) { const d = toBytes(data); typeof d === "string" ? call("writeText", path, d, true) : hostCall("writeBytes", host.writeBytes, path, d, true); },
    existsSync: (path) => call("exists", path),
    readdirSync: (path, options) => {
      const names = call("readdir", path);
      if (options && options.withFileTypes) return names.map((name) => { const s = makeStat(call("stat", path + "/" + name)); s.name = name; return s; });
      return names;
    },
    mkdirSync: (path, options) => { call("mkdir", path, !!(options && options.recursive)); },
    rmSync: (path, options) => call("rm", path, !!(options && options.recursive), !!(options && options.force)),
    unlinkSync: (path) => call("unlink", path),
    rmdirSync: (path, options) => call("rm", path, !!(options && options.recursive), false),
    statSync: (path) => makeStat(call("stat", path)),
    lstatSync: (path) => makeStat(call("stat", path)),
    renameSync: (from, to) => call("rename", from, to),
    copyFileSync: (from, to) => host.writeBytes(to, host.readBytes(from), false),
  };
  const promises = {};
  for (const [name, fn] of Object.entries(sync)) {
    if (!name.endsWith("Sync") || name === "existsSync") continue;
    promises[name.slice(0, -4)] = (...args) => new Promise((resolve) => resolve(fn(...args)));
  }
  const fs = { ...sync, promises, constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 } };
  promises.access = (path) => new Promise((resolve, reject) => (sync.existsSync(path) ? resolve() : reject(systemError("ENOENT: no such file or directory, '" + path + "'", "access", path))));

  // Node's built-in modules whose ports live in the "node" polyfill bundle (Buffer, events, path,
  // querystring, string_decoder, hashes), evaluated the first time a program reaches for one.
  let nodeParts = null;
  const node = () => {
    if (nodeParts === null) {
      evalGlobal(host.polyfill("node"));
      nodeParts = globalThis.__polyboxNode;
      delete globalThis.__polyboxNode;
      const B = nodeParts.Buffer;
      // Where the buffer package differs from Node's Buffer: base64url, and how it prints.
      const original = { from: B.from, byteLength: B.byteLength, isEncoding: B.isEncoding, toString: B.prototype.toString, write: B.prototype.write };
      const fromUrl = (s) => String(s).replace(/-/g, "+").replace(/_/g, "/");
      const isUrl = (e) => typeof e === "string" && e.toLowerCase() === "base64url";
      Object.defineProperty(B, "from", hidden(function from(value, encoding, length) { return fromCall(this, value, isUrl(encoding) ? "base64" : encoding, length, isUrl(encoding)); }));
      const fromCall = (self, value, encoding, length, url) => original.from.call(self, url ? fromUrl(value) : value, encoding, length);
      Object.defineProperty(B, "byteLength", hidden(function byteLength(value, encoding) { return isUrl(encoding) ? original.byteLength.call(this, fromUrl(value), "base64") : original.byteLength.call(this, value, encoding); }));
      Object.defineProperty(B, "isEncoding", hidden(function isEncoding(encoding) { return isUrl(encoding) || original.isEncoding.call(this, encoding); }));
      Object.defineProperty(B.prototype, "toString", hidden(function toString(encoding, start, end) {
        if (!isUrl(encoding)) return original.toString.call(this, encoding, start, end);
        return original.toString.call(this, "base64", start, end).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      }));
      Object.defineProperty(B.prototype, "write", hidden(function write(string, offset, length, encoding) {
        if (isUrl(encoding)) return original.write.call(this, fromUrl(string), offset, length, "base64");
        if (isUrl(length)) return original.write.call(this, fromUrl(string), offset, "base64");
        if (isUrl(offset)) return original.write.call(this, fromUrl(string), "base64");
        return original.write.call(this, string, offset, length, encoding);
      }));
      Object.defineProperty(B.prototype, nodeUtil.inspect.custom, hidden(function inspect() {
        const max = 50, shown = Math.min(max, this.length), rest = this.length - shown;
        let out = "";
        for (let i = 0; i < shown; i++) out += (i ? " " : "") + (this[i] < 16 ? "0" : "") + this[i].toString(16);
        return "<" + this.constructor.name + " " + out + (rest > 0 ? " ... " + rest + " more byte" + (rest > 1 ? "s" : "") : "") + ">";
      }));
    }
    return nodeParts;
  };
  const BufferOf = () => node().Buffer;

  const randomFill = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let at = 0; at < bytes.length; at += 65536) bytes.set(new Uint8Array(host.random(Math.min(65536, bytes.length - at))), at);
    return view;
  };
  const getRandomValues = (view) => {
    if (!ArrayBuffer.isView(view) || view instanceof DataView || view instanceof Float32Array || view instanceof Float64Array) {
      const e = new TypeError("The data argument must be an integer-type TypedArray");
      e.code = "ERR_INVALID_ARG_TYPE";
      throw e;
    }
    if (view.byteLength > 65536) {
      const e = new Error("The ArrayBufferView's byte length (" + view.byteLength + ") exceeds the number of bytes of entropy available via this API (65536)");
      e.name = "QuotaExceededError";
      throw e;
    }
    return randomFill(view);
  };
  const hex = (bytes) => Array.from(bytes, (b) => (b < 16 ? "0" : "") + b.toString(16)).join("");
  const randomUUID = () => {
    const b = randomFill(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = hex(b);
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  };
  const webcrypto = { getRandomValues, randomUUID };
  Object.defineProperty(webcrypto, Symbol.toStringTag, { value: "Crypto", configurable: true });

  const argError = (message, code = "ERR_INVALID_ARG_TYPE", Kind = TypeError) => Object.assign(new Kind(message), { code });
  const hashOf = (algorithm) => {
    const fn = node().hashes[String(algorithm).toLowerCase()];
    if (!fn) throw argError("Digest method not supported", "ERR_OSSL_EVP_UNSUPPORTED", Error);
    return fn;
  };
  const bytesOf = (data, encoding) => {
    if (typeof data === "string") return BufferOf().from(data, encoding);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    throw argError('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  };
  class Hash {
    constructor(state) { this._state = state; this._done = false; }
    update(data, encoding) {
      if (this._done) throw argError("Digest already called", "ERR_CRYPTO_HASH_FINALIZED", Error);
      this._state.update(bytesOf(data, encoding));
      return this;
    }
    digest(encoding) {
      if (this._done) throw argError("Digest already called", "ERR_CRYPTO_HASH_FINALIZED", Error);
      this._done = true;
      const out = BufferOf().from(this._state.digest());
      return encoding === undefined || encoding === "buffer" ? out : out.toString(encoding);
    }
    copy() { return new Hash(this._state.clone()); }
  }
  const HASHES = ["md5", "ripemd160", "rmd160", "sha1", "sha224", "sha256", "sha3-256", "sha3-512", "sha384", "sha512"];
  const crypto = {
    webcrypto, getRandomValues, randomUUID,
    createHash: (algorithm) => new Hash(hashOf(algorithm).create()),
    createHmac: (algorithm, key) => new Hash(node().hmac.create(hashOf(algorithm), bytesOf(key))),
    hash: (algorithm, data, encoding = "hex") => new Hash(hashOf(algorithm).create()).update(data).digest(encoding),
    getHashes: () => HASHES.slice(),
    randomBytes: (size, callback) => {
      const out = randomFill(BufferOf().alloc(size));
      if (typeof callback === "function") { setTimeout(() => callback(null, out)); return undefined; }
      return out;
    },
    randomFillSync: (view, offset = 0, size) => { const v = new Uint8Array(view.buffer || view, view.byteOffset || 0, view.byteLength); randomFill(v.subarray(offset, size === undefined ? undefined : offset + size)); return view; },
    randomInt: (min, max, callback) => {
      if (max === undefined || typeof max === "function") { callback = max; max = min; min = 0; }
      if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min || max - min > 2 ** 48) {
        throw argError('The value of "max" is out of range. It must be greater than the value of "min" (' + min + ") and less than or equal to 2^48. Received " + max, "ERR_OUT_OF_RANGE", RangeError);
      }
      const range = max - min, limit = 2 ** 48 - (2 ** 48 % range);
      let n;
      do { const b = randomFill(new Uint8Array(6)); n = b.reduce((acc, x) => acc * 256 + x, 0); } while (n >= limit);
      const out = min + (n % range);
      if (typeof callback === "function") { setTimeout(() => callback(null, out)); return undefined; }
      return out;
    },
    timingSafeEqual: (a, b) => {
      if (a.byteLength !== b.byteLength) throw argError("Input buffers must have the same byte length", "ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH", RangeError);
      const x = bytesOf(a), y = bytesOf(b);
      let d = 0;
      for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i];
      return d === 0;
    },
    pbkdf2Sync: (password, salt, iterations, keylen, digest) => BufferOf().from(node().pbkdf2(hashOf(digest), bytesOf(password), bytesOf(salt), { c: iterations, dkLen: keylen })),
  };

  // util: Node's format and inspect (node-inspect-extracted) with the helpers programs reach for.
  const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);
  const isObject = (v) => v !== null && typeof v === "object";
  const types = {
    isDate: (v) => isObject(v) && tagOf(v) === "Date",
    isRegExp: (v) => isObject(v) && tagOf(v) === "RegExp",
    isMap: (v) => v instanceof Map,
    isSet: (v) => v instanceof Set,
    isWeakMap: (v) => v instanceof WeakMap,
    isWeakSet: (v) => v instanceof WeakSet,
    isPromise: (v) => v instanceof NativePromise,
    isNativeError: (v) => v instanceof Error,
    isArrayBuffer: (v) => v instanceof ArrayBuffer,
    isAnyArrayBuffer: (v) => v instanceof ArrayBuffer,
    isArrayBufferView: (v) => ArrayBuffer.isView(v),
    isDataView: (v) => v instanceof DataView,
    isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView),
    isUint8Array: (v) => v instanceof Uint8Array,
    isAsyncFunction: (v) => typeof v === "function" && tagOf(v) === "AsyncFunction",
    isGeneratorFunction: (v) => typeof v === "function" && /GeneratorFunction$/.test(tagOf(v)),
    isGeneratorObject: (v) => isObject(v) && tagOf(v) === "Generator",
    isBoxedPrimitive: (v) => isObject(v) && ["Number", "String", "Boolean", "BigInt", "Symbol"].includes(tagOf(v)) && !(Symbol.toStringTag in v),
    isProxy: () => false,
  };
  const deepEqual = (a, b, strict, seen = new Map()) => {
    if (strict ? Object.is(a, b) : a == b || (a !== a && b !== b)) return true;
    if (!isObject(a) || !isObject(b)) return false;
    if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (tagOf(a) !== tagOf(b)) return false;
    if (seen.get(a) === b) return true;
    seen.set(a, b);
    if (a instanceof Date) return a.getTime() === b.getTime();
    if (a instanceof RegExp) return String(a) === String(b) && a.lastIndex === b.lastIndex;
    if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
    if (ArrayBuffer.isView(a)) {
      if (a.byteLength !== b.byteLength) return false;
      const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    }
    if (types.isBoxedPrimitive(a) && !Object.is(a.valueOf(), b.valueOf())) return false;
    if (a instanceof Map) {
      if (a.size !== b.size) return false;
      for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k), strict, seen)) return false;
    } else if (a instanceof Set) {
      if (a.size !== b.size) return false;
      outer: for (const v of a) {
        if (b.has(v)) continue;
        if (isObject(v)) for (const w of b) if (deepEqual(v, w, strict, seen)) continue outer;
        return false;
      }
    }
    const keys = (o) => (strict ? Reflect.ownKeys(o).filter((k) => Object.prototype.propertyIsEnumerable.call(o, k)) : Object.keys(o));
    const ka = keys(a), kb = keys(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) if (!Object.prototype.propertyIsEnumerable.call(b, k) || !deepEqual(a[k], b[k], strict, seen)) return false;
    return true;
  };
  const PROMISIFY = Symbol.for("nodejs.util.promisify.custom");
  const promisify = (fn) => {
    if (typeof fn !== "function") throw argError('The "original" argument must be of type function');
    if (fn[PROMISIFY]) return fn[PROMISIFY];
    return function (...args) {
      return new Promise((resolve, reject) => fn.call(this, ...args, (err, ...values) => (err ? reject(err) : resolve(values.length > 1 ? values : values[0]))));
    };
  };
  promisify.custom = PROMISIFY;
  const util = {
    format: (...a) => nodeUtil.format(...a),
    formatWithOptions: (...a) => nodeUtil.formatWithOptions(...a),
    inspect: nodeUtil.inspect,
    promisify,
    callbackify: (fn) => function (...args) { const cb = args.pop(); fn.apply(this, args).then((v) => cb(null, v), (e) => cb(e)); },
    inherits: (ctor, superCtor) => { Object.defineProperty(ctor, "super_", { value: superCtor, writable: true, configurable: true }); Object.setPrototypeOf(ctor.prototype, superCtor.prototype); },
    deprecate: (fn, message) => { let warned = false; return function (...args) { if (!warned) { warned = true; emit("stderr", "(node:" + process.pid + ") DeprecationWarning: " + message + "\n"); } return fn.apply(this, args); }; },
    isDeepStrictEqual: (a, b) => deepEqual(a, b, true),
    stripVTControlCharacters: nodeUtil.stripVTControlCharacters,
    debuglog: () => () => {},
    isArray: Array.isArray,
    types,
    TextEncoder: undefined,
    TextDecoder: undefined,
  };

  // assert: Node's checks and its AssertionError; messages for the common failures.
  class AssertionError extends Error {
    constructor(options) {
      super(options.message);
      this.name = "AssertionError";
      this.generatedMessage = !options.userMessage;
      this.code = "ERR_ASSERTION";
      this.actual = options.actual;
      this.expected = options.expected;
      this.operator = options.operator;
    }
    toString() { return "AssertionError [ERR_ASSERTION]: " + this.message; }
  }
  const short = (v) => nodeUtil.inspect(v);
  const fail = (message, actual, expected, operator, generated) => {
    if (message instanceof Error) throw message;
    throw new AssertionError({ message: message === undefined ? generated : message, userMessage: message !== undefined, actual, expected, operator });
  };
  const compared = (head, actual, expected, sign) => {
    const x = short(actual), y = short(expected);
    if (!x.includes("\n") && !y.includes("\n")) return head + ":\n\n" + x + " " + sign + " " + y + "\n";
    return head + ":\n+ actual - expected\n\n" + x.split("\n").map((l) => "+ " + l).join("\n") + "\n" + y.split("\n").map((l) => "- " + l).join("\n");
  };
  const ok = function ok(value, message) { if (!value) fail(message, value, true, "==", arguments.length === 0 ? "No value argument passed to \`assert.ok()\`" : "The expression evaluated to a falsy value:\n\n  assert.ok(" + short(value) + ")\n"); };
  const matchesExpected = (error, expected) => {
    if (expected === undefined) return true;
    if (typeof expected === "function") {
      if (expected.prototype !== undefined && error instanceof expected) return true;
      if (Error.isPrototypeOf(expected) || expected === Error) return false;
      return expected.call({}, error) === true;
    }
    if (expected instanceof RegExp) return expected.test(String(error));
    if (isObject(expected)) return Object.keys(expected).every((k) => (expected[k] instanceof RegExp && typeof error[k] === "string" ? expected[k].test(error[k]) : deepEqual(error[k], expected[k], true)));
    return true;
  };
  const makeAssert = (strict) => {
    const assert = (value, message) => { if (!value) fail(message, value, true, "==", "The expression evaluated to a falsy value:\n\n  assert(" + short(value) + ")\n"); };
    Object.assign(assert, {
      AssertionError, ok,
      fail: (message = "Failed") => fail(message, undefined, undefined, "fail", "Failed"),
      equal: strict ? (a, b, m) => { if (!Object.is(a, b)) fail(m, a, b, "strictEqual", compared("Expected values to be strictly equal", a, b, "!==")); } : (a, b, m) => { if (!(a == b || (a !== a && b !== b))) fail(m, a, b, "==", short(a) + " == " + short(b)); },
      notEqual: strict ? (a, b, m) => { if (Object.is(a, b)) fail(m, a, b, "notStrictEqual", 'Expected "actual" to be strictly unequal to: ' + short(b)); } : (a, b, m) => { if (a == b) fail(m, a, b, "!=", short(a) + " != " + short(b)); },
      strictEqual: (a, b, m) => { if (!Object.is(a, b)) fail(m, a, b, "strictEqual", compared("Expected values to be strictly equal", a, b, "!==")); },
      notStrictEqual: (a, b, m) => { if (Object.is(a, b)) fail(m, a, b, "notStrictEqual", 'Expected "actual" to be strictly unequal to: ' + short(b)); },
      deepEqual: (a, b, m) => { if (!deepEqual(a, b, strict)) fail(m, a, b, strict ? "deepStrictEqual" : "deepEqual", compared(strict ? "Expected values to be strictly deep-equal" : "Expected values to be loosely deep-equal", a, b, strict ? "!==" : "!=")); },
      notDeepEqual: (a, b, m) => { if (deepEqual(a, b, strict)) fail(m, a, b, "notDeepEqual", '"actual" deepEqual "expected"'); },
      deepStrictEqual: (a, b, m) => { if (!deepEqual(a, b, true)) fail(m, a, b, "deepStrictEqual", compared("Expected values to be strictly deep-equal", a, b, "!==")); },
      notDeepStrictEqual: (a, b, m) => { if (deepEqual(a, b, true)) fail(m, a, b, "notDeepStrictEqual", 'Expected "actual" not to be strictly deep-equal to: ' + short(b)); },
      throws: (fn, expected, m) => {
        if (typeof expected === "string") { m = expected; expected = undefined; }
        try { fn(); } catch (error) {
          if (!matchesExpected(error, expected)) throw error;
          return;
        }
        fail(m, undefined, expected, "throws", "Missing expected exception" + (expected && expected.name ? " (" + expected.name + ")." : "."));
      },
      doesNotThrow: (fn, m) => { try { fn(); } catch (error) { fail(typeof m === "string" ? m : undefined, error, undefined, "doesNotThrow", 'Got unwanted exception.\nActual message: "' + (error && error.message) + '"'); } },
      rejects: async (promise, expected, m) => {
        if (typeof expected === "string") { m = expected; expected = undefined; }
        try { await (typeof promise === "function" ? promise() : promise); } catch (error) {
          if (!matchesExpected(error, expected)) throw error;
          return;
        }
        fail(m, undefined, expected, "rejects", "Missing expected rejection" + (expected && expected.name ? " (" + expected.name + ")." : "."));
      },
      doesNotReject: async (promise, m) => { try { await (typeof promise === "function" ? promise() : promise); } catch (error) { fail(m, error, undefined, "doesNotReject", 'Got unwanted rejection.\nActual message: "' + (error && error.message) + '"'); } },
      match: (s, re, m) => { if (!re.test(s)) fail(m, s, re, "match", "The input did not match the regular expression " + String(re) + ". Input:\n\n" + short(s) + "\n"); },
      doesNotMatch: (s, re, m) => { if (re.test(s)) fail(m, s, re, "doesNotMatch", "The input was expected to not match the regular expression " + String(re) + ". Input:\n\n" + short(s) + "\n"); },
      ifError: (v) => { if (v !== null && v !== undefined) throw v; },
    });
    return assert;
  };
  const assert = makeAssert(false);
  assert.strict = makeAssert(true);
  assert.strict.strict = assert.strict;

  const os = {
    EOL: "\n", devNull: "/dev/null",
    platform: () => "linux", type: () => "Linux", arch: () => "x64", machine: () => "x86_64", release: () => "6.0.0", version: () => "#1 SMP",
    endianness: () => "LE", hostname: () => "${MACHINE.host}", tmpdir: () => "/tmp", homedir: () => process.env.HOME || "/workspace",
    cpus: () => [{ model: "polybox", speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
    availableParallelism: () => 1, loadavg: () => [0, 0, 0], uptime: () => Math.floor(performance.now() / 1000),
    totalmem: () => 0, freemem: () => 0, networkInterfaces: () => ({}),
    userInfo: () => ({ uid: ${MACHINE.uid}, gid: ${MACHINE.gid}, username: "${MACHINE.user}", homedir: process.env.HOME || "${MACHINE.home}", shell: null }),
    constants: { signals: {}, errno: {} },
  };

  const fileURLToPath = (url) => {
    const u = typeof url === "string" ? new URL(url) : url;
    if (u.protocol !== "file:") throw argError("The URL must be of scheme file", "ERR_INVALID_URL_SCHEME");
    return decodeURIComponent(u.pathname);
  };
  const pathToFileURL = (p) => new URL("file://" + encodeURI(node().path.resolve(p)).replace(/[?#]/g, encodeURIComponent));
  const url = {
    get URL() { return URL; }, get URLSearchParams() { return URLSearchParams; }, fileURLToPath, pathToFileURL,
    parse: (s) => {
      const u = new URL(s);
      return { protocol: u.protocol, slashes: true, auth: u.username ? u.username + (u.password ? ":" + u.password : "") : null, host: u.host, port: u.port || null, hostname: u.hostname, hash: u.hash || null, search: u.search || null, query: u.search ? u.search.slice(1) : null, pathname: u.pathname, path: u.pathname + u.search, href: u.href };
    },
    format: (u) => (u instanceof URL ? u.href : String(new URL((u.protocol || "http:") + "//" + (u.host || u.hostname) + (u.pathname || "/") + (u.search || "")))),
  };

  const modules = {
    fs: () => fs,
    "fs/promises": () => promises,
    path: () => node().path,
    "path/posix": () => node().path,
    buffer: () => ({ Buffer: node().Buffer, kMaxLength: node().kMaxLength, constants: node().constants, atob, btoa, Blob }),
    crypto: () => crypto,
    events: () => node().EventEmitter,
    util: () => Object.assign(util, { TextEncoder, TextDecoder }),
    assert: () => assert,
    "assert/strict": () => assert.strict,
    os: () => os,
    url: () => url,
    querystring: () => {
      const qs = node().querystring;
      return { ...qs, parse: (...a) => Object.assign(Object.create(null), qs.parse(...a)), decode: (...a) => Object.assign(Object.create(null), qs.parse(...a)) };
    },
    string_decoder: () => ({ StringDecoder: node().StringDecoder }),
    timers: () => ({ setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate }),
    "timers/promises": () => ({
      setTimeout: (ms, value) => new Promise((resolve) => setTimeout(() => resolve(value), ms)),
      setImmediate: (value) => new Promise((resolve) => setImmediate(() => resolve(value))),
    }),
    "util/types": () => types,
  };
  const loaded = {};
  const PROVIDED = Object.keys(modules).join(", ");
  const require = (name) => {
    const key = String(name).replace(/^node:/, "");
    if (Object.prototype.hasOwnProperty.call(loaded, key)) return loaded[key];
    if (Object.prototype.hasOwnProperty.call(modules, key)) return (loaded[key] = modules[key]());
    // Node's message first ("Cannot find module 'x'" and the require stack), then what there is.
    const e = new Error("Cannot find module '" + name + "'\nRequire stack:\n- /workspace/main.js\n(the sandbox provides only " + PROVIDED + ")");
    e.code = "MODULE_NOT_FOUND";
    throw e;
  };
  require.resolve = (name) => { require(name); return String(name).startsWith("node:") ? String(name) : String(name); };
  require.cache = Object.create(null);
  // The CommonJS scope a script has under Node: the program is /workspace/main.js, run as the
  // main module (so "require.main === module" holds, as for \`node main.js\`).
  const module = { id: ".", path: "/workspace", exports: {}, filename: "/workspace/main.js", loaded: false, children: [], paths: ["/workspace/node_modules", "/node_modules"] };
  require.main = module;
  module.require = require;

  // Thrown by process.exit; its \`finish\` gives the exit code a run that ends by itself ends with.
  const exitSignal = {};
  // The 'exit' event, once, as Node emits it: from process.exit, or when nothing is left to run
  // (the engine calls \`finish\` then); a listener may still change process.exitCode, and one
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


  // fetch, Headers, Request and Response: requests go to the trusted side through host.net, which
  // blocks until the answer is in; fetch returns a promise that is already settled.
  const iterOf = (pairs) => pairs[Symbol.iterator]();
  class Headers {
    constructor(init) {
      this._map = new Map();
      if (init instanceof Headers) init.forEach((v, k) => this.append(k, v));
      else if (Array.isArray(init)) for (const [k, v] of init) this.append(k, v);
      else if (init && typeof init === "object") for (const k of Object.keys(init)) this.append(k, init[k]);
    }
    append(name, value) {
      const k = String(name).toLowerCase();
      const old = this._map.get(k);
      this._map.set(k, old === undefined ? String(value) : old + ", " + String(value));
    }
    set(name, value) { this._map.set(String(name).toLowerCase(), String(value)); }
    get(name) { const v = this._map.get(String(name).toLowerCase()); return v === undefined ? null : v; }
    has(name) { return this._map.has(String(name).toLowerCase()); }
    delete(name) { this._map.delete(String(name).toLowerCase()); }
    forEach(fn, self) { for (const [k, v] of [...this._map].sort()) fn.call(self, v, k, this); }
    entries() { return iterOf([...this._map].sort()); }
    keys() { return iterOf([...this._map.keys()].sort()); }
    values() { return iterOf([...this._map].sort().map((e) => e[1])); }
    [Symbol.iterator]() { return this.entries(); }
  }
  const toBuffer = (body) => {
    if (body === undefined || body === null) return null;
    if (typeof body === "string") return host.encode(body);
    if (body instanceof ArrayBuffer) return body.slice(0);
    if (ArrayBuffer.isView(body)) return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength);
    return host.encode(String(body));
  };
  class Body {
    _take() {
      if (this.bodyUsed) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
      this.bodyUsed = true;
      return Promise.resolve(this._body === null ? new ArrayBuffer(0) : this._body);
    }
    arrayBuffer() { return this._take(); }
    bytes() { return this._take().then((b) => new Uint8Array(b)); }
    text() { return this._take().then((b) => host.decode(b)); }
    json() { return this.text().then((t) => JSON.parse(t)); }
    get body() { return this._body; }
  }
  // Request and Response take Body's methods rather than extending it, so that every global the
  // prelude provides is a plain function of QuickJS's own realm (a derived class's prototype is
  // its base, not Function.prototype).
  const withBody = (cls) => {
    for (const name of Object.getOwnPropertyNames(Body.prototype))
      if (name !== "constructor") Object.defineProperty(cls.prototype, name, Object.getOwnPropertyDescriptor(Body.prototype, name));
    return cls;
  };
  class Request {
    constructor(input, init = {}) {
      const from = input instanceof Request ? input : null;
      this.url = from ? from.url : String(input);
      this.method = String(init.method || (from ? from.method : "GET")).toUpperCase();
      this.headers = new Headers(init.headers || (from ? from.headers : undefined));
      this.redirect = init.redirect || (from ? from.redirect : "follow");
      this._body = init.body !== undefined ? toBuffer(init.body) : from ? from._body : null;
      if (typeof init.body === "string" && !this.headers.has("content-type")) this.headers.set("content-type", "text/plain;charset=UTF-8");
      if ((this.method === "GET" || this.method === "HEAD") && this._body !== null) throw new TypeError("Request with GET/HEAD method cannot have body.");
      this.bodyUsed = false;
    }
    clone() { return new Request(this); }
  }
  withBody(Request);
  class Response {
    constructor(body = null, init = {}) {
      this._body = toBuffer(body);
      this.status = init.status === undefined ? 200 : init.status;
      this.statusText = init.statusText === undefined ? "" : String(init.statusText);
      this.headers = new Headers(init.headers);
      this.ok = this.status >= 200 && this.status < 300;
      this.url = init.url || "";
      this.redirected = Boolean(init.redirected);
      this.type = "basic";
      this.bodyUsed = false;
    }
    clone() { return new Response(this._body, this); }
    static json(data, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(JSON.stringify(data), { ...init, headers });
    }
  }
  withBody(Response);
  const fetch = (input, init) => {
    try {
      const request = new Request(input, init);
      const headers = [];
      request.headers.forEach((v, k) => headers.push([k, v]));
      const reply = host.net(
        JSON.stringify({ method: request.method, url: request.url, headers, redirect: request.redirect === "manual" ? "manual" : "follow" }),
        request._body === null ? undefined : request._body,
      );
      const meta = JSON.parse(reply.meta);
      if (!meta.ok) return Promise.reject(new TypeError("fetch failed: " + meta.message));
      return Promise.resolve(new Response(reply.body, meta));
    } catch (error) {
      return Promise.reject(error);
    }
  };


  // Globals QuickJS lacks, from maintained polyfills (polyfills.ts), evaluated the first time
  // guest code reads one: a context that never touches Intl never pays for it.
  const evalGlobal = (0, eval);
  const bundles = {};
  const loadBundle = (name) => {
    if (!(name in bundles)) bundles[name] = evalGlobal(host.polyfill(name));
    return bundles[name];
  };
  // A function the prelude puts in a built-in's place reads as native code, as the built-in did.
  const builtins = new WeakSet();
  const hidden = (value) => {
    if (typeof value === "function") builtins.add(value);
    return { value, writable: true, configurable: true, enumerable: false };
  };
  const lazyGlobals = (names, load) => {
    for (const name of names) {
      Object.defineProperty(globalThis, name, {
        configurable: true,
        enumerable: false,
        get() { load(); return globalThis[name]; },
        set(value) { load(); Object.defineProperty(globalThis, name, hidden(value)); },
      });
    }
  };
  const WEB = ["URL", "URLSearchParams", "structuredClone"];
  const loadWeb = () => {
    if ("web" in bundles) return;
    for (const name of WEB) delete globalThis[name];
    loadBundle("web");
    // URL and URLSearchParams print as Node prints them (lib/internal/url.js).
    Object.defineProperty(URLSearchParams.prototype, nodeUtil.inspect.custom, hidden(function (depth, options) {
      if (typeof depth === "number" && depth < 0) return "[Object]";
      const inner = { ...options, depth: depth === null ? null : depth - 1 };
      const output = [];
      this.forEach((value, key) => output.push(nodeUtil.inspect(key, inner) + " => " + nodeUtil.inspect(value, inner)));
      const length = output.reduce((n, item) => n + item.length + 2, -2);
      const name = this.constructor.name;
      if (length > options.breakLength) return name + " {\n  " + output.join(",\n  ") + " }";
      return output.length ? name + " { " + output.join(", ") + " }" : name + " {}";
    }));
    Object.defineProperty(URL.prototype, nodeUtil.inspect.custom, hidden(function (depth, options) {
      if (typeof depth === "number" && depth < 0) return "[URL]";
      const constructor = this.constructor;
      const obj = { __proto__: { constructor } };
      for (const key of ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "searchParams", "hash"]) obj[key] = this[key];
      return constructor.name + " " + nodeUtil.inspect(obj, options);
    }));
  };
  lazyGlobals(WEB, loadWeb);
  const Collator = () => loadBundle("collator");
  const loadIntl = () => {
    if ("intl" in bundles) return;
    delete globalThis.Intl;
    loadBundle("intl");
    Object.defineProperty(Intl, "Collator", hidden(Collator()));
    withAtTime(Intl.DateTimeFormat);
    // The locale a program gets when it names none: Node's, for the en data there is.
    for (const name of INTL_CLASSES)
      if (Intl[name] && "__defaultLocale" in Intl[name]) Intl[name].__defaultLocale = "en-US";
    // Another locale's data is evaluated the first time a program names that locale: each Intl
    // class, and the toLocaleString family, look at the locales they are given first.
    for (const name of INTL_CLASSES) {
      const target = Intl[name];
      const proxy = new Proxy(target, {
        construct(t, args, newTarget) { loadLocales(args[0]); return Reflect.construct(t, args, newTarget === proxy ? t : newTarget); },
        apply(t, self, args) { loadLocales(args[0]); return Reflect.apply(t, self, args); },
      });
      Object.defineProperty(Intl, name, hidden(proxy));
    }
    for (const [proto, names] of [[Number.prototype, ["toLocaleString"]], [BigInt.prototype, ["toLocaleString"]], [Date.prototype, ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]]]) {
      for (const name of names) {
        const original = proto[name];
        Object.defineProperty(proto, name, hidden({ [name](locales, options) { loadLocales(locales); return original.call(this, locales, options); } }[name]));
      }
    }
  };
  // A long or full date with a time reads "March 5, 2024 at 2:30 PM" under Node (CLDR's atTime
  // patterns), where the polyfill's data joins the two with a comma, as shorter dates are.
  const AT_TIME = { en: " at ", de: " um ", fr: " à ", es: " a las ", it: " alle ore ", pt: " às ", nl: " om ", ru: " в " };
  const DATE_PARTS = new Set(["weekday", "era", "year", "month", "day"]);
  const atTime = (format) => {
    const o = format.resolvedOptions();
    const full = o.dateStyle === "full" || (o.dateStyle === undefined && o.weekday !== undefined);
    const long = o.dateStyle ? (o.dateStyle === "long" || o.dateStyle === "full") && o.timeStyle !== undefined : o.month === "long" && o.hour !== undefined;
    const language = String(o.locale).split("-")[0];
    return long && !(full && language === "es") ? AT_TIME[language] || null : null;
  };
  const joinAtTime = (parts, word) => {
    const hour = parts.findIndex((p) => p.type === "hour");
    const joint = parts[hour - 1];
    if (hour >= 2 && joint.type === "literal" && joint.value === ", " && DATE_PARTS.has(parts[hour - 2].type)) joint.value = word;
    return parts;
  };
  const withAtTime = (DateTimeFormat) => {
    const proto = DateTimeFormat.prototype;
    const toParts = proto.formatToParts;
    const formatOf = Object.getOwnPropertyDescriptor(proto, "format");
    if (typeof toParts !== "function" || !formatOf || typeof formatOf.get !== "function") return;
    Object.defineProperty(proto, "formatToParts", hidden({ formatToParts(date) { const word = atTime(this); const parts = toParts.call(this, date); return word ? joinAtTime(parts, word) : parts; } }.formatToParts));
    Object.defineProperty(proto, "format", { ...formatOf, get() {
      const format = formatOf.get.call(this);
      const word = atTime(this);
      return word ? (date) => joinAtTime(toParts.call(this, date), word).map((p) => p.value).join("") : format;
    } });
  };
  const INTL_CLASSES = ["NumberFormat", "DateTimeFormat", "PluralRules", "RelativeTimeFormat", "ListFormat"];
  const INTL_LOCALES = ${JSON.stringify(INTL_LOCALES)};
  const localeData = (tag) => {
    let canonical;
    try { canonical = Intl.getCanonicalLocales(tag)[0]; } catch { return null; }
    if (INTL_LOCALES.includes(canonical)) return canonical;
    const language = canonical.split("-")[0];
    return INTL_LOCALES.includes(language) ? language : null;
  };
  const loadLocales = (locales) => {
    if (locales === undefined) return;
    for (const tag of typeof locales === "string" ? [locales] : Array.isArray(locales) ? locales : []) {
      const data = typeof tag === "string" ? localeData(tag) : null;
      if (data !== null) loadBundle("intl-" + data);
    }
  };
  lazyGlobals(["Intl"], loadIntl);
  const onFirstUse = (proto, name, load) => {
    const first = { [name](...args) { load(); return proto[name].apply(this, args); } }[name];
    Object.defineProperty(proto, name, hidden(first));
  };
  for (const name of ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]) onFirstUse(Date.prototype, name, loadIntl);
  onFirstUse(Number.prototype, "toLocaleString", loadIntl);
  // QuickJS's BigInt.prototype.toLocaleString groups no digits: Intl's NumberFormat does.
  Object.defineProperty(BigInt.prototype, "toLocaleString", hidden({
    toLocaleString(locales, options) {
      const value = BigInt.prototype.valueOf.call(this);
      return new Intl.NumberFormat(locales, options).format(value);
    },
  }.toLocaleString));
  Object.defineProperty(String.prototype, "localeCompare", hidden({
    localeCompare(that, locales, options) {
      if (this === null || this === undefined) throw new TypeError("String.prototype.localeCompare called on null or undefined");
      const C = Collator();
      return new C(locales, options).compare(String(this), String(that));
    },
  }.localeCompare));

  // V8's Error.captureStackTrace and stackTraceLimit, which custom error classes call: the stack
  // is taken where it is called, with the "Name: message" line V8 starts it with.
  Object.defineProperty(Error, "captureStackTrace", hidden(function captureStackTrace(target) {
    if (target === null || typeof target !== "object") throw argError('The "object" argument must be of type object. Received ' + nodeUtil.inspect(target));
    const frames = String(new Error().stack || "").split("\n").slice(1).join("\n");
    const head = (() => { try { return Error.prototype.toString.call(target); } catch { return "Error"; } })();
    Object.defineProperty(target, "stack", { value: head + "\n" + frames, writable: true, configurable: true, enumerable: false });
  }));
  if (!("stackTraceLimit" in Error)) Error.stackTraceLimit = 10;

  // Where QuickJS's Date differs from V8's in what a program prints.
  const dateToString = Date.prototype.toString;
  const dateToTimeString = Date.prototype.toTimeString;
  const zoneName = (d) => (d.getTimezoneOffset() === 0 ? " (Coordinated Universal Time)" : "");
  Object.defineProperty(Date.prototype, "toString", hidden(function toString() {
    const s = dateToString.call(this);
    return Number.isNaN(this.getTime()) ? s : s + zoneName(this);
  }));
  Object.defineProperty(Date.prototype, "toTimeString", hidden(function toTimeString() {
    const s = dateToTimeString.call(this);
    return Number.isNaN(this.getTime()) ? s : s + zoneName(this);
  }));
  const dateToISOString = Date.prototype.toISOString;
  Object.defineProperty(Date.prototype, "toISOString", hidden(function toISOString() {
    if (this instanceof Date && Number.isNaN(this.getTime())) throw new RangeError("Invalid time value");
    return dateToISOString.call(this);
  }));
  const timeOrigin = Date.now();
  const performance = { timeOrigin, now: () => Date.now() - timeOrigin };

  // Unhandled promise rejections end the run as Node ends it: the reason on stderr, exit 1. A
  // promise made by Promise (new, resolve, reject, then, all...) is watched; one an async
  // function returns is QuickJS's own and is not (quickjs-emscripten has no rejection tracker).
  const NativePromise = Promise;
  const handled = new WeakSet();
  const unhandled = new Map();
  let checking = false;
  const checkRejections = () => {
    checking = false;
    for (const reason of unhandled.values()) {
      unhandled.clear();
      const text = reason instanceof Error
        ? inspect(reason)
        : "[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"" + inspect(reason) + "\".] {\n  code: 'ERR_UNHANDLED_REJECTION'\n}";
      write("stderr", "Uncaught " + text + "\n");
      exitSignal.code = 1;
      throw exitSignal;
    }
  };
  const noteRejection = (promise, reason) => {
    if (handled.has(promise)) return;
    unhandled.set(promise, reason);
    if (!checking) { checking = true; setTimeout(checkRejections, 0); }
  };
  const WatchedPromise = class Promise extends NativePromise {
    constructor(executor) {
      if (typeof executor !== "function") { super(executor); return; }
      let self = null, settled = false, early = false, earlyReason;
      super((resolve, reject) => executor(
        (value) => { settled = true; resolve(value); },
        (reason) => {
          if (!settled) {
            settled = true;
            if (self) noteRejection(self, reason); else { early = true; earlyReason = reason; }
          }
          reject(reason);
        },
      ));
      self = this;
      if (early) noteRejection(this, earlyReason);
    }
    then(onFulfilled, onRejected) {
      handled.add(this);
      unhandled.delete(this);
      return super.then(onFulfilled, onRejected);
    }
    static [Symbol.hasInstance](value) { return value instanceof NativePromise; }
  };
  Object.defineProperty(globalThis, "Promise", hidden(WatchedPromise));

  // Event, EventTarget, AbortController, AbortSignal, DOMException and Blob: the globals Node has
  // from the web platform, as the DOM and File API standards define their behaviour.
  class DOMException extends Error {
    constructor(message = "", name = "Error") {
      super(message);
      Object.defineProperty(this, "name", { value: String(name), writable: true, configurable: true });
    }
    get code() { return { AbortError: 20, TimeoutError: 23, QuotaExceededError: 22, InvalidCharacterError: 5, NotSupportedError: 9 }[this.name] || 0; }
  }
  class Event {
    constructor(type, init = {}) {
      if (arguments.length === 0) throw argError('The "type" argument must be specified', "ERR_MISSING_ARGS");
      this._type = String(type);
      this._bubbles = Boolean(init.bubbles);
      this._cancelable = Boolean(init.cancelable);
      this._defaultPrevented = false;
      this._stop = false;
      this._target = null;
      this._time = performance.now();
    }
    get type() { return this._type; }
    get bubbles() { return this._bubbles; }
    get cancelable() { return this._cancelable; }
    get defaultPrevented() { return this._cancelable && this._defaultPrevented; }
    get target() { return this._target; }
    get currentTarget() { return this._target; }
    get srcElement() { return this._target; }
    get timeStamp() { return this._time; }
    get isTrusted() { return false; }
    get eventPhase() { return this._target ? 2 : 0; }
    get returnValue() { return !this.defaultPrevented; }
    composedPath() { return this._target ? [this._target] : []; }
    preventDefault() { this._defaultPrevented = true; }
    stopPropagation() {}
    stopImmediatePropagation() { this._stop = true; }
  }
  class CustomEvent extends Event {
    constructor(type, init = {}) { super(type, init); this._detail = init.detail === undefined ? null : init.detail; }
    get detail() { return this._detail; }
  }
  const eventListeners = new WeakMap();
  class EventTarget {
    addEventListener(type, listener, options) {
      if (listener === null || listener === undefined) return;
      const once = typeof options === "object" && options !== null && Boolean(options.once);
      const signal = typeof options === "object" && options !== null ? options.signal : undefined;
      if (signal && signal.aborted) return;
      if (!eventListeners.has(this)) eventListeners.set(this, new Map());
      const all = eventListeners.get(this);
      const list = all.get(String(type)) || [];
      if (list.some((l) => l.listener === listener)) return;
      const entry = { listener, once };
      list.push(entry);
      all.set(String(type), list);
      if (signal) signal.addEventListener("abort", () => this.removeEventListener(type, listener));
    }
    removeEventListener(type, listener) {
      const list = eventListeners.has(this) && eventListeners.get(this).get(String(type));
      if (!list) return;
      const i = list.findIndex((l) => l.listener === listener);
      if (i >= 0) list.splice(i, 1);
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw argError('The "event" argument must be an instance of Event. Received ' + nodeUtil.inspect(event));
      event._target = this;
      const list = (eventListeners.has(this) && eventListeners.get(this).get(event.type)) || [];
      for (const entry of list.slice()) {
        if (entry.once) this.removeEventListener(event.type, entry.listener);
        try {
          if (typeof entry.listener === "function") entry.listener.call(this, event);
          else if (entry.listener && typeof entry.listener.handleEvent === "function") entry.listener.handleEvent(event);
        } catch (error) {
          queueMicrotask(() => { throw error; });
        }
        if (event._stop) break;
      }
      const handler = this["on" + event.type];
      if (typeof handler === "function" && !list.some((l) => l.listener === handler)) handler.call(this, event);
      return !event.defaultPrevented;
    }
  }
  const abortError = () => new DOMException("This operation was aborted", "AbortError");
  class AbortSignal extends EventTarget {
    constructor() { super(); this._aborted = false; this._reason = undefined; this.onabort = null; }
    get aborted() { return this._aborted; }
    get reason() { return this._reason; }
    throwIfAborted() { if (this._aborted) throw this._reason; }
    _abort(reason) {
      if (this._aborted) return;
      this._aborted = true;
      this._reason = reason === undefined ? abortError() : reason;
      this.dispatchEvent(new Event("abort"));
    }
    static abort(reason) { const s = new AbortSignal(); s._abort(reason); return s; }
    static timeout(ms) { const s = new AbortSignal(); setTimeout(() => s._abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms); return s; }
    static any(signals) {
      const s = new AbortSignal();
      for (const from of signals) {
        if (from.aborted) { s._abort(from.reason); break; }
        from.addEventListener("abort", () => s._abort(from.reason));
      }
      return s;
    }
  }
  class AbortController {
    constructor() { this._signal = new AbortSignal(); }
    get signal() { return this._signal; }
    abort(reason) { this._signal._abort(reason); }
  }
  const blobBytes = new WeakMap();
  class Blob {
    constructor(parts = [], options = {}) {
      const chunks = [];
      for (const part of parts) {
        if (part instanceof Blob) chunks.push(blobBytes.get(part));
        else if (part instanceof ArrayBuffer) chunks.push(new Uint8Array(part.slice(0)));
        else if (ArrayBuffer.isView(part)) chunks.push(new Uint8Array(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength)));
        else chunks.push(new Uint8Array(host.encode(String(part))));
      }
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) { bytes.set(c, at); at += c.length; }
      blobBytes.set(this, bytes);
      const type = options.type === undefined ? "" : String(options.type);
      this._type = /^[\x20-\x7e]*$/.test(type) ? type.toLowerCase() : "";
    }
    get size() { return blobBytes.get(this).length; }
    get type() { return this._type; }
    slice(start = 0, end = this.size, type = "") {
      const b = new Blob([], { type });
      blobBytes.set(b, blobBytes.get(this).slice(start, end));
      return b;
    }
    arrayBuffer() { return Promise.resolve(blobBytes.get(this).slice().buffer); }
    bytes() { return Promise.resolve(blobBytes.get(this).slice()); }
    text() { return Promise.resolve(host.decode(blobBytes.get(this).slice().buffer)); }
    [Symbol.for("nodejs.util.inspect.custom")]() { return "Blob { size: " + this.size + ", type: '" + this.type + "' }"; }
  }
  for (const [cls, tag] of [[Event, "Event"], [EventTarget, "EventTarget"], [AbortSignal, "AbortSignal"], [AbortController, "AbortController"], [Blob, "Blob"], [CustomEvent, "CustomEvent"]])
    Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: tag, configurable: true });


  // Errors as V8 words and shows them. QuickJS fixes an error's message and stack when it makes
  // the error, in its own words ("'x' is not defined", a stack of frames alone); a program sees
  // an error where it catches it, so each catch clause of the program calls \`fixError\` first
  // (see \`prepare\` below), as do rejection handlers and the printing of an uncaught error.
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
    return m && (!/[\w$.]/.test(mainSource[at - 1] || "") || mainSource.slice(at - 3, at) === "...") && !/^\s*[(\[\x60]/.test(mainSource.slice(at + m[0].length, at + m[0].length + 20)) ? m[0] : null;
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
  for (const [Kind, names] of [[Map, ["keys", "values", "entries"]], [Set, ["values", "entries"]]]) {
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

  // The program's source as Node would run it, changed only where a token calls for it: each
  // catch clause first hands its error to fixError (above), a top-level \`this\` is what Node
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
  return {
    fire(id) { const fn = timers.get(id); timers.delete(id); if (fn) fn(); },
    runTicks() { let ran = 0; while (ticks.length > 0) { ran++; ticks.shift()(); } return ran; },
    prepare,
    setEnv(json) { process.env = JSON.parse(json); process.exitCode = undefined; exitSignal.exited = false; exitEmitted = false; ticks.length = 0; },
    exitSignal,
    inspect,
  };
})()
`;

/** Rewrites static imports of the built-in modules into `require` calls, so that code using
 * `import fs from "node:fs"` can still run as a script (which keeps the last expression's value
 * and global state between runs). Other imports are left alone and fail with a clear error.
 * An `export` at the start of a line goes (the program is the main module: nothing imports
 * it), and `import.meta` is the main module's. Either makes the program an ES module, as in Node. */
export function rewriteImports(code: string): string {
  return code
    .replace(
      /(?<=^|;)([ \t]*)import\s+([\w$]+\s*,\s*)?(\*\s+as\s+[\w$]+|\{[^}]*\}|[\w$]+)\s+from\s+["'](?:node:)?(fs|fs\/promises|path|path\/posix|buffer|crypto|events|util|util\/types|assert|assert\/strict|os|url|querystring|string_decoder|timers|timers\/promises)["'][ \t]*;?/gm,
      (_m, space: string, first: string | undefined, binding: string, mod: string) => {
        const req = `require(${JSON.stringify(mod)})`;
        const bind = (b: string) =>
          b.startsWith("*")
            ? `var ${b.replace(/^\*\s+as\s+/, "")} = ${req};`
            : b.startsWith("{")
              ? `var ${b.replace(/\s+as\s+/g, ": ")} = ${req};`
              : `var ${b} = ${req};`;
        return space + (first ? bind(first.replace(/\s*,\s*$/, "")) : "") + bind(binding.trim());
      },
    )
    .replace(/(^|;)([ \t]*)export\s+\{[^}]*\}[ \t]*;?/gm, "$1$2")
    .replace(
      /(^|;)([ \t]*)export\s+(?:default\s+)?(?=(?:async\s+)?function\b|class\b|const\b|let\b|var\b)/gm,
      "$1$2",
    )
    .replace(/(^|;)([ \t]*)export\s+default\s+/gm, "$1$2void ")
    .replace(
      /\bimport\.meta\b/g,
      '({ url: "file:///workspace/main.js", filename: "/workspace/main.js", dirname: "/workspace" })',
    );
}

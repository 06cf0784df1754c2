// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// Node's built-in modules the sandbox provides: fs over the workspace, Buffer and friends from the
// "node" polyfill bundle, crypto, util, assert, os, url, and the `require` that hands them out.

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
const ok = function ok(value, message) { if (!value) fail(message, value, true, "==", arguments.length === 0 ? "No value argument passed to `assert.ok()`" : "The expression evaluated to a falsy value:\n\n  assert.ok(" + short(value) + ")\n"); };
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
const assert = /** @type {ReturnType<typeof makeAssert> & { strict: any }} */ (makeAssert(false));
assert.strict = makeAssert(true);
assert.strict.strict = assert.strict;

const os = {
  EOL: "\n", devNull: "/dev/null",
  platform: () => "linux", type: () => "Linux", arch: () => "x64", machine: () => "x86_64", release: () => "6.0.0", version: () => "#1 SMP",
  endianness: () => "LE", hostname: () => facts.machine.host, tmpdir: () => "/tmp", homedir: () => process.env.HOME || "/workspace",
  cpus: () => [{ model: "polybox", speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
  availableParallelism: () => 1, loadavg: () => [0, 0, 0], uptime: () => Math.floor(performance.now() / 1000),
  totalmem: () => 0, freemem: () => 0, networkInterfaces: () => ({}),
  userInfo: () => ({ uid: facts.machine.uid, gid: facts.machine.gid, username: facts.machine.user, homedir: process.env.HOME || facts.machine.home, shell: null }),
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
// `(require)(name)`: a call of `require` by its bare name would have TypeScript take this file
// for a CommonJS module and check it apart from the rest of the script.
require.resolve = (name) => { (require)(name); return String(name).startsWith("node:") ? String(name) : String(name); };
require.cache = Object.create(null);

// Guest side of the JavaScript engine: source evaluated inside each QuickJS context before any
// user code. It builds `console`, `require`, a small `process`, and the workspace-only `fs` and
// `path` modules on top of the host functions in `__polybox`, then deletes that global so user
// code holds only what the prelude chose to give it. Evaluates to the timer-firing function.
// Values print as Node prints them: `util.inspect` and `util.format` come from
// node-inspect-extracted (Node's own code, packaged for other runtimes), evaluated first.

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
  const inspect = (value) => nodeUtil.inspect(value);
  // QuickJS's \`stack\` holds only the frames; Node's starts with "Name: message", and so does
  // the way errors print here.
  // Inspection sees a stack that starts so for as long as it runs; Node's own code does the rest
  // (brackets around a stack with no frames, the error's own properties after it).
  Object.defineProperty(Error.prototype, nodeUtil.inspect.custom, {
    value(depth, options) {
      const head = String(this.name) + ": " + String(this.message);
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

  const console = {
    log: (...a) => write("stdout", format(a)),
    info: (...a) => write("stdout", format(a)),
    debug: (...a) => write("stdout", format(a)),
    error: (...a) => write("stderr", format(a)),
    warn: (...a) => write("stderr", format(a)),
    table: (data, properties) => write("stdout", tableOf(data, properties) + "\n"),
    dir: (v, options) => write("stdout", nodeUtil.inspect(v, options) + "\n"),
  };

  const call = (op, ...args) => {
    const reply = JSON.parse(host.fs(op, JSON.stringify(args)));
    if (reply.error) {
      const e = new Error(reply.error.message);
      e.code = reply.error.code;
      throw e;
    }
    return reply.ok;
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
        return enc ? text : new Uint8Array(host.encode(text));
      }
      if (enc) return call("readText", path);
      return new Uint8Array(host.readBytes(path));
    },
    writeFileSync(path, data) { const d = toBytes(data); typeof d === "string" ? call("writeText", path, d, false) : host.writeBytes(path, d, false); },
    appendFileSync(path, data) { const d = toBytes(data); typeof d === "string" ? call("writeText", path, d, true) : host.writeBytes(path, d, true); },
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
  promises.access = (path) => new Promise((resolve, reject) => (sync.existsSync(path) ? resolve() : reject(Object.assign(new Error("ENOENT: no such file or directory, access '" + path + "'"), { code: "ENOENT" }))));

  const normalize = (p) => {
    const abs = p.startsWith("/");
    const out = [];
    for (const part of p.split("/")) {
      if (!part || part === ".") continue;
      if (part === "..") { if (out.length && out[out.length - 1] !== "..") out.pop(); else if (!abs) out.push(".."); }
      else out.push(part);
    }
    return (abs ? "/" : "") + out.join("/") || (abs ? "/" : ".");
  };
  const path = {
    sep: "/",
    join: (...parts) => normalize(parts.filter(Boolean).join("/")),
    resolve: (...parts) => { let r = "/workspace"; for (const p of parts) r = p.startsWith("/") ? p : r + "/" + p; return normalize(r); },
    normalize,
    dirname: (p) => { const i = p.replace(/\/+$/, "").lastIndexOf("/"); return i < 0 ? "." : i === 0 ? "/" : p.slice(0, i); },
    basename: (p, ext) => { const b = p.replace(/\/+$/, "").split("/").pop(); return ext && b.endsWith(ext) ? b.slice(0, -ext.length) : b; },
    extname: (p) => { const b = p.split("/").pop(); const i = b.lastIndexOf("."); return i <= 0 ? "" : b.slice(i); },
    isAbsolute: (p) => p.startsWith("/"),
  };
  path.posix = path;

  const modules = { fs, "fs/promises": promises, path };
  const require = (name) => {
    const key = String(name).replace(/^node:/, "");
    if (Object.prototype.hasOwnProperty.call(modules, key)) return modules[key];
    const e = new Error("Cannot find module '" + name + "': the sandbox provides only fs, fs/promises and path");
    e.code = "MODULE_NOT_FOUND";
    throw e;
  };

  // Thrown by process.exit; its \`pending\` is the exit code a run that ends by itself ends with.
  const exitSignal = {};
  Object.defineProperty(exitSignal, "pending", { get: () => (exitSignal.exited ? exitSignal.code : typeof process.exitCode === "number" ? process.exitCode : 0) });
  const process = {
    argv: ["polybox", "main.js"], env: {}, platform: "polybox", cwd: () => "/workspace",
    exitCode: undefined,
    exit: (code) => {
      exitSignal.code = code === undefined ? process.exitCode ?? 0 : code;
      // Called inside a callback or an async function the throw ends only that; the run ends
      // once nothing is left to run, and nothing is: no timer fires after this.
      exitSignal.exited = true;
      for (const id of timers.keys()) host.clearTimer(id);
      timers.clear();
      intervals.clear();
      throw exitSignal;
    },
    stdout: { write: (s) => (write("stdout", String(s)), true) },
    stderr: { write: (s) => (write("stderr", String(s)), true) },
  };

  const timers = new Map();
  let nextTimer = 1;
  const setTimeout = (fn, ms = 0, ...args) => { if (exitSignal.exited) return 0; const id = nextTimer++; timers.set(id, () => fn(...args)); host.setTimer(id, Number(ms) || 0); return id; };
  const clearTimeout = (id) => { timers.delete(id); host.clearTimer(id); };
  const intervals = new Map();
  const setInterval = (fn, ms = 0, ...args) => {
    const id = nextTimer++;
    const tick = () => { intervals.set(id, setTimeout(tick, ms)); fn(...args); };
    intervals.set(id, setTimeout(tick, ms));
    return id;
  };
  const clearInterval = (id) => { clearTimeout(intervals.get(id)); intervals.delete(id); };
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
  const hidden = (value) => ({ value, writable: true, configurable: true, enumerable: false });
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
  };
  lazyGlobals(WEB, loadWeb);
  const Collator = () => loadBundle("collator");
  const loadIntl = () => {
    if ("intl" in bundles) return;
    delete globalThis.Intl;
    loadBundle("intl");
    Object.defineProperty(Intl, "Collator", hidden(Collator()));
    // The locale a program gets when it names none: Node's, for the en data there is.
    for (const name of ["NumberFormat", "DateTimeFormat", "PluralRules"])
      if (Intl[name] && "__defaultLocale" in Intl[name]) Intl[name].__defaultLocale = "en-US";
  };
  lazyGlobals(["Intl"], loadIntl);
  const onFirstUse = (proto, name, load) => {
    const first = { [name](...args) { load(); return proto[name].apply(this, args); } }[name];
    Object.defineProperty(proto, name, hidden(first));
  };
  for (const name of ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]) onFirstUse(Date.prototype, name, loadIntl);
  onFirstUse(Number.prototype, "toLocaleString", loadIntl);
  Object.defineProperty(String.prototype, "localeCompare", hidden({
    localeCompare(that, locales, options) {
      if (this === null || this === undefined) throw new TypeError("String.prototype.localeCompare called on null or undefined");
      const C = Collator();
      return new C(locales, options).compare(String(this), String(that));
    },
  }.localeCompare));

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

  Object.assign(globalThis, { fetch, Headers, Request, Response, console, require, process, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, atob, btoa, TextEncoder, TextDecoder, display, performance });
  return {
    fire(id) { const fn = timers.get(id); timers.delete(id); if (fn) fn(); },
    setEnv(json) { process.env = JSON.parse(json); process.exitCode = undefined; exitSignal.exited = false; },
    exitSignal,
    inspect,
  };
})()
`;

/** Rewrites static imports of the built-in modules into `require` calls, so that code using
 * `import fs from "node:fs"` can still run as a script (which keeps the last expression's value
 * and global state between runs). Other imports are left alone and fail with a clear error. */
export function rewriteImports(code: string): string {
  return code.replace(
    /^[ \t]*import\s+([\w$]+\s*,\s*)?(\*\s+as\s+[\w$]+|\{[^}]*\}|[\w$]+)\s+from\s+["'](?:node:)?(fs|fs\/promises|path)["'];?/gm,
    (_m, first: string | undefined, binding: string, mod: string) => {
      const req = `require(${JSON.stringify(mod)})`;
      const bind = (b: string) =>
        b.startsWith("*")
          ? `var ${b.replace(/^\*\s+as\s+/, "")} = ${req};`
          : b.startsWith("{")
            ? `var ${b.replace(/\s+as\s+/g, ": ")} = ${req};`
            : `var ${b} = ${req};`;
      return (first ? bind(first.replace(/\s*,\s*$/, "")) : "") + bind(binding.trim());
    },
  );
}

// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// fetch and its classes, the polyfilled globals loaded on first use (Intl among them), Date and
// Error where QuickJS differs from V8, unhandled rejections, and the DOM's events and Blob.

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
const evalGlobal = globalThis.eval;
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
  for (const [proto, names] of /** @type {[object, string[]][]} */ ([[Number.prototype, ["toLocaleString"]], [BigInt.prototype, ["toLocaleString"]], [Date.prototype, ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]]])) {
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
const INTL_LOCALES = facts.intlLocales;
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
for (const [cls, tag] of /** @type {[Function, string][]} */ ([[Event, "Event"], [EventTarget, "EventTarget"], [AbortSignal, "AbortSignal"], [AbortController, "AbortController"], [Blob, "Blob"], [CustomEvent, "CustomEvent"]]))
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: tag, configurable: true });

// @ts-check
// Part of the JavaScript prelude (prelude.ts joins this folder's files into one function body).
// The host functions taken from the global object, errors inspected as Node prints them, and
// console (with console.table).

const host = globalThis.__polybox;
delete globalThis.__polybox;
// Nothing is written once process.exit was called, even by callbacks already queued.
const write = (stream, text) => { if (!exitSignal.exited) host.out(stream, text); };

// Node's own util.inspect and util.format (node-inspect-extracted, evaluated just before this
// prelude), so console output and values look as they do under Node. (Cast: to the checker,
// `util` names the prelude's own module, below.)
const nodeUtil = /** @type {NodeUtil} */ (/** @type {any} */ (globalThis).util);
delete (/** @type {any} */ (globalThis).util);
// What Node's inspect asks V8 and the bundle cannot (engine.ts): a proxy's target, and the
// entries a Map or Set iterator has left. The prelude answers both (below).
const inspectHooks = nodeUtil.__hooks;
delete nodeUtil.__hooks;
const inspect = (value) => nodeUtil.inspect(value);
// QuickJS's `stack` holds only the frames; Node's starts with "Name: message", and so does
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

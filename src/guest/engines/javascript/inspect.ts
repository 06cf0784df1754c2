// Worker side: node-inspect-extracted, Node's util.inspect and util.format packaged for other
// runtimes, as the JavaScript engine evaluates it in each new context before the prelude: its
// source read once per worker, edited to print as Node 20 does, wrapped to run on QuickJS.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * Node's util.inspect and util.format for other runtimes, read once per worker, at boot. It
 * collects the intrinsics it uses at load, `Atomics` among them, which QuickJS lacks: a stand-in
 * lives exactly as long as that takes. It also checks values against `URL`, which QuickJS lacks
 * too: a private class of that name, which no value is an instance of, answers it. A promise's
 * state, which Node's inspect reads from V8, it reads from QuickJS through the host; a proxy's
 * target and an iterator's entries, from the prelude through `hooks`.
 */
export const INSPECT_SOURCE = `(function (URL, promiseState) {
  const stub = typeof Atomics === "undefined";
  if (stub) globalThis.Atomics = {};
  const hooks = { proxy: () => undefined, preview: (value, isIterator) => (isIterator ? [[], false] : []) };
  try {
${asNode20(readFileSync(createRequire(import.meta.url).resolve("node-inspect-extracted"), "utf8"))}
    Object.defineProperty(globalThis.util, "__hooks", { value: hooks, configurable: true });
  } finally {
    if (stub) delete globalThis.Atomics;
  }
}).call(globalThis, class URL {}, globalThis.__polybox.promiseState)`;

/**
 * node-inspect-extracted follows a newer Node than 20 in two places: it prints an ArrayBuffer's
 * and a DataView's byteLength (byteOffset, buffer) in brackets, as hidden properties, where Node
 * 20 prints them as plain keys (typed arrays' keep their brackets under showHidden in both); and
 * it prints a symbol key bare, where Node 20 puts it in brackets (`[Symbol(k)]: 1`).
 * Each edit must apply, so a new release of the package fails the build instead of drifting.
 */
function asNode20(source: string): string {
  // The bundle's own template literals, matched and replaced as text.
  const edits: [string, string][] = [
    ["return n+`{ [byteLength]: ${", "return n+`{ byteLength: ${"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the bundle's text
    ['`${t.stylize(`[${r}]`,"string")}: ${i}`', '`${an(e)?t.stylize(`[${r}]`,"string"):r}: ${i}`'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the bundle's text
    ['s=t.stylize(e,"symbol")}', 's=`[${t.stylize(e,"symbol")}]`}'],
    // A proxy prints as its target, and a Map's or Set's iterator lists what it has left: the
    // prelude answers what the package would ask V8 (its `hooks`, above).
    ["getProxyDetails:y.getProxyDetails", "getProxyDetails:(t,e)=>hooks.proxy(t,e)"],
    ["previewEntries:t=>[[],!1]", "previewEntries:(t,e)=>hooks.preview(t,e)"],
    // Node 20 prints a proxy as its target alone; later releases wrap it in "Proxy(...)".
    ["if(0!==s)for(let e=0;e<s;e++)u=", "if(0!==s&&!1)for(let e=0;e<s;e++)u="],
    // Settled promises print their value, as `Promise { 5 }` (the package has no engine to ask).
    [
      "getPromiseDetails:()=>[g,void 0]",
      "getPromiseDetails:(t)=>{const s=promiseState(t);return s[0]===1?[0,s[1]]:s[0]===2?[h,s[1]]:[g,void 0]}",
    ],
  ];
  for (const [from, to] of edits) {
    if (!source.includes(from))
      throw new Error(`node-inspect-extracted changed: ${from} not found`);
    source = source.replace(from, to);
  }
  return source;
}

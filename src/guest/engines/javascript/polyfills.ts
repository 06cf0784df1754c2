// Worker side: the sources of the globals QuickJS lacks, which the prelude evaluates in a context
// the first time guest code touches one of them (so a context that never uses `Intl` never pays
// for it). `web` (URL, URLSearchParams, structuredClone: core-js), `intl` (ECMA-402 with en
// data: FormatJS), `intl-<locale>` (another locale's data, loaded when a program names it) and
// `node` (Buffer, events, path, querystring, string_decoder, hashes: their npm ports) are
// bundled at build time by wasm/polyfills.mjs into dist/, next to this file; `collator` is
// polybox's own (no maintained Intl.Collator polyfill exists).

import { readFileSync } from "node:fs";
import { INTL_LOCALES } from "./prelude.js";

/**
 * Intl.Collator for the root collation as ICU applies it to Latin text: strings compare by their
 * letters first (accents and case ignored, digit runs by value when `numeric`), then by accents
 * (unaccented first), then by case (lower case first). Evaluates to the class.
 */
const COLLATOR_SOURCE = String.raw`(() => {
  const MARKS = /\p{M}/gu;
  const PUNCT = /[\p{P}\p{S}\s]/gu;
  const split = (s, numeric) => (numeric ? s.match(/\d+|\D+/g) || [] : [s]);
  const cmpText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const cmpRuns = (a, b, numeric) => {
    const x = split(a, numeric), y = split(b, numeric);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const p = x[i], q = y[i];
      let r;
      if (numeric && /^\d/.test(p) && /^\d/.test(q)) {
        const u = p.replace(/^0+(?=\d)/, ""), v = q.replace(/^0+(?=\d)/, "");
        r = u.length - v.length || cmpText(u, v);
      } else r = cmpText(p, q);
      if (r) return r < 0 ? -1 : 1;
    }
    return Math.sign(x.length - y.length);
  };
  const caseKey = (s) => [...s].map((c) => (c === c.toLowerCase() ? "0" : "1")).join("");
  class Collator {
    constructor(locales, options) {
      const o = options === undefined ? {} : Object(options);
      const usage = o.usage === undefined ? "sort" : String(o.usage);
      const sensitivity = o.sensitivity === undefined ? "variant" : String(o.sensitivity);
      if (!["base", "accent", "case", "variant"].includes(sensitivity))
        throw new RangeError("Value " + sensitivity + " out of range for Intl.Collator options property sensitivity");
      const list = locales === undefined ? [] : typeof locales === "string" ? [locales] : [...locales];
      const locale = list.length ? String(list[0]) : "en-US";
      this._o = {
        locale: /^en\b/.test(locale) ? locale : "en-US",
        usage, sensitivity,
        ignorePunctuation: Boolean(o.ignorePunctuation),
        collation: "default",
        numeric: Boolean(o.numeric),
        caseFirst: o.caseFirst === undefined ? "false" : String(o.caseFirst),
      };
      const compare = (a, b) => this._compare(String(a), String(b));
      Object.defineProperty(this, "compare", { get: () => compare, configurable: true });
    }
    _compare(a, b) {
      const { sensitivity, numeric, ignorePunctuation, caseFirst } = this._o;
      let x = a.normalize("NFD"), y = b.normalize("NFD");
      if (ignorePunctuation) { x = x.replace(PUNCT, ""); y = y.replace(PUNCT, ""); }
      const bx = x.replace(MARKS, ""), by = y.replace(MARKS, "");
      const primary = cmpRuns(bx.toLowerCase(), by.toLowerCase(), numeric);
      if (primary) return primary;
      if (sensitivity === "accent" || sensitivity === "variant") {
        const secondary = cmpRuns(x.toLowerCase(), y.toLowerCase(), numeric);
        if (secondary) return secondary;
      }
      if (sensitivity === "case" || sensitivity === "variant") {
        const tertiary = cmpText(caseKey(bx), caseKey(by));
        if (tertiary) return caseFirst === "upper" ? -tertiary : tertiary;
      }
      return 0;
    }
    resolvedOptions() { return { ...this._o }; }
    static supportedLocalesOf(locales) { return (typeof locales === "string" ? [locales] : [...(locales || [])]).filter((l) => /^en\b/.test(l)); }
  }
  Object.defineProperty(Collator.prototype, Symbol.toStringTag, { value: "Intl.Collator", configurable: true });
  return Collator;
})()`;

const BUNDLES = new Set(["web", "intl", "node", ...INTL_LOCALES.map((l) => `intl-${l}`)]);

const cache = new Map<string, string>();

/** The source of one polyfill, read once per worker; throws for a name that is not one. */
export function polyfillSource(name: string): string {
  if (name === "collator") return COLLATOR_SOURCE;
  if (!BUNDLES.has(name)) throw new Error(`no polyfill named ${name}`);
  let source = cache.get(name);
  if (source === undefined) {
    source = readFileSync(new URL(`./polyfills/${name}.js`, import.meta.url), "utf8");
    cache.set(name, source);
  }
  return source;
}

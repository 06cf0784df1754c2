// Guest side of the JavaScript engine: source evaluated inside each QuickJS context before any
// user code, kept in real files under prelude/ (checked by `npm run lint`, copied next to this
// module by the build, read once when it loads; the engine host may read polybox's dist/). It
// builds `console`, `require`, a small `process`, and the workspace-only `fs` and `path` modules
// on top of the host functions in `__polybox`, then deletes that global so user code holds only
// what the prelude chose to give it. Evaluates to the timer-firing function and the rest the
// engine keeps. Values print as Node prints them: `util.inspect` and `util.format` come from
// node-inspect-extracted (Node's own code, packaged for other runtimes), evaluated first.

import { readFileSync } from "node:fs";
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

/** The prelude's files (prelude/), in the order they are joined: one body, one scope. */
export const PRELUDE_FILES = [
  "console.js",
  "modules.js",
  "process.js",
  "web.js",
  "errors.js",
  "program.js",
];

/**
 * The prelude as the engine evaluates it: the files joined inside one function, so that what they
 * declare stays out of the guest's reach, called with the facts it is told as data (the machine,
 * as the other languages are told it; the locales with Intl data). It evaluates to `forEngine`.
 */
export const PRELUDE_SOURCE = `((facts) => {
${PRELUDE_FILES.map((name) => readFileSync(new URL(`prelude/${name}`, import.meta.url), "utf8")).join("\n")}
return forEngine;
})(${JSON.stringify({ machine: MACHINE, intlLocales: INTL_LOCALES })})`;

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

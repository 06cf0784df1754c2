// Builds the polyfills the JavaScript engine loads into a QuickJS context the first time guest
// code touches a global QuickJS lacks (src/guest/engines/javascript/polyfills.ts): each is one
// self-contained script, bundled here from maintained packages, written next to the compiled
// engine in dist/. Run by `npm run build`, after tsc.
import { mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist", "guest", "engines", "javascript", "polyfills");
mkdirSync(out, { recursive: true });

const BUNDLES = {
  // WHATWG URL and URLSearchParams, and the HTML structured clone algorithm: core-js's.
  web: [
    'import "core-js/stable/url";',
    'import "core-js/stable/url-search-params";',
    'import "core-js/stable/structured-clone";',
  ].join("\n"),
  // ECMA-402 for the en locale: FormatJS's polyfills (which also put Number's and Date's
  // toLocaleString family on top of them), and their en data.
  intl: [
    'import "@formatjs/intl-getcanonicallocales/polyfill-force.js";',
    'import "@formatjs/intl-locale/polyfill-force.js";',
    'import "@formatjs/intl-pluralrules/polyfill-force.js";',
    'import "@formatjs/intl-pluralrules/locale-data/en.js";',
    'import "@formatjs/intl-numberformat/polyfill-force.js";',
    'import "@formatjs/intl-numberformat/locale-data/en.js";',
    'import "@formatjs/intl-datetimeformat/polyfill-force.js";',
    'import "@formatjs/intl-datetimeformat/locale-data/en.js";',
  ].join("\n"),
};

// CLDR puts a narrow no-break space before "AM"/"PM"; Node's ICU data keeps a plain space there
// (as browsers do), so the en date formats get it back.
const plainSpaces = {
  name: "plain-spaces-in-en-times",
  setup(b) {
    b.onLoad({ filter: /intl-datetimeformat[\\/]locale-data[\\/]en\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, "utf8")).replaceAll("\\u202F", " ").replaceAll("\u202f", " "),
      loader: "js",
    }));
  },
};

for (const [name, contents] of Object.entries(BUNDLES)) {
  await build({
    stdin: { contents, resolveDir: root, sourcefile: `${name}-polyfills.js` },
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    legalComments: "none",
    outfile: path.join(out, `${name}.js`),
    logLevel: "warning",
    plugins: [plainSpaces],
  });
}

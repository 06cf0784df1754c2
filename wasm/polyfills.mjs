// Builds the polyfills the JavaScript engine loads into a QuickJS context the first time guest
// code touches a global QuickJS lacks (src/guest/engines/javascript/polyfills.ts): each is one
// self-contained script, bundled here from maintained packages, written next to the compiled
// engine in dist/. Run by `npm run build`, after tsc.
import { existsSync, mkdirSync } from "node:fs";
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
  // Node's built-in modules that have a maintained port for other runtimes: Buffer (the
  // \`buffer\` package, what bundlers put in Node's place), EventEmitter (\`events\`), path.posix
  // (\`path-browserify\`, Node's own code), querystring (\`querystring-es3\`), StringDecoder
  // (\`string_decoder\`, Node's own code) and the hashes behind crypto.createHash/createHmac
  // (\`@noble/hashes\`, audited pure JS). The prelude builds the modules on top of them.
  node: [
    'import { Buffer, kMaxLength, constants } from "buffer";',
    'import EventEmitter from "events";',
    'import path from "path-browserify";',
    'import querystring from "querystring-es3";',
    'import { StringDecoder } from "string_decoder";',
    'import { md5, sha1, ripemd160 } from "@noble/hashes/legacy.js";',
    'import { sha224, sha256, sha384, sha512 } from "@noble/hashes/sha2.js";',
    'import { sha3_256, sha3_512 } from "@noble/hashes/sha3.js";',
    'import { hmac } from "@noble/hashes/hmac.js";',
    'import { pbkdf2 } from "@noble/hashes/pbkdf2.js";',
    "globalThis.__polyboxNode = { Buffer, kMaxLength, constants, EventEmitter, path, querystring, StringDecoder, hmac, pbkdf2,",
    '  hashes: { md5, sha1, ripemd160, rmd160: ripemd160, sha224, sha256, sha384, sha512, "sha3-256": sha3_256, "sha3-512": sha3_512 } };',
  ].join("\n"),
  // ECMA-402 for the en locale: FormatJS's polyfills (which also put Number's and Date's
  // toLocaleString family on top of them), and their en data. Other locales' data is in one
  // bundle per locale (LOCALES below), loaded the first time a program names that locale.
  intl: [
    'import "@formatjs/intl-getcanonicallocales/polyfill-force.js";',
    'import "@formatjs/intl-locale/polyfill-force.js";',
    'import "@formatjs/intl-pluralrules/polyfill-force.js";',
    'import "@formatjs/intl-pluralrules/locale-data/en.js";',
    'import "@formatjs/intl-numberformat/polyfill-force.js";',
    'import "@formatjs/intl-numberformat/locale-data/en.js";',
    'import "@formatjs/intl-datetimeformat/polyfill-force.js";',
    'import "@formatjs/intl-datetimeformat/locale-data/en.js";',
    'import "@formatjs/intl-relativetimeformat/polyfill-force.js";',
    'import "@formatjs/intl-relativetimeformat/locale-data/en.js";',
    'import "@formatjs/intl-listformat/polyfill-force.js";',
    'import "@formatjs/intl-listformat/locale-data/en.js";',
  ].join("\n"),
};

/** The locales with data besides en; keep in step with INTL_LOCALES in prelude.ts. */
const LOCALES = ["de", "fr", "es", "it", "pt", "nl", "ja", "zh", "ko", "ru", "en-GB", "en-IN"];
const INTL_PACKAGES = ["pluralrules", "numberformat", "datetimeformat", "relativetimeformat", "listformat"];
for (const locale of LOCALES) {
  BUNDLES[`intl-${locale}`] = INTL_PACKAGES.filter((p) =>
    existsSync(path.join(root, "node_modules", "@formatjs", `intl-${p}`, "locale-data", `${locale}.js`)),
  )
    .map((p) => `import "@formatjs/intl-${p}/locale-data/${locale}.js";`)
    .join("\n");
}

// CLDR puts a narrow no-break space before "AM"/"PM"; Node's ICU data keeps a plain space there
// (as browsers do), so the en date formats (en, en-GB, en-IN) get it back.
const plainSpaces = {
  name: "plain-spaces-in-en-times",
  setup(b) {
    b.onLoad({ filter: /intl-datetimeformat[\\/]locale-data[\\/]en(-[A-Z]+)?\.js$/ }, async (args) => ({
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
    // Classes keep their names: Node prints an EventEmitter as "EventEmitter { ... }".
    keepNames: name === "node",
    plugins: [plainSpaces],
  });
}

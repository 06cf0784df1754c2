// Guest code written in other languages than TypeScript: the Python runner, the JavaScript prelude
// and the native agent's drivers, kept in real .py, .sh, .js and .cjs files under src/guest/ so
// that tools read them (tsc compiles no .js there: tsconfig.guest.json type-checks the prelude).
//   node wasm/guest-sources.mjs          copies them into dist/guest/, next to the compiled
//                                           modules that read them (`npm run build`, after tsc)
//   node wasm/guest-sources.mjs --check  checks them (`npm run lint`): Python compiled by
//                                           python3 with warnings as errors, Bash parsed by
//                                           `bash -n`, the Node driver by `node --check`,
//                                           the prelude's .js parsed as classic scripts
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.join(root, "src", "guest");
const dist = path.join(root, "dist", "guest");

/** How each kind of file is checked: the commands to run, given the files of that kind. */
const CHECKS = {
  ".py": (files) => [["python3", ["-W", "error", "-c", COMPILE_ALL, ...files]]],
  ".sh": (files) => files.map((file) => ["bash", ["-n", file]]),
  ".cjs": (files) => files.map((file) => [process.execPath, ["--check", file]]),
  // Not `node --check`, which takes a .js file here for an ES module (package.json's "type"):
  // the prelude is a classic script, in sloppy mode, each of its files one on its own too.
  ".js": (files) => [[process.execPath, ["-e", PARSE_SCRIPTS, ...files]]],
};
/** Parses each file named as a classic script, as QuickJS's evalCode takes the prelude. */
const PARSE_SCRIPTS = [
  'const { readFileSync } = require("node:fs");',
  'const { Script } = require("node:vm");',
  "let failed = false;",
  "for (const name of process.argv.slice(1)) {",
  '  try { new Script(readFileSync(name, "utf8"), { filename: name }); }',
  "  catch (e) { failed = true; console.error(name + ': ' + e.message); }",
  "}",
  "process.exit(failed ? 1 : 0);",
].join("\n");
/** What `python3 -m py_compile` checks (every file, each error shown), writing no __pycache__. */
const COMPILE_ALL = [
  "import sys, traceback",
  "failed = False",
  "for name in sys.argv[1:]:",
  "    try:",
  "        with open(name, encoding='utf-8') as f:",
  "            compile(f.read(), name, 'exec')",
  "    except (SyntaxError, SyntaxWarning, ValueError) as e:",
  "        failed = True",
  "        sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))",
  "sys.exit(1 if failed else 0)",
].join("\n");

const files = readdirSync(src, { recursive: true })
  .map(String)
  .filter((file) => Object.hasOwn(CHECKS, path.extname(file)))
  .sort();

if (process.argv.includes("--check")) {
  let failed = false;
  for (const [ext, check] of Object.entries(CHECKS)) {
    const ofKind = files.filter((f) => path.extname(f) === ext).map((f) => path.join(src, f));
    if (ofKind.length === 0) continue;
    for (const [command, args] of check(ofKind)) {
      const result = spawnSync(command, args, { stdio: "inherit" });
      if (result.error) console.error(`${command}: ${result.error.message}`);
      if (result.status !== 0) failed = true;
    }
  }
  process.exit(failed ? 1 : 0);
}

for (const file of files) {
  mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  copyFileSync(path.join(src, file), path.join(dist, file));
}

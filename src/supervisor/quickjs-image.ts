// Trusted side: the cached QuickJS boot image (see src/guest/engines/javascript/boot-image.ts), a
// fresh JavaScript interpreter's memory right after polybox's set-up, which every new interpreter
// restores instead of evaluating node-inspect and the prelude. Built by a process that runs no
// guest code (make-quickjs-image.js, under the permission model like the Python snapshot's
// builder), kept in the cache directory with a sha256 sidecar, and keyed by everything it is
// made of: the QuickJS module's bytes, quickjs-emscripten's version, node-inspect's source and
// the engine's compiled code and the prelude's files. An image of another key is never used.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type LogFn, silentLog } from "../core/log.js";
import { DIST_DIR, QUICKJS_WASM } from "./assets.js";
import { bootCacheDir, ensureCached, runBuilder } from "./snapshot.js";

const require = createRequire(import.meta.url);

/** What the image is made of: a change to any of these files makes another image. */
function imageInputs(): string[] {
  const engineDir = path.join(DIST_DIR, "guest", "engines", "javascript");
  return [
    QUICKJS_WASM,
    require.resolve("quickjs-emscripten/package.json"),
    require.resolve("node-inspect-extracted"),
    // Every module of the engine and every file the build put beside them (the prelude's files,
    // the polyfill bundles): what it evaluates and the host functions it registers (their order
    // gives the ids the image's functions carry) are in the image. Read from the folder, so that a
    // module added later is part of the key without anyone listing it; sorted, for a stable key.
    // Not the Intl bundles of other locales (3.3 MB of the 4.6): a run loads one when its program
    // names that locale, after the image was taken.
    ...readdirSync(engineDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".js") && !/(^|[\\/])polyfills[\\/]intl-[^\\/]+\.js$/.test(f))
      .sort()
      .map((f) => path.join(engineDir, f)),
    path.join(DIST_DIR, "guest", "engine-host", "make-quickjs-image.js"),
  ];
}

export function quickjsImageKey(): string {
  const hash = createHash("sha256");
  for (const file of imageInputs()) hash.update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

/** The path of a verified boot image, building it first if needed; null if it cannot be built. */
export async function ensureQuickjsImage(
  cacheDir: string,
  log: LogFn = silentLog,
): Promise<string | null> {
  let key: string;
  try {
    key = quickjsImageKey();
  } catch (error) {
    log("warn", "cannot name the QuickJS boot image; JavaScript will boot slowly", String(error));
    return null;
  }
  const name = `quickjs-${key.slice(0, 24)}.image`;
  return ensureCached({
    file: path.join(bootCacheDir(cacheDir), name),
    expected: { key },
    what: "QuickJS boot image",
    consequence: "JavaScript will boot slowly",
    build: (out) => runBuilder("make-quickjs-image.js", [QUICKJS_WASM, out], out),
    log,
  });
}

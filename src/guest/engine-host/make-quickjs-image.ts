// Builds the QuickJS boot image that every JavaScript interpreter restores instead of evaluating
// its set-up (see engines/javascript/boot-image.ts). Run as its own short-lived process by the
// trusted side (src/supervisor/quickjs-image.ts), under the permission model with write access to
// the output file only. No guest code ever runs here: the image is a fresh interpreter's state
// right after node-inspect and the prelude.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { MessageChannel } from "node:worker_threads";
import { createEngine } from "../engines/javascript/engine.js";

const [quickjsWasm, outFile] = process.argv.slice(2);
if (!quickjsWasm || !outFile) {
  process.stderr.write("usage: make-quickjs-image QUICKJS_WASM OUT_FILE\n");
  process.exit(2);
}
// The same module, and the same name for its build, as an engine host's (engine-host/main.ts).
const bytes = readFileSync(quickjsWasm);
const channel = new MessageChannel();
let image: Uint8Array | undefined;
const engine = await createEngine(
  {
    language: "javascript",
    memoryMb: 256,
    assets: {
      pyodideDir: "",
      quickjsWasm: await WebAssembly.compile(bytes),
      quickjsBuild: createHash("sha256").update(bytes).digest("hex").slice(0, 32),
    },
    net: { signal: new SharedArrayBuffer(4), port: channel.port2 },
  },
  undefined,
  (taken) => {
    image = taken;
  },
);
engine.dispose?.();
channel.port1.close();
if (!image) throw new Error("the engine took no boot image");
writeFileSync(outFile, image);

// Builds the Linux launcher (native/build/polybox-jail) during `npm ci`/`npm install`. Elsewhere,
// or without a C compiler, it says why it skipped: native isolation is then unavailable, and the
// WASM engines work as before. A failed build on Linux is reported but does not fail the install.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

function skip(reason) {
  process.stderr.write(`polybox: native launcher not built: ${reason}\n`);
}

if (process.platform !== "linux") {
  skip(`it is for Linux only (this is ${process.platform})`);
} else if (spawnSync("make", ["--version"], { stdio: "ignore" }).status !== 0) {
  skip("make was not found");
} else if (spawnSync(process.env.CC || "cc", ["--version"], { stdio: "ignore" }).status !== 0) {
  skip("no C compiler (cc) was found");
} else {
  const result = spawnSync("make", ["-C", here, "--no-print-directory"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (result.status !== 0) skip(`make failed (exit ${result.status})`);
}

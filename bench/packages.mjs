// What fetching a Python package costs on the trusted side, from a loopback stand-in for the
// Pyodide CDN (a distribution whose lock file names a 1 MiB and a 20 MiB wheel): a cold fetch
// (download, sha256 against the lock file, write to the cache), a warm one from the cache (read,
// sha256 again), the same under cachedOnly, and the first and later questions to the machine's
// python3 about its wheel tags (native mode asks once per process). The wheels' bytes are random:
// the resolver checks hashes, never unpacks. `npm run build` first.

import { createHash, randomFillSync } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PackageResolver } from "../dist/core/packages/packages.js";
import { parseRequirement } from "../dist/core/packages/requirements.js";
import { interpreterTags } from "../dist/supervisor/python-tags.js";
import { summarize } from "./lib/stats.mjs";

const ROUNDS = 5;
const pyodide = path.dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
const realLock = JSON.parse(readFileSync(path.join(pyodide, "pyodide-lock.json"), "utf8"));
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-bench-packages-"));
const served = path.join(tmp, "full");
const distribution = path.join(tmp, "pyodide");
mkdirSync(served);
mkdirSync(distribution);
cpSync(path.join(pyodide, "package.json"), path.join(distribution, "package.json"));

const sizes = { "bench-small": 1, "bench-large": 20 };
const packages = {};
for (const [name, mib] of Object.entries(sizes)) {
  const data = randomFillSync(Buffer.alloc(mib * 1024 ** 2));
  const fileName = `${name.replace("-", "_")}-1.0-py3-none-any.whl`;
  writeFileSync(path.join(served, fileName), data);
  packages[name] = {
    ...realLock.packages.micropip,
    name,
    version: "1.0",
    file_name: fileName,
    sha256: createHash("sha256").update(data).digest("hex"),
    depends: [],
    imports: [name.replace("-", "_")],
  };
}
writeFileSync(
  path.join(distribution, "pyodide-lock.json"),
  JSON.stringify({ info: realLock.info, packages }),
);

const server = http.createServer((req, res) => {
  res.end(readFileSync(path.join(served, path.basename(req.url ?? ""))));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const cdn = `http://127.0.0.1:${server.address().port}/full/`;

const resolver = (cacheDir, cachedOnly = false) =>
  new PackageResolver({
    sources: [],
    cacheDir,
    pyodideDir: distribution,
    pyodideCdn: cdn,
    cachedOnly,
  });

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const rows = [];
try {
  for (const [name, mib] of Object.entries(sizes)) {
    const requirement = [parseRequirement(name)];
    const cold = [];
    const warm = [];
    const offline = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
      cold.push(await timed(() => resolver(cacheDir).resolve(requirement)));
      warm.push(await timed(() => resolver(cacheDir).resolve(requirement)));
      offline.push(await timed(() => resolver(cacheDir, true).resolve(requirement)));
    }
    rows.push([`${name} (${mib} MiB): download + check + cache`, summarize(cold)]);
    rows.push([`${name} (${mib} MiB): from the cache`, summarize(warm)]);
    rows.push([`${name} (${mib} MiB): from the cache, cachedOnly`, summarize(offline)]);
  }
  // The answer is remembered per path: spellings of one path are each a first question.
  const spellings = [
    "/usr/bin/python3",
    "/usr/bin//python3",
    "/usr//bin/python3",
    "//usr/bin/python3",
    "/usr/./bin/python3",
  ];
  try {
    const first = [];
    const again = [];
    for (const p of spellings) {
      first.push(await timed(() => interpreterTags(p)));
      again.push(await timed(() => interpreterTags(p)));
    }
    rows.push(["wheel tags of /usr/bin/python3: first question", summarize(first)]);
    rows.push(["wheel tags of /usr/bin/python3: asked again", summarize(again)]);
  } catch (error) {
    console.log(`wheel tags of /usr/bin/python3 unavailable: ${error.message}`);
  }
} finally {
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}

const width = Math.max(...rows.map(([label]) => label.length));
console.log("Python packages on the trusted side (loopback CDN stand-in)");
console.log(`${"".padEnd(width)}  ${"median".padStart(9)}  ${"p95".padStart(9)}  runs`);
for (const [label, s] of rows)
  console.log(
    `${label.padEnd(width)}  ${`${s.median_ms.toFixed(1)} ms`.padStart(9)}  ${`${s.p95_ms.toFixed(1)} ms`.padStart(9)}  ${s.runs}`,
  );

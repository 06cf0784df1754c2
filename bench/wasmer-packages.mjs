// Wasmer packages by name on the wasix engine, next to the same program as a workspace module:
// the first run of a package (registry query, download, sha256 check, pin, install: a fresh
// cache each time), a one-shot of a pinned package (cache hit, warm engine host waiting), and
// the next run in a booted sandbox. The registry is a loopback stand-in serving a .webc file
// written by the tests' encoder (test/helpers/webc.ts, types stripped with amaro) around a C
// program; the numbers are polybox's and the sdk's, not the network's. Interleaved, medians, p95.
//
//   npm run build && node bench/wasmer-packages.mjs   (BENCH_QUICK=1 for a short run; needs
//                                                      clang, lld and wasi-libc)

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import amaro from "amaro";
import { Runtime, run, Sandbox } from "../dist/index.js";
import { interleaved, sleep } from "./lib/stats.mjs";

const QUICK = process.env.BENCH_QUICK === "1";
const RUNS = QUICK ? 5 : 20;
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dir = mkdtempSync(path.join(tmpdir(), "polybox-bench-wasmer-"));

let program;
try {
  writeFileSync(
    path.join(dir, "hello.c"),
    '#include <stdio.h>\nint main(void) { printf("hello %d\\n", 42); return 0; }\n',
  );
  execFileSync("clang", ["--target=wasm32-wasi", "-O2", "hello.c", "-o", "hello.wasm"], {
    cwd: dir,
  });
  program = new Uint8Array(readFileSync(path.join(dir, "hello.wasm")));
} catch (error) {
  console.log(`wasmer packages benchmark skipped: cannot build the program (${error.message})`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
// The encoder is TypeScript with only type syntax to strip.
const encoderSource = readFileSync(path.join(root, "test/helpers/webc.ts"), "utf8");
const encoderFile = path.join(dir, "webc.mjs");
writeFileSync(encoderFile, amaro.transformSync(encoderSource, { mode: "strip-only" }).code);
const { encodeWebc } = await import(pathToFileURL(encoderFile).href);
const webc = encodeWebc({
  name: "bench/hello",
  version: "1.0.0",
  atoms: { hello: program },
  commands: { hello: { atom: "hello" } },
  entrypoint: "hello",
});
const sha256 = createHash("sha256").update(webc).digest("hex");

const registry = http.createServer((req, res) => {
  if (req.method === "POST") {
    req.resume();
    req.on("end", () => {
      const url = `http://127.0.0.1:${registry.address().port}/${sha256}.webc`;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          data: {
            getPackageVersion: {
              version: "1.0.0",
              v3: null,
              v2: { piritaDownloadUrl: url, piritaSha256Hash: sha256 },
            },
          },
        }),
      );
    });
  } else res.end(webc);
});
await new Promise((resolve) => registry.listen(0, "127.0.0.1", resolve));
const wasmerRegistry = `http://127.0.0.1:${registry.address().port}/graphql`;

const check = (what, r) => {
  if (r.stdout !== "hello 42\n") throw new Error(`${what}: ${JSON.stringify(r)}`);
};
const pool = { python: 0, javascript: 0, bash: 0, typescript: 0, wasm: 0, wasix: 1 };
const common = { pool, pythonSnapshot: false, wasmerRegistry };
const runtime = await Runtime.create({ ...common, cacheDir: path.join(dir, "cache") });
const rows = [];
try {
  await sleep(5_000);
  // First run of a package: each in a runtime whose cache is empty (created outside the timing).
  let fresh = null;
  let n = 0;
  const firstRuns = await interleaved(
    {
      first_package_run: {
        before: async () => {
          await fresh?.close();
          fresh = await Runtime.create({ ...common, cacheDir: path.join(dir, `fresh-${n++}`) });
          await sleep(3_000);
        },
        run: async () =>
          check(
            "first",
            await run({
              language: "wasix",
              code: "",
              wasmerPackage: "bench/hello@1.0.0",
              runtime: fresh,
            }),
          ),
      },
    },
    QUICK ? 3 : 8,
  );
  await fresh?.close();
  // Fill the pin, then one-shots: the package from the cache, and the module as bytes.
  check(
    "fill",
    await run({ language: "wasix", code: "", wasmerPackage: "bench/hello@1.0.0", runtime }),
  );
  const oneShots = await interleaved(
    {
      package: async () =>
        check(
          "package",
          await run({ language: "wasix", code: "", wasmerPackage: "bench/hello@1.0.0", runtime }),
        ),
      module: async () =>
        check(
          "module",
          await run({
            language: "wasix",
            code: "hello.wasm",
            files: { "hello.wasm": program },
            runtime,
          }),
        ),
    },
    RUNS,
    3_000,
  );
  const sb = await Sandbox.create({ runtime });
  await sb.files.write("hello.wasm", program);
  check("boot", await sb.run("wasix", "", { wasmerPackage: "bench/hello@1.0.0" }));
  check("boot", await sb.run("wasix", "hello.wasm"));
  const again = await interleaved(
    {
      package: async () =>
        check("package", await sb.run("wasix", "", { wasmerPackage: "bench/hello@1.0.0" })),
      module: async () => check("module", await sb.run("wasix", "hello.wasm")),
    },
    RUNS,
  );
  await sb.close();
  rows.push({
    case: "first run of a package (query, download, check, pin, install)",
    package_median_ms: firstRuns.first_package_run.median_ms,
    package_p95_ms: firstRuns.first_package_run.p95_ms,
    module_median_ms: null,
    module_p95_ms: null,
    runs: firstRuns.first_package_run.runs,
  });
  for (const [name, result] of [
    ["one-shot, pinned package / module as bytes, warm host", oneShots],
    ["next run in a booted sandbox", again],
  ])
    rows.push({
      case: name,
      package_median_ms: result.package.median_ms,
      package_p95_ms: result.package.p95_ms,
      module_median_ms: result.module.median_ms,
      module_p95_ms: result.module.p95_ms,
      runs: result.package.runs,
    });
} finally {
  await runtime.close();
  registry.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`webc: ${webc.length} bytes, module: ${program.length} bytes`);
console.table(rows);

// CLI: `polybox warmup`. Builds (or verifies) the Python memory snapshot and the QuickJS boot
// image so that the first server start is fast, and with `--python-packages=numpy,pandas` fills the package cache ahead of time
// (lock-file dependencies included) so that the machine can go offline and serve with
// `--cached-only`. Here `--python-packages` names the packages to cache; the directories and
// index URLs among its items are where to find them, as they are for a server.

import path from "node:path";
import { stderrLog } from "../core/log.js";
import { Runtime } from "../runtime.js";
import { ensureQuickjsImage } from "../supervisor/quickjs-image.js";
import { defaultCacheDir, ensurePythonSnapshot } from "../supervisor/snapshot.js";
import type { Flags } from "./args.js";

/** A package source (a directory or an index URL) rather than a requirement. */
const isSource = (item: string) =>
  /^https?:\/\//.test(item) || item.includes("/") || item.includes(path.sep) || item === ".";

export async function warmupCommand(flags: Flags): Promise<number> {
  const started = performance.now();
  const [file, image] = await Promise.all([
    ensurePythonSnapshot(defaultCacheDir(), stderrLog),
    ensureQuickjsImage(defaultCacheDir(), stderrLog),
  ]);
  if (!file || !image) return 1;
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`Python snapshot ready in ${ms} ms: ${file}\n`);
  process.stdout.write(`QuickJS boot image ready: ${image}\n`);
  const sources = flags.pythonPackages.filter(isSource);
  const packages = flags.pythonPackages.filter((item) => !isSource(item));
  if (packages.length === 0) return 0;
  const native = flags.isolation === "native";
  const runtime = await Runtime.create({
    log: stderrLog,
    pythonSnapshot: false,
    isolation: native ? "native" : "wasm",
    pool: { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 },
    ...(sources.length > 0 ? { pythonPackages: sources } : {}),
    ...(flags.pyodideCdn !== undefined ? { pyodideCdn: flags.pyodideCdn } : {}),
    ...(flags.allowPrivateIndex ? { allowPrivateIndex: true } : {}),
    ...(flags.nativePython ? { nativeInterpreters: { python: flags.nativePython } } : {}),
  });
  try {
    const cached = await runtime.cachePackages(packages, { engine: native ? "native" : "wasm" });
    for (const w of cached) process.stdout.write(`cached ${w.name} ${w.version} (${w.fileName})\n`);
    process.stdout.write(
      `${cached.length} Python package${cached.length === 1 ? "" : "s"} cached for ${native ? "the machine's python3" : "Pyodide"}\n`,
    );
    return 0;
  } finally {
    await runtime.close();
  }
}

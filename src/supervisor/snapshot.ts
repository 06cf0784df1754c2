// Trusted side: the cached Pyodide memory snapshot (and the cache every boot image shares). Built once per Pyodide version (and Node
// major, whose V8 the snapshot's JS side must match), kept in the per-user cache directory with
// a sidecar recording its sha256. A snapshot whose hash, size or version does not match is
// rebuilt, never trusted.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { type LogFn, silentLog } from "../core/log.js";
import { alive } from "../core/tmp.js";
import { DIST_DIR, engineReadPaths, PYODIDE_DIR } from "./assets.js";
import { grantSpellings, permissionFlag } from "./jail/permissions.js";

export function defaultCacheDir(): string {
  const base =
    process.env.XDG_CACHE_HOME ||
    (process.platform === "darwin"
      ? path.join(os.homedir(), "Library", "Caches")
      : process.platform === "win32"
        ? (process.env.LOCALAPPDATA ?? path.join(os.homedir(), "AppData", "Local"))
        : path.join(os.homedir(), ".cache"));
  return path.join(base, "polybox");
}

function pyodideVersion(): string {
  return (
    JSON.parse(readFileSync(path.join(PYODIDE_DIR, "package.json"), "utf8")) as { version: string }
  ).version;
}

/**
 * Where the boot caches (the Python snapshot, the QuickJS boot image) live: one directory, which
 * is what the engine host is granted to read. Node 20's permission model, given two sibling file
 * grants after the engine assets' own, let the host list "/" (T16 caught it); one directory
 * grant does not.
 */
export function bootCacheDir(cacheDir: string): string {
  return path.join(cacheDir, "boot");
}

/** The read grants the engine host needs for these boot caches: their one directory. */
export function bootCacheGrants(...files: (string | null | undefined)[]): string[] {
  return [...new Set(files.filter((f): f is string => !!f).map((f) => path.dirname(f)))];
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * The files the snapshot's builder runs: its script, and the Python engine's sources module with
 * the .py files it reads (the runner among them), all of them, so that a new one is never left out.
 */
function builderFiles(): string[] {
  const python = path.join(DIST_DIR, "guest", "engines", "python");
  return [
    path.join(DIST_DIR, "guest", "engine-host", "make-snapshot.js"),
    path.join(python, "sources.js"),
    ...readdirSync(python)
      .filter((name) => name.endsWith(".py"))
      .sort()
      .map((name) => path.join(python, name)),
  ];
}

/** The path of a verified snapshot, building it first if needed; null if it cannot be built. */
export function ensurePythonSnapshot(
  cacheDir: string,
  log: LogFn = silentLog,
): Promise<string | null> {
  const expected = {
    pyodide: pyodideVersion(),
    node: process.versions.node.split(".")[0]!,
    // What the builder runs: its script and the runner, whose imports go into the snapshot.
    builder: sha256(Buffer.concat(builderFiles().map((file) => readFileSync(file)))).slice(0, 32),
  };
  const file = path.join(
    bootCacheDir(cacheDir),
    `pyodide-${expected.pyodide}-node${expected.node}-${expected.builder.slice(0, 12)}.snapshot`,
  );
  return ensureCached({
    file,
    expected,
    what: "Python snapshot",
    consequence: "Python will boot slowly",
    build: (out) => runBuilder("make-snapshot.js", [PYODIDE_DIR, out], out),
    log,
  });
}

/**
 * A file built once by a builder process and cached with a sidecar recording what it was built
 * from (`expected`), its size and its sha256. One that does not match is removed and rebuilt,
 * never trusted. Resolves with its path, or null (logged with `consequence`) if it cannot be built.
 */
export async function ensureCached(options: {
  file: string;
  expected: Record<string, string>;
  what: string;
  consequence: string;
  build: (outFile: string) => Promise<void>;
  log: LogFn;
}): Promise<string | null> {
  const { file, expected, what, log } = options;
  const sidecarFile = `${file}.json`;
  if (await verify(file, sidecarFile, expected, what, log)) {
    markUsed(sidecarFile);
    return file;
  }
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      await options.build(tmp);
      const bytes = readFileSync(tmp);
      renameSync(tmp, file);
      writeFileSync(
        sidecarFile,
        JSON.stringify({ ...expected, sha256: sha256(bytes), size: bytes.length }),
      );
    } finally {
      rmSync(tmp, { force: true });
    }
    pruneUnused(path.dirname(file), log);
    return file;
  } catch (error) {
    log("warn", `could not build the ${what}, ${options.consequence}`, String(error));
    return null;
  }
}

/**
 * How long a boot cache may go unused before a build removes it. Each build of polybox, Pyodide
 * or Node names its caches anew (31 MB for a Python snapshot), and another installation sharing
 * the directory may still use an older one: so what goes is what nobody used for this long.
 */
export const BOOT_CACHE_UNUSED_MS = 14 * 24 * 60 * 60 * 1000;

/** A build's temporary file, `<file>.<pid>.tmp`: a crashed one's is left behind. */
const BUILD_TMP = /\.(\d+)\.tmp$/;

/** A cache's last use is its sidecar's mtime (access times are often not kept). */
function markUsed(sidecarFile: string): void {
  try {
    const now = new Date();
    utimesSync(sidecarFile, now, now);
  } catch {
    // A read-only cache directory: it is then never pruned either.
  }
}

/**
 * Removes the boot caches in `dir` unused for BOOT_CACHE_UNUSED_MS (each file with its sidecar)
 * and the temporary files of builds whose process is gone (judged as the temp dirs are). Run
 * after a build, when a new cache has just been added.
 */
function pruneUnused(dir: string, log: LogFn): void {
  const now = Date.now();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const present = new Set(names);
  const removed: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const builder = Number(BUILD_TMP.exec(name)?.[1]);
      if (builder) {
        if (builder !== process.pid && !alive(builder)) {
          rmSync(file, { force: true });
          removed.push(name);
        }
      } else if (name.endsWith(".json") && present.has(name.slice(0, -".json".length))) {
        // A sidecar and its cache: the sidecar's mtime is the cache's last use.
        if (now - statSync(file).mtimeMs > BOOT_CACHE_UNUSED_MS) {
          rmSync(file.slice(0, -".json".length), { force: true });
          rmSync(file, { force: true });
          removed.push(name.slice(0, -".json".length));
        }
      }
    } catch {
      // Gone already, or another process's: left as it is.
    }
  }
  if (removed.length > 0)
    log(
      "info",
      `removed boot caches unused for ${BOOT_CACHE_UNUSED_MS / 86_400_000} days`,
      removed.join(", "),
    );
}

/**
 * Whether the cached file is the one its sidecar describes. Hashed from a stream, so that a
 * server starting beside it answers its client between chunks rather than after 31 MB.
 */
async function verify(
  file: string,
  sidecarFile: string,
  expected: Record<string, string>,
  what: string,
  log: LogFn,
): Promise<boolean> {
  if (!existsSync(file) || !existsSync(sidecarFile)) return false;
  try {
    const sidecar = JSON.parse(readFileSync(sidecarFile, "utf8")) as Record<string, unknown>;
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const ok =
      Object.entries(expected).every(([k, v]) => sidecar[k] === v) &&
      sidecar.size === size &&
      sidecar.sha256 === hash.digest("hex");
    if (!ok) {
      log("info", `the cached ${what} is stale or corrupt; rebuilding it`);
      rmSync(file, { force: true });
    }
    return ok;
  } catch {
    return false;
  }
}

/**
 * Runs `dist/guest/engine-host/<script> ...args` as the builder of `outFile`: a short-lived
 * process under the permission model that may read the engines and write that file only.
 */
export function runBuilder(script: string, scriptArgs: string[], outFile: string): Promise<void> {
  const args = [
    permissionFlag(),
    ...grantSpellings(engineReadPaths()).map((p) => `--allow-fs-read=${p}`),
    ...grantSpellings([outFile]).map((p) => `--allow-fs-write=${p}`),
    "--no-warnings",
    path.join(DIST_DIR, "guest", "engine-host", script),
    ...scriptArgs,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: {},
      stdio: ["ignore", "ignore", "pipe"],
      // As the engine hosts (wasm-host.ts): a console of its own on Windows.
      ...(process.platform === "win32" ? { detached: true, windowsHide: true } : {}),
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${script} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

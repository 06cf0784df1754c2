// Trusted side: the cached Pyodide memory snapshot. Built once per Pyodide version (and Node
// major, whose V8 the snapshot's JS side must match), kept in the per-user cache directory with
// a sidecar recording its sha256. A snapshot whose hash, size or version does not match is
// rebuilt, never trusted.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type LogFn, stderrLog } from "../core/log.js";
import { DIST_DIR, engineReadPaths, PYODIDE_DIR } from "./assets.js";
import { permissionFlag } from "./jail/permissions.js";

interface Sidecar {
  pyodide: string;
  node: string;
  sha256: string;
  size: number;
}

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

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The path of a verified snapshot, building it first if needed; null if it cannot be built. */
export async function ensurePythonSnapshot(
  cacheDir: string,
  log: LogFn = stderrLog,
): Promise<string | null> {
  const expected = { pyodide: pyodideVersion(), node: process.versions.node.split(".")[0]! };
  const file = path.join(cacheDir, `pyodide-${expected.pyodide}-node${expected.node}.snapshot`);
  const sidecarFile = `${file}.json`;
  if (verify(file, sidecarFile, expected, log)) return file;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await build(tmp);
    const bytes = readFileSync(tmp);
    renameSync(tmp, file);
    const sidecar: Sidecar = { ...expected, sha256: sha256(bytes), size: bytes.length };
    writeFileSync(sidecarFile, JSON.stringify(sidecar));
    return file;
  } catch (error) {
    log("warn", "could not build the Python snapshot, Python will boot slowly", String(error));
    return null;
  }
}

function verify(
  file: string,
  sidecarFile: string,
  expected: Omit<Sidecar, "sha256" | "size">,
  log: LogFn,
): boolean {
  if (!existsSync(file) || !existsSync(sidecarFile)) return false;
  try {
    const sidecar = JSON.parse(readFileSync(sidecarFile, "utf8")) as Sidecar;
    const bytes = readFileSync(file);
    const ok =
      sidecar.pyodide === expected.pyodide &&
      sidecar.node === expected.node &&
      sidecar.size === bytes.length &&
      sidecar.sha256 === sha256(bytes);
    if (!ok) {
      log("info", "the cached Python snapshot is stale or corrupt; rebuilding it");
      rmSync(file, { force: true });
    }
    return ok;
  } catch {
    return false;
  }
}

function build(outFile: string): Promise<void> {
  const script = path.join(DIST_DIR, "guest", "engine-host", "make-snapshot.js");
  const args = [
    permissionFlag(),
    ...engineReadPaths().map((p) => `--allow-fs-read=${p}`),
    `--allow-fs-write=${outFile}`,
    "--no-warnings",
    script,
    PYODIDE_DIR,
    outFile,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: {}, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`snapshot builder exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

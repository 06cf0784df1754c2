// The boot caches' directory does not grow without end: each build of polybox, Pyodide or Node
// names its Python snapshot (31 MB) and QuickJS image anew, so a build removes the caches nobody
// used for BOOT_CACHE_UNUSED_MS (a cache's use is its sidecar's mtime, renewed on every verified
// hit) and the temporary files of builds whose process is gone, and leaves everything else alone.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { BOOT_CACHE_UNUSED_MS, ensureCached } from "../../dist/supervisor/snapshot.js";

const DAY = 24 * 60 * 60 * 1000;
let dir: string;

beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(os.tmpdir(), "polybox-prune-")), "boot");
  mkdirSync(dir);
});
afterEach(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

/** A cache entry as ensureCached leaves one, last used `ageMs` ago. */
function entry(name: string, ageMs: number): void {
  const when = new Date(Date.now() - ageMs);
  writeFileSync(path.join(dir, name), "bytes");
  writeFileSync(path.join(dir, `${name}.json`), "{}");
  utimesSync(path.join(dir, name), when, when);
  utimesSync(path.join(dir, `${name}.json`), when, when);
}

const present = (name: string) =>
  existsSync(path.join(dir, name)) && existsSync(path.join(dir, `${name}.json`));

function build(name: string) {
  return ensureCached({
    file: path.join(dir, name),
    expected: { key: name },
    what: "test cache",
    consequence: "none",
    build: async (out) => writeFileSync(out, `built ${name}`),
    log: () => undefined,
  });
}

it("a build removes the caches unused for the limit and crashed builds' files, and keeps the rest", async () => {
  entry("pyodide-314.0.7-node20-aaaaaaaaaaaa.snapshot", BOOT_CACHE_UNUSED_MS + DAY);
  entry("quickjs-old.image", BOOT_CACHE_UNUSED_MS + DAY);
  entry("pyodide-314.0.7-node22-bbbbbbbbbbbb.snapshot", BOOT_CACHE_UNUSED_MS - DAY);
  // A build whose process is gone (a process that has exited), and one still running (this one).
  const gone = spawnSync(process.execPath, ["-e", ""]).pid;
  const crashed = path.join(dir, `quickjs-x.image.${gone}.tmp`);
  writeFileSync(crashed, "half");
  const running = path.join(dir, `quickjs-y.image.${process.pid}.tmp`);
  writeFileSync(running, "being built");
  // Not a cache (no sidecar beside it): never removed, however old.
  writeFileSync(path.join(dir, "notes.txt"), "mine");
  utimesSync(path.join(dir, "notes.txt"), new Date(0), new Date(0));

  expect(await build("pyodide-314.0.7-node20-cccccccccccc.snapshot")).toBe(
    path.join(dir, "pyodide-314.0.7-node20-cccccccccccc.snapshot"),
  );
  expect(present("pyodide-314.0.7-node20-cccccccccccc.snapshot")).toBe(true);
  expect(present("pyodide-314.0.7-node22-bbbbbbbbbbbb.snapshot")).toBe(true);
  expect(existsSync(path.join(dir, "pyodide-314.0.7-node20-aaaaaaaaaaaa.snapshot"))).toBe(false);
  expect(existsSync(path.join(dir, "pyodide-314.0.7-node20-aaaaaaaaaaaa.snapshot.json"))).toBe(
    false,
  );
  expect(existsSync(path.join(dir, "quickjs-old.image"))).toBe(false);
  expect(existsSync(crashed)).toBe(false);
  expect(existsSync(running)).toBe(true);
  expect(existsSync(path.join(dir, "notes.txt"))).toBe(true);
});

it("a verified hit marks the cache used, so an old but still used one survives the next build", async () => {
  const name = "quickjs-used.image";
  expect(await build(name)).not.toBeNull();
  const sidecar = path.join(dir, `${name}.json`);
  const old = new Date(Date.now() - BOOT_CACHE_UNUSED_MS - DAY);
  utimesSync(sidecar, old, old);
  // Found and verified (nothing is built): its sidecar's mtime is now.
  expect(await build(name)).toBe(path.join(dir, name));
  expect(Date.now() - statSync(sidecar).mtimeMs).toBeLessThan(DAY);
  await build("quickjs-other.image");
  expect(present(name)).toBe(true);
});

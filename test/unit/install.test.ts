// What `npm ci` does on a user's machine, read from package.json and the lockfile: it builds no
// benchmark-only native addon (isolated-vm, the bench's baseline, compiled for minutes where no
// prebuilt binary is reachable: the bench installs it into bench/baselines on first use), and
// it prints no warning a user must decode: no package whose engines exclude the Node it runs on
// (EBADENGINE), and no install script left out of `allowScripts` (npm 11 lists those after every
// install).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const read = (file: string) => JSON.parse(readFileSync(path.join(root, file), "utf8"));

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
}
const pkg = read("package.json") as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};
const lock = read("package-lock.json") as { packages: Record<string, LockEntry> };
const installed = Object.entries(lock.packages).filter(([where]) => where !== "");
/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
const nameOf = (where: string) => where.slice(where.lastIndexOf("node_modules/") + 13);
// semver is no dependency of polybox's; npm's own copy does not resolve from here, so the one the
// lockfile installs for patch-package (a dependency) is used.
const semver = createRequire(path.join(root, "package.json"))("semver") as {
  satisfies(version: string, range: string): boolean;
};

describe("npm ci", () => {
  it("installs no benchmark-only native addon; the bench has its own lockfile for it", () => {
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain(
      "isolated-vm",
    );
    expect(installed.map(([where]) => nameOf(where))).not.toContain("isolated-vm");
    const bench = read("bench/baselines/package-lock.json") as {
      packages: Record<string, LockEntry>;
    };
    expect(bench.packages["node_modules/isolated-vm"]?.version).toBeDefined();
  });

  it("installs nothing whose engines exclude this Node", () => {
    const node = process.versions.node;
    const excluded = installed
      // Optional packages for another OS or CPU are never installed here.
      .filter(([, e]) => !e.os || e.os.includes(process.platform))
      .filter(([, e]) => !e.cpu || e.cpu.includes(process.arch))
      .map(
        ([where, e]) => [where, e, Array.isArray(e.engines) ? undefined : e.engines?.node] as const,
      )
      .filter(([, , range]) => range && !semver.satisfies(node, range))
      .map(([where, e, range]) => `${where}@${e.version} (node ${range})`);
    expect(excluded, `EBADENGINE on Node ${node}`).toEqual([]);
  });

  it("every install script is allowed or denied in allowScripts, by name", () => {
    const policy = pkg.allowScripts ?? {};
    const unreviewed = [
      ...new Set(
        installed
          .filter(([, e]) => e.hasInstallScript)
          // Optional packages for another OS or CPU are never installed here, nor their scripts.
          .filter(([, e]) => !e.os || e.os.includes(process.platform))
          .filter(([, e]) => !e.cpu || e.cpu.includes(process.arch))
          .map(([where]) => nameOf(where))
          .filter((name) => !(name in policy)),
      ),
    ];
    expect(unreviewed).toEqual([]);
  });
});

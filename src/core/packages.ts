// Trusted side: finds Python packages for a sandbox and brings their bytes to this side; the
// guest never touches the network. Sources, in order: local directories of wheels (or a Pyodide
// distribution), then network indexes, but only on hosts granted with `--allow-net`, checked
// before any request is made. Files named in Pyodide's lock file are checked against its sha256;
// wheels from an index against the `#sha256=` its links carry. Downloads are cached per user.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { PYODIDE_DIR } from "../jail/assets.js";
import { PolyboxError } from "./errors.js";

export interface Wheel {
  name: string;
  fileName: string;
  data: Uint8Array;
  /** Where Pyodide installs it: site-packages, or the shared-library directory. */
  installDir: "site" | "dynlib";
}

interface LockPackage {
  name: string;
  file_name: string;
  sha256: string;
  depends: string[];
  imports: string[];
  install_dir: string;
  package_type: string;
}

export interface PackageOptions {
  /** Local directories (wheels or a Pyodide distribution) and index URLs, tried in order. */
  sources: string[];
  /** Hosts (`host` or `host:port`) that may be contacted. */
  allowNet: readonly string[];
  cacheDir: string;
}

export const PYODIDE_CDN = (version: string) =>
  `https://cdn.jsdelivr.net/pyodide/v${version}/full/`;

/** PEP 503 normalization: `Foo_Bar.baz` → `foo-bar-baz`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

function readLock(): { version: string; packages: Map<string, LockPackage> } {
  const lock = JSON.parse(readFileSync(path.join(PYODIDE_DIR, "pyodide-lock.json"), "utf8")) as {
    packages: Record<string, LockPackage>;
  };
  const version = (
    JSON.parse(readFileSync(path.join(PYODIDE_DIR, "package.json"), "utf8")) as { version: string }
  ).version;
  return {
    version,
    packages: new Map(Object.values(lock.packages).map((p) => [normalizeName(p.name), p])),
  };
}

export class PackageResolver {
  private readonly lock = readLock();
  private readonly importIndex = new Map<string, string>();

  constructor(private readonly options: PackageOptions) {
    for (const [name, p] of this.lock.packages)
      for (const i of p.imports) this.importIndex.set(i, name);
  }

  /** Lock-file packages that provide the top-level modules `code` imports. */
  packagesForImports(code: string): string[] {
    const found = new Set<string>();
    for (const m of code.matchAll(
      /^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import|import[ \t]+([A-Za-z_][\w., \t]*))/gm,
    )) {
      const names = m[1] ? [m[1]] : m[2]!.split(",").map((s) => s.trim().split(/[.\s]/)[0]!);
      for (const n of names) {
        const pkg = this.importIndex.get(n);
        if (pkg) found.add(pkg);
      }
    }
    return [...found];
  }

  /** Resolves names (and lock-file dependencies) to wheels, dependencies first. */
  async resolve(names: string[]): Promise<Wheel[]> {
    const order: string[] = [];
    const visit = (name: string, stack: string[]) => {
      const key = normalizeName(name);
      if (order.includes(key) || stack.includes(key)) return;
      for (const dep of this.lock.packages.get(key)?.depends ?? []) visit(dep, [...stack, key]);
      order.push(key);
    };
    for (const n of names) visit(n, []);
    const wheels: Wheel[] = [];
    for (const key of order) wheels.push(await this.fetchOne(key));
    return wheels;
  }

  private async fetchOne(key: string): Promise<Wheel> {
    const locked = this.lock.packages.get(key);
    const tried: string[] = [];
    const refused: string[] = [];
    for (const source of [
      ...this.options.sources,
      ...(locked ? [PYODIDE_CDN(this.lock.version)] : []),
    ]) {
      const isUrl = /^https?:\/\//.test(source);
      tried.push(source);
      if (!isUrl) {
        const local = this.fromDirectory(source, key, locked);
        if (local) return local;
        continue;
      }
      const host = new URL(source).host;
      if (!this.hostAllowed(source)) {
        refused.push(host);
        continue;
      }
      const wheel = locked
        ? await this.fromLockUrl(source, locked)
        : await this.fromIndex(source, key);
      if (wheel) return wheel;
    }
    const hint = refused.length
      ? `; network sources were refused because their hosts are not granted: allow them with --allow-net=${refused.join(",")}`
      : "; add a directory of wheels with --python-packages=DIR, or an index URL with --python-packages=URL and --allow-net=HOST";
    throw new PolyboxError(
      "PACKAGE_NOT_FOUND",
      `Python package "${key}" was not found in: ${tried.join(", ") || "(no sources configured)"}${hint}`,
    );
  }

  private hostAllowed(url: string): boolean {
    const u = new URL(url);
    return this.options.allowNet.some(
      (grant) => grant === u.host || grant === u.hostname || grant === "*",
    );
  }

  private fromDirectory(dir: string, key: string, locked: LockPackage | undefined): Wheel | null {
    if (!existsSync(dir)) return null;
    const files = readdirSync(dir).filter((f) => f.endsWith(".whl"));
    const file = locked
      ? files.find((f) => f === locked.file_name)
      : files
          .filter((f) => normalizeName(f.split("-")[0]!) === key)
          .sort()
          .pop();
    if (!file) return null;
    const data = new Uint8Array(readFileSync(path.join(dir, file)));
    if (locked) this.checkHash(key, file, data, locked.sha256, dir);
    return { name: key, fileName: file, data, installDir: installDirOf(locked) };
  }

  private async fromLockUrl(base: string, locked: LockPackage): Promise<Wheel> {
    const url = new URL(locked.file_name, base.endsWith("/") ? base : `${base}/`).href;
    const data = await this.download(url, locked.sha256);
    this.checkHash(locked.name, locked.file_name, data, locked.sha256, url);
    return {
      name: normalizeName(locked.name),
      fileName: locked.file_name,
      data,
      installDir: installDirOf(locked),
    };
  }

  /** PEP 503 simple index: `{index}/{name}/` lists wheel links, optionally with `#sha256=`. */
  private async fromIndex(index: string, key: string): Promise<Wheel | null> {
    const page = new URL(`${key}/`, index.endsWith("/") ? index : `${index}/`).href;
    const response = await fetch(page).catch((e: unknown) => {
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `could not reach ${page} for Python package "${key}": ${String(e)}`,
      );
    });
    if (response.status === 404) return null;
    if (!response.ok)
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `${page} answered ${response.status} for Python package "${key}"`,
      );
    const html = await response.text();
    const links = [...html.matchAll(/href="([^"]+\.whl(?:#sha256=[0-9a-f]{64})?)"/gi)].map(
      (m) => new URL(m[1]!, page),
    );
    const pick =
      links.filter((u) => /-(py3|py2\.py3)-none-any\.whl$/.test(u.pathname)).pop() ?? links.pop();
    if (!pick) return null;
    const expected = /sha256=([0-9a-f]{64})/.exec(pick.hash)?.[1];
    const fileName = decodeURIComponent(pick.pathname.split("/").pop()!);
    pick.hash = "";
    if (!this.hostAllowed(pick.href)) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `the index links ${fileName} on ${pick.host}, which is not granted: allow it with --allow-net=${pick.host}`,
      );
    }
    const data = await this.download(pick.href, expected);
    if (expected) this.checkHash(key, fileName, data, expected, pick.href);
    return { name: key, fileName, data, installDir: "site" };
  }

  private async download(url: string, expectedSha?: string): Promise<Uint8Array> {
    const cached = expectedSha ? path.join(this.options.cacheDir, "packages", expectedSha) : null;
    if (cached && existsSync(cached)) {
      const data = new Uint8Array(await readFile(cached));
      if (sha256(data) === expectedSha) return data;
    }
    const response = await fetch(url).catch((e: unknown) => {
      throw new PolyboxError("PACKAGE_NOT_FOUND", `could not download ${url}: ${String(e)}`);
    });
    if (!response.ok)
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `could not download ${url}: HTTP ${response.status}`,
      );
    const data = new Uint8Array(await response.arrayBuffer());
    if (cached && sha256(data) === expectedSha) {
      await mkdir(path.dirname(cached), { recursive: true });
      await writeFile(`${cached}.tmp`, data);
      await rename(`${cached}.tmp`, cached);
    }
    return data;
  }

  private checkHash(
    name: string,
    file: string,
    data: Uint8Array,
    expected: string,
    where: string,
  ): void {
    const actual = sha256(data);
    if (actual !== expected) {
      throw new PolyboxError(
        "PACKAGE_HASH_MISMATCH",
        `refusing Python package "${name}": ${file} from ${where} has sha256 ${actual}, expected ${expected}`,
      );
    }
  }
}

function installDirOf(locked: LockPackage | undefined): "site" | "dynlib" {
  return locked?.install_dir === "dynlib" || locked?.package_type === "shared_library"
    ? "dynlib"
    : "site";
}

// Trusted side: finds Python packages for a sandbox and brings their bytes to this side; the
// guest never touches the network. Sources, in order: local directories of wheels (or a Pyodide
// distribution), then network indexes, but only on hosts granted with `--allow-net`, checked
// before any request is made. Files named in Pyodide's lock file are checked against its sha256;
// wheels from an index against the `#sha256=` its links carry. Downloads are cached per user.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { compare, valid } from "@renovatebot/pep440";
import { PolyboxError } from "./errors.js";
import { importedModules } from "./python-deps.js";
import {
  bestVersion,
  describeRequirement,
  normalizeName,
  type Requirement,
  versionSatisfies,
} from "./requirements.js";
import { systemTzdataWheel } from "./tzdata.js";
import type { Wheel } from "./wheel.js";

export type { Wheel } from "./wheel.js";
export { normalizeName };

interface LockPackage {
  name: string;
  version: string;
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
  /** The installed Pyodide distribution, whose lock file names the packages it carries. */
  pyodideDir: string;
}

export const PYODIDE_CDN = (version: string) =>
  `https://cdn.jsdelivr.net/pyodide/v${version}/full/`;

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

function readLock(pyodideDir: string): { version: string; packages: Map<string, LockPackage> } {
  const lock = JSON.parse(readFileSync(path.join(pyodideDir, "pyodide-lock.json"), "utf8")) as {
    packages: Record<string, LockPackage>;
  };
  const version = (
    JSON.parse(readFileSync(path.join(pyodideDir, "package.json"), "utf8")) as { version: string }
  ).version;
  return {
    version,
    packages: new Map(Object.values(lock.packages).map((p) => [normalizeName(p.name), p])),
  };
}

/** `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`, or null if not a wheel's name. */
export function parseWheelName(
  fileName: string,
): { name: string; version: string; pure: boolean } | null {
  if (!fileName.endsWith(".whl")) return null;
  const parts = fileName.slice(0, -4).split("-");
  if (parts.length !== 5 && parts.length !== 6) return null;
  return {
    name: normalizeName(parts[0]!),
    version: parts[1]!,
    pure: parts[parts.length - 2] === "none" && parts[parts.length - 1] === "any",
  };
}

interface Candidate {
  fileName: string;
  version: string;
  pure: boolean;
}

/** The highest version meeting `specifier`; of its wheels, a pure-Python one first. */
function choose<C extends Candidate>(candidates: C[], specifier: string): C | null {
  const version = bestVersion([...new Set(candidates.map((c) => c.version))], specifier);
  const same = candidates.filter((c) => c.version === version);
  return same.find((c) => c.pure) ?? same[0] ?? null;
}

/** Links in a PEP 503 page: one pass (each quantifier stops at its closing quote). */
function links(html: string, page: string): URL[] {
  const urls: URL[] = [];
  for (const m of html.matchAll(/href=(?:"([^"]*)"|'([^']*)')/gi)) {
    try {
      urls.push(new URL(m[1] ?? m[2]!, page));
    } catch {
      // Not a URL: not a link to a wheel either.
    }
  }
  return urls;
}

export class PackageResolver {
  private readonly lock: ReturnType<typeof readLock>;
  private readonly importIndex = new Map<string, string>();

  constructor(private readonly options: PackageOptions) {
    this.lock = readLock(options.pyodideDir);
    for (const [name, p] of this.lock.packages)
      for (const i of p.imports) this.importIndex.set(i, name);
    // zoneinfo is in the standard library, but its data comes from tzdata where the OS has none.
    if (this.lock.packages.has("tzdata")) this.importIndex.set("zoneinfo", "tzdata");
  }

  /** Lock-file packages that provide the top-level modules `code` imports. */
  packagesForImports(code: string): string[] {
    const found = new Set<string>();
    for (const module of importedModules(code)) {
      const pkg = this.importIndex.get(module);
      if (pkg) found.add(pkg);
    }
    return [...found];
  }

  /**
   * The wheels that `requirements` (and the lock-file dependencies of what they pull in) need
   * beyond what is `installed`, dependencies first. A requirement an installed version meets
   * needs nothing; one it does not meet is refused, as a sandbox holds one version of a package.
   */
  async resolve(
    requirements: Requirement[],
    installed: ReadonlyMap<string, Wheel> = new Map(),
  ): Promise<Wheel[]> {
    const wanted = new Map<string, string>();
    for (const r of requirements)
      wanted.set(r.name, [wanted.get(r.name) ?? "", r.specifier].filter(Boolean).join(","));
    // A Set: membership stays cheap however many packages a guest's PEP 723 block names.
    const order = new Set<string>();
    const visit = (key: string, stack: string[]) => {
      if (order.has(key) || stack.includes(key)) return;
      const specifier = wanted.get(key) ?? "";
      const have = installed.get(key);
      if (have) {
        if (specifier !== "" && !versionSatisfies(have.version, specifier)) {
          throw new PolyboxError(
            "INVALID_ARGUMENT",
            `${key} ${have.version} is already installed in this sandbox and does not meet ${specifier}; a sandbox holds one version of a package, so install ${describeRequirement({ name: key, specifier })} in a new sandbox`,
          );
        }
        return;
      }
      const locked = this.lock.packages.get(key);
      if (locked && versionSatisfies(locked.version, specifier))
        for (const dep of locked.depends) visit(normalizeName(dep), [...stack, key]);
      order.add(key);
    };
    for (const key of wanted.keys()) visit(key, []);
    const wheels: Wheel[] = [];
    for (const key of order) wheels.push(await this.fetchOne(key, wanted.get(key) ?? ""));
    return wheels;
  }

  private async fetchOne(key: string, specifier: string): Promise<Wheel> {
    if (key === "tzdata" && specifier === "") {
      const system = systemTzdataWheel();
      if (system) return system;
    }
    const inLock = this.lock.packages.get(key);
    // The lock file has one version of each package; a pin it misses may be met by a source.
    const locked = inLock && versionSatisfies(inLock.version, specifier) ? inLock : undefined;
    const tried: string[] = [];
    const refused: string[] = [];
    const seen = new Set<string>();
    for (const source of [
      ...this.options.sources,
      ...(locked ? [PYODIDE_CDN(this.lock.version)] : []),
    ]) {
      const isUrl = /^https?:\/\//.test(source);
      tried.push(source);
      if (!isUrl) {
        const local = this.fromDirectory(source, key, specifier, locked, seen);
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
        : await this.fromIndex(source, key, specifier, seen);
      if (wheel) return wheel;
    }
    const where = tried.join(", ") || "(no sources configured)";
    const refusedHint = refused.length
      ? `; network sources were refused because their hosts are not granted (permissions.net): ${refused.join(", ")}`
      : "";
    const versions = [...seen].filter((v) => valid(v) !== null).sort(compare);
    if (versions.length > 0 || (inLock && !locked)) {
      const found = [
        ...(versions.length > 0 ? [`found ${versions.join(", ")}`] : []),
        ...(inLock && !locked ? [`Pyodide's lock file has ${inLock.version}`] : []),
      ];
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `no version of Python package "${key}" meets ${specifier || "(any version)"}: ${found.join("; ")}; looked in: ${where}${refusedHint}`,
      );
    }
    const hint =
      refusedHint ||
      "; add a directory of wheels or an index URL to pythonPackages (an index's host must be granted in permissions.net)";
    throw new PolyboxError(
      "PACKAGE_NOT_FOUND",
      `Python package "${describeRequirement({ name: key, specifier })}" was not found in: ${where}${hint}`,
      {
        details: refused.length
          ? { limit: "permissions.net", hosts: [...refused] }
          : { limit: "pythonPackages" },
      },
    );
  }

  /**
   * Whether fetching a package may reach the network: only with hosts granted (permissions.net),
   * since Pyodide's own packages come from its CDN and any index is a URL. Without a grant every
   * source is a local directory. MCP's openWorldHint for the tools that install packages.
   */
  mayUseNetwork(): boolean {
    return this.options.allowNet.length > 0;
  }

  private hostAllowed(url: string): boolean {
    const u = new URL(url);
    return this.options.allowNet.some(
      (grant) => grant === u.host || grant === u.hostname || grant === "*",
    );
  }

  private fromDirectory(
    dir: string,
    key: string,
    specifier: string,
    locked: LockPackage | undefined,
    seen: Set<string>,
  ): Wheel | null {
    if (!existsSync(dir)) return null;
    const files = readdirSync(dir).filter((f) => f.endsWith(".whl"));
    if (locked) {
      const file = files.find((f) => f === locked.file_name);
      if (!file) return null;
      const data = new Uint8Array(readFileSync(path.join(dir, file)));
      this.checkHash(key, file, data, locked.sha256, dir);
      return {
        name: key,
        version: locked.version,
        fileName: file,
        data,
        installDir: installDirOf(locked),
      };
    }
    const candidates: Candidate[] = [];
    for (const fileName of files) {
      const parsed = parseWheelName(fileName);
      if (parsed?.name !== key) continue;
      seen.add(parsed.version);
      candidates.push({ fileName, ...parsed });
    }
    const pick = choose(candidates, specifier);
    if (!pick) return null;
    const data = new Uint8Array(readFileSync(path.join(dir, pick.fileName)));
    return { name: key, version: pick.version, fileName: pick.fileName, data, installDir: "site" };
  }

  private async fromLockUrl(base: string, locked: LockPackage): Promise<Wheel> {
    const url = new URL(locked.file_name, base.endsWith("/") ? base : `${base}/`).href;
    const data = await this.download(url, locked.sha256);
    this.checkHash(locked.name, locked.file_name, data, locked.sha256, url);
    return {
      name: normalizeName(locked.name),
      version: locked.version,
      fileName: locked.file_name,
      data,
      installDir: installDirOf(locked),
    };
  }

  /** PEP 503 simple index: `{index}/{name}/` lists wheel links, optionally with `#sha256=`. */
  private async fromIndex(
    index: string,
    key: string,
    specifier: string,
    seen: Set<string>,
  ): Promise<Wheel | null> {
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
    const candidates: (Candidate & { url: URL })[] = [];
    for (const url of links(await response.text(), page)) {
      let fileName: string;
      try {
        fileName = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf("/") + 1));
      } catch {
        continue;
      }
      const parsed = parseWheelName(fileName);
      if (parsed?.name !== key) continue;
      seen.add(parsed.version);
      candidates.push({ fileName, url, ...parsed });
    }
    const pick = choose(candidates, specifier);
    if (!pick) return null;
    const expected = /sha256=([0-9a-f]{64})/.exec(pick.url.hash)?.[1];
    const url = new URL(pick.url.href);
    url.hash = "";
    if (!this.hostAllowed(url.href)) {
      throw new PolyboxError(
        "PERMISSION_DENIED",
        `the index links ${pick.fileName} on ${url.host}, which is not granted (permissions.net)`,
        { details: { limit: "permissions.net", hosts: [url.host] } },
      );
    }
    const data = await this.download(url.href, expected);
    if (expected) this.checkHash(key, pick.fileName, data, expected, url.href);
    return { name: key, version: pick.version, fileName: pick.fileName, data, installDir: "site" };
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

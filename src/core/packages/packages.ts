// Trusted side: finds Python packages for a sandbox and brings their bytes to this side; the
// guest never touches the network. As Deno fetches a program's dependencies without granting the
// program any network, packages are fetched by the trusted side whatever the guest's own network
// grant: `permissions.net` is not read here. Sources, in order: local directories of wheels (or a
// Pyodide distribution), then the index URLs the operator named (named = allowed), then, for a
// package in Pyodide's lock file, the matching Pyodide distribution on its CDN (`pyodideCdn`
// overrides the base URL). Files named in the lock file are checked against its sha256; wheels
// from an index against the `#sha256=` its links carry. Downloads are cached per user: lock-file
// wheels by sha256, index wheels by file name; `cachedOnly` refuses every download and serves
// only local sources and that cache. Every request goes through the download policy
// (download-policy.ts): a link or redirect an index hands over cannot send the server into its own
// network, and a source on a private network is used only with `allowPrivateIndex`.
//
// WASM sandboxes get Pyodide's builds. Native sandboxes (target "native") get wheels for the
// machine's own interpreter: only files whose tags it accepts (`nativeTags`), never the lock
// file's WebAssembly builds, and never a source distribution: nothing is built on this side.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { compare, valid } from "@renovatebot/pep440";
import { isPolyboxError, PolyboxError } from "../errors.js";
import { sha256Hex, storeCacheFile } from "./cache-file.js";
import { type DownloadLabel, DownloadPolicy } from "./download-policy.js";
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
import { DirectoryImports } from "./wheel-imports.js";
import { type PyodideInfo, pyodideTags, tagRanks, wheelRank } from "./wheel-tags.js";

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
  cacheDir: string;
  /** The installed Pyodide distribution, whose lock file names the packages it carries. */
  pyodideDir: string;
  /** Base URL lock-file packages are downloaded from (default: `PYODIDE_CDN(version)`). */
  pyodideCdn?: string | undefined;
  /** Refuse every download: packages come from local sources and the cache only. */
  cachedOnly?: boolean | undefined;
  /** Native mode: the wheel tags the machine's interpreter accepts, best first. */
  nativeTags?: (() => Promise<readonly string[]>) | undefined;
  /**
   * Whether the index URLs and the Pyodide CDN may be on a private or loopback network (a
   * mirror inside the operator's network). Only their own host and port are trusted there.
   */
  allowPrivateIndex?: boolean | undefined;
}

/** Which interpreter a package is for: Pyodide (WebAssembly) or the machine's own python3. */
export type PackageTarget = "wasm" | "native";

export const PYODIDE_CDN = (version: string) =>
  `https://cdn.jsdelivr.net/pyodide/v${version}/full/`;

/** How long one download (an index page or a wheel) may take before it is abandoned. */
const DOWNLOAD_TIMEOUT_MS = 5 * 60_000;
/** The largest index page read (PyPI's pages for projects with thousands of files are MiBs). */
const MAX_INDEX_PAGE_BYTES = 64 * 1024 * 1024;
/** The largest package file accepted (native wheels of machine-learning libraries are large). */
const MAX_PACKAGE_FILE_BYTES = 1024 * 1024 * 1024;

/** A file name that is one plain path segment (index pages are untrusted text). */
const isPlainFileName = (name: string) =>
  /^[A-Za-z0-9][A-Za-z0-9_.+!-]*$/.test(name) && name.length <= 255;

function readLock(pyodideDir: string): {
  version: string;
  info: PyodideInfo | undefined;
  packages: Map<string, LockPackage>;
} {
  const lock = JSON.parse(readFileSync(path.join(pyodideDir, "pyodide-lock.json"), "utf8")) as {
    info?: PyodideInfo;
    packages: Record<string, LockPackage>;
  };
  const version = (
    JSON.parse(readFileSync(path.join(pyodideDir, "package.json"), "utf8")) as { version: string }
  ).version;
  return {
    version,
    info: lock.info,
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

/**
 * The highest version meeting `specifier`; of its wheels, a pure-Python one first. With `ranks`
 * (native mode), only wheels the interpreter accepts count, and of one version the best-ranked.
 */
function choose<C extends Candidate>(
  candidates: C[],
  specifier: string,
  ranks?: ReadonlyMap<string, number>,
): C | null {
  const ranked = candidates
    .map((c) => ({ c, rank: ranks ? wheelRank(c.fileName, ranks) : c.pure ? 0 : 1 }))
    .filter((r): r is { c: C; rank: number } => r.rank !== null);
  const version = bestVersion([...new Set(ranked.map((r) => r.c.version))], specifier);
  const same = ranked.filter((r) => r.c.version === version).sort((a, b) => a.rank - b.rank);
  return same[0]?.c ?? null;
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
  /** The modules the wheels of directory sources provide, read as imports ask for them. */
  private readonly directoryImports = new DirectoryImports((f) => parseWheelName(f)?.name);
  /** Where lock-file packages are downloaded from: the matching Pyodide distribution. */
  readonly cdn: string;
  /** The wheel tags Pyodide accepts, from its lock file (undefined: pure Python first). */
  private readonly pyodideRanks: ReadonlyMap<string, number> | undefined;
  /** Where downloads may connect: the configured sources, and public addresses. */
  private readonly policy: DownloadPolicy;

  constructor(private readonly options: PackageOptions) {
    this.lock = readLock(options.pyodideDir);
    for (const [name, p] of this.lock.packages)
      for (const i of p.imports) this.importIndex.set(i, name);
    // zoneinfo is in the standard library, but its data comes from tzdata where the OS has none.
    if (this.lock.packages.has("tzdata")) this.importIndex.set("zoneinfo", "tzdata");
    this.cdn = options.pyodideCdn ?? PYODIDE_CDN(this.lock.version);
    const tags = pyodideTags(this.lock.info);
    this.pyodideRanks = tags ? tagRanks(tags) : undefined;
    if (!/^https?:\/\//.test(this.cdn) || !URL.canParse(this.cdn))
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `pyodideCdn must be an http(s) URL, got ${JSON.stringify(this.cdn)}`,
        { details: { limit: "pyodideCdn", value: this.cdn } },
      );
    this.policy = new DownloadPolicy({
      origins: [...options.sources.filter((s) => /^https?:\/\//.test(s)), this.cdn],
      allowPrivate: options.allowPrivateIndex,
    });
  }

  /** The per-user cache of downloaded wheels. */
  get cacheDir(): string {
    return path.join(this.options.cacheDir, "packages");
  }

  /** Whether downloads are refused (`cachedOnly`). */
  get cachedOnly(): boolean {
    return this.options.cachedOnly === true;
  }

  /**
   * Packages that provide the top-level modules `code` imports: Pyodide's (from its lock file),
   * then the wheels in directory sources.
   */
  packagesForImports(code: string): string[] {
    const found = new Set<string>();
    const dirs = this.options.sources.filter((s) => !/^https?:\/\//.test(s));
    let fromDirs: Map<string, string> | undefined;
    for (const module of importedModules(code)) {
      let pkg = this.importIndex.get(module);
      if (!pkg && dirs.length > 0) {
        fromDirs ??= this.directoryImports.provided(dirs);
        pkg = fromDirs.get(module);
      }
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
    target: PackageTarget = "wasm",
  ): Promise<Wheel[]> {
    const wanted = new Map<string, string>();
    for (const r of requirements)
      wanted.set(r.name, [wanted.get(r.name) ?? "", r.specifier].filter(Boolean).join(","));
    // A Set: membership stays cheap however many packages a guest's PEP 723 block names.
    const order = new Set<string>();
    /** For a dependency: the package asked for that pulled it in first. */
    const neededBy = new Map<string, string>();
    const visit = (key: string, stack: string[]) => {
      if (order.has(key) || stack.includes(key)) return;
      if (stack[0] !== undefined && !wanted.has(key)) neededBy.set(key, stack[0]);
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
      // The lock file describes Pyodide's builds; the machine's python3 has its own world.
      const locked = target === "wasm" ? this.lock.packages.get(key) : undefined;
      if (locked && versionSatisfies(locked.version, specifier))
        for (const dep of locked.depends) visit(normalizeName(dep), [...stack, key]);
      order.add(key);
    };
    for (const key of wanted.keys()) visit(key, []);
    const ranks = target === "native" ? await this.nativeRanks() : this.pyodideRanks;
    const wheels: Wheel[] = [];
    for (const key of order) {
      try {
        wheels.push(await this.fetchOne(key, wanted.get(key) ?? "", target, ranks));
      } catch (error) {
        const root = neededBy.get(key);
        if (!root || !isPolyboxError(error)) throw error;
        // Named by what was asked for: that is the package to fetch (or warm) again.
        throw new PolyboxError(
          error.code,
          `Python package "${root}" needs "${key}", which could not be fetched: ${error.message}`,
          { cause: error, details: { ...error.details, package: root, dependency: key } },
        );
      }
    }
    return wheels;
  }

  private async nativeRanks(): Promise<ReadonlyMap<string, number>> {
    if (!this.options.nativeTags)
      throw new PolyboxError(
        "ISOLATION_UNAVAILABLE",
        "packages for native sandboxes need the native interpreter's wheel tags, and this runtime has no native engines",
      );
    return tagRanks(await this.options.nativeTags());
  }

  /** `ranks`: the wheel tags the target accepts (undefined: any, pure Python first). */
  private async fetchOne(
    key: string,
    specifier: string,
    target: PackageTarget,
    ranks: ReadonlyMap<string, number> | undefined,
  ): Promise<Wheel> {
    const native = target === "native";
    if (!native && key === "tzdata" && specifier === "") {
      const system = systemTzdataWheel();
      if (system) return system;
    }
    const inLock = native ? undefined : this.lock.packages.get(key);
    // The lock file has one version of each package; a pin it misses may be met by a source.
    const locked = inLock && versionSatisfies(inLock.version, specifier) ? inLock : undefined;
    const tried: string[] = [];
    const seen = new Set<string>();
    let uncached = false;
    for (const source of [...this.options.sources, ...(locked ? [this.cdn] : [])]) {
      const isUrl = /^https?:\/\//.test(source);
      tried.push(source);
      if (!isUrl) {
        const local = this.fromDirectory(source, key, specifier, locked, seen, ranks);
        if (local) return local;
        continue;
      }
      if (this.cachedOnly) {
        // Every download refused: what an earlier download (or warmup) left in the cache serves.
        const cached = locked
          ? await this.fromCache(locked)
          : this.fromDirectory(this.indexCache, key, specifier, undefined, seen, ranks);
        if (cached) return cached;
        uncached = true;
        continue;
      }
      const wheel = locked
        ? await this.fromLockUrl(source, locked)
        : await this.fromIndex(source, key, specifier, seen, ranks);
      if (wheel) return wheel;
    }
    const where = tried.join(", ") || "(no sources configured)";
    const forTarget = native
      ? " (for the machine's python3: wheels whose tags it accepts; nothing is built from source)"
      : ranks
        ? " (for Pyodide: pure-Python wheels or its own WebAssembly builds)"
        : "";
    const versions = [...seen].filter((v) => valid(v) !== null).sort(compare);
    const wanted = describeRequirement({ name: key, specifier });
    // Under cachedOnly a source that was not asked may have what the cache lacks: say so first.
    if (uncached) {
      const found =
        versions.length > 0 ? `, which holds only ${versions.join(", ")}${forTarget},` : "";
      throw new PolyboxError(
        "PACKAGE_NOT_CACHED",
        `Python package "${wanted}" is not in the package cache (${this.cacheDir})${found} and downloads are off (cachedOnly); fill the cache while online by warming it up with this package from the same sources, or turn cachedOnly off`,
        { details: { limit: "cachedOnly", package: wanted } },
      );
    }
    if (versions.length > 0 || (inLock && !locked)) {
      const found = [
        ...(versions.length > 0 ? [`found ${versions.join(", ")}`] : []),
        ...(inLock && !locked ? [`Pyodide's lock file has ${inLock.version}`] : []),
      ];
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `no version of Python package "${key}" meets ${specifier || "(any version)"}: ${found.join("; ")}; looked in: ${where}${forTarget}`,
      );
    }
    throw new PolyboxError(
      "PACKAGE_NOT_FOUND",
      `Python package "${wanted}" was not found in: ${where}${forTarget}; add a directory of wheels or an index URL to pythonPackages`,
      { details: { limit: "pythonPackages", package: wanted } },
    );
  }

  /**
   * Whether fetching a package may reach the network: yes unless downloads are off, since
   * Pyodide's own packages come from its CDN. MCP's openWorldHint for the tools that install
   * packages.
   */
  mayUseNetwork(): boolean {
    return !this.cachedOnly;
  }

  /** Where wheels downloaded from an index are kept, by file name (a directory source). */
  private get indexCache(): string {
    return path.join(this.cacheDir, "wheels");
  }

  private fromDirectory(
    dir: string,
    key: string,
    specifier: string,
    locked: LockPackage | undefined,
    seen: Set<string>,
    ranks?: ReadonlyMap<string, number>,
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
    const pick = choose(candidates, specifier, ranks);
    if (!pick) return null;
    const data = new Uint8Array(readFileSync(path.join(dir, pick.fileName)));
    return { name: key, version: pick.version, fileName: pick.fileName, data, installDir: "site" };
  }

  /** A lock-file package from the cache, or null if it is not there (intact). */
  private async fromCache(locked: LockPackage): Promise<Wheel | null> {
    const file = path.join(this.cacheDir, locked.sha256);
    if (!existsSync(file)) return null;
    const data = new Uint8Array(await readFile(file));
    if (sha256Hex(data) !== locked.sha256) return null;
    return lockedWheel(locked, data);
  }

  private async fromLockUrl(base: string, locked: LockPackage): Promise<Wheel | null> {
    const cached = await this.fromCache(locked);
    if (cached) return cached;
    const url = new URL(locked.file_name, base.endsWith("/") ? base : `${base}/`).href;
    // An index named before the CDN may not carry Pyodide's file: the next source may.
    const data = await this.download(url, locked.name, true);
    if (!data) return null;
    this.checkHash(locked.name, locked.file_name, data, locked.sha256, url);
    await storeCacheFile(path.join(this.cacheDir, locked.sha256), data);
    return lockedWheel(locked, data);
  }

  /** PEP 503 simple index: `{index}/{name}/` lists wheel links, optionally with `#sha256=`. */
  private async fromIndex(
    index: string,
    key: string,
    specifier: string,
    seen: Set<string>,
    ranks?: ReadonlyMap<string, number>,
  ): Promise<Wheel | null> {
    const page = new URL(`${key}/`, index.endsWith("/") ? index : `${index}/`).href;
    const response = await this.policy
      .fetch(page, label(key), {
        redirects: "follow",
        maxBytes: MAX_INDEX_PAGE_BYTES,
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      })
      .catch((e: unknown) => {
        if (isPolyboxError(e)) throw e;
        throw new PolyboxError(
          "PACKAGE_NOT_FOUND",
          `could not reach ${page} for Python package "${key}": ${String(e)}`,
          { cause: e },
        );
      });
    if (response.status === 404) return null;
    if (response.status < 200 || response.status > 299)
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `${page} answered ${response.status} for Python package "${key}"`,
      );
    // Relative links are relative to the page the last redirect reached.
    const listed = links(new TextDecoder().decode(response.body), response.url);
    const candidates: (Candidate & { url: URL })[] = [];
    for (const url of listed) {
      let fileName: string;
      try {
        fileName = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf("/") + 1));
      } catch {
        continue;
      }
      // The name becomes a file in the cache: one plain segment, nothing else.
      if (!isPlainFileName(fileName)) continue;
      const parsed = parseWheelName(fileName);
      if (parsed?.name !== key) continue;
      seen.add(parsed.version);
      candidates.push({ fileName, url, ...parsed });
    }
    const pick = choose(candidates, specifier, ranks);
    if (!pick) return null;
    const expected = /sha256=([0-9a-f]{64})/.exec(pick.url.hash)?.[1];
    const url = new URL(pick.url.href);
    url.hash = "";
    // A cached copy whose sha256 is the one the index gives saves the download.
    const cachedFile = path.join(this.indexCache, pick.fileName);
    if (expected && existsSync(cachedFile)) {
      const data = new Uint8Array(await readFile(cachedFile));
      if (sha256Hex(data) === expected)
        return {
          name: key,
          version: pick.version,
          fileName: pick.fileName,
          data,
          installDir: "site",
        };
    }
    const data = (await this.download(url.href, key))!;
    if (expected) this.checkHash(key, pick.fileName, data, expected, url.href);
    await storeCacheFile(cachedFile, data);
    return { name: key, version: pick.version, fileName: pick.fileName, data, installDir: "site" };
  }

  /** The bytes at `url`; null for a 404 when `missingOk` (any other failure throws). */
  private async download(url: string, name: string, missingOk = false): Promise<Uint8Array | null> {
    const response = await this.policy
      .fetch(url, label(name), {
        redirects: "follow",
        maxBytes: MAX_PACKAGE_FILE_BYTES,
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      })
      .catch((e: unknown) => {
        if (isPolyboxError(e)) throw e;
        throw new PolyboxError(
          "PACKAGE_NOT_FOUND",
          `could not download Python package "${name}" from ${url}: ${String(e)}`,
          { cause: e },
        );
      });
    if (response.status === 404 && missingOk) return null;
    if (response.status < 200 || response.status > 299)
      throw new PolyboxError(
        "PACKAGE_NOT_FOUND",
        `could not download Python package "${name}" from ${url}: HTTP ${response.status}`,
      );
    return response.body;
  }

  private checkHash(
    name: string,
    file: string,
    data: Uint8Array,
    expected: string,
    where: string,
  ): void {
    const actual = sha256Hex(data);
    if (actual !== expected) {
      throw new PolyboxError(
        "PACKAGE_HASH_MISMATCH",
        `refusing Python package "${name}": ${file} from ${where} has sha256 ${actual}, expected ${expected}`,
        { details: { package: normalizeName(name) } },
      );
    }
  }
}

/** A Python package as the download policy's messages and errors name it. */
function label(name: string): DownloadLabel {
  const key = normalizeName(name);
  return { what: `Python package "${key}"`, package: key };
}

/** The wheel a lock-file entry names, with its checked bytes. */
function lockedWheel(locked: LockPackage, data: Uint8Array): Wheel {
  return {
    name: normalizeName(locked.name),
    version: locked.version,
    fileName: locked.file_name,
    data,
    installDir: installDirOf(locked),
  };
}

function installDirOf(locked: LockPackage | undefined): "site" | "dynlib" {
  return locked?.install_dir === "dynlib" || locked?.package_type === "shared_library"
    ? "dynlib"
    : "site";
}

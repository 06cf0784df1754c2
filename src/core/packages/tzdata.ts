// Trusted side: time-zone data for Python's `zoneinfo`, made from the host's own IANA database.
// Pyodide has no /usr/share/zoneinfo, so `zoneinfo` falls back to the `tzdata` package, which
// offline installs cannot fetch. The same TZif files are on almost every Linux and macOS host:
// they are packed here, once per process, as a wheel of the `tzdata` package's layout
// (tzdata/zoneinfo/<Area>/<Location>, every directory a package), which the Python engine
// installs like any other. Only regular TZif files are read: the host's directory is public
// data, and nothing the guest controls decides what is read.

import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import type { Wheel } from "./wheel.js";

const ZONEINFO_DIRS = ["/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"];
/** Duplicates in other formats, and files that are not zones. */
const SKIP = new Set(["posix", "right", "posixrules", "localtime", "Factory"]);
const MAX_ZONE_BYTES = 256 * 1024;
const MAX_FILES = 4_000;
const INIT = new TextEncoder().encode("");

let built: Wheel | null | undefined;

/** The host's time-zone data as a `tzdata` wheel, or null where the host has none. */
export function systemTzdataWheel(): Wheel | null {
  if (built === undefined) built = build();
  return built;
}

function build(): Wheel | null {
  const root = ZONEINFO_DIRS.find((d) => isDir(d));
  if (!root) return null;
  const files: Record<string, Uint8Array> = {};
  const packages = new Set<string>(["tzdata", "tzdata/zoneinfo"]);
  let count = 0;
  const walk = (dir: string, rel: string[]): void => {
    for (const name of readdirSync(dir).sort()) {
      if (SKIP.has(name) || name.startsWith(".") || !/^[\w+-]+$/.test(name)) continue;
      const full = path.join(dir, name);
      if (isDir(full)) {
        packages.add(["tzdata", "zoneinfo", ...rel, name].join("/"));
        walk(full, [...rel, name]);
      } else if (++count <= MAX_FILES) {
        const data = readZone(full);
        if (data) files[["tzdata", "zoneinfo", ...rel, name].join("/")] = data;
      }
    }
  };
  walk(root, []);
  if (Object.keys(files).length === 0) return null;
  for (const p of packages) files[`${p}/__init__.py`] = INIT;
  // What zoneinfo.available_timezones() reads from the package.
  const zones = Object.keys(files)
    .filter((f) => !f.endsWith(".py"))
    .map((f) => f.slice("tzdata/zoneinfo/".length));
  files["tzdata/zones"] = new TextEncoder().encode(`${zones.sort().join("\n")}\n`);
  const version = databaseVersion(root);
  const distInfo = `tzdata-${version}.dist-info`;
  files[`${distInfo}/METADATA`] = new TextEncoder().encode(
    `Metadata-Version: 2.1\nName: tzdata\nVersion: ${version}\nSummary: IANA time zone data from the host (${root})\n`,
  );
  files[`tzdata/__init__.py`] = new TextEncoder().encode(`IANA_VERSION = "${version}"\n`);
  return {
    name: "tzdata",
    version,
    fileName: `tzdata-${version}-py3-none-any.whl`,
    // Stored, not deflated: the wheel never leaves the machine, and unpacking is then a copy.
    data: zipSync(files, { level: 0 }),
    installDir: "site",
  };
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readZone(file: string): Uint8Array | null {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > MAX_ZONE_BYTES) return null;
    const data = readFileSync(file);
    return data.subarray(0, 4).toString("latin1") === "TZif" ? new Uint8Array(data) : null;
  } catch {
    return null;
  }
}

/** "2025b" in tzdata.zi → "2025.2", the tzdata package's own version scheme. */
function databaseVersion(root: string): string {
  try {
    const head = readFileSync(path.join(root, "tzdata.zi"), "latin1").slice(0, 64);
    const m = /^# version (\d{4})([a-z])/.exec(head);
    if (m) return `${m[1]}.${m[2]!.charCodeAt(0) - 96}`;
  } catch {
    // No version file: the data is still good.
  }
  return "0";
}

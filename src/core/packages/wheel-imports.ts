// Which top-level modules the wheels in a directory source provide, so that `import mypkg` in a
// run installs `mypkg` from a directory of wheels the operator named (as an import of one of
// Pyodide's own packages installs it from the lock file). Read from each wheel's zip directory
// (its `top_level.txt` when it has one) once per file version.

import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { unzipSync } from "fflate";

/** Wheels larger than this are not opened to learn their modules (their name still counts). */
const MAX_INDEXED_WHEEL_BYTES = 256 * 1024 * 1024;

interface Indexed {
  stamp: string;
  modules: string[];
}

export class DirectoryImports {
  private readonly byFile = new Map<string, Indexed>();

  /** `distOf`: a wheel file name's (normalized) distribution name, or undefined if it is none. */
  constructor(private readonly distOf: (fileName: string) => string | undefined) {}

  /**
   * The top-level modules the wheels in `dirs` provide, each with its distribution (the first
   * directory, then the first file by name, wins). One listing per directory per call, whatever
   * the number of imports a run names.
   */
  provided(dirs: readonly string[]): Map<string, string> {
    const found = new Map<string, string>();
    for (const dir of dirs) {
      let files: string[];
      try {
        files = readdirSync(dir).filter((f) => f.endsWith(".whl"));
      } catch {
        continue;
      }
      for (const file of files.sort()) {
        const dist = this.distOf(file);
        if (!dist) continue;
        for (const m of this.modulesOf(path.join(dir, file), dist))
          if (!found.has(m)) found.set(m, dist);
      }
    }
    return found;
  }

  private modulesOf(file: string, dist: string): string[] {
    let stamp: string;
    let size: number;
    try {
      const st = statSync(file);
      stamp = `${st.size}:${st.mtimeMs}`;
      size = st.size;
    } catch {
      return [];
    }
    const known = this.byFile.get(file);
    if (known?.stamp === stamp) return known.modules;
    // A wheel that cannot be read still names its distribution (`my_pkg` for my-pkg).
    let modules = [dist.replaceAll("-", "_")];
    if (size <= MAX_INDEXED_WHEEL_BYTES) {
      try {
        modules = wheelModules(readFileSync(file)) ?? modules;
      } catch {
        // Not a zip: it will fail where it is installed, with the installer's message.
      }
    }
    this.byFile.set(file, { stamp, modules });
    return modules;
  }
}

/**
 * The top-level modules a wheel installs: its `top_level.txt`, else the first component of
 * every path outside its `.dist-info` and `.data` directories (`pkg/__init__.py` → pkg,
 * `mod.py` → mod, `ext.cpython-312-x86_64-linux-gnu.so` → ext). Null if it names none.
 */
export function wheelModules(zip: Uint8Array): string[] | null {
  const names: string[] = [];
  const files = unzipSync(zip, {
    filter: (f) => {
      names.push(f.name);
      return /^[^/]+\.dist-info\/top_level\.txt$/.test(f.name);
    },
  });
  const listed = Object.values(files)[0];
  if (listed) {
    const modules = new TextDecoder()
      .decode(listed)
      .split("\n")
      .map((l) => l.trim().split("/")[0]!)
      .filter(Boolean);
    if (modules.length > 0) return [...new Set(modules)];
  }
  const modules = new Set<string>();
  for (const name of names) {
    const first = name.split("/")[0]!;
    if (/\.(dist-info|data)$/.test(first)) continue;
    const module = name.includes("/") ? first : first.split(".")[0]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(module)) modules.add(module);
  }
  return modules.size > 0 ? [...modules] : null;
}

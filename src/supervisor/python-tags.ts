// Trusted side, native mode: the wheel tags the machine's own Python accepts (its version, its ABI,
// manylinux / linux for its glibc and architecture), asked of the interpreter itself once per path.
// `packaging.tags.sys_tags()` where the interpreter has `packaging` (pip's own answer); otherwise
// the same list computed from `sys` and `sysconfig`. The interpreter is the operator's configured
// python3, run in isolated mode (-I) with a fixed script and no guest input; its answer is still
// checked (a list of tag-shaped strings, bounded) before it is used.

import { execFile } from "node:child_process";
import { PolyboxError } from "../core/errors.js";

/** Prints the tags as JSON; with the argument `computed`, the fallback's answer (for tests). */
export const TAGS_SCRIPT = `
import json, os, sys, sysconfig
def computed():
    v = sys.version_info
    impl = {"cpython": "cp", "pypy": "pp"}.get(sys.implementation.name, sys.implementation.name[:2])
    ver = f"{v.major}{v.minor}"
    arch = sysconfig.get_platform().split("-", 1)[-1].replace("-", "_").replace(".", "_")
    plats = []
    if sys.platform.startswith("linux"):
        libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
        if libc and libc.startswith("glibc "):
            major, minor = (int(x) for x in libc.split()[1].split(".")[:2])
            lowest = 5 if arch in ("x86_64", "i686") else 17
            for m in range(minor, lowest - 1, -1) if major == 2 else []:
                plats.append(f"manylinux_2_{m}_{arch}")
                legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}.get(m)
                if legacy:
                    plats.append(f"{legacy}_{arch}")
        plats.append(f"linux_{arch}")
    else:
        plats.append(sysconfig.get_platform().replace("-", "_").replace(".", "_"))
    own = f"{impl}{ver}"
    tags = []
    for abi in [own + getattr(sys, "abiflags", ""), "abi3", "none"]:
        tags += [f"{own}-{abi}-{p}" for p in plats]
    if impl == "cp":
        for minor in range(v.minor - 1, 1, -1):
            tags += [f"cp{v.major}{minor}-abi3-{p}" for p in plats]
    pys = [f"py{v.major}{v.minor}", f"py{v.major}"] + [f"py{v.major}{m}" for m in range(v.minor - 1, -1, -1)]
    for py in pys:
        tags += [f"{py}-none-{p}" for p in plats]
    tags.append(f"{own}-none-any")
    tags += [f"{py}-none-any" for py in pys]
    return tags
try:
    if sys.argv[1:] == ["computed"]:
        raise ImportError
    from packaging import tags as _tags
    found = [str(t) for t in _tags.sys_tags()]
except Exception:
    found = computed()
print(json.dumps(found))
`;

const TAG = /^[a-z0-9_.]{1,64}-[a-z0-9_.]{1,64}-[a-z0-9_.]{1,128}$/i;
const MAX_TAGS = 20_000;
const cache = new Map<string, Promise<string[]>>();

/** The tags `python` accepts, best first; asked once per interpreter path and remembered. */
export function interpreterTags(python: string): Promise<string[]> {
  let tags = cache.get(python);
  if (!tags) {
    tags = ask(python);
    cache.set(python, tags);
    tags.catch(() => cache.delete(python));
  }
  return tags;
}

function ask(python: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ["-I", "-c", TAGS_SCRIPT],
      { timeout: 30_000, maxBuffer: 4 * 1024 * 1024, env: {} },
      (error, stdout) => {
        const fail = (why: string) =>
          reject(
            new PolyboxError(
              "ENGINE_FAILED",
              `cannot tell which wheels ${python} accepts: ${why}`,
              { cause: error ?? undefined },
            ),
          );
        if (error) return fail(error.message);
        let parsed: unknown;
        try {
          parsed = JSON.parse(stdout);
        } catch {
          return fail("its answer is not JSON");
        }
        if (
          !Array.isArray(parsed) ||
          parsed.length === 0 ||
          parsed.length > MAX_TAGS ||
          !parsed.every((t) => typeof t === "string" && TAG.test(t))
        )
          return fail("its answer is not a list of wheel tags");
        resolve(parsed as string[]);
      },
    );
  });
}

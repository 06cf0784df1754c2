// Wheel compatibility tags (PEP 425): compressed tag sets in file names expand to every
// combination, a wheel ranks by its best tag in the interpreter's ordered list, and names that are
// not wheels, or fit no tag, rank nowhere.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  pyodideTags,
  tagRanks,
  wheelRank,
  wheelTags,
} from "../../dist/core/packages/wheel-tags.js";

const lock = createRequire(import.meta.url)("pyodide/pyodide-lock.json") as {
  info: { python: string };
  packages: Record<string, { file_name: string }>;
};

const supported = tagRanks([
  "cp311-cp311-manylinux_2_36_x86_64",
  "cp311-cp311-manylinux_2_17_x86_64",
  "cp311-cp311-manylinux2014_x86_64",
  "cp311-cp311-linux_x86_64",
  "cp311-abi3-linux_x86_64",
  "py3-none-any",
]);

describe("wheel tags", () => {
  it("expands compressed tag sets", () => {
    expect(
      wheelTags("numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    ).toEqual(["cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"]);
    expect(wheelTags("six-1.16.0-py2.py3-none-any.whl")).toEqual(["py2-none-any", "py3-none-any"]);
    expect(wheelTags("pkg-1.0-1build-py3-none-any.whl")).toEqual(["py3-none-any"]);
    expect(wheelTags("pkg-1.0.tar.gz")).toEqual([]);
    expect(wheelTags("not-a-wheel.whl")).toEqual([]);
  });

  it("ranks a wheel by its best supported tag, and refuses one for another machine", () => {
    expect(
      wheelRank("a-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", supported),
    ).toBe(1);
    expect(wheelRank("a-1-cp311-abi3-linux_x86_64.whl", supported)).toBe(4);
    expect(wheelRank("a-1-py2.py3-none-any.whl", supported)).toBe(5);
    expect(wheelRank("a-1-CP311-cp311-LINUX_X86_64.whl", supported)).toBe(3);
    for (const other of [
      "a-1-cp311-cp311-win_amd64.whl",
      "a-1-cp312-cp312-manylinux_2_17_x86_64.whl",
      "a-1-cp311-cp311-pyodide_2024_0_wasm32.whl",
      "a-1-cp311-cp311-manylinux_2_17_aarch64.whl",
      "a-1-cp311-cp311-musllinux_1_2_x86_64.whl",
    ])
      expect(wheelRank(other, supported), other).toBeNull();
  });

  it("Pyodide's tags, from its lock file, fit every wheel the lock file names and no machine's", () => {
    const ranks = tagRanks(pyodideTags(lock.info)!);
    const wheels = Object.values(lock.packages)
      .map((p) => p.file_name)
      .filter((f) => f.endsWith(".whl"));
    expect(wheels.length).toBeGreaterThan(100);
    for (const f of wheels) expect(wheelRank(f, ranks), f).not.toBeNull();
    const [major, minor] = lock.info.python.split(".");
    const cp = `cp${major}${minor}`;
    expect(wheelRank(`a-1-${cp}-${cp}-manylinux_2_17_x86_64.whl`, ranks)).toBeNull();
    expect(wheelRank(`a-1-${cp}-${cp}-win_amd64.whl`, ranks)).toBeNull();
    expect(wheelRank("a-1-py3-none-any.whl", ranks)).not.toBeNull();
    expect(pyodideTags({})).toBeNull();
  });
});

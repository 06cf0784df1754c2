// The WASIX test modules are committed (test/fixtures/wasix, built by build.mjs there), so that
// `npm test` needs only Node: each is present, is the bytes SHA256SUMS names, is WebAssembly of
// the shape its tests rely on, and no test builds one itself with a native toolchain. CI rebuilds
// them with clang and compares (`node test/fixtures/wasix/build.mjs --check`).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const dir = path.join(root, "test", "fixtures", "wasix");
// A path held in a variable: the build script is plain JavaScript, imported untyped (importing
// it builds nothing).
const buildScript = path.join(dir, "build.mjs");
const { MODULES } = (await import(buildScript)) as {
  MODULES: { name: string; source: string; flags?: string[]; asyncify?: string[] }[];
};

const sums = new Map(
  readFileSync(path.join(dir, "SHA256SUMS"), "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const [hash, name] = line.split(/ +\*?/);
      return [name!, hash!] as const;
    }),
);

describe("committed WASIX test modules", () => {
  it("every module build.mjs makes is committed with the checksum SHA256SUMS gives, and no other", () => {
    expect(MODULES.length).toBeGreaterThan(0);
    expect([...sums.keys()].sort()).toEqual(MODULES.map((m) => m.name).sort());
    for (const m of MODULES) {
      expect(existsSync(m.source), m.source).toBe(true);
      const file = path.join(dir, m.name);
      expect(existsSync(file), `${m.name} is committed`).toBe(true);
      const hash = createHash("sha256").update(readFileSync(file)).digest("hex");
      expect(hash, `${m.name} matches SHA256SUMS`).toBe(sums.get(m.name));
    }
    expect(readFileSync(path.join(dir, "toolchain.txt"), "utf8")).toMatch(/clang version/);
  });

  it("each is WebAssembly importing only WASI, WASIX and its memory; asyncify where asked", () => {
    for (const m of MODULES) {
      const bytes = readFileSync(path.join(dir, m.name));
      // Compiling validates: it throws on a malformed module.
      const module = new WebAssembly.Module(bytes);
      for (const i of WebAssembly.Module.imports(module)) {
        const ok =
          i.module === "wasi_snapshot_preview1" ||
          i.module === "wasix_32v1" ||
          (i.module === "env" && i.name === "memory");
        expect(ok, `${m.name} imports ${i.module}.${i.name}`).toBe(true);
      }
      const exports = WebAssembly.Module.exports(module).map((e) => e.name);
      expect(exports, m.name).toContain("_start");
      // Asyncify's exports: what lets the sdk unwind at proc_fork and rewind in the child.
      expect(exports.includes("asyncify_start_unwind"), m.name).toBe(Boolean(m.asyncify));
      // A process that can fork shares and imports its memory and exports its stack pointer.
      const forks = m.flags?.includes("-Wl,--export=__stack_pointer") ?? false;
      expect(exports.includes("__stack_pointer"), m.name).toBe(forks);
    }
  });

  // .ci/run rebuilds the modules with clang before the suite (build.mjs --check) and names the
  // directory with the outcome here; elsewhere nothing is rebuilt.
  const rebuilt = process.env.POLYBOX_TEST_WASIX_REBUILT;
  it.skipIf(!rebuilt)(
    "CI's rebuild from the C sources gives the committed bytes, or the suite runs what it built (skipped outside CI: only .ci/run rebuilds them, with clang, lld, wasi-libc and binaryen)",
    () => {
      const status = readFileSync(path.join(rebuilt!, "check.status"), "utf8").trim();
      const log = readFileSync(path.join(rebuilt!, "check.log"), "utf8");
      // 0: byte-identical. 2: another toolchain than toolchain.txt names, so other bytes for the
      // same programs: the WASIX tests then run the rebuilt modules, and their checks are the
      // comparison. 1 (or anything else): the committed modules are not what the sources build.
      expect(["0", "2"], log).toContain(status);
      if (status === "2")
        expect(process.env.POLYBOX_TEST_WASIX_MODULES).toBe(path.join(rebuilt!, "modules"));
    },
  );

  it("no test runs clang, wasm-ld or wasm-opt: the suite needs only Node", () => {
    const offenders: string[] = [];
    const walk = (d: string): void => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (/\.(ts|mjs|js)$/.test(entry.name) && p !== buildScript) {
          const text = readFileSync(p, "utf8");
          if (
            /\b(execFile|execFileSync|spawn|spawnSync)\(\s*["'](clang|wasm-ld|wasm-opt)["']/.test(
              text,
            )
          )
            offenders.push(path.relative(root, p));
        }
      }
    };
    walk(path.join(root, "test"));
    expect(offenders).toEqual([]);
  });
});

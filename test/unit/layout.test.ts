// The tree is the map of the trust boundary (docs/architecture.md, "Layout"). These tests keep
// the map true: no import cycle and no import across the boundary the wrong way (the rules in
// .dependency-cruiser.cjs), a public type surface that shows no internals, and dependencies
// declared exactly as used.

import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  files: string[];
  scripts: Record<string, string>;
};

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

describe("layout", () => {
  it("has no import cycle and no import across the trust boundary the wrong way", () => {
    const out = execFileSync(
      path.join(root, "node_modules/.bin/depcruise"),
      ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
      { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    const report = JSON.parse(out) as {
      summary: { violations: Violation[]; totalCruised: number };
    };
    expect(report.summary.totalCruised).toBeGreaterThan(50);
    const found = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(found).toEqual([]);
  });

  it("the rules do catch a forbidden import", () => {
    // A rule set that matched nothing would pass the test above whatever the tree looked like.
    const out = execFileSync(
      path.join(root, "node_modules/.bin/depcruise"),
      [
        "src/cli/doctor.ts",
        "--config",
        ".dependency-cruiser.cjs",
        "--output-type",
        "json",
        "--validate",
        ".dependency-cruiser.cjs",
      ],
      { cwd: root, encoding: "utf8" },
    );
    const cruised = JSON.parse(out) as {
      modules: { source: string; dependencies: { resolved: string }[] }[];
    };
    const doctor = cruised.modules.find((m) => m.source === "src/cli/doctor.ts");
    expect(doctor?.dependencies.some((d) => d.resolved.startsWith("src/supervisor/"))).toBe(true);
    const rules = readFileSync(path.join(root, ".dependency-cruiser.cjs"), "utf8");
    for (const name of ["trusted-not-into-guest", "guest-not-into-trusted", "no-folder-cycle"])
      expect(rules).toContain(`name: "${name}"`);
  });

  it("core's rooms are layered: a planted wrong import fails each rule", () => {
    // A copy of the rules over a small tree of core's shape, each file breaking one rule, so
    // that a rule whose path stopped matching the real tree fails here rather than passing.
    const tree = mkdtempSync(path.join(os.tmpdir(), "polybox-layers-"));
    try {
      const planted: Record<string, string> = {
        "src/core/limits.ts":
          'import { serve } from "./server/service.js";\nexport const l = serve;\n',
        "src/core/packages/packages.ts":
          'import { box } from "../sandbox/sandbox.js";\nexport const p = box;\n',
        "src/core/sandbox/sandbox.ts":
          'import { serve } from "../server/service.js";\nexport const box = serve;\n',
        "src/core/sandbox/workspace.ts":
          'import { request } from "node:https";\nexport const w = request;\n',
        "src/core/server/service.ts": "export const serve = 1;\n",
      };
      for (const [file, text] of Object.entries(planted)) {
        mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
        writeFileSync(path.join(tree, file), text);
      }
      copyFileSync(path.join(root, ".dependency-cruiser.cjs"), path.join(tree, "rules.cjs"));
      copyFileSync(path.join(root, "tsconfig.json"), path.join(tree, "tsconfig.json"));
      writeFileSync(path.join(tree, "package.json"), '{"type":"module"}\n');
      const run = spawnSync(
        path.join(root, "node_modules/.bin/depcruise"),
        ["src", "--config", "rules.cjs", "--output-type", "json"],
        { cwd: tree, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      );
      const report = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
      const found = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
      expect(found.sort()).toEqual([
        "core-leaf-below-rooms: src/core/limits.ts → src/core/server/service.ts",
        "network-in-packages-only: src/core/sandbox/workspace.ts → https",
        "packages-below-sandbox: src/core/packages/packages.ts → src/core/sandbox/sandbox.ts",
        "sandbox-below-server: src/core/sandbox/sandbox.ts → src/core/server/service.ts",
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it("the public types reach only core, the runtime and the message shapes", () => {
    const reached = new Set<string>();
    const queue = [path.join(root, "dist/index.d.ts")];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (reached.has(file)) continue;
      reached.add(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from|import\()\s*"(\.[^"]+)"/g))
        queue.push(path.join(path.dirname(file), m[1]!.replace(/\.js$/, ".d.ts")));
    }
    const rel = [...reached].map((f) => path.relative(path.join(root, "dist"), f));
    expect(
      rel.filter(
        (f) =>
          !/^(index|runtime|core\/((sandbox|packages|server)\/)?[\w-]+|protocol\/(messages|schemas|languages|net|endings))\.d\.ts$/.test(
            f,
          ),
      ),
    ).toEqual([]);
    // Members marked @internal are stripped: an embedder cannot reach the fleet or the hosts.
    const runtime = readFileSync(path.join(root, "dist/runtime.d.ts"), "utf8");
    expect(runtime).toMatch(/class Runtime/);
    expect(runtime).not.toMatch(/\bfleet\b|\bhostFor\b|\bnative\b\s*\(/);
  });

  it("declares every package it imports and imports every package it declares", () => {
    const imported = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".ts"))
          for (const m of readFileSync(p, "utf8").matchAll(
            /(?:from|import\(|\.resolve\()\s*"(?!\.|node:)((?:@[\w.-]+\/)?[\w.-]+)[^"]*"/g,
          ))
            imported.add(m[1]!);
      }
    };
    walk(path.join(root, "src"));
    // quickjs-emscripten's WebAssembly file is found through that package's own require.
    imported.delete("@jitl/quickjs-wasmfile-release-sync");
    // The cluster's packages are optional peers (src/cluster/dependencies.ts loads them).
    const optionalPeers = Object.keys(pkg.peerDependencies ?? {}).filter(
      (name) => pkg.peerDependenciesMeta?.[name]?.optional === true,
    );
    expect(optionalPeers.sort()).toEqual(["bullmq", "ioredis"]);
    const declared = [...Object.keys(pkg.dependencies), ...optionalPeers];
    // A tool a consumer's install runs (patch-package applies wasm/patches/ at postinstall) is used.
    for (const hook of ["preinstall", "install", "postinstall"])
      for (const name of declared)
        if (
          pkg.scripts[hook]
            ?.split(/&&|\|\||;/)
            .some((command) => command.trim().split(/\s+/)[0] === name)
        )
          imported.add(name);
    expect([...imported].filter((name) => !declared.includes(name)).sort()).toEqual([]);
    // @wasmer/sdk waits for its role (an engine for WASIX programs and Wasmer packages).
    expect(declared.filter((name) => !imported.has(name) && name !== "@wasmer/sdk")).toEqual([]);
  });

  it("postinstall patches just-bash only where it is polybox's own copy", () => {
    // Installed as a dependency with just-bash hoisted, patch-package could not find it and would
    // fail the app's whole install: the hook must skip it there, and succeed.
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), "polybox-hoisted-"));
    try {
      const skipped = spawnSync("sh", ["-c", pkg.scripts.postinstall!], {
        cwd: elsewhere,
        encoding: "utf8",
      });
      expect(skipped.status, skipped.stderr).toBe(0);
      expect(skipped.stdout).not.toMatch(/patch-package|Applying patches/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    // In polybox's own tree it runs patch-package (the patch itself is tested in test/fidelity).
    const here = spawnSync("sh", ["-c", pkg.scripts.postinstall!], { cwd: root, encoding: "utf8" });
    expect(here.status, here.stderr).toBe(0);
    expect(here.stdout).toMatch(/just-bash@3\.4\.2/);
  });

  it("core speaks library: its messages name options, never MCP tools or CLI flags", () => {
    const tool =
      /\b(close_sandbox|create_sandbox|create_run_close|execute_\w+|cancel_job|check_job_status|get_job_logs|get_sandbox_status|upload_file|install_package)\b/;
    const flag = /(^|[\s(`'"])--[a-z][a-z-]+/;
    const offenders: string[] = [];
    // The supervisors build command lines for the programs they start: tools only there.
    for (const [dir, flags] of [
      ["src/core", true],
      ["src/supervisor", false],
    ] as const) {
      for (const name of readdirSync(path.join(root, dir), { recursive: true })) {
        const file = String(name);
        if (!file.endsWith(".ts")) continue;
        const lines = readFileSync(path.join(root, dir, file), "utf8").split("\n");
        lines.forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, "").trim();
          if (code.startsWith("*") || code.startsWith("/*")) return;
          if (tool.test(code) || (flags && flag.test(code)))
            offenders.push(`${dir}/${file}:${i + 1}: ${code}`);
        });
      }
    }
    expect(offenders).toEqual([]);
  });

  it("docs/architecture.md's layout names every folder and top-level module of src/", () => {
    const doc = readFileSync(path.join(root, "docs/architecture.md"), "utf8");
    const block = doc.slice(doc.indexOf("## Layout"), doc.indexOf("## Processes and trust"));
    const src = path.join(root, "src");
    const top = readdirSync(src, { withFileTypes: true }).filter((e) => e.name !== "types");
    const entries = [
      ...top.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => e.name),
      ...top
        .filter((e) => e.isDirectory())
        .flatMap((d) => [
          d.name,
          ...readdirSync(path.join(src, d.name), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => e.name),
        ]),
    ];
    for (const name of entries)
      expect(block, name).toMatch(new RegExp(`\\b${name.replace(".", "\\.")}[/ ]`));
  });

  it("ships only files that exist", () => {
    for (const entry of pkg.files) {
      const base = entry.split("*")[0]!;
      expect(existsSync(path.join(root, base)), entry).toBe(true);
    }
  });
});

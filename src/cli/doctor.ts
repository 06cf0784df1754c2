// CLI: `polybox doctor` — what this machine gives polybox: the Node version, which engines are
// installed, and which isolation layers are active (and, for those that are not, why). The
// report is data first (doctorReport) so that other checks can be added to it and `--json`
// prints it as is; formatDoctor renders it for people.

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { LANGUAGE_INFO, LANGUAGES, type Language } from "../protocol/languages.js";
import { launcherReport } from "../supervisor/jail/launcher.js";
import { isolationLayers, type LayerReport } from "../supervisor/jail/layers.js";
import { permissionFlag } from "../supervisor/jail/permissions.js";
import { nodeRequirement, version } from "./version.js";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DoctorReport {
  version: string;
  platform: string;
  node: Check;
  engines: Check[];
  layers: LayerReport[];
  /** Native mode: the launcher and the machine's interpreters it would run. */
  native: Check[];
  /** The Node permission-model flag the engine host runs under (layer L2). */
  permissionFlag: string;
}

const require = createRequire(import.meta.url);

export async function doctorReport(): Promise<DoctorReport> {
  return {
    version: version(),
    platform: `${process.platform}-${process.arch}`,
    node: nodeCheck(),
    engines: await engineChecks(),
    layers: isolationLayers(),
    native: nativeChecks(),
    permissionFlag: permissionFlag(),
  };
}

/** Healthy when Node is supported and every engine was found. */
export function healthy(report: DoctorReport): boolean {
  return report.node.ok && report.engines.every((e) => e.ok);
}

function nodeCheck(): Check {
  const required = nodeRequirement();
  const [major = 0, minor = 0, patch = 0] = process.versions.node.split(".").map(Number);
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(required);
  const ok = compare([major, minor, patch], m);
  return { name: "node", ok, detail: `Node ${process.versions.node} (polybox needs ${required})` };
}

function compare(have: number[], want: RegExpExecArray | null): boolean {
  if (!want) return true;
  for (let i = 0; i < 3; i++) {
    const w = Number(want[i + 1]);
    if (have[i]! !== w) return have[i]! > w;
  }
  return true;
}

async function engineChecks(): Promise<Check[]> {
  let assets: typeof import("../supervisor/assets.js") | null = null;
  let why = "";
  try {
    assets = await import("../supervisor/assets.js");
  } catch (e) {
    why = e instanceof Error ? e.message : String(e);
  }
  const file = (name: string, p: string | null | undefined, what: string): Check =>
    p && existsSync(p)
      ? { name, ok: true, detail: `${what}: ${p}` }
      : { name, ok: false, detail: `${what} not found${why ? `: ${why}` : ""}` };
  const pkg = (name: string, id: string, what: string): Check => {
    try {
      return { name, ok: true, detail: `${what}: ${path.dirname(require.resolve(id))}` };
    } catch (e) {
      return {
        name,
        ok: false,
        detail: `${what} not installed (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`,
      };
    }
  };
  // A Record over the language table: a new language does not compile until doctor checks it.
  const checks: Record<Language, () => Check> = {
    python: () =>
      file("python", assets && path.join(assets.PYODIDE_DIR, "pyodide.asm.wasm"), "Pyodide"),
    javascript: () => file("javascript", assets?.QUICKJS_WASM, "QuickJS"),
    typescript: () => pkg("typescript", "amaro", "amaro type stripping (runs in QuickJS)"),
    bash: () => pkg("bash", "just-bash", "just-bash"),
    ruby: () =>
      file("ruby", assets?.rubyWasmPath(), "CRuby 3.4 from ruby.wasm (@ruby/3.4-wasm-wasi)"),
    wasm: () =>
      pkg("wasm", "@bjorn3/browser_wasi_shim", "WASI preview 1 modules on an in-memory WASI shim"),
    wasix: () =>
      pkg(
        "wasix",
        "@wasmer/sdk/node",
        "@wasmer/sdk runs WASIX and WASI modules and Wasmer registry packages by name (wasmerPackage; fetched, checked and cached by polybox, never by the sdk); network off, its threads hardened",
      ),
  };
  return LANGUAGES.map((l) => checks[l]());
}

function nativeChecks(): Check[] {
  const launcher = launcherReport();
  const checks: Check[] = [{ name: "launcher", ok: launcher.available, detail: launcher.detail }];
  if (!launcher.available) return checks;
  checks.push({
    name: "cgroup",
    ok: launcher.cgroup === "active",
    detail:
      launcher.cgroup === "active"
        ? "cgroup v2 memory and pids limits per jail"
        : `no cgroup limits (${launcher.cgroup}); rlimits and the workspace tmpfs still apply`,
  });
  for (const [name, p] of [
    ["python", "/usr/bin/python3"],
    ["bash", "/bin/bash"],
    ["node", process.execPath],
  ] as const) {
    const runs = LANGUAGES.filter((l) => LANGUAGE_INFO[l].native === name).join(", ");
    checks.push(
      existsSync(p)
        ? { name, ok: true, detail: `${p} (runs ${runs})` }
        : { name, ok: false, detail: `${p} not found (needed for ${runs})` },
    );
  }
  const wasmOnly = LANGUAGES.filter((l) => LANGUAGE_INFO[l].native === null);
  checks.push({ name: "wasm only", ok: true, detail: `${wasmOnly.join(", ")}: no native engine` });
  return checks;
}

export function formatDoctor(report: DoctorReport): string {
  const mark = (ok: boolean) => (ok ? "ok  " : "MISS");
  const lines = [
    `polybox ${report.version} on ${report.platform}`,
    "",
    `${mark(report.node.ok)} ${report.node.detail}`,
    "",
    "Engines:",
  ];
  for (const e of report.engines) lines.push(`  ${mark(e.ok)} ${e.name.padEnd(10)} ${e.detail}`);
  lines.push("", "Isolation layers:");
  for (const l of report.layers)
    lines.push(`  ${l.active ? "on " : "off"} ${l.id} ${l.name.padEnd(8)} ${l.detail}`);
  lines.push("", "Native mode (--isolation=native, or engine: native):");
  for (const c of report.native) lines.push(`  ${mark(c.ok)} ${c.name.padEnd(10)} ${c.detail}`);
  return lines.join("\n");
}

// T3 host process spawn: guest code in every language tries to run `touch <marker>` on the host,
// through every route to child_process we know of. The marker must never appear, and the engine
// host must never have a child process.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  childPids,
  expectRuntimeAnswers,
  fixture,
  hostPid,
  markerPath,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;

beforeAll(async () => {
  rt = await securityRuntime();
  sb = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
});

function expectNoSpawn(marker: string): void {
  expect(existsSync(marker), `${marker} was created: a host process ran`).toBe(false);
  expect(childPids(hostPid(sb)), "the engine host has child processes").toEqual([]);
}

it("T3 host process spawn: python subprocess, os.popen/fork/exec, import js, run_js, import()", async () => {
  const marker = markerPath("py-spawn");
  const r = await sb.run(
    "python",
    fixture("attempts.py") + fixture("spawn.py", { MARKER: marker }),
  );
  expect(r.stdout, r.stderr).toMatch(/DONE 12/);
  expectNoSpawn(marker);
  await expectRuntimeAnswers(rt);
});

// os.system and libc system() reach Emscripten's system(), which calls child_process.spawnSync
// in the worker: only the permission model (L2) stops it.
it.each([
  ["os.system", "import os\nos.system('touch {{MARKER}}')"],
  ["ctypes libc.system", "import ctypes\nctypes.CDLL(None).system(b'touch {{MARKER}}')"],
])("T3 host process spawn: python %s", async (_label, template) => {
  const marker = markerPath("py-system");
  const s = await newSandbox(rt);
  try {
    const r = await s.run("python", template.replace("{{MARKER}}", marker));
    expect(r.status).not.toBe("ok");
    expectNoSpawn(marker);
  } finally {
    await s.close();
  }
  await expectRuntimeAnswers(rt);
});

it("T3 host process spawn: javascript require('child_process'), process, import()", async () => {
  const marker = markerPath("js-spawn");
  const code = `{
    const out = [];
    const attempt = async (label, fn) => { try { await fn(); out.push(label + ": GOT"); } catch (e) { out.push(label + ": blocked " + e.message); } };
    await attempt("require", () => require("child_process").execSync("touch ${marker}"));
    await attempt("require node:", () => require("node:child_process").execSync("touch ${marker}"));
    await attempt("process.binding", () => process.binding("spawn_sync"));
    await attempt("process.dlopen", () => process.dlopen({}, "libc.so.6"));
    await attempt("import()", async () => (await import("node:child_process")).execSync("touch ${marker}"));
    await attempt("Function", () => Function("return process")().mainModule.require("child_process"));
    console.log(out.join("\\n"));
    console.log("DONE " + out.length);
  }`;
  const r = await sb.run("javascript", code);
  expect(r.stdout, r.stderr).toMatch(/DONE 6/);
  expect(r.stdout).not.toMatch(/: GOT/);
  expectNoSpawn(marker);
  await expectRuntimeAnswers(rt);
});

it("T3 host process spawn: bash sh -c, bash -c, exec, command substitution, xargs, timeout", async () => {
  const marker = markerPath("bash-spawn");
  const code = [
    `sh -c 'touch ${marker}'`,
    `bash -c 'touch ${marker}'`,
    `x=$(touch ${marker})`,
    `echo ${marker} | xargs touch`,
    `timeout 5 touch ${marker}`,
    `/usr/bin/touch ${marker}`,
    `(exec touch ${marker})`,
    "echo DONE",
  ].join("\n");
  const r = await sb.run("bash", code);
  expect(r.stdout).toContain("DONE");
  expectNoSpawn(marker);
  await expectRuntimeAnswers(rt);
});

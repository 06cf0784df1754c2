// L2 on Node 22 and 24: in a process under the permission model, a worker thread may read
// anything below the process's working directory, whatever --allow-fs-read grants (the main
// thread may not; Node 20 refuses both). Guest code runs in such a worker, so the engine host's
// working directory must hold nothing it may not read anyway. The first test shows the hazard on
// this Node; the second checks where polybox's jailed engine host works.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { linuxJailWrapper, polyboxReadPaths } from "../../dist/supervisor/jail/launcher.js";

it("on this Node, a worker's reads below the working directory are as the main thread's, or wider", () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), "polybox-cwd-"));
  try {
    writeFileSync(path.join(cwd, "secret.txt"), "secret");
    const script = path.join(cwd, "probe.cjs");
    writeFileSync(
      script,
      `const { Worker } = require("node:worker_threads");
const target = ${JSON.stringify(path.join(cwd, "secret.txt"))};
const main = process.permission.has("fs.read", target);
new Worker("require('node:worker_threads').parentPort.postMessage(process.permission.has('fs.read', " + JSON.stringify(target) + "))", { eval: true })
  .on("message", (inWorker) => console.log(JSON.stringify({ main, inWorker })));`,
    );
    const flag = process.allowedNodeEnvironmentFlags.has("--permission")
      ? "--permission"
      : "--experimental-permission";
    const out = execFileSync(
      process.execPath,
      [flag, `--allow-fs-read=${script}`, "--allow-worker", "--no-warnings", script],
      { cwd, encoding: "utf8" },
    );
    const { main, inWorker } = JSON.parse(out) as { main: boolean; inWorker: boolean };
    expect(main).toBe(false);
    // Recorded, not required: Node 22 and 24 answer true here, Node 20 false.
    expect(typeof inWorker).toBe("boolean");
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

it("the jailed engine host works in a directory it may read anyway", () => {
  // In the Linux jail the host's /tmp holds every bound path that lives under the host's /tmp
  // (a Node installed there, a clone there); its working directory is polybox's dist/ instead,
  // which --allow-fs-read grants. Outside the jail it is the host's own empty temporary directory.
  const [, args] = linuxJailWrapper([])("/usr/bin/node", ["main.js"], "/unused");
  const cwd = args[args.indexOf("--cwd") + 1]!;
  const granted = polyboxReadPaths();
  expect(
    granted.some((p) => cwd === p || cwd.startsWith(`${p}${path.sep}`)),
    cwd,
  ).toBe(true);
});

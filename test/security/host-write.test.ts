// T2 host file write: guest code in every language tries to create a marker file on the host
// (in the OS temp dir, where the engine host's own temp dir also lives). The guest may well
// create the file inside its own in-memory file system; it must never appear on the host.
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  fixture,
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

/** No file with the marker's name anywhere directly under the temp dir or its polybox dirs. */
function expectAbsent(marker: string): void {
  expect(existsSync(marker), `${marker} was created on the host`).toBe(false);
  const name = marker.slice(marker.lastIndexOf("/") + 1);
  for (const dir of readdirSync(os.tmpdir()).filter((d) => d.startsWith("polybox-"))) {
    expect(existsSync(`${os.tmpdir()}/${dir}/${name}`), `${name} appeared in ${dir}`).toBe(false);
  }
}

it("T2 host file write: python open(), FS, import js, run_js, report.writeReport, NODEFS", async () => {
  const marker = markerPath("py-write");
  const r = await sb.run(
    "python",
    fixture("attempts.py") + fixture("write-host.py", { MARKER: marker }),
  );
  expect(r.stdout, r.stderr).toMatch(/DONE 8/);
  expectAbsent(marker);
  await expectRuntimeAnswers(rt);
});

it("T2 host file write: javascript fs.writeFileSync/appendFileSync/mkdirSync outside /workspace", async () => {
  const marker = markerPath("js-write");
  const code = `{
    const fs = require("fs");
    const out = [];
    for (const [label, fn] of [
      ["writeFileSync", () => fs.writeFileSync(${JSON.stringify(marker)}, "x")],
      ["appendFileSync", () => fs.appendFileSync(${JSON.stringify(marker)}, "x")],
      ["via ..", () => fs.writeFileSync("/workspace/../.." + ${JSON.stringify(marker)}, "x")],
      ["bytes", () => fs.writeFileSync(${JSON.stringify(marker)}, new Uint8Array([1, 2]))],
      ["mkdirSync", () => fs.mkdirSync(${JSON.stringify(`${marker}.d`)}, { recursive: true })],
      ["renameSync", () => (fs.writeFileSync("a.txt", "x"), fs.renameSync("a.txt", ${JSON.stringify(marker)}))],
      ["copyFileSync", () => fs.copyFileSync("a.txt", ${JSON.stringify(marker)})],
    ]) {
      try { fn(); out.push(label + ": GOT"); } catch (e) { out.push(label + ": blocked " + e.code); }
    }
    console.log(out.join("\\n"));
    console.log("DONE " + out.length);
  }`;
  const r = await sb.run("javascript", code);
  expect(r.stdout, r.stderr).toMatch(/DONE 7/);
  expect(r.stdout).toMatch(/writeFileSync: blocked EACCES/);
  expectAbsent(marker);
  expectAbsent(`${marker}.d`);
  await expectRuntimeAnswers(rt);
});

it("T2 host file write: bash redirection, touch, tee, cp, mkdir at a host path", async () => {
  const marker = markerPath("bash-write");
  const code = [
    `echo x > ${marker}`,
    `touch ${marker}`,
    `echo x | tee ${marker}`,
    `cp /dev/null ${marker}`,
    `mkdir -p ${marker}.d`,
    `cd /; cd ../../..; echo x > .${marker}`,
    "echo DONE",
  ].join("\n");
  const r = await sb.run("bash", code);
  expect(r.stdout).toContain("DONE");
  expectAbsent(marker);
  expectAbsent(`${marker}.d`);
  await expectRuntimeAnswers(rt);
});

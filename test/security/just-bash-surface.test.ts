// T15 just-bash surface: the shell is an interpreter with its own in-memory file system and
// commands. Its network commands and its embedded language runtimes must be absent, and the host's
// paths must not exist in it.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
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

// curl is present: its requests go to the trusted side like every guest request (T5), and with
// nothing granted they fail there; see the test after this list.
const ABSENT = [
  "wget",
  "nc",
  "ssh",
  "python3",
  "python",
  "node",
  "js-exec",
  "deno",
  "bun",
  "perl",
  "ruby",
  "sudo",
  "su",
  "mount",
  "chroot",
];

it.each(ABSENT)("T15 just-bash commands: %s is absent or fails", async (cmd) => {
  const r = await sb.run(
    "bash",
    `${cmd} --version; echo "rc=$?"; command -v ${cmd}; echo "which=$?"`,
  );
  expect(r.stdout).toMatch(/rc=(126|127)\b/);
  expect(r.stdout).toMatch(/which=1\b/);
});

it("T15/T5 just-bash commands: curl reaches only the trusted side, which grants nothing here", async () => {
  const r = await sb.run("bash", `curl -sS http://127.0.0.1:9/; echo "rc=$?"`);
  expect(r.stdout).toMatch(/rc=[1-9]/);
  expect(r.stderr).toContain("network access to 127.0.0.1:9 is not granted");
});

it("T15 just-bash host paths: /etc/shadow, /proc/self/environ, /home, /root do not exist; /etc/passwd and /tmp are the interpreter's own", async () => {
  const r = await sb.run(
    "bash",
    'for p in /etc/shadow /proc/self/environ /proc/1/cmdline /home /root /var /sys /dev/sda; do test -e $p && echo "EXISTS $p" || echo "absent $p"; done; ls /; echo "tmp:[$(ls -A /tmp)]"; echo "passwd:[$(cat /etc/passwd)]"',
  );
  expect(r.stdout).not.toMatch(/EXISTS/);
  expect(r.stdout).toMatch(/absent \/etc\/shadow/);
  // /etc/passwd is the engine's two-line file (root and the sandbox's user), not the host's.
  expect(r.stdout).toContain(
    "passwd:[root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/workspace:/bin/bash]",
  );
  // /tmp is an empty scratch directory in the interpreter's in-memory file system, not the host's.
  expect(r.stdout).toContain("tmp:[]");
  await expectRuntimeAnswers(rt);
});

// just-bash's own defense in depth (Function, eval and dynamic imports blocked while a script
// runs) is on in its process-lifetime form: the bash engine's realm keeps Reflect, JSON and Math
// frozen for good, not only during a run. Checked in a child process that loads the engine as a
// worker does, since the freeze is for the life of the realm.
it("T15 just-bash's defense in depth is on, and Reflect, JSON and Math stay frozen between runs", () => {
  const engine = new URL("../../dist/guest/engines/bash/engine.js", import.meta.url).href;
  const script = `
    const { createEngine } = await import(${JSON.stringify(engine)});
    const before = [Object.isFrozen(Reflect), Object.isFrozen(JSON), Object.isFrozen(Math)];
    const e = await createEngine();
    const request = { code: "echo hi", stdin: "", env: {}, fullSync: true,
      sync: { files: [], dirs: [], removed: [] },
      limits: { timeoutMs: 10000, memoryMb: 256, maxOutputBytes: 65536, workspaceQuotaBytes: 1 << 20 } };
    let out = "";
    await e.applyFiles(request);
    const r = await e.run(request, { output: { write: (_s, t) => { out += t; } },
      deadline: Date.now() + 10000, stopRequested: false, display() {}, net: async () => ({}) });
    const after = [Object.isFrozen(Reflect), Object.isFrozen(JSON), Object.isFrozen(Math)];
    let mutated = "no";
    try { JSON.parse = () => 1; if (JSON.parse("2") === 1) mutated = "yes"; } catch { mutated = "threw"; }
    process.stdout.write(JSON.stringify({ before, after, out, exitCode: r.exitCode, mutated }));
  `;
  const text = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  const seen = JSON.parse(text);
  expect(seen.out).toBe("hi\n");
  expect(seen.exitCode).toBe(0);
  expect(seen.before).toEqual([false, false, false]);
  expect(seen.after).toEqual([true, true, true]);
  expect(seen.mutated).not.toBe("yes");
});

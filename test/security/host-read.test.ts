// T1 host file read: guest code in every language tries to read canary files that this test
// plants on the host (one in the OS temp dir, one in the repo), by every route we know of. The
// secret must never come back, and the runtime must answer normally afterwards.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Canary,
  expectNoLeak,
  expectRuntimeAnswers,
  fixture,
  newSandbox,
  plantCanaries,
  REPO_DIR,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;
let canaries: { tmp: Canary; repo: Canary };
const ALLOWED_DIR = join(REPO_DIR, "node_modules", "pyodide");
const WRITE_NAME = `polybox-nodefs-write-${process.pid}.txt`;
const py = (name: string, values: Record<string, string>) =>
  fixture("attempts.py") + fixture(name, values);

beforeAll(async () => {
  canaries = plantCanaries();
  rt = await securityRuntime();
  sb = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
  canaries?.tmp.remove();
  canaries?.repo.remove();
});

describe.each(["tmp", "repo"] as const)("canary in the %s dir", (where) => {
  const canary = () => canaries[where];

  it(`T1 host file read: python open(), import js, run_js, pyodide_js, ctypes (${where} canary)`, async () => {
    const r = await sb.run("python", py("read-canary.py", { CANARY: canary().path }));
    expectNoLeak(r, canary().secret);
    expect(r.stdout, r.stderr).toMatch(/DONE \d+/);
    expect(r.stdout).toMatch(/open\(\): blocked/);
    await expectRuntimeAnswers(rt);
  });

  it(`T1 host file read: python NODEFS mount of the canary's dir (${where} canary)`, async () => {
    const path = canary().path;
    const dir = path.slice(0, path.lastIndexOf("/"));
    const name = path.slice(dir.length + 1);
    const s = await newSandbox(rt);
    try {
      const r = await s.run(
        "python",
        py("nodefs-mount.py", { DIR: dir, NAME: name, WRITE_NAME: WRITE_NAME, ALLOWED_DIR }),
      );
      expectNoLeak(r, canary().secret);
      expect(r.stdout, r.stderr).toMatch(/DONE 5/);
      // The control mount of a directory the engine host may read works: the route is real.
      expect(r.stdout).toContain("CONTROL-MOUNT-OK");
      expect(existsSync(join(ALLOWED_DIR, WRITE_NAME))).toBe(false);
    } finally {
      await s.close();
    }
    await expectRuntimeAnswers(rt);
  });

  it(`T1 host file read: javascript require('fs'), process, Function-to-host, import() (${where} canary)`, async () => {
    const r = await sb.run("javascript", fixture("read-canary.js", { CANARY: canary().path }));
    expectNoLeak(r, canary().secret);
    expect(r.stdout, r.stderr).toMatch(/DONE \d+/);
    // The workspace-only fs refuses host paths with EACCES rather than pretending they are absent.
    expect(r.stdout).toMatch(/require\('fs'\): blocked EACCES/);
    await expectRuntimeAnswers(rt);
  });

  it(`T1 host file read: bash cat, source, cd .., find (${where} canary)`, async () => {
    const path = canary().path;
    const dir = path.slice(0, path.lastIndexOf("/"));
    const code = [
      `cat ${path}`,
      `source ${path}`,
      `while read l; do echo "$l"; done < ${path}`,
      `cd ${dir} && cat ./${path.slice(dir.length + 1)}`,
      "cd /; cd ..; cd ../..; pwd; ls",
      `find / -name '*canary*' 2>/dev/null | head`,
      `grep -r CANARY- / 2>/dev/null | head`,
      "echo DONE",
    ].join("\n");
    const r = await sb.run("bash", code);
    expectNoLeak(r, canary().secret);
    expect(r.stdout).toContain("DONE");
    await expectRuntimeAnswers(rt);
  });
});

it("T1 host file read: bash cat /etc/passwd, ls /, /home, /proc/self/environ show no host data", async () => {
  const r = await sb.run(
    "bash",
    "cat /etc/passwd; cat /etc/hostname; ls / /home /root /tmp; cat /proc/self/environ; echo DONE",
  );
  expect(r.stdout).toContain("DONE");
  // /etc/passwd and /etc/hostname are the engine's own (root and the sandbox's user; localhost),
  // so no other line of the host's files shows.
  expect(r.stdout).toMatch(
    /^root:x:0:0:root:\/root:\/bin\/bash\nuser:x:1000:1000:user:\/workspace:\/bin\/bash\nlocalhost\n/,
  );
  const host = (file: string) =>
    existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  for (const line of host("/etc/passwd").filter((l) => !/^(root|user):/.test(l)))
    expect(r.stdout).not.toContain(line);
  const hostname = host("/etc/hostname")[0];
  if (hostname && hostname !== "localhost") expect(r.stdout.split("\n")).not.toContain(hostname);
  expect(r.stdout).not.toMatch(/polybox-ws-|polybox-host-/);
  await expectRuntimeAnswers(rt);
});

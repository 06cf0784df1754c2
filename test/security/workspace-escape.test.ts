// T7 workspace escape: `..`, absolute paths, backslashes and symlinks, both through the file API
// (sb.files.*, which must throw PATH_OUTSIDE_WORKSPACE) and from guest code (which may build any
// link or name inside its own file system, but must never get host data back or make the trusted
// side write outside the workspace directory).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectNoLeak,
  expectRuntimeAnswers,
  isPolyboxError,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
  workspaceDir,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;
/** A line of the host's /etc/passwd: it must never show up in a guest's output or a file read. */
// A line of the host's /etc/passwd that is not also in the Bash engine's own (root's and the
// sandbox user's entries are in both).
const hostPasswd =
  (existsSync("/etc/passwd") ? readFileSync("/etc/passwd", "utf8").split("\n") : []).find(
    (line) => line.includes(":") && !/^(root|user):/.test(line),
  ) ?? "daemon:x:1:1:";

beforeAll(async () => {
  rt = await securityRuntime();
  sb = await newSandbox(rt);
  await sb.files.write("inside.txt", "inside");
});

afterAll(async () => {
  await rt?.close();
});

const ESCAPES = [
  "../escape.txt",
  "../../../../etc/passwd",
  "/etc/passwd",
  "/workspace/../etc/passwd",
  "/workspace/../../../etc/passwd",
  "a/../../escape.txt",
  "a/b/../../../escape.txt",
  "..\\escape.txt",
  "a\\..\\..\\escape.txt",
  "/workspace/a/../../escape.txt",
  "/tmp/escape.txt",
  "//etc/passwd",
];

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "no error";
  } catch (e) {
    return isPolyboxError(e) ? e.code : `non-polybox error: ${String(e)}`;
  }
}

describe("T7 workspace escape: the file API", () => {
  it.each(ESCAPES)(
    "T7 workspace escape: sb.files.write/read/remove %j throw PATH_OUTSIDE_WORKSPACE",
    async (p) => {
      expect(await code(sb.files.write(p, "escaped"))).toBe("PATH_OUTSIDE_WORKSPACE");
      expect(await code(sb.files.read(p))).toBe("PATH_OUTSIDE_WORKSPACE");
      expect(await code(sb.files.remove(p))).toBe("PATH_OUTSIDE_WORKSPACE");
    },
  );

  it("T7 workspace escape: sb.files.list of .. and / throw PATH_OUTSIDE_WORKSPACE", async () => {
    for (const p of ["..", "../..", "/", "/etc", "/workspace/..", "a/../.."]) {
      expect(await code(sb.files.list(p)), p).toBe("PATH_OUTSIDE_WORKSPACE");
    }
  });

  it("T7 workspace escape: nothing was written next to or above the workspace directory", async () => {
    const dir = workspaceDir(sb)!;
    expect(dir).toBeTruthy();
    const parent = path.dirname(dir);
    expect(existsSync(path.join(parent, "escape.txt"))).toBe(false);
    expect(existsSync(path.join(os.tmpdir(), "escape.txt"))).toBe(false);
    expect(readdirSync(dir)).toEqual(["inside.txt"]);
  });
});

describe("T7 workspace escape: guest code", () => {
  it("T7 workspace escape: python open('../../etc/passwd'), os.symlink('/') then files.read through the link", async () => {
    const r = await sb.run(
      "python",
      [
        "import os",
        "for p in ['../../etc/passwd', '/etc/passwd', '/workspace/../../etc/passwd']:",
        "    try:",
        "        print(open(p).read())",
        "    except OSError as e:",
        "        print('blocked', p, type(e).__name__)",
        "os.symlink('/', 'root')",
        "os.symlink('/etc/passwd', 'pw')",
        "os.symlink('..', 'up')",
        "print('DONE')",
      ].join("\n"),
    );
    expect(r.stdout, r.stderr).toContain("DONE");
    expectNoLeak(r, hostPasswd);
    for (const p of ["root/etc/passwd", "pw", "up/etc/passwd", "root"]) {
      const got = await sb.files
        .read(p, "utf8")
        .catch((e: unknown) => (isPolyboxError(e) ? e.code : String(e)));
      expect(got, p).not.toContain(hostPasswd);
      expect(["FILE_NOT_FOUND", "NOT_A_FILE", "PATH_OUTSIDE_WORKSPACE"], `${p}: ${got}`).toContain(
        got,
      );
    }
    await expectRuntimeAnswers(rt);
  });

  it("T7 workspace escape: bash ln -s / root; cat root/etc/passwd; then files.read of the link path", async () => {
    const r = await sb.run(
      "bash",
      "ln -s / root2; cat root2/etc/passwd; ln -s /etc/passwd pw2; cat pw2; cd ../../..; cat etc/passwd; echo DONE",
    );
    expect(r.stdout).toContain("DONE");
    expectNoLeak(r, hostPasswd);
    for (const p of ["root2/etc/passwd", "pw2"]) {
      const got = await sb.files
        .read(p, "utf8")
        .catch((e: unknown) => (isPolyboxError(e) ? e.code : String(e)));
      expect(got, p).not.toContain(hostPasswd);
    }
    await expectRuntimeAnswers(rt);
  });

  it("T7 workspace escape: javascript readFileSync('/etc/passwd') and '../' fail with EACCES", async () => {
    const r = await sb.run(
      "javascript",
      `const fs = require("fs");
       const codes = ["/etc/passwd", "../etc/passwd", "/workspace/../etc/passwd", "../../../../etc/passwd"].map((p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return e.code; } });
       codes.join(",")`,
    );
    expect(r.value).toBe("'EACCES,EACCES,EACCES,EACCES'");
    expectNoLeak(r, hostPasswd);
  });

  it("T7 workspace escape: guest file names with backslashes and dots never land outside the workspace", async () => {
    const s = await newSandbox(rt);
    try {
      await s.files.write("seed.txt", "seed");
      const r = await s.run(
        "python",
        "for name in ['a\\\\..\\\\..\\\\escape-bs.txt', '..\\\\escape-bs2.txt', '...', 'x\\nname']:\n    open(name, 'w').write('guest')\nprint('DONE')",
      );
      // The trusted side rejects the whole result (a backslash is not a safe relative path).
      expect(["ok", "error"]).toContain(r.status);
      const dir = workspaceDir(s)!;
      for (const name of ["escape-bs.txt", "escape-bs2.txt"]) {
        expect(existsSync(path.join(path.dirname(dir), name))).toBe(false);
        expect(existsSync(path.join(os.tmpdir(), name))).toBe(false);
      }
      for (const f of await s.files.list()) expect(f.path.split("/")).not.toContain("..");
    } finally {
      await s.close();
    }
    await expectRuntimeAnswers(rt);
  });

  it("T7 workspace escape: a guest file name the host cannot hold (300 bytes) ends in a result, not an exception", async () => {
    const s = await newSandbox(rt);
    try {
      const outcome = await s.run("python", "open('n' * 300, 'w').write('x')").then(
        (r) => r.status,
        (e: unknown) => `threw ${String(e).slice(0, 200)}`,
      );
      expect(outcome).not.toMatch(/^threw/);
      for (const f of await s.files.list()) expect(f.path.length).toBeLessThanOrEqual(255);
    } finally {
      await s.close();
    }
    await expectRuntimeAnswers(rt);
  });
});

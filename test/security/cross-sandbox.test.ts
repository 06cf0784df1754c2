// T6 another sandbox's files and interpreter state: sandbox A holds a secret in a variable, in
// its worker realm and in a workspace file, in every language; sandbox B (same runtime, same
// engine host) tries every way to see it. A itself sees its secret (so the secret is real). A
// guest must also not be able to tamper with what later sandboxes' interpreters boot from.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectNoLeak,
  expectRuntimeAnswers,
  fixture,
  isPolyboxError,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
  workspaceDir,
} from "../helpers/security-env.js";

let rt: Runtime;
let a: Sandbox;
let b: Sandbox;
const secret = `xsb-secret-${randomBytes(8).toString("hex")}`;

beforeAll(async () => {
  rt = await securityRuntime();
  a = await newSandbox(rt);
  b = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
});

const plant = {
  python: `SECRET = "${secret}"\nopen("secret-py.txt", "w").write(SECRET)\nfrom pyodide.code import run_js\nrun_js("globalThis.SECRET = '${secret}'")\nimport builtins\nbuiltins.SECRET_B = SECRET`,
  javascript: `globalThis.SECRET = "${secret}"; var SECRET2 = SECRET; require("fs").writeFileSync("secret-js.txt", SECRET)`,
  bash: `export SECRET=${secret}; SECRET2=${secret}; echo $SECRET > secret-bash.txt`,
};
const peek = {
  python: `import builtins, os\nfrom pyodide.code import run_js\nprint(globals().get("SECRET"), getattr(builtins, "SECRET_B", None), run_js("String(globalThis.SECRET)"), os.listdir("."))\nfor f in os.listdir("/workspace"):\n    print(f, open(f).read())`,
  javascript: `console.log(String(globalThis.SECRET), typeof SECRET2 === "undefined" ? "none" : SECRET2, JSON.stringify(require("fs").readdirSync("/workspace")))`,
  bash: `echo "[$SECRET][$SECRET2]"; ls -la /workspace; cat /workspace/*`,
};

describe.each(["python", "javascript", "bash"] as const)("%s", (language) => {
  it(`T6 cross-sandbox: ${language} variables, realm globals and files of sandbox A are invisible to B`, async () => {
    const planted = await a.run(language, plant[language]);
    expect(planted.status, planted.stderr).toBe("ok");
    // Positive control: A sees its own secret, in its interpreter and its workspace.
    const own = await a.run(language, peek[language]);
    expect(own.stdout).toContain(secret);
    expect(
      await a.files.read(
        `secret-${language === "javascript" ? "js" : language === "python" ? "py" : "bash"}.txt`,
        "utf8",
      ),
    ).toContain(secret);

    const r = await b.run(language, peek[language]);
    expectNoLeak(r, secret);
    await expectRuntimeAnswers(rt);
  });
});

it("T6 cross-sandbox: B's file API cannot name A's files", async () => {
  expect((await a.files.list()).map((f) => f.path)).toContain("secret-py.txt");
  expect((await b.files.list()).map((f) => f.path)).not.toContain("secret-py.txt");
  for (const path of ["secret-py.txt", "/workspace/secret-js.txt", `../${a.id}/secret-bash.txt`]) {
    const error = await b.files.read(path, "utf8").then(
      (text) => text,
      (e: unknown) => e,
    );
    expect(isPolyboxError(error), `B read ${path}: ${String(error)}`).toBe(true);
  }
});

it("T6 cross-sandbox: B mounts A's host workspace directory with NODEFS", async () => {
  const dir = workspaceDir(a);
  expect(dir, "A's workspace has a host directory").toBeTruthy();
  const code = `
import js, pyodide_js
from pyodide.ffi import to_js
FS = pyodide_js.FS
FS.mkdirTree("/mnt/a")
try:
    FS.mount(FS.filesystems.NODEFS, to_js({"root": "${dir}"}, dict_converter=js.Object.fromEntries), "/mnt/a")
    print(open("/mnt/a/secret-py.txt").read())
except BaseException as e:
    print("blocked", type(e).__name__)
print("DONE")`;
  const r = await b.run("python", code);
  expect(r.stdout).toContain("DONE");
  expectNoLeak(r, secret);
});

it("T6 cross-sandbox: a closed sandbox's interpreter state never reaches a new sandbox", async () => {
  const c = await newSandbox(rt);
  await c.run("python", `LEFTOVER = "${secret}"`);
  await c.run("javascript", `globalThis.LEFTOVER = "${secret}"`);
  await c.close();
  const d = await newSandbox(rt);
  try {
    for (const r of [
      await d.run("python", "print(globals().get('LEFTOVER'))"),
      await d.run("javascript", "console.log(String(globalThis.LEFTOVER))"),
    ]) {
      expectNoLeak(r, secret);
    }
  } finally {
    await d.close();
  }
});

it("T6 cross-sandbox: a guest rewrites the shared Python snapshot that later interpreters boot from", async () => {
  const mark = `PWNED-${randomBytes(6).toString("hex")}`;
  const attacker = await newSandbox(rt);
  try {
    const r = await attacker.run(
      "python",
      fixture("attempts.py") + fixture("poison-snapshot.py", { MARK: mark }),
    );
    expect(r.stdout, r.stderr).toMatch(/DONE 1/);
  } finally {
    await attacker.close();
  }
  // Victims: fresh sandboxes whose interpreters come from the pool (refilled after the attack).
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const victim = await newSandbox(rt);
    try {
      const r = await victim.run("python", "import sys\nsys.copyright");
      expect(r.status).toBe("ok");
      seen.push(r.value ?? "");
    } finally {
      await victim.close();
    }
  }
  expect(seen.join("\n"), "a later sandbox booted from memory another guest wrote").not.toContain(
    mark.slice(0, 12),
  );
});

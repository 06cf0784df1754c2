// One workspace per sandbox, shared by every language, reachable through sb.files, bounded by
// its quota, and gone when the sandbox closes.
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

describe("shared workspace", () => {
  it("passes files between Python, Bash and JavaScript in both directions", async () => {
    await using sb = await Sandbox.create({ runtime });
    const py = await sb.run(
      "python",
      "import os\nos.makedirs('out', exist_ok=True)\nopen('out/nums.txt', 'w').write('3\\n1\\n2\\n')",
    );
    expect(py.filesChanged).toEqual(["out", "out/nums.txt"]);
    const sh = await sb.run("bash", "sort -n out/nums.txt > sorted.txt && wc -l < sorted.txt");
    expect(sh.stdout.trim()).toBe("3");
    expect(sh.filesChanged).toEqual(["sorted.txt"]);
    const js = await sb.run(
      "javascript",
      "const fs = require('fs');\nfs.writeFileSync('sum.txt', String(fs.readFileSync('sorted.txt', 'utf8').trim().split('\\n').map(Number).reduce((a, b) => a + b)));\nfs.rmSync('out', { recursive: true })",
    );
    expect(js.status).toBe("ok");
    expect(await sb.files.read("sum.txt", "utf8")).toBe("6");
    const back = await sb.run(
      "python",
      "import os\nprint(open('sum.txt').read(), os.path.exists('out'))",
    );
    expect(back.stdout).toBe("6 False\n");
  });

  it("exposes the workspace through sb.files: write, read, list, remove", async () => {
    await using sb = await Sandbox.create({ runtime });
    await sb.files.write("data/in.csv", "a,b,c\n1,2,3\n");
    await sb.files.write("/workspace/bin.dat", new Uint8Array([0, 255, 7]));
    expect((await sb.files.list()).map((f) => [f.path, f.type, f.size])).toEqual([
      ["bin.dat", "file", 3],
      ["data", "directory", 0],
      ["data/in.csv", "file", 12],
    ]);
    const r = await sb.run(
      "python",
      "import csv\nprint([row[2] for row in csv.reader(open('data/in.csv'))])\nopen('bin.dat','rb').read()",
    );
    expect(r.stdout).toBe("['c', '3']\n");
    expect(r.value).toBe("b'\\x00\\xff\\x07'");
    await sb.files.remove("data");
    expect((await sb.files.list()).map((f) => f.path)).toEqual(["bin.dat"]);
    expect((await sb.run("bash", "ls")).stdout).toBe("bin.dat\n");
  });

  it("refuses writes over the quota from the API and from guests, keeping earlier files", async () => {
    await using sb = await Sandbox.create({ runtime, limits: { workspaceQuotaBytes: 10_000 } });
    await sb.files.write("keep.txt", "kept");
    await expect(sb.files.write("big.bin", new Uint8Array(20_000))).rejects.toMatchObject({
      code: "QUOTA_EXCEEDED",
    });
    for (const [language, code] of [
      ["python", "open('big.txt', 'w').write('x' * 20000)"],
      ["javascript", "require('fs').writeFileSync('big.txt', 'x'.repeat(20000))"],
      [
        "bash",
        "s=xxxxxxxxxx; for i in 1 2 3 4 5 6 7 8 9 10 11; do s=$s$s; done; echo $s > big.txt",
      ],
    ] as const) {
      const r = await sb.run(language, code);
      expect(r.status, language).toBe("workspace_limit");
      expect(r.message, language).toMatch(/workspaceQuotaBytes=10000/);
    }
    expect((await sb.files.list()).map((f) => f.path)).toEqual(["keep.txt"]);
    expect((await sb.run("python", "import os; sorted(os.listdir())")).value).toBe("['keep.txt']");
  });

  it("keeps separate sandboxes apart", async () => {
    await using a = await Sandbox.create({ runtime });
    await using b = await Sandbox.create({ runtime });
    await a.files.write("secret.txt", "only a");
    await a.run("python", "token = 'only a'");
    expect((await b.run("bash", "ls")).stdout).toBe("");
    expect((await b.run("python", "'token' in globals()")).value).toBe("False");
    await expect(b.files.read("secret.txt")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
  });

  it("destroys every byte of the workspace on close", async () => {
    const before = new Set(readdirSync(os.tmpdir()).filter((n) => n.startsWith("polybox-ws-")));
    const sb = await Sandbox.create({ runtime });
    await sb.files.write("f.txt", "x");
    const created = readdirSync(os.tmpdir()).filter(
      (n) => n.startsWith("polybox-ws-") && !before.has(n),
    );
    expect(created).toHaveLength(1);
    await sb.close();
    expect(existsSync(`${os.tmpdir()}/${created[0]}`)).toBe(false);
    await sb.close(); // idempotent
  });
});

describe("names the workspace cannot store", () => {
  it.each([
    ["bash", "echo before; touch 'a\\b' ok.txt; echo after"],
    [
      "python",
      "print('before'); open('a\\\\b', 'w').write('1'); open('ok.txt', 'w').write('2'); print('after')",
    ],
  ] as const)(
    "a %s run that makes a file with a backslash keeps its output and other files",
    async (language, code) => {
      await using sb = await Sandbox.create({ runtime });
      const r = await sb.run(language, code);
      expect(r.status).toBe("ok");
      expect(r.stdout).toBe("before\nafter\n");
      expect(r.stateLost).toBeUndefined();
      expect(r.filesChanged).toEqual(["ok.txt"]);
      expect(r.notes?.join("\n")).toMatch(/not kept in the workspace: "a\\\\b"/);
      expect((await sb.files.list()).map((f) => f.path)).toEqual(["ok.txt"]);
    },
  );
});

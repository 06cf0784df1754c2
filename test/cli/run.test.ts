// End to end for the CLI binary (dist/cli/main.js): `polybox run` on .py, .js, .ts and .sh files
// and with -e (output printed, exit code passed through, limits named), plus --help, --version,
// doctor, and usage errors (exit 2).

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/mcp-client.js";
import { wasixModule } from "../helpers/wasix-modules.js";
import { buildWheel } from "../helpers/wheel.js";

const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-cli-"));

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function polybox(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

function script(name: string, source: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, source);
  return file;
}

describe("polybox run", () => {
  it("runs a .py file, printing its output and passing its exit code through", async () => {
    const r = await polybox([
      "run",
      script(
        "a.py",
        "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\nsys.exit(3)\n",
      ),
    ]);
    expect(r).toMatchObject({ code: 3, stdout: "to out\n" });
    expect(r.stderr).toContain("to err\n");
  });

  it("runs .js, .ts and .sh files", async () => {
    expect(await polybox(["run", script("b.js", "console.log(2 ** 10)")])).toMatchObject({
      code: 0,
      stdout: "1024\n",
    });
    expect(
      await polybox(["run", script("c.ts", "const s: string = 'typed'; console.log(s)")]),
    ).toMatchObject({ code: 0, stdout: "typed\n" });
    expect(await polybox(["run", script("d.sh", "echo $((6 * 7)); exit 5")])).toMatchObject({
      code: 5,
      stdout: "42\n",
    });
  });

  it("runs -e CODE with --lang", async () => {
    expect(await polybox(["run", "--lang=python", "-e", "print(sum(range(10)))"])).toMatchObject({
      code: 0,
      stdout: "45\n",
    });
  });

  it("passes only the environment variables --allow-env grants", async () => {
    const env = { POLYBOX_TEST_A: "yes", POLYBOX_TEST_B: "no" };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Bash parameter expansion, not a template
    const code = 'echo "${POLYBOX_TEST_A:-unset} ${POLYBOX_TEST_B:-unset}"';
    expect((await polybox(["run", "--lang=bash", "-e", code], env)).stdout).toBe("unset unset\n");
    expect(
      (await polybox(["run", "--allow-env=POLYBOX_TEST_A", "--lang=bash", "-e", code], env)).stdout,
    ).toBe("yes unset\n");
  });

  it("names the limit when one stops the run", async () => {
    const r = await polybox(["run", "--timeout=1s", "--lang=javascript", "-e", "while (true) {}"]);
    expect(r.code).toBe(124);
    expect(r.stderr).toMatch(/polybox: timeout: timed out: timeoutMs=1000/);
  });

  it("explains usage mistakes with exit code 2", async () => {
    const unknown = await polybox(["run", script("e.pl", "print 1")]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/cannot tell the language of .*e\.pl.*--lang/);
    expect((await polybox(["run", path.join(tmp, "missing.py")])).stderr).toMatch(
      /cannot read .*missing\.py: ENOENT/,
    );
    const flag = await polybox(["mcp", "--bogus"]);
    expect(flag).toMatchObject({ code: 2, stdout: "" });
    expect(flag.stderr).toMatch(/unknown flag --bogus[\s\S]*polybox --help/);
    expect((await polybox(["mcp", "--tools=execute_python,nope"])).stderr).toMatch(
      /unknown tool in --tools: nope; known tools: execute_python/,
    );
  });

  it("--python-packages gives a script the packages it imports and the PEP 723 pins it names", async () => {
    const wheels = path.join(tmp, "wheels");
    mkdirSync(wheels, { recursive: true });
    for (const version of ["1.0", "2.0"]) {
      const w = buildWheel("cli-greet", version, "cli_greet", `WHO = "v${version}"\n`);
      writeFileSync(path.join(wheels, w.fileName), w.data);
    }
    const code = script(
      "greet.py",
      '# /// script\n# dependencies = ["cli-greet==1.0"]\n# ///\nimport cli_greet\nprint(cli_greet.WHO)',
    );
    const r = await polybox(["run", `--python-packages=${wheels}`, code]);
    expect(r.stdout).toBe("v1.0\n");
    expect(r.code).toBe(0);
  });

  it("--file puts host files and directories in the workspace, only under --allow-read", async () => {
    const data = path.join(tmp, "data");
    mkdirSync(path.join(data, "sub"), { recursive: true });
    writeFileSync(path.join(data, "a.csv"), "x,y\n1,2\n");
    writeFileSync(path.join(data, "sub", "b.txt"), "deep");
    const code = script(
      "read-inputs.py",
      "import os\nprint(open('data/a.csv').read().strip())\nprint(open('data/sub/b.txt').read())\nprint(open('in/one.csv').read().strip())",
    );
    const r = await polybox([
      "run",
      `--allow-read=${data}`,
      `--file=${data}`,
      `--file=${path.join(data, "a.csv")}:in/one.csv`,
      code,
    ]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("x,y\n1,2\ndeep\nx,y\n1,2\n");
    expect(r.code).toBe(0);
    // Not granted: refused before anything runs, with the flag named.
    const denied = await polybox(["run", `--file=${data}`, code]);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/--file .*may not read/);
  });
});

describe("polybox --help, --version, doctor", () => {
  it("prints help with every command and flag", async () => {
    const r = await polybox(["--help"]);
    expect(r.code).toBe(0);
    for (const word of [
      "mcp",
      "serve",
      "run",
      "doctor",
      "--allow-read",
      "--allow-net",
      "--allow-env",
      "--timeout=30s",
      "--memory=512M",
      "--max-output=1M",
      "--workspace-quota=100M",
      "--concurrency",
      "--max-sandboxes",
      "--idle-timeout=30m",
      "--rate-limit",
      "--tools",
      "--job-retention",
      "--port",
      "--token",
    ]) {
      expect(r.stdout).toContain(word);
    }
  });

  it("prints the package version", async () => {
    const { version } = (await import("../../package.json", { with: { type: "json" } })).default;
    expect(await polybox(["--version"])).toMatchObject({ code: 0, stdout: `polybox ${version}\n` });
  });

  it("warmup builds or verifies the Python snapshot in a cache dir", async () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), "polybox-warmup-"));
    try {
      const first = await polybox(["warmup"], { XDG_CACHE_HOME: cache });
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(
        /Python snapshot ready in \d+ ms: .*polybox-warmup-.*\.snapshot/,
      );
      // A corrupted snapshot is detected by its hash and rebuilt, never trusted.
      const file = /Python snapshot ready in \d+ ms: (.*\.snapshot)$/m.exec(first.stdout)![1]!;
      writeFileSync(file, "garbage");
      const second = await polybox(["warmup"], { XDG_CACHE_HOME: cache });
      expect(second.code).toBe(0);
      expect(second.stderr).toMatch(/stale or corrupt; rebuilding/);
      expect(statSync(file).size).toBeGreaterThan(1_000_000);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it("doctor reports Node, engines and isolation layers, also as JSON", async () => {
    const text = await polybox(["doctor"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Node \d+\.\d+\.\d+/);
    expect(text.stdout).toMatch(/ok +python/);
    expect(text.stdout).toMatch(/on +L1 realm/);
    const json = JSON.parse((await polybox(["doctor", "--json"])).stdout);
    expect(json.engines.map((e: { name: string; ok: boolean }) => [e.name, e.ok])).toEqual([
      ["python", true],
      ["javascript", true],
      ["typescript", true],
      ["bash", true],
      ["ruby", true],
      ["wasm", true],
      ["wasix", true],
    ]);
    const l2 = json.layers.find((l: { id: string }) => l.id === "L2");
    expect(l2.active).toBe(true);
    expect(l2.detail).toContain(json.permissionFlag);
    expect(json.layers.map((l: { id: string }) => l.id)).toEqual(["L0", "L1", "L2", "L3"]);
  });
});

describe("polybox run --lang wasix", () => {
  it("runs a WASIX module file with the arguments after --", async () => {
    const file = path.join(tmp, "hello.wasm");
    writeFileSync(file, wasixModule("hello"));
    const r = await polybox(["run", "--lang", "wasix", file, "--", "one", "two"]);
    expect(r.stdout).toContain("args: one two\n");
    expect(r.stdout).toMatch(/proc_id=0 pid=\d+/);
    // hello.c exits with argc; it cannot write /workspace/out/ (no such directory), so 4.
    expect(r.code).toBe(4);
    const bad = await polybox(["run", "--lang", "wasix", "-e", "x"]);
    expect(bad.stderr).toMatch(/--lang wasix needs a FILE/);
  }, 60_000);
});

// The contract every engine keeps, written once and run against each language: output, the
// last expression's value, errors, exit codes, stdin, env, state between runs, and each limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS, type Dialect, type SourceLanguage } from "../helpers/dialects.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { ruby: 1 } });
});
afterAll(async () => {
  await runtime.close();
});

describe.each(Object.entries(DIALECTS) as [SourceLanguage, Dialect][])(
  "%s engine contract",
  (language, d) => {
    let sb: Sandbox;
    beforeAll(async () => {
      sb = await Sandbox.create({ runtime });
    });
    afterAll(async () => {
      await sb.close();
    });

    it("captures stdout and stderr separately", async () => {
      const r = await sb.run(language, `${d.print("to out")}\n${d.printErr("to err")}`);
      expect(r).toMatchObject({ status: "ok", exitCode: 0, truncated: false });
      expect(r.stdout).toBe("to out\n");
      expect(r.stderr).toBe("to err\n");
      expect(r.durationMs).toBeGreaterThan(0);
    });

    it("turns an exit request into the exit code", async () => {
      const r = await sb.run(language, d.exit(7));
      expect(r.status).toBe("error");
      expect(r.exitCode).toBe(7);
      expect((await sb.run(language, d.exit(0))).status).toBe("ok");
    });

    it("reports an uncaught error as status error with the guest's own trace", async () => {
      const r = await sb.run(language, d.raiseCode);
      expect(r.status).toBe("error");
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toMatch(d.raise);
      expect(r.stderr).not.toMatch(/polybox|_base\.py|worker-entry/);
    });

    it("keeps interpreter state between runs", async () => {
      await sb.run(language, d.setVar("counter", 41));
      const r = await sb.run(language, d.echoVar("counter"));
      expect(r.stdout.trim()).toBe("41");
    });

    it("feeds stdin and passes only the env it was given", async () => {
      expect((await sb.run(language, d.readStdin, { stdin: "shout" })).stdout.trim()).toBe("SHOUT");
      expect(
        (await sb.run(language, d.readEnv("GREETING"), { env: { GREETING: "hej" } })).stdout.trim(),
      ).toBe("hej");
      expect((await sb.run(language, d.readEnv("HOME_SECRET"))).stdout.trim()).toMatch(
        /^(None|undefined|)$/,
      );
    });

    it.runIf(d.value)("returns the last expression's value as text", async () => {
      const r = await sb.run(language, d.value!.code);
      expect(r.value).toBe(d.value!.expected);
    });

    it("kills an infinite loop at the timeout and stays usable", async () => {
      const started = Date.now();
      const r = await sb.run(language, d.loop, { timeoutMs: 300 });
      expect(r.status).toBe("timeout");
      expect(r.exitCode).toBe(124);
      expect(r.message).toMatch(/timeoutMs=300/);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await sb.run(language, d.print("alive"))).stdout).toBe("alive\n");
    });

    it("stops a memory bomb with status memory_limit", async () => {
      const r = await sb.run(language, d.memoryBomb, { memoryMb: 128, timeoutMs: 20_000 });
      expect(r.status).toBe("memory_limit");
      expect(r.exitCode).toBe(137);
      expect(r.message).toMatch(/memoryMb=128/);
      const other = await Sandbox.create({ runtime });
      expect((await other.run(language, d.print("fresh"))).stdout).toBe("fresh\n");
      await other.close();
    });

    it("caps output, marks it truncated, and stops the flood", async () => {
      const r = await sb.run(language, d.flood, { maxOutputBytes: 4096, timeoutMs: 20_000 });
      expect(r.status).toBe("output_limit");
      // One rule for every language: the program did not choose this exit code.
      expect(r.exitCode).toBe(141);
      expect(r.truncated).toBe(true);
      expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(4096);
      expect(r.message).toMatch(/maxOutputBytes=4096/);
    });
  },
);

describe("python specifics", () => {
  it("reports SystemExit with a message as exit code 1 and the message on stderr", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", "raise SystemExit('goodbye')");
    expect(r).toMatchObject({ status: "error", exitCode: 1, stderr: "goodbye\n" });
  });

  it("supports top-level await", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", "import asyncio\nawait asyncio.sleep(0.01)\n'done'");
    expect(r.value).toBe("'done'");
  });

  it("reports syntax errors without engine frames", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", "def broken(:\n  pass");
    expect(r.status).toBe("error");
    expect(r.stderr).toMatch(/SyntaxError/);
    expect(r.stderr).not.toMatch(/_pyodide/);
  });
});

describe("typescript specifics", () => {
  it("runs enums and namespaces, and points syntax errors at the user's line", async () => {
    await using sb = await Sandbox.create({ runtime });
    expect((await sb.run("typescript", "enum Color { Red, Green }\nColor.Green")).value).toBe("1");
    const r = await sb.run("typescript", "let ok: number = 1;\nconst broken: number = ;");
    expect(r.status).toBe("error");
    expect(r.stderr).toMatch(
      /SyntaxError \(TypeScript\): Expression expected[\s\S]*2 \| const broken: number = ;/,
    );
  });
});

describe("javascript specifics", () => {
  it("imports the workspace fs with import syntax and runs timers", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "javascript",
      'import fs from "node:fs";\nimport { promises } from "fs";\nawait promises.writeFile("t.txt", "x");\nsetTimeout(() => console.log("tick"), 5);\nfs.existsSync("t.txt")',
    );
    expect(r).toMatchObject({
      status: "ok",
      value: "true",
      stdout: "tick\n",
      filesChanged: ["t.txt"],
    });
  });

  it("refuses modules other than fs, fs/promises and path", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("javascript", "require('child_process')");
    expect(r.status).toBe("error");
    expect(r.stderr).toMatch(/Cannot find module 'child_process'/);
  });
});

// The contract every engine keeps, written once and run against each language: output, the
// last expression's value, errors, exit codes, stdin, env, state between runs, and each limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Language, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

interface Dialect {
  print(text: string): string;
  printErr(text: string): string;
  exit(code: number): string;
  setVar(name: string, value: number): string;
  echoVar(name: string): string;
  readStdin: string;
  readEnv(name: string): string;
  raise: RegExp;
  raiseCode: string;
  loop: string;
  memoryBomb: string;
  flood: string;
  value?: { code: string; expected: string };
}

/** `wasm` runs a module named by path, not source code: its contract is in wasm.test.ts. */
type SourceLanguage = Exclude<Language, "wasm">;

const DIALECTS: Record<SourceLanguage, Dialect> = {
  python: {
    print: (t) => `print(${JSON.stringify(t)})`,
    printErr: (t) => `import sys; print(${JSON.stringify(t)}, file=sys.stderr)`,
    exit: (n) => `import sys; sys.exit(${n})`,
    setVar: (n, v) => `${n} = ${v}`,
    echoVar: (n) => `print(${n})`,
    readStdin: "import sys; print(sys.stdin.read().upper(), end='')",
    readEnv: (n) => `import os; print(os.environ.get(${JSON.stringify(n)}))`,
    raiseCode: "def f():\n    raise ValueError('bad value')\nf()",
    raise: /Traceback[\s\S]*line 3[\s\S]*ValueError: bad value/,
    loop: "while True:\n    pass",
    memoryBomb: "blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))",
    flood: "while True:\n    print('flood' * 20)",
    value: { code: "import statistics\nstatistics.mean([1, 2, 3, 4])", expected: "2.5" },
  },
  javascript: {
    print: (t) => `console.log(${JSON.stringify(t)})`,
    printErr: (t) => `console.error(${JSON.stringify(t)})`,
    exit: (n) => `process.exit(${n})`,
    setVar: (n, v) => `var ${n} = ${v}`,
    echoVar: (n) => `console.log(${n})`,
    readStdin: "console.log(require('fs').readFileSync(0, 'utf8').toUpperCase())",
    readEnv: (n) => `console.log(process.env[${JSON.stringify(n)}])`,
    raiseCode: "function f() {\n  throw new RangeError('bad value');\n}\nf()",
    raise: /Uncaught RangeError: bad value[\s\S]*main\.js:2/,
    loop: "while (true) {}",
    memoryBomb: "const keep = [];\nwhile (true) keep.push(new Array(1e6).fill(Math.random()))",
    flood: "while (true) console.log('flood'.repeat(20))",
    value: {
      code: "const xs = [1, 2, 3];\nawait Promise.resolve(xs.map((x) => x * 2))",
      expected: "[ 2, 4, 6 ]",
    },
  },
  typescript: {
    print: (t) => `console.log(${JSON.stringify(t)} satisfies string)`,
    printErr: (t) => `console.error(${JSON.stringify(t)} as string)`,
    exit: (n) => `process.exit(${n} as number)`,
    setVar: (n, v) => `var ${n}: number = ${v}`,
    echoVar: (n) => `console.log(${n})`,
    readStdin:
      "const input: string = require('fs').readFileSync(0, 'utf8');\nconsole.log(input.toUpperCase())",
    readEnv: (n) => `console.log(process.env[${JSON.stringify(n)}] as string | undefined)`,
    raiseCode:
      "interface Shape { area(): number }\nfunction f(): never {\n  throw new RangeError('bad value');\n}\nf()",
    raise: /Uncaught RangeError: bad value[\s\S]*main\.ts:3/,
    loop: "while (true as boolean) {}",
    memoryBomb:
      "const keep: number[][] = [];\nwhile (true) keep.push(new Array(1e6).fill(Math.random()))",
    flood: "while (true) console.log('flood'.repeat(20) as string)",
    value: {
      code: "type Pair = [number, number];\nconst p: Pair = [2, 3];\np[0] * p[1]",
      expected: "6",
    },
  },
  bash: {
    print: (t) => `echo ${JSON.stringify(t)}`,
    printErr: (t) => `echo ${JSON.stringify(t)} >&2`,
    exit: (n) => `exit ${n}`,
    setVar: (n, v) => `${n}=${v}`,
    echoVar: (n) => `echo $${n}`,
    readStdin: "tr a-z A-Z",
    readEnv: (n) => `echo $${n}`,
    raiseCode: "no_such_command_here",
    raise: /no_such_command_here: command not found/,
    loop: "while true; do :; done",
    memoryBomb: "x=aaaaaaaa; while true; do x=$x$x; done",
    flood: "for i in $(seq 1 5000); do echo floodfloodfloodflood; done",
  },
  ruby: {
    print: (t) => `puts ${JSON.stringify(t)}`,
    printErr: (t) => `$stderr.puts ${JSON.stringify(t)}`,
    exit: (n) => `exit ${n}`,
    setVar: (n, v) => `${n} = ${v}`,
    echoVar: (n) => `puts ${n}`,
    readStdin: "print STDIN.read.upcase",
    readEnv: (n) => `puts ENV[${JSON.stringify(n)}]`,
    raiseCode: "def f\n  raise ArgumentError, 'bad value'\nend\nf",
    raise: /eval:2:in '(Object#)?f': bad value \(ArgumentError\)/,
    loop: "loop {}",
    memoryBomb: 'blocks = []\nloop { blocks << ("x" * 8_000_000) }',
    flood: 'loop { puts "flood" * 20 }',
    value: { code: "[1, 2, 3].sum { |x| x * 2 }", expected: "12" },
  },
};

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
      expect(r.message).toMatch(/timeoutMs=300/);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await sb.run(language, d.print("alive"))).stdout).toBe("alive\n");
    });

    it("stops a memory bomb with status memory_limit", async () => {
      const r = await sb.run(language, d.memoryBomb, { memoryMb: 128, timeoutMs: 20_000 });
      expect(r.status).toBe("memory_limit");
      expect(r.message).toMatch(/memoryMb=128/);
      const other = await Sandbox.create({ runtime });
      expect((await other.run(language, d.print("fresh"))).stdout).toBe("fresh\n");
      await other.close();
    });

    it("caps output, marks it truncated, and stops the flood", async () => {
      const r = await sb.run(language, d.flood, { maxOutputBytes: 4096, timeoutMs: 20_000 });
      expect(r.status).toBe("output_limit");
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

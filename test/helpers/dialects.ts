// The engine contract's phrasebook: how to say the same things (print, exit, raise, loop, bomb,
// flood, ...) in each source language. Used by the WASM contract suite and by native mode's.
import type { Language } from "./runtime.js";

export interface Dialect {
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

/** `wasm` and `wasix` run a module named by path, not source code: their contracts are in wasm.test.ts and wasix.test.ts. */
export type SourceLanguage = Exclude<Language, "wasm" | "wasix">;

export const DIALECTS: Record<SourceLanguage, Dialect> = {
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

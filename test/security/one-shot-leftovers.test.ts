// T6b nothing of a one-shot reaches the principal's next one-shot. A principal's one-shots share
// one engine host process (src/supervisor/fleet.ts, PrincipalHost); each gets a fresh interpreter
// there: QuickJS rewound to its set-up image, a brand-new just-bash Bash, a brand-new Pyodide
// worker (src/guest/engine-host/pool.ts). A hostile one-shot tries to leave everything it can
// behind (globals, patched builtins, modules, timers and tasks, files in and outside its
// workspace, environment variables, marked and grown memory, realm globals); the principal's next
// one-shots, in the same process, must find none of it: their first view is that of an
// interpreter booted on demand, and a probe looks for each leftover by name.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FINGERPRINT, type Lang } from "../helpers/fingerprint.js";
import { fleetOf } from "../helpers/internals.js";
import {
  type Language,
  type RunResult,
  type Runtime,
  run,
  Sandbox,
  testRuntime,
} from "../helpers/runtime.js";

const SECRET = "left-behind-5e0c";
/** Bytes a hostile run fills its memory with; no program's text holds them, only their codes. */
const MARK = [..."pbx-mark-b7-d1"].map((c) => c.charCodeAt(0));
const MB = 1024 * 1024;

// JavaScript and TypeScript: the run ends by process.exit (or an uncaught error) with timers
// still pending, so that nothing waits for them; everything else is planted before.
const JS_HOSTILE = (ts: boolean) => [
  `const fs = require('fs');
fs.writeFileSync('left.txt', '${SECRET}');
let outside${ts ? ": string" : ""} = 'written';
try { fs.writeFileSync('/tmp/left.txt', '${SECRET}'); } catch (e) { outside = String(e); }
process.env.LEFT = '${SECRET}';
globalThis.LEFT = '${SECRET}';
globalThis.keep = '${SECRET}'.repeat(1e5);
globalThis.big = new Uint8Array(150 * ${MB});
big.set([${MARK}]);
for (let n = ${MARK.length}; n < big.length; n *= 2) big.copyWithin(n, 0, n);
setInterval(() => { globalThis.ticks = (globalThis.ticks ?? 0) + 1; }, 5);
setTimeout(() => { globalThis.LATE = '${SECRET}'; }, 50);
new Promise((r) => setTimeout(r, 1e9)).then(() => { globalThis.SETTLED = 1; });
Object.prototype.polluted = '${SECRET}';
Object.freeze(Object.prototype);
Array.prototype.map = function () { return ['${SECRET}']; };
const log${ts ? ": (...a: unknown[]) => void" : ""} = console.log;
console.log = () => {};
log('planted', outside.includes('EACCES'), typeof LEFT, ({}).polluted, [1].map(String)[0]);
JSON.stringify = () => '${SECRET}';
process.exit(0);`,
  `setInterval(() => { globalThis.ticks2 = '${SECRET}'; }, 5);
globalThis.LEFT2 = '${SECRET}';
throw new Error('gone with a timer pending');`,
];
const JS_PROBE = `const fs = require('fs');
let outside = 'none';
try { outside = fs.readFileSync('/tmp/left.txt', 'utf8'); } catch (e) { outside = String(e).includes('EACCES') ? 'EACCES' : String(e); }
const seen = () => [typeof LEFT, typeof LEFT2, typeof keep, typeof big, typeof ticks, typeof ticks2,
  typeof LATE, typeof SETTLED, ({}).polluted, Object.isFrozen(Object.prototype),
  JSON.stringify({ a: [1, 2].map((x) => x * 2) }), process.env.LEFT,
  fs.readdirSync('.').join(','), outside].map(String).join(' ');
console.log(seen());
await new Promise((r) => setTimeout(r, 300));
console.log(seen());
let fresh = new Uint8Array(400 * ${MB});
let marked = 0;
for (let i = 0; i < fresh.length; i += 509) if (fresh[i] !== 0) marked++;
console.log('marked', marked, 'bytes', fresh.length);
fresh = null;
for (const n of [16, 4096, 1 << 20, 150 * ${MB}]) {
  const b = new Uint8Array(new ArrayBuffer(n));
  for (let i = 0; i < n; i += 61) if (b[i] !== 0) marked++;
}
console.log('marked', marked, 'strings', 'x'.repeat(1e7).length);`;
const JS_CLEAN = [
  "undefined undefined undefined undefined undefined undefined undefined undefined undefined false " +
    '{"a":[2,4]} undefined  EACCES',
  "undefined undefined undefined undefined undefined undefined undefined undefined undefined false " +
    '{"a":[2,4]} undefined  EACCES',
  `marked 0 bytes ${400 * MB}`,
  "marked 0 strings 10000000",
  "",
].join("\n");

interface Case {
  /** Hostile one-shots, run in order; the first prints `planted` and proves what it planted. */
  hostile: string[];
  planted: string;
  /** Looks for each leftover by name; prints `clean` when it finds none. */
  probe: string;
  clean: string;
}

const CASES: Record<Lang, Case> = {
  python: {
    hostile: [
      `import asyncio, builtins, json, os, sys, threading, types
import js
from pyodide.code import run_js
open("left.txt", "w").write("${SECRET}")
open("/tmp/left.txt", "w").write("${SECRET}")
os.environ["LEFT"] = "${SECRET}"
LEFT = "${SECRET}"
builtins.LEFT = "${SECRET}"
keep = bytearray(bytes([${MARK}])) * (150 * ${MB} // ${MARK.length})
fake = types.ModuleType("base64")
fake.b64encode = lambda b: b"${SECRET}"
sys.modules["base64"] = fake
import sqlite3, decimal
js.globalThis.LEFT = "${SECRET}"
run_js("globalThis.LEFT2 = '${SECRET}'; setInterval(() => { globalThis.ticks = (globalThis.ticks || 0) + 1 }, 5)")
async def tick():
    while True:
        builtins.TICKS = getattr(builtins, "TICKS", 0) + 1
        with open("/tmp/ticks.txt", "a") as f:
            f.write("${SECRET}")
        await asyncio.sleep(0.01)
task = asyncio.ensure_future(tick())
threading.Thread(target=lambda: setattr(builtins, "THREAD", "${SECRET}"), daemon=True).start()
await asyncio.sleep(0.1)
print("planted", builtins.TICKS > 0, builtins.THREAD, "sqlite3" in sys.modules, js.globalThis.LEFT)
json.dumps = lambda *a, **k: "${SECRET}"
builtins.print = lambda *a, **k: None
builtins.open = None`,
      `import builtins, sys
builtins.LEFT2 = "${SECRET}"
sys.modules["json"] = None
raise SystemExit(3)`,
    ],
    planted: `planted True ${SECRET} True ${SECRET}\n`,
    probe: `import base64, builtins, json, os, sys
import js, pyodide_js
from pyodide.code import run_js
print([getattr(builtins, k, None) for k in ("LEFT", "LEFT2", "TICKS", "THREAD")], "LEFT" in globals())
print(os.environ.get("LEFT"), base64.b64encode(b"x"), json.dumps({"a": [1]}), type(print).__name__, type(open).__name__)
print([m in sys.modules for m in ("sqlite3", "_sqlite3", "decimal")])
print(getattr(js.globalThis, "LEFT", None), run_js("typeof globalThis.LEFT2 + ' ' + typeof globalThis.ticks"))
print(sorted(os.listdir(".")), os.path.exists("/tmp/left.txt"), os.path.exists("/tmp/ticks.txt"))
scan = run_js("(heap, m) => { let n = 0; for (let at = heap.indexOf(m[0]); at >= 0; at = heap.indexOf(m[0], at + 1)) if (m.every((c, i) => heap[at + i] === c)) n++; return n }")
print("marked", scan(pyodide_js._module.HEAPU8, [${MARK}]))
fresh = bytearray(400 * ${MB})
print("fresh", len(fresh), fresh.count(0) == len(fresh))`,
    clean: [
      "[None, None, None, None] False",
      "None b'eA==' {\"a\": [1]} builtin_function_or_method builtin_function_or_method",
      "[False, False, False]",
      "None undefined undefined",
      "[] False False",
      "marked 0",
      `fresh ${400 * MB} True`,
      "",
    ].join("\n"),
  },
  javascript: {
    hostile: JS_HOSTILE(false),
    planted: `planted true string ${SECRET} ${SECRET}\n`,
    probe: JS_PROBE,
    clean: JS_CLEAN,
  },
  typescript: {
    hostile: JS_HOSTILE(true),
    planted: `planted true string ${SECRET} ${SECRET}\n`,
    probe: JS_PROBE,
    clean: JS_CLEAN,
  },
  bash: {
    hostile: [
      `echo ${SECRET} > left.txt; echo ${SECRET} > /tmp/left.txt; mkdir -p /tmp/d; echo ${SECRET} > "$HOME/left.txt"
export LEFT=${SECRET}; LEFT_VAR=${SECRET}; readonly LOCKED=${SECRET}
shopt -s expand_aliases extglob nullglob; alias ls='echo ${SECRET}'; f() { echo ${SECRET}; }
big=$(printf '%*s' 100000 ''); big=\${big// /${SECRET}}
(sleep 0.3; echo ${SECRET} > late.txt; echo ${SECRET} > /tmp/late.txt) &
sleep 1 &
trap 'echo ${SECRET} > /tmp/trapped' EXIT
cd /tmp; pushd / >/dev/null; set -f -o noclobber; PATH=/nowhere:$PATH
echo planted "\${#big}" "$(f)"`,
      `trap 'echo ${SECRET} > /tmp/trapped2' EXIT; LEFT2=${SECRET}; exit 3`,
    ],
    planted: `planted ${100_000 * SECRET.length} ${SECRET}\n`,
    probe: `echo "[$LEFT][$LEFT_VAR][$LEFT2][$LOCKED][\${#big}]"; pwd; dirs; alias; type f 2>&1; trap -p
set -o | grep -E '^(noglob|noclobber) '; shopt expand_aliases extglob nullglob; echo "$PATH" | grep -c nowhere
ls -A . /tmp "$HOME"; sleep 0.5; ls -A . /tmp`,
    clean: [
      "[][][][][0]",
      "/workspace",
      "~",
      "bash: type: f: not found",
      "noclobber       off",
      "noglob          off",
      "expand_aliases\t\toff",
      "extglob\t\toff",
      "nullglob\t\toff",
      "0",
      ".:\n\n/tmp:\n\n/workspace:",
      ".:\n\n/tmp:",
      "",
    ].join("\n"),
  },
};

let rt: Runtime;

beforeAll(async () => {
  rt = await testRuntime({ pool: { typescript: 1 } });
});

afterAll(async () => {
  await rt?.close();
});

// Each language starts on a principal's host of its own: a JavaScript probe's 400 MB stay
// resident in its rewound interpreter, which would crowd the next language's probe (see the
// last test of this file).
beforeEach(async () => {
  await fleetOf(rt).releasePrincipal("default");
});

const oneShot = (language: Language, code: string, principal?: string): Promise<RunResult> =>
  run({ runtime: rt, language, code, ...(principal ? { principal } : {}) });

/** What `code` prints in an interpreter a stateful sandbox boots on demand (it ran nothing). */
async function onDemand(language: Lang, code: string): Promise<string> {
  const sb = await Sandbox.create({ runtime: rt });
  try {
    expect((await sb.run(language === "bash" ? "javascript" : "bash", "true")).status).toBe("ok");
    const r = await sb.run(language, code);
    expect(r.status, r.stderr).toBe("ok");
    return r.stdout;
  } finally {
    await sb.close();
  }
}

describe("T6b: nothing of a one-shot reaches the principal's next one-shot", () => {
  describe.each(Object.keys(CASES) as Lang[])("%s", (language) => {
    const c = CASES[language];

    it("the next one-shot, in the same process, sees a fresh interpreter and none of the leftovers", async () => {
      const [hostile, ...more] = c.hostile;
      const planted = await oneShot(language, hostile!);
      expect(planted.stdout, planted.stderr).toBe(c.planted);
      expect(planted.filesChanged).toContain("left.txt");
      const pid = fleetOf(rt).principalPid("default");
      expect(pid).toBeGreaterThan(0);
      for (const code of more) {
        const r = await oneShot(language, code);
        expect(r.status, r.stderr).not.toBe("ok");
      }

      const first = await oneShot(language, FINGERPRINT[language]);
      expect(fleetOf(rt).principalPid("default")).toBe(pid);
      const probe = await oneShot(language, c.probe);
      expect(fleetOf(rt).principalPid("default")).toBe(pid);
      for (const r of [first, probe]) {
        expect(r.status, `${r.message} ${r.stderr}`).toBe("ok");
        expect(`${r.stdout}${r.stderr}${r.value}`).not.toContain(SECRET);
        expect(r.filesChanged).toEqual([]);
      }
      expect(probe.stdout).toBe(c.clean);
      expect(first.stdout).toBe(await onDemand(language, FINGERPRINT[language]));
    }, 180_000);
  });

  // A rewound QuickJS interpreter would keep the memory its one-shot grew (WebAssembly memory
  // does not shrink): idle in the principal's pool, it counted towards the host's resident size
  // but not its ceiling, so the next one-shot of another language was killed for memory. A
  // worker whose run grew its memory is now replaced instead of recycled.
  it("a one-shot's grown memory leaves the next one-shot its whole memory limit", async () => {
    const touch = (mb: number) => `const b = new Uint8Array(${mb} * ${MB}); b.fill(1); b.length`;
    const grown = await oneShot("javascript", touch(450), "grown");
    expect(grown.status, grown.message).toBe("ok");
    const pid = fleetOf(rt).principalPid("grown");
    expect(pid).toBeGreaterThan(0);
    const next = await oneShot("typescript", touch(300), "grown");
    expect(next.status, next.message).toBe("ok");
    expect(next.value).toBe(String(300 * MB));
    expect(fleetOf(rt).principalPid("grown")).toBe(pid);
  }, 120_000);
});

// The interpreter of a recycled one-shot (JavaScript, TypeScript, Bash) waits for its renewal
// at most 10 s (interpreter.ts RENEWAL_TIMEOUT_MS); that wait once started with the run, so a
// one-shot still running after 10 s was ended as a crash, whatever its timeoutMs.
describe("T6b: recycling a one-shot's interpreter does not cut its run short", () => {
  for (const [language, code] of [
    ["javascript", "await new Promise((r) => setTimeout(r, 12_000)); 'done'"],
    ["bash", "sleep 12; echo done"],
  ] as const) {
    it.concurrent(`${language}: a one-shot may run past 10 s, up to its timeoutMs`, async () => {
      // A principal of its own: the releases between the tests above do not reach it.
      const r = await run({
        runtime: rt,
        language,
        code,
        principal: `long-${language}`,
        limits: { timeoutMs: 30_000 },
      });
      expect(r.status, r.message).toBe("ok");
      expect(`${r.stdout}${r.value}`).toContain("done");
    }, 120_000);
  }
});

// A rewound QuickJS instance lost its interrupt handler on the C side while the wrapper still
// believed it set, so a recycled interpreter never stopped a loop itself: the output cap did not
// stop a flood, and the deadline came only as the host's kill a second late.
describe("T6b: a recycled interpreter still stops its guest at every limit", () => {
  for (const language of ["javascript", "typescript"] as const) {
    it(`${language}: the deadline and the output cap stop a loop, run after run`, async () => {
      const principal = `limits-${language}`;
      for (let i = 0; i < 3; i++) {
        const loop = await run({
          runtime: rt,
          language,
          code: "while (true) {}",
          principal,
          limits: { timeoutMs: 1500 },
        });
        expect(loop.status).toBe("timeout");
        // Stopped by QuickJS's own interrupt, not by the host's kill a grace later.
        expect(loop.message).not.toMatch(/killed/);
        const flood = await run({
          runtime: rt,
          language,
          code: "while (true) console.log('flood'.repeat(20))",
          principal,
          limits: { maxOutputBytes: 4096, timeoutMs: 20_000 },
        });
        expect(flood.status, flood.message).toBe("output_limit");
      }
    }, 120_000);
  }
});

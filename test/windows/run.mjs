// polybox on Windows: the library, the CLI and the MCP server (stdio and Streamable HTTP), run by
// a Windows Node. CI runs it under Wine (.ci/windows); on a Windows machine it runs as it is:
//
//   node test/windows/run.mjs [RESULTS.json]
//
// from the repo root, after `npm ci` (which builds dist/). It is a plain Node script, not a
// vitest suite: vitest starts esbuild, and the esbuild binary npm installed on Linux is Linux's.
// Each test prints `ok NAME` or `FAIL NAME: why` to stderr; the last line on stdout is
// `N passed, N failed[, N skipped]`, and RESULTS.json (default test-results-windows.json) has the
// fields of vitest's json reporter that the CI summary adds up. Exit code: 1 if anything failed.
//
// Covered: every language prints and returns a value; one workspace shared by Python, Bash and
// JavaScript; a timeout, the output limit and a memory bomb each end with their status and the
// sandbox runs again; host-API file names with spaces and non-ASCII; Bash scripts with CRLF line
// endings; guest file names Windows cannot store (CON, a:b, trailing dots and spaces, names that
// differ only in case) are dropped, and nothing is written anywhere else; a named sandbox, a
// snapshot and a restore in a data dir; the default data and cache dirs under %LOCALAPPDATA%; a
// program that uses the default runtime and exits without closing it exits 0 (no EBUSY); the CLI's
// `run` and `doctor` (which says Windows has no L3); MCP over stdio and over HTTP with client
// and server both Windows processes.
//
// Not covered here, and printed as skipped (see SKIPPED below for why): what only a real Windows
// kernel and NTFS do with the names polybox refuses (streams, devices), files held open by
// virus scanners, serve's Ctrl+C shutdown, Node's fetch (which cannot connect under Wine), and
// the vitest suites themselves.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const DIST = path.join(REPO, "dist");
const CLI = path.join(DIST, "cli", "main.js");
const RESULTS = path.resolve(process.argv[2] ?? path.join(REPO, "test-results-windows.json"));
const TEST_TIMEOUT_MS = 240_000;
/**
 * Node flag for the polybox processes the suite starts with a hidden console (windowsHide, as
 * MCP clients start servers). Under Wine such a console has an empty title, and Node 22 aborts
 * ("Assertion failed: process_title", nodejs/node#58695) where it reads an empty title: a
 * JavaScript engine host, which shares the console, does on start. Naming the console keeps the
 * suite about polybox; "engine hosts start under a console with an empty title" checks the crash.
 */
const TITLE = "--title=polybox";
/**
 * Engine hosts are started detached on Windows (src/supervisor/wasm-host.ts), with a console of
 * their own, so that check must pass: true would count the crash as a known skip.
 */
const EMPTY_TITLE_KNOWN_BROKEN = false;
/**
 * Per-run time limit. An engine's first run in a new host boots it, and under Wine on two cores
 * that takes seconds (Python), or 10-30 (Bash, whose modules are many files read under the
 * permission model); the default 30 s leaves too little margin.
 */
const RUN_TIMEOUT_MS = 120_000;
const TIMEOUT_FLAG = `--timeout=${RUN_TIMEOUT_MS / 1000}s`;
const SUITE = "test/windows/run.mjs";

// A console title, for this process and the children that share its console (see TITLE).
process.title = "polybox windows suite";

// Wine hands a Windows process the Linux environment; a Windows machine has none of these, and
// the default cache dir would follow XDG_CACHE_HOME instead of %LOCALAPPDATA%.
for (const name of ["XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"])
  delete process.env[name];

/** What cannot be checked under Wine, with why: printed and counted as skipped. */
const SKIPPED = [
  [
    "NTFS semantics of the names polybox refuses (a:b as a stream, CON as the console)",
    "Wine keeps files on the Linux file system and stores such names as plain files; the suite checks that polybox refuses them before the host is asked",
  ],
  [
    "a file held open by another program (a virus scanner, an indexer) when a run's changes are stored",
    "nothing under Wine opens files behind polybox's back",
  ],
  [
    "serve ends cleanly on Ctrl+C",
    "Node cannot send Ctrl+C to another process on Windows (process.kill is TerminateProcess); the suite ends the server that way, as a service manager does",
  ],
  [
    "Node's fetch from a Windows process (the MCP SDK's HTTP client, package downloads)",
    "Wine refuses the TCP keep-alive options libuv sets before a connect, so undici's connect fails; the suite's HTTP client sends its requests with node:http",
  ],
  [
    "the vitest suites",
    "vitest needs esbuild, and the esbuild binary installed on Linux is Linux's",
  ],
];

// ---------------------------------------------------------------------------------------------
// The harness: tests run one at a time, in order, each with a time limit.

const tests = [];
const test = (group, name, fn, timeoutMs = TEST_TIMEOUT_MS) =>
  tests.push({ group, name, fn, timeoutMs });

class AssertionError extends Error {}
/** Thrown by a test that finds it cannot run here: counted as skipped, with the reason. */
class Skip extends Error {}
function assert(ok, message) {
  if (!ok) throw new AssertionError(message);
}
function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  assert(a === e, `${what}: expected ${e}, got ${a}`);
}
function match(text, re, what) {
  assert(
    re.test(String(text)),
    `${what}: ${JSON.stringify(String(text).slice(0, 600))} does not match ${re}`,
  );
}
/** A result's key facts, for failure messages. */
const brief = (r) =>
  JSON.stringify({
    status: r.status,
    exitCode: r.exitCode,
    stdout: r.stdout?.slice(0, 300),
    stderr: r.stderr?.slice(0, 300),
    value: r.value,
    message: r.message,
    notes: r.notes,
    filesChanged: r.filesChanged,
  });
function ok(r, what) {
  assert(r.status === "ok", `${what}: ${brief(r)}`);
}

async function runAll() {
  const started = Date.now();
  const results = [];
  // POLYBOX_WINDOWS_ONLY=REGEX runs only the tests whose "group > name" matches (when working on
  // one: a whole run takes minutes under Wine).
  const only = process.env.POLYBOX_WINDOWS_ONLY
    ? new RegExp(process.env.POLYBOX_WINDOWS_ONLY)
    : null;
  for (const t of tests) {
    if (only && !only.test(`${t.group} > ${t.name}`)) continue;
    const t0 = Date.now();
    let error = null;
    let timer;
    try {
      await Promise.race([
        t.fn(),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`did not finish in ${t.timeoutMs / 1000} s`)),
            t.timeoutMs,
          );
        }),
      ]);
    } catch (e) {
      error = e;
    } finally {
      clearTimeout(timer);
    }
    const duration = Date.now() - t0;
    const secs = `(${(duration / 1000).toFixed(1)} s)`;
    if (error instanceof Skip) {
      process.stderr.write(`skip ${t.group} > ${t.name}: ${error.message} ${secs}\n`);
      results.push({ ...t, status: "pending", message: error.message, duration });
    } else if (error) {
      const message =
        error instanceof AssertionError ? error.message : String(error?.stack ?? error);
      process.stderr.write(`FAIL ${t.group} > ${t.name}: ${message} ${secs}\n`);
      results.push({ ...t, status: "failed", message, duration });
    } else {
      process.stderr.write(`ok ${t.group} > ${t.name} ${secs}\n`);
      results.push({ ...t, status: "passed", duration });
    }
  }
  for (const [name, why] of SKIPPED) {
    process.stderr.write(`skip windows > ${name}: ${why}\n`);
    results.push({ group: "not under Wine", name, status: "pending", message: why, duration: 0 });
  }
  return { results, started };
}

function report({ results, started }) {
  const count = (s) => results.filter((r) => r.status === s).length;
  const passed = count("passed");
  const failed = count("failed");
  const skipped = count("pending");
  const groups = [...new Set(results.map((r) => r.group))];
  const testResults = groups.map((group) => {
    const mine = results.filter((r) => r.group === group);
    const bad = mine.filter((r) => r.status === "failed");
    return {
      name: `${SUITE} > ${group}`,
      status: bad.length > 0 ? "failed" : "passed",
      message: bad.map((r) => `${r.name}: ${r.message.split("\n")[0]}`).join("\n"),
      startTime: started,
      endTime: Date.now(),
      assertionResults: mine.map((r) => ({
        ancestorTitles: ["windows", group],
        fullName: `windows ${group} ${r.name}`,
        title: r.name,
        status: r.status,
        duration: r.duration,
        failureMessages: r.status === "failed" ? [r.message] : [],
      })),
    };
  });
  const failedSuites = testResults.filter((s) => s.status === "failed").length;
  const json = {
    numTotalTestSuites: testResults.length,
    numPassedTestSuites: testResults.length - failedSuites,
    numFailedTestSuites: failedSuites,
    numPendingTestSuites: 0,
    numTotalTests: results.length,
    numPassedTests: passed,
    numFailedTests: failed,
    numPendingTests: skipped,
    numTodoTests: 0,
    numRuntimeErrorTestSuites: 0,
    startTime: started,
    success: failed === 0,
    testResults,
  };
  writeFileSync(RESULTS, `${JSON.stringify(json, null, 2)}\n`);
  process.stdout.write(
    `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
  );
  return failed === 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/** Runs a Windows Node child to the end; resolves with its exit code and output. */
function node(args, { timeoutMs = 120_000, cwd = REPO, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`node ${args.join(" ")} did not exit in ${timeoutMs / 1000} s: ${stderr}`));
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every path under `dir`, relative, with `/` separators. */
function walk(dir, prefix = "") {
  const out = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${d.name}` : d.name;
    out.push(rel);
    if (d.isDirectory()) out.push(...walk(path.join(dir, d.name), rel));
  }
  return out;
}

/**
 * `fetch` on node:http, for the MCP SDK's HTTP client. Node's own fetch (undici) sets TCP
 * keep-alive on a socket before it connects, and under Wine that connect fails ("connect
 * UNKNOWN"); node:http sets nothing before connecting. On Windows itself both work.
 */
function httpFetch(url, init = {}) {
  return new Promise((resolve, reject) => {
    const signal = init.signal;
    if (signal?.aborted) return reject(signal.reason);
    const req = http.request(
      new URL(url),
      {
        method: init.method ?? "GET",
        headers: Object.fromEntries(new Headers(init.headers)),
        agent: false,
      },
      (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          for (const one of [v].flat()) if (one !== undefined) headers.append(k, one);
        const empty = [204, 304].includes(res.statusCode) || init.method === "HEAD";
        if (empty) res.resume();
        resolve(
          new Response(empty ? null : Readable.toWeb(res), {
            status: res.statusCode,
            statusText: res.statusMessage,
            headers,
          }),
        );
      },
    );
    req.on("error", reject);
    signal?.addEventListener("abort", () => req.destroy(signal.reason), { once: true });
    req.end(init.body ?? undefined);
  });
}

/** The text of an MCP tool result's first text block. */
const textOf = (r) => r.content?.find((c) => c.type === "text")?.text ?? "";

const scratch = mkdtempSync(path.join(os.tmpdir(), "polybox-windows-"));
const dataDir = path.join(scratch, "data dir ü");
let lib; // dist/index.js
let runtime;
let sb;

// ---------------------------------------------------------------------------------------------
// The library.

test("library", "the default data and cache dirs are under %LOCALAPPDATA%", async () => {
  const { defaultCacheDir } = await import(
    pathToFileURL(path.join(DIST, "supervisor", "snapshot.js")).href
  );
  const local = process.env.LOCALAPPDATA;
  assert(local, "LOCALAPPDATA is not set");
  equal(lib.defaultDataDir(), path.win32.join(local, "polybox"), "defaultDataDir()");
  equal(defaultCacheDir(), path.win32.join(local, "polybox"), "defaultCacheDir()");
  // Without LOCALAPPDATA: the same place under the profile, as Windows has it.
  const home = "C:\\Users\\someone";
  equal(
    lib.defaultDataDir({}, "win32", home),
    "C:\\Users\\someone\\AppData\\Local\\polybox",
    "defaultDataDir without LOCALAPPDATA",
  );
});

test("library", "Runtime.create builds the boot caches in the default cache dir", async () => {
  runtime = await lib.Runtime.create({ dataDir, limits: { timeoutMs: RUN_TIMEOUT_MS } });
  const boot = path.join(process.env.LOCALAPPDATA, "polybox", "boot");
  assert(existsSync(boot), `no ${boot}`);
  const files = readdirSync(boot);
  assert(
    files.some((f) => /^pyodide-.*-node22-.*\.snapshot$/.test(f)),
    `no Python snapshot in ${boot}: ${files.join(", ")}`,
  );
  // Nothing goes to the data dir until a named sandbox or a snapshot needs it.
  assert(!existsSync(dataDir) || walk(dataDir).length === 0, `${dataDir} was written to`);
});

const oneShots = {
  python: { code: "print(6 * 7)\n6 * 7", value: "42" },
  javascript: { code: "console.log(6 * 7);\n6 * 7", value: "42" },
  typescript: { code: "const n: number = 6 * 7;\nconsole.log(n);\nn", value: "42" },
  bash: { code: "echo $((6 * 7))", value: null },
};
for (const [language, { code, value }] of Object.entries(oneShots)) {
  test("library", `${language} prints and returns a value`, async () => {
    const r = await lib.run({ runtime, language, code });
    ok(r, language);
    equal(r.stdout, "42\n", `${language} stdout`);
    equal(r.value, value, `${language} value`);
    equal(r.exitCode, 0, `${language} exit code`);
    if (language === "bash") {
      // Bash's result is its exit status.
      const failed = await lib.run({ runtime, language, code: "echo no >&2; exit 3" });
      equal([failed.status, failed.exitCode, failed.stderr], ["error", 3, "no\n"], "exit 3");
    }
  });
}

test("library", "a sandbox's workspace is shared by Python, Bash and JavaScript", async () => {
  sb = await lib.Sandbox.create({ runtime });
  const py = await sb.run(
    "python",
    "import os\nos.makedirs('out', exist_ok=True)\nopen('out/nums.txt', 'w').write('3\\n1\\n2\\n')",
  );
  ok(py, "python");
  equal(py.filesChanged, ["out", "out/nums.txt"], "python filesChanged");
  const sh = await sb.run("bash", "sort -n out/nums.txt | tee out/sorted.txt | head -1");
  ok(sh, "bash");
  equal(sh.stdout, "1\n", "bash reads Python's file");
  const js = await sb.run(
    "javascript",
    "const fs = require('fs');\nfs.readFileSync('out/nums.txt', 'utf8').trim().split('\\n').map(Number).reduce((a, b) => a + b) + '/' + fs.readFileSync('out/sorted.txt', 'utf8').replace(/\\n/g, '')",
  );
  ok(js, "javascript");
  equal(js.value, "'6/123'", "javascript reads both");
  const root = await sb.workspace.root();
  equal(walk(root).sort(), ["out", "out/nums.txt", "out/sorted.txt"], "files on the host");
});

test(
  "library",
  "a timeout ends the run with status timeout, and the sandbox runs again",
  async () => {
    const started = Date.now();
    const r = await sb.run("python", "while True:\n    pass", { timeoutMs: 2000 });
    equal([r.status, r.exitCode], ["timeout", 124], `timeout ${brief(r)}`);
    match(r.message, /timeoutMs=2000/, "message");
    assert(Date.now() - started < 30_000, `the timeout took ${Date.now() - started} ms`);
    const again = await sb.run("python", "print('alive')");
    ok(again, "after the timeout");
    equal(again.stdout, "alive\n", "after the timeout");
  },
);

test("library", "output past maxOutputBytes is cut and the run ends output_limit", async () => {
  const r = await sb.run("python", "while True:\n    print('flood' * 20)", {
    maxOutputBytes: 4096,
    timeoutMs: 20_000,
  });
  equal([r.status, r.truncated], ["output_limit", true], `output limit ${brief(r)}`);
  assert(Buffer.byteLength(r.stdout) <= 4096, `kept ${Buffer.byteLength(r.stdout)} bytes`);
  match(r.message, /maxOutputBytes=4096/, "message");
});

test("library", "a memory bomb ends memory_limit, and the sandbox runs again", async () => {
  const r = await sb.run(
    "python",
    "blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))",
    { memoryMb: 128, timeoutMs: 30_000 },
  );
  equal([r.status, r.exitCode], ["memory_limit", 137], `memory bomb ${brief(r)}`);
  match(r.message, /memoryMb=128/, "message");
  const again = await sb.run("python", "print('alive')");
  ok(again, "after the bomb");
  equal(again.stdout, "alive\n", "after the bomb");
});

test("library", "host-API files whose paths have spaces and non-ASCII", async () => {
  const name = "my data/naïve 名前 ü.txt";
  await sb.files.write(name, "héllo wörld\n");
  const root = await sb.workspace.root();
  assert(existsSync(path.join(root, "my data", "naïve 名前 ü.txt")), "not on the host by its name");
  const py = await sb.run(
    "python",
    `print(open(${JSON.stringify(name)}, encoding='utf-8').read(), end='')`,
  );
  ok(py, "python reads it");
  equal(py.stdout, "héllo wörld\n", "python reads it");
  const sh = await sb.run(
    "bash",
    `cat "${name}" | tr a-z A-Z > "my data/ÉCHO été.txt"; ls "my data"`,
  );
  ok(sh, "bash");
  equal(sh.stdout, "naïve 名前 ü.txt\nÉCHO été.txt\n", "bash lists them");
  equal(await sb.files.read("my data/ÉCHO été.txt", "utf8"), "HéLLO WöRLD\n", "read back");
  assert(
    existsSync(path.join(root, "my data", "ÉCHO été.txt")),
    "the guest's file is not on the host",
  );
  equal(
    (await sb.files.list("my data")).map((f) => f.path),
    ["my data/naïve 名前 ü.txt", "my data/ÉCHO été.txt"].sort((a, b) => a.localeCompare(b)),
    "list",
  );
});

test("library", "Bash scripts with CRLF line endings run as they are", async () => {
  // What an editor on Windows saves: every line ends \r\n, the last one too.
  const code = [
    "x=1",
    'if [ "$x" = 1 ]; then',
    '  echo "x is $x"',
    "fi",
    "for w in one two; do",
    '  echo "$w"',
    "done",
    "greet() {",
    '  echo "hi $1"',
    "}",
    "greet there",
    "cat <<EOF",
    "heredoc",
    "EOF",
    "",
  ].join("\r\n");
  const r = await sb.run("bash", code);
  ok(r, "CRLF code");
  equal(r.stdout, "x is 1\none\ntwo\nhi there\nheredoc\n", "CRLF code");
});

test(
  "library",
  "guest file names Windows cannot store are dropped; nothing lands elsewhere",
  async () => {
    const home = path.dirname(await sb.workspace.root());
    const before = new Set(walk(home));
    const names = [
      "CON",
      "nul.txt",
      "a:b",
      "q?x",
      "trailing.",
      "name ",
      "A.txt",
      "a.txt",
      "fine.txt",
    ];
    const code = [
      "import os",
      `for n in ${JSON.stringify(names)}:`,
      "    with open(n, 'w') as f:",
      "        f.write(n)",
      "os.makedirs('COM1/inner', exist_ok=True)",
      "open('COM1/inner/x.txt', 'w').write('x')",
      "print(len(os.listdir('.')))",
    ].join("\n");
    const r = await sb.run("python", code);
    ok(r, "the run");
    // The guest's own copy has every name; the host keeps the storable ones.
    const kept = ["A.txt", "fine.txt"];
    equal(r.filesChanged, kept, "filesChanged");
    const listed = (await sb.files.list()).map((f) => f.path);
    for (const n of [...names, "COM1", "COM1/inner/x.txt"])
      assert(
        kept.includes(n) === listed.includes(n),
        `${n} is ${listed.includes(n) ? "" : "not "}listed`,
      );
    equal(await sb.files.read("A.txt", "utf8"), "A.txt", "A.txt keeps its own content");
    const added = walk(home).filter((p) => !before.has(p) && !p.startsWith("staging/"));
    equal(added.sort(), ["workspace/A.txt", "workspace/fine.txt"], "new host files");
    equal(walk(path.join(home, "staging")), [], "staging is empty");
    // The run's result carries the workspace's note: it names the first few and counts the rest.
    const noted = (r.notes ?? []).join("\n");
    assert(noted.includes("not kept"), `no note of the dropped files: ${JSON.stringify(r.notes)}`);
    const dropped = ["CON", "nul.txt", "a:b", "q?x", "trailing.", "name ", "a.txt", "COM1"];
    const named = dropped.filter((n) => noted.includes(JSON.stringify(n))).length;
    const more = Number(/and (\d+) more/.exec(noted)?.[1] ?? 0);
    equal(named + more, dropped.length, `the note accounts for every dropped name: ${noted}`);
    // The next run still works, and sees what the host kept.
    const next = await sb.run("bash", "cat A.txt fine.txt");
    ok(next, "next run");
    equal(next.stdout, "A.txtfine.txt", "next run");
  },
);

test("library", "the workspace's note names each name it dropped", async () => {
  // What Sandbox hands the workspace: the run's changes, and the result's notes to add to.
  const ws = sb.workspace;
  const notes = [];
  const bytes = (t) => new TextEncoder().encode(t);
  const files = ["CON", "x:y", "dot.", "A.txt", "a.txt", "kept.txt"].map((p) => ({
    path: p,
    data: bytes(p),
    mtimeMs: Date.now(),
  }));
  const touched = await ws.apply({ files, dirs: ["LPT1"], removed: ["fine.txt"] }, Infinity, notes);
  equal(touched, ["A.txt", "fine.txt", "kept.txt"], "touched");
  equal(notes.length, 1, `notes ${JSON.stringify(notes)}`);
  for (const n of ["CON", "x:y", "dot.", "a.txt", "LPT1"])
    assert(notes[0].includes(JSON.stringify(n)), `the note does not name ${n}: ${notes[0]}`);
  match(notes[0], /differs only in case/, "case note");
  match(notes[0], /reserves CON/, "device note");
  // A host-API write of such a name is refused with the reason.
  try {
    await sb.files.write("aux.json", "{}");
    assert(false, "aux.json was written");
  } catch (e) {
    equal(e.code, "INVALID_ARGUMENT", `error ${e.message}`);
    match(e.message, /reserves AUX/, "error");
  }
});

test("library", "a named sandbox, a snapshot and a restore in a data dir", async () => {
  const named = await lib.Sandbox.open("win-named", { runtime });
  ok(await named.run("python", "open('keep.txt', 'w').write('v1')"), "write v1");
  const snap = await named.snapshot({ label: "v1" });
  ok(await named.run("bash", "echo v2 > keep.txt; echo new > extra.txt"), "write v2");
  equal(await named.files.read("keep.txt", "utf8"), "v2\n", "before restore");
  await named.restore(snap.id);
  equal(await named.files.read("keep.txt", "utf8"), "v1", "after restore");
  equal(
    (await named.files.list()).map((f) => f.path),
    ["keep.txt"],
    "after restore",
  );
  const r = await named.run("python", "print(open('keep.txt').read())");
  ok(r, "python after restore");
  equal(r.stdout, "v1\n", "python after restore");
  await named.close();
  const onDisk = walk(dataDir);
  assert(
    onDisk.some((p) => p.endsWith("/win-named/workspace/keep.txt")),
    `keep.txt is not in the data dir: ${onDisk.join(", ")}`,
  );
  const again = await lib.Sandbox.open("win-named", { runtime });
  equal(await again.files.read("keep.txt", "utf8"), "v1", "reopened");
  const snaps = await lib.Sandbox.listSnapshots({ runtime, sandboxId: again.id });
  equal(
    snaps.map((x) => [x.id, x.label]),
    [[snap.id, "v1"]],
    "the snapshot outlives the close",
  );
  await again.close({ delete: true });
  assert(
    !walk(dataDir).some((p) => p.includes("win-named/workspace")),
    "deleted sandbox left files",
  );
});

test("library", "closing the sandbox and the runtime removes the workspace", async () => {
  const home = path.dirname(await sb.workspace.root());
  await sb.close();
  await runtime.close();
  assert(!existsSync(home), `${home} is still there`);
});

test(
  "library",
  "a program using the default runtime exits 0 without closing it (no EBUSY)",
  async () => {
    const script = path.join(scratch, "default-runtime.mjs");
    writeFileSync(
      script,
      [
        `import { run, Sandbox } from ${JSON.stringify(pathToFileURL(path.join(DIST, "index.js")).href)};`,
        `const r = await run({ language: "python", code: "print(6 * 7)", timeoutMs: ${RUN_TIMEOUT_MS} });`,
        `const sb = await Sandbox.create();`,
        `await sb.files.write("left.txt", "left open");`,
        `const s = await sb.run("bash", "cat left.txt", { timeoutMs: ${RUN_TIMEOUT_MS} });`,
        `console.log(r.stdout.trim(), s.stdout);`,
      ].join("\n"),
    );
    const ours = () => new Set(readdirSync(os.tmpdir()).filter((n) => n.startsWith("polybox-")));
    const before = ours();
    const { code, stdout, stderr } = await node([TITLE, script], { timeoutMs: 180_000 });
    assert(!/EBUSY/.test(stderr), `EBUSY on stderr: ${stderr}`);
    equal(code, 0, `exit code (stderr: ${stderr.slice(0, 2000)})`);
    equal(stdout, "42 left open\n", "stdout");
    // What Windows would not let its exit handler remove (its engine hosts, still ending, hold
    // their directories) the next polybox process to start removes: the names carry the pid.
    const sweep = path.join(scratch, "sweep.mjs");
    writeFileSync(
      sweep,
      `import { sweepStaleTempDirs } from ${JSON.stringify(pathToFileURL(path.join(DIST, "core", "tmp.js")).href)};\nsweepStaleTempDirs();\n`,
    );
    let left = [];
    for (let i = 0; i < 20; i++) {
      left = [...ours()].filter((n) => !before.has(n));
      if (left.length === 0) break;
      await node([sweep]);
      await new Promise((r) => setTimeout(r, 1000));
    }
    equal(left, [], `temp dirs left in ${os.tmpdir()} after the next start`);
  },
);

// ---------------------------------------------------------------------------------------------
// The CLI.

test("cli", "polybox run --lang=python -e prints 42 and exits 0", async () => {
  const { code, stdout, stderr } = await node([
    TITLE,
    CLI,
    "run",
    TIMEOUT_FLAG,
    "--lang=python",
    "-e",
    "print(6*7)",
  ]);
  equal([code, stdout], [0, "42\n"], `run (stderr: ${stderr.slice(0, 2000)})`);
});

test("cli", "polybox doctor reports L2 as Windows's outer wall, and no L3", async () => {
  const { code, stdout, stderr } = await node([TITLE, CLI, "doctor"]);
  assert(code === 0 || code === 1, `doctor exited ${code}: ${stderr}`);
  match(stdout, /polybox \S+ on win32-x64/, "platform");
  match(stdout, /^ {2}on {2}L2 process/m, "L2 on");
  match(
    stdout,
    /^ {2}off L3 os +Windows has no OS jail in polybox: L2 \(the permission model\) is the outer wall/m,
    "L3 off",
  );
  const json = await node([TITLE, CLI, "doctor", "--json"]);
  if (json.code === 0 || json.code === 1) {
    const report = JSON.parse(json.stdout);
    equal(
      report.layers.map((l) => [l.id, l.active]),
      [
        ["L0", true],
        ["L1", true],
        ["L2", true],
        ["L3", false],
      ],
      "layers",
    );
    equal(
      code,
      report.engines.every((e) => e.ok) && report.node.ok ? 0 : 1,
      "exit code follows the verdict",
    );
  }
});

test("cli", "engine hosts start under a console with an empty title", async () => {
  // What a process started with a hidden console gets under Wine (and on Windows from
  // `start "" ...`): no --title here. JavaScript's host is the one seen to abort.
  const { code, stdout, stderr } = await node([
    CLI,
    "run",
    TIMEOUT_FLAG,
    "--lang=javascript",
    "-e",
    "console.log(6 * 7)",
  ]);
  // The host's stderr comes as log lines of fragments, each quoted: joined again here.
  const hostSaid = stderr.replace(
    /polybox warn: engine host stderr \(untrusted\) \[untrusted\] "((?:[^"\\]|\\.)*)"\n?/g,
    "$1",
  );
  if (EMPTY_TITLE_KNOWN_BROKEN && /Assertion failed: process_title/.test(hostSaid))
    throw new Skip(
      "known: the engine host aborts on an empty console title (nodejs/node#58695); engine hosts are to be started detached on Windows",
    );
  equal([code, stdout], [0, "42\n"], `run (stderr: ${stderr.slice(0, 2000)})`);
  if (EMPTY_TITLE_KNOWN_BROKEN)
    process.stderr.write(
      "note: the empty-title crash is gone; set EMPTY_TITLE_KNOWN_BROKEN = false\n",
    );
});

// ---------------------------------------------------------------------------------------------
// MCP: client and server both Windows processes.

let mcp; // the SDK's modules
async function loadSdk() {
  mcp ??= {
    ...(await import("@modelcontextprotocol/sdk/client/index.js")),
    ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
    ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
  };
  return mcp;
}

async function callTool(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
}

test("mcp stdio", "listTools, execute_python and execute_bash over stdio", async () => {
  await loadSdk();
  const transport = new mcp.StdioClientTransport({
    command: process.execPath,
    args: [TITLE, CLI, "mcp", TIMEOUT_FLAG],
    cwd: REPO,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c) => {
    stderr += c;
  });
  const client = new mcp.Client({ name: "polybox-windows", version: "0.0.0" });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    equal(tools.length, 21, `tools ${tools.map((t) => t.name).join(", ")}`);
    const py = await callTool(client, "execute_python", { code: "print(42)" });
    equal(
      [py.isError ?? false, py.structuredContent?.status, py.structuredContent?.stdout],
      [false, "ok", "42\n"],
      `execute_python ${textOf(py)}`,
    );
    const sh = await callTool(client, "execute_bash", {
      code: "printf 'pear\\napple\\npear\\n' | sort | uniq -c",
    });
    equal(sh.structuredContent?.status, "ok", `execute_bash ${textOf(sh)}`);
    equal(
      sh.structuredContent.stdout
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean),
      ["1 apple", "2 pear"],
      "sort | uniq -c",
    );
  } catch (e) {
    throw new Error(`${e?.stack ?? e}\nserver stderr: ${stderr.slice(-2000)}`);
  } finally {
    await client.close();
  }
  // The server ends when its stdin closes.
  const pid = transport.pid;
  for (let i = 0; pid && i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  assert(!pid, `the stdio server (pid ${pid}) did not exit after its client closed`);
});

test(
  "mcp http",
  "listTools, execute_javascript, and a CSV read in a sandbox over HTTP",
  async () => {
    await loadSdk();
    const token = "windows-test-token";
    const child = spawn(
      process.execPath,
      [TITLE, CLI, "serve", TIMEOUT_FLAG, "--port=0", "--host=127.0.0.1", `--token=${token}`],
      {
        cwd: REPO,
        stdio: ["ignore", "pipe", "pipe"],
        windowsHide: true,
      },
    );
    let stderr = "";
    const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    const client = new mcp.Client({ name: "polybox-windows", version: "0.0.0" });
    try {
      const url = await new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`serve did not listen: ${stderr}`)),
          120_000,
        );
        child.stderr.on("data", (c) => {
          stderr += c;
          const m = /MCP server on (http:\/\/\S+\/mcp)/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
      });
      // Without the token: 401.
      const bare = await httpFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      equal(bare.status, 401, "no token");
      await client.connect(
        new mcp.StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
          fetch: httpFetch,
        }),
      );
      const { tools } = await client.listTools();
      equal(tools.length, 21, "tools");
      const js = await callTool(client, "execute_javascript", {
        code: "console.log([1, 2, 3].map((x) => x * 2).join(','))",
      });
      equal(
        [js.structuredContent?.status, js.structuredContent?.stdout],
        ["ok", "2,4,6\n"],
        `execute_javascript ${textOf(js)}`,
      );
      const created = await callTool(client, "create_sandbox", {});
      const id = created.structuredContent?.sandbox_id;
      assert(typeof id === "string", `create_sandbox ${textOf(created)}`);
      const w = await callTool(client, "write_file", {
        sandbox_id: id,
        path: "data/sales é.csv",
        content: "region,amount\r\nnorth,10\r\nsouth,32\r\n",
      });
      assert(!w.isError, `write_file ${textOf(w)}`);
      const py = await callTool(client, "execute_python", {
        sandbox_id: id,
        code: "import csv\nrows = list(csv.DictReader(open('data/sales é.csv', newline='')))\nprint(len(rows), sum(int(r['amount']) for r in rows))",
      });
      equal(
        [py.structuredContent?.status, py.structuredContent?.stdout],
        ["ok", "2 42\n"],
        `execute_python ${textOf(py)}`,
      );
      const closed = await callTool(client, "close_sandbox", { sandbox_id: id });
      assert(!closed.isError, `close_sandbox ${textOf(closed)}`);
    } catch (e) {
      throw new Error(`${e?.stack ?? e}\nserver stderr: ${stderr.slice(-2000)}`);
    } finally {
      await client.close().catch(() => undefined);
      // What a service manager does on Windows: TerminateProcess. Its engine hosts end when their
      // IPC channel closes.
      child.kill();
      await exited;
    }
  },
);

// ---------------------------------------------------------------------------------------------

try {
  lib = await import(pathToFileURL(path.join(DIST, "index.js")).href);
} catch (e) {
  // Every library test then fails with this.
  const why = `dist/index.js could not be loaded (is polybox built?): ${e?.message ?? e}`;
  for (const t of tests)
    if (t.group === "library")
      t.fn = async () => {
        throw new Error(why);
      };
}
const outcome = await runAll();
await runtime?.close().catch(() => undefined);
rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
process.exitCode = report(outcome) ? 0 : 1;

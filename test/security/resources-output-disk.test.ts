// T10 output flood and T11 workspace disk exhaustion. Floods on stdout and stderr in every
// language must end with status "output_limit", truncated, within maxOutputBytes. Writes past the
// workspace quota, by bytes or by number of entries, must end with "workspace_limit" (or throw
// QUOTA_EXCEEDED through the file API), and the workspace's host directory must stay within it.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  isPolyboxError,
  type Language,
  newSandbox,
  type Runtime,
  securityRuntime,
  workspaceDir,
} from "../helpers/security-env.js";

const MAX_OUTPUT = 64 * 1024;
const QUOTA = 1024 * 1024;
let rt: Runtime;

beforeAll(async () => {
  rt = await securityRuntime();
});

afterAll(async () => {
  await rt?.close();
});

const FLOODS: [string, Language, string][] = [
  ["python stdout", "python", "while True:\n    print('flood' * 20)"],
  ["python stderr", "python", "import sys\nwhile True:\n    print('flood' * 20, file=sys.stderr)"],
  ["python one huge line", "python", "print('x' * 50_000_000)"],
  ["javascript console.log", "javascript", "while (true) console.log('flood'.repeat(20))"],
  [
    "javascript process.stderr.write",
    "javascript",
    "while (true) process.stderr.write('flood'.repeat(20))",
  ],
  ["bash one huge line", "bash", "printf 'x%.0s' $(seq 1 200000)"],
];

it.each(FLOODS)(
  "T10 output flood: %s ends with output_limit, truncated and bounded",
  async (_label, language, code) => {
    const sb = await newSandbox(rt, { timeoutMs: 20_000, maxOutputBytes: MAX_OUTPUT });
    try {
      const r = await sb.run(language, code);
      expect(r.status, `${r.message ?? ""}`).toBe("output_limit");
      expect(r.truncated).toBe(true);
      expect(r.message).toMatch(/maxOutputBytes=65536/);
      expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(MAX_OUTPUT);
      expect(Buffer.byteLength(r.stderr)).toBeLessThanOrEqual(MAX_OUTPUT);
      expect((r.value ?? "").length).toBeLessThanOrEqual(1024 * 1024);
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
  },
);

it("T10 output flood: bash echo loop stays bounded and ends by its deadline", async () => {
  // just-bash hands a script's output over only when the script ends, and its output budget also
  // counts data passed between commands, which must not be capped at maxOutputBytes. So an
  // endless printer is stopped by timeoutMs (just-bash ends it itself, the interpreter survives);
  // what reaches the caller stays within maxOutputBytes either way.
  const sb = await newSandbox(rt, { timeoutMs: 3_000, maxOutputBytes: MAX_OUTPUT });
  try {
    const r = await sb.run("bash", "while true; do echo floodfloodfloodfloodfloodflood; done");
    expect(["output_limit", "timeout"]).toContain(r.status);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(MAX_OUTPUT);
    expect(Buffer.byteLength(r.stderr)).toBeLessThanOrEqual(MAX_OUTPUT);
    expect(r.stateLost ?? false).toBe(false);
    expect((await sb.run("bash", "echo after")).stdout).toBe("after\n");
  } finally {
    await sb.close();
  }
  await expectRuntimeAnswers(rt);
});

it("T10 output flood: python flood that swallows the stop request stays bounded and ends by its deadline", async () => {
  // The engine asks Python to stop (KeyboardInterrupt) at the cap; this guest ignores it and keeps
  // printing into the void until the deadline kills it. Output must stay bounded either way.
  const sb = await newSandbox(rt, { timeoutMs: 3_000, maxOutputBytes: MAX_OUTPUT });
  try {
    const started = Date.now();
    const r = await sb.run(
      "python",
      "while True:\n    try:\n        print('flood' * 20)\n    except BaseException:\n        pass",
    );
    expect(["output_limit", "timeout"]).toContain(r.status);
    // The run ends by its timeout plus the 3 s grace (RUN_GRACE_MS) on the trusted side's
    // clock; a loaded machine fires that timer late, so the bound leaves it room.
    expect(Date.now() - started).toBeLessThan(3_000 + 12_000);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(MAX_OUTPUT);
  } finally {
    await sb.close();
  }
  await expectRuntimeAnswers(rt);
});

/** Bytes the directory tree really takes on the host's disk (allocated blocks, not file sizes). */
function diskUsage(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    total += st.blocks * 512;
    if (st.isDirectory()) total += diskUsage(p);
  }
  return total;
}

const HOGS: [string, Language, string][] = [
  ["python one big file", "python", "open('big.bin', 'wb').write(b'x' * (5 * 1024 * 1024))"],
  [
    "python many small files",
    "python",
    "for i in range(3000):\n    open(f'f{i}.txt', 'w').write('x' * 1024)",
  ],
  [
    "javascript writeFileSync",
    "javascript",
    "require('fs').writeFileSync('big.bin', 'x'.repeat(5 * 1024 * 1024))",
  ],
  [
    "javascript append loop",
    "javascript",
    "const fs = require('fs'); for (let i = 0; i < 5000; i++) fs.appendFileSync('grow.txt', 'x'.repeat(1024))",
  ],
  ["bash redirect", "bash", "for i in $(seq 1 3000); do printf '%01024d' 0 > f$i.txt; done"],
];

it.each(HOGS)(
  "T11 workspace disk: %s ends with workspace_limit and the host dir stays within quota",
  async (_label, language, code) => {
    const sb = await newSandbox(rt, { timeoutMs: 30_000, workspaceQuotaBytes: QUOTA });
    try {
      const r = await sb.run(language, code);
      expect(r.status, `${r.message ?? ""} ${r.stderr.slice(-300)}`).toBe("workspace_limit");
      expect(r.message).toMatch(/workspaceQuotaBytes=1048576/);
      const files = await sb.files.list();
      expect(files.reduce((n, f) => n + f.size, 0)).toBeLessThanOrEqual(QUOTA);
      const dir = workspaceDir(sb);
      if (dir) expect(diskUsage(dir)).toBeLessThanOrEqual(2 * QUOTA);
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
  },
);

it("T11 workspace disk: sb.files.write past the quota throws QUOTA_EXCEEDED", async () => {
  const sb = await newSandbox(rt, { workspaceQuotaBytes: QUOTA });
  try {
    await sb.files.write("a.bin", new Uint8Array(QUOTA - 10));
    const error = await sb.files.write("b.bin", new Uint8Array(100)).catch((e: unknown) => e);
    expect(isPolyboxError(error, "QUOTA_EXCEEDED"), String(error)).toBe(true);
    expect(diskUsage(workspaceDir(sb)!)).toBeLessThanOrEqual(2 * QUOTA);
  } finally {
    await sb.close();
  }
});

it("T11 workspace disk: 10,000 empty directories in a 1 MiB workspace stay within the quota on the host", async () => {
  const sb = await newSandbox(rt, { timeoutMs: 60_000, workspaceQuotaBytes: QUOTA });
  try {
    const r = await sb.run("python", "import os\nfor i in range(10000):\n    os.mkdir(f'd{i}')");
    const dir = workspaceDir(sb);
    const used = dir ? diskUsage(dir) : 0;
    expect(
      used,
      `status ${r.status}: ${(await sb.files.list()).length} entries take ${used} bytes on the host`,
    ).toBeLessThanOrEqual(2 * QUOTA);
  } finally {
    await sb.close();
  }
  await expectRuntimeAnswers(rt);
});

it("T11 workspace disk: files with an out-of-range mtime are still counted against the quota", async () => {
  // A guest picks its files' mtimes; one the trusted side cannot apply must not leave the file on
  // the host uncounted (and the run must end in a result, not an exception).
  const sb = await newSandbox(rt, { timeoutMs: 30_000, workspaceQuotaBytes: QUOTA });
  try {
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const code = `import os\nopen("big${i}.bin", "wb").write(b"x" * 900_000)\nos.utime("big${i}.bin", (0, 2**62))`;
      outcomes.push(
        await sb.run("python", code).then(
          (r) => r.status,
          (e: unknown) => `threw ${String(e)}`,
        ),
      );
    }
    const dir = workspaceDir(sb);
    const used = dir ? diskUsage(dir) : 0;
    expect(used, `host dir holds ${used} bytes after ${outcomes.join(", ")}`).toBeLessThanOrEqual(
      2 * QUOTA,
    );
    for (const outcome of outcomes) expect(outcome).not.toMatch(/^threw/);
  } finally {
    await sb.close();
  }
  await expectRuntimeAnswers(rt);
});

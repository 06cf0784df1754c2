// Named sandboxes and snapshots with native engines: the files a real python3 wrote in its jail
// are in the data dir after the sandbox is reopened by another runtime, and a restore sends the
// restored files into a new jail.

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { usable } from "./helpers.js";

let dataDir: string;
let rt: Runtime;

describe.skipIf(!usable)("native named sandboxes", () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "polybox-native-state-"));
    rt = await testRuntime({
      dataDir,
      isolation: "auto",
      pool: { python: 0, javascript: 0, bash: 0 },
    });
  });

  afterAll(async () => {
    await rt?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps a jailed interpreter's files across a reopen, and restores into a fresh jail", async () => {
    const sb = await Sandbox.open("native-one", { runtime: rt, engine: "native" });
    const wrote = await sb.run("python", "open('out.txt', 'w').write('from the jail'); x = 1");
    expect(wrote.status, wrote.stderr).toBe("ok");
    const snap = await sb.snapshot();
    await sb.run("bash", "echo changed > out.txt");
    await sb.close();

    const other = await testRuntime({
      dataDir,
      isolation: "auto",
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      const again = await Sandbox.open("native-one", { runtime: other });
      expect(again.engine).toBe("native");
      expect(await again.files.read("out.txt", "utf8")).toBe("changed\n");
      await again.restore(snap.id);
      const r = await again.run("python", "print(open('out.txt').read()); print('x' in globals())");
      expect(r.stateLost).toBe(true);
      expect(r.stdout).toBe("from the jail\nFalse\n");
      await again.close({ delete: true });
    } finally {
      await other.close();
    }
  });
});

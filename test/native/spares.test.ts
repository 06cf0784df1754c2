// Spare native jails: a runtime keeps one jail started (agent and interpreters running, no guest
// code) for its next native sandbox. What must hold: a spare is handed to one sandbox and never to
// another, it carries nothing from anyone, its first run says no state was lost, a sandbox with
// another workspace quota gets a jail of its own, and closing the runtime ends the spares too.

import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { LAUNCHER, usable } from "./helpers.js";

/**
 * Jails on the host whose launcher's command line names `marker`: the launcher's processes (it and
 * its jail's init keep the same command line), less those whose parent is one of them.
 */
function launchers(marker: string): number[] {
  const all = launcherProcesses(marker);
  return all.filter((pid) => !all.includes(parentOf(pid)));
}

function parentOf(pid: number): number {
  try {
    return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  } catch {
    return -1;
  }
}

function launcherProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.startsWith(`${LAUNCHER}\0`) && cmdline.includes(marker)) found.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

async function until(check: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe.runIf(usable)("spare native jails", () => {
  let runtime: Runtime;
  // Every jail of this runtime binds the same workspace size: a quota no other test uses marks them.
  const QUOTA = 7 * 1024 * 1024 + 4096;
  const quotaMark = `\0--workspace-mb\0${Math.ceil(QUOTA / (1024 * 1024)) + 1}\0`;
  const mine = () => launchers(quotaMark);

  beforeAll(async () => {
    runtime = await testRuntime({
      isolation: "auto",
      pool: { python: 0, javascript: 0, bash: 0 },
      limits: { workspaceQuotaBytes: QUOTA },
      nativeSpares: 1,
    });
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it("start after the first native sandbox, and each goes to one sandbox only, carrying nothing", async () => {
    expect(mine()).toHaveLength(0);
    const first = await Sandbox.create({ runtime, engine: "native" });
    const r1 = await first.run(
      "python",
      "open('/tmp/mark', 'w').write('first')\nopen('mark.txt', 'w').write('first')\nprint('ok')",
    );
    expect(r1.status, r1.stderr).toBe("ok");
    // The first sandbox's jail, and a spare started behind it.
    expect(await until(() => mine().length === 2)).toBe(true);

    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sb = await Sandbox.create({ runtime, engine: "native" });
      const r = await sb.run(
        "python",
        [
          "import os",
          "print(os.path.exists('/tmp/mark'), os.listdir('.'))",
          `open('/tmp/mark', 'w').write('sandbox ${i}')`,
        ].join("\n"),
      );
      expect(r.status, r.stderr).toBe("ok");
      // Nothing of the first sandbox's, nor of the sandbox before: a jail no one had used.
      expect(r.stdout).toBe("False []\n");
      expect(r.stateLost ?? false).toBe(false);
      // Its other interpreters were started in the spare too; they answer, with no state lost.
      const b = await sb.run("bash", "echo $((6 * 7))");
      expect(b.stdout).toBe("42\n");
      expect(b.stateLost ?? false).toBe(false);
      const js = await sb.run("javascript", "console.log(typeof globalThis.x)");
      expect(js.stdout).toBe("undefined\n");
      seen.push(r.stdout);
      await sb.close();
    }
    expect(seen).toHaveLength(3);
    // The first sandbox still has its own files and jail.
    const again = await first.run("python", "print(open('/tmp/mark').read())");
    expect(again.stdout).toBe("first\n");
    await first.close();
  }, 180_000);

  it("give a sandbox with another workspace quota a jail of its own, with its own quota", async () => {
    const sb = await Sandbox.create({
      runtime,
      engine: "native",
      limits: { workspaceQuotaBytes: 3 * 1024 * 1024 },
    });
    const r = await sb.run("bash", "df -k /workspace | tail -1 | awk '{print $2}'");
    expect(r.status, r.stderr).toBe("ok");
    // A tmpfs of the sandbox's quota (plus a MiB of room), not the spares' 8 MiB.
    expect(Number(r.stdout)).toBeLessThanOrEqual(4 * 1024);
    await sb.close();
  }, 120_000);

  it("end with the runtime", async () => {
    const sb = await Sandbox.create({ runtime, engine: "native" });
    expect((await sb.run("bash", "echo hi")).stdout).toBe("hi\n");
    expect(await until(() => mine().length >= 2)).toBe(true);
    await runtime.close();
    expect(await until(() => launcherProcesses(quotaMark).length === 0, 15_000)).toBe(true);
  }, 120_000);
});

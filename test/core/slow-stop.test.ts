// A run whose timeout ends on the slow path: the trusted side ended the run itself because the
// engine host had not (a loaded machine: here, the host is held with SIGSTOP while it boots the
// run's interpreter, so the host's own deadline falls after the trusted side's backstop). The
// cancel that follows gives the interpreter a moment's grace, and the sandbox's next run arrives
// inside it: that run must get a fresh interpreter, not fail with "interpreter is busy".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostPidOf } from "../helpers/internals.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  // No warm Python: the sandbox's first Python run boots its interpreter on demand.
  runtime = await testRuntime({ pool: { python: 0, javascript: 0, bash: 1 } });
});
afterAll(() => runtime.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(process.platform === "win32")("after a timeout's slow path", () => {
  it("the sandbox's next run gets a fresh interpreter instead of 'interpreter is busy'", async () => {
    await using sb = await Sandbox.create({ runtime });
    expect((await sb.run("bash", "echo a")).status).toBe("ok");
    const pid = hostPidOf(sb);
    expect(pid).toBeGreaterThan(0);
    let stopped = false;
    try {
      const slow = sb.run("python", "import time\nprint('x', flush=True)\ntime.sleep(10)", {
        timeoutMs: 3000,
      });
      // Held mid-boot for longer than the run's grace: the run starts late in the host, so the
      // trusted side's backstop comes first.
      await sleep(100);
      process.kill(pid!, "SIGSTOP");
      stopped = true;
      await sleep(3500);
      process.kill(pid!, "SIGCONT");
      stopped = false;
      const ended = await slow;
      expect(ended.status).toBe("timeout");
      const next = await sb.run("python", "print('again')");
      expect(next.status).toBe("ok");
      expect(next.stdout).toBe("again\n");
      // And the sandbox goes on as usual.
      const after = await sb.run("python", "y = 2\nprint(y)");
      expect(after.stdout).toBe("2\n");
    } finally {
      if (stopped) process.kill(pid!, "SIGCONT");
    }
  }, 60_000);

  // Held past the overdue run's backstop too: the trusted side kills the host. A run that comes
  // meanwhile must wait for that and run in the replacement, not be sent to the dying host and
  // fail with "the engine process died".
  it("a run that arrives while the host is being killed runs in its replacement", async () => {
    await using sb = await Sandbox.create({ runtime });
    expect((await sb.run("bash", "echo a")).status).toBe("ok");
    const pid = hostPidOf(sb);
    expect(pid).toBeGreaterThan(0);
    const slow = sb.run("python", "import time\ntime.sleep(10)", { timeoutMs: 2000 });
    await sleep(100);
    process.kill(pid!, "SIGSTOP");
    try {
      const ended = await slow;
      expect(ended.status).toBe("timeout");
      // Sent at once, while the host is still held and not yet killed.
      const next = await sb.run("python", "print('again')");
      expect(next.status, next.message).toBe("ok");
      expect(next.stdout).toBe("again\n");
      expect(hostPidOf(sb)).not.toBe(pid);
    } finally {
      try {
        process.kill(pid!, "SIGCONT");
      } catch {
        // Killed, as it should be.
      }
    }
  }, 60_000);
});

// T12 kill or hang the engine host: guests call every exit/abort/kill they can reach, park the
// thread forever or spin; then the test itself kills (SIGKILL) and freezes (SIGSTOP) the engine
// host mid-run, as a guest that escaped everything might. After each, a new sandbox runs
// normally, an unrelated sandbox keeps its workspace files, and a run that was in flight when
// the host died ends with status "error" and a message saying the engine process died.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  fixture,
  hostPid,
  hostRestarts,
  type Language,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
  sleep,
} from "../helpers/security-env.js";

let rt: Runtime;
/** The bystander: its files must survive whatever the attackers do. */
let keeper: Sandbox;

beforeAll(async () => {
  rt = await securityRuntime();
  keeper = await newSandbox(rt);
  await keeper.files.write("keep.txt", "kept through every attack");
  const r = await keeper.run("python", "open('keep.txt').read()");
  expect(r.value).toBe("'kept through every attack'");
});

afterAll(async () => {
  await rt?.close();
});

async function expectKeeperIntact(): Promise<void> {
  expect(await keeper.files.read("keep.txt", "utf8")).toBe("kept through every attack");
  const r = await keeper.run("bash", "cat keep.txt");
  expect(r.stdout).toBe("kept through every attack");
}

const ATTACKS: [string, Language, string][] = [
  [
    "python run_js process.exit(1)",
    "python",
    "from pyodide.code import run_js\nrun_js('process.exit(1)')",
  ],
  [
    "python run_js process.reallyExit(1)",
    "python",
    "from pyodide.code import run_js\nrun_js('process.reallyExit(1)')",
  ],
  [
    "python run_js process.abort()",
    "python",
    "from pyodide.code import run_js\nrun_js('process.abort()')",
  ],
  [
    "python run_js process.kill(process.pid)",
    "python",
    "from pyodide.code import run_js\nrun_js(\"process.kill(process.pid, 'SIGKILL')\")",
  ],
  [
    "python run_js process._kill",
    "python",
    "from pyodide.code import run_js\nrun_js('process._kill(process.pid, 9)')",
  ],
  [
    "python run_js process.emit('SIGTERM')",
    "python",
    "from pyodide.code import run_js\nrun_js(\"process.emit('SIGTERM'); process.emit('disconnect')\")",
  ],
  ["python js.process.exit", "python", "import js\njs.process.exit(3)"],
  ["python os.kill(os.getpid(), 9)", "python", "import os\nos.kill(os.getpid(), 9)"],
  ["python os._exit(1)", "python", "import os\nos._exit(1)"],
  [
    "python run_js throw from a timer",
    "python",
    "from pyodide.code import run_js\nrun_js(\"setTimeout(() => { throw new Error('boom') }, 0)\")\nimport asyncio\nawait asyncio.sleep(0.5)",
  ],
  [
    "python run_js Atomics.wait forever",
    "python",
    "from pyodide.code import run_js\nrun_js('Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)')",
  ],
  ["javascript while(true)", "javascript", "while (true) {}"],
  ["javascript process.exit(1)", "javascript", "process.exit(1)"],
  ["bash kill -9 $$", "bash", "kill -9 $$; kill -9 1; exit 1"],
];

describe("T12 kill or hang the engine host from guest code", () => {
  it.each(ATTACKS)(
    "T12 kill/hang engine host: %s; the server recovers",
    async (_label, language, code) => {
      const sb = await newSandbox(rt, { timeoutMs: 3_000 });
      try {
        const r = await sb.run(language, code);
        if (hostRestarts(sb) > 0) {
          expect(r.status).toBe("error");
          expect(r.message).toMatch(/engine process died/);
        }
      } finally {
        await sb.close();
      }
      await expectRuntimeAnswers(rt);
      await expectKeeperIntact();
    },
  );
});

describe("T12 the engine host dies or hangs under a run (supervision)", () => {
  it("T12 kill engine host: python aborts the whole host through a native TCP handle; in-flight runs fail cleanly", async () => {
    // A server that accepts and never answers, so the guest's connection (and its handle) stays.
    const held: net.Socket[] = [];
    const server = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const bystander = await newSandbox(rt, { timeoutMs: 30_000 });
    const attacker = await newSandbox(rt, { timeoutMs: 10_000 });
    try {
      const inFlight = bystander.run(
        "javascript",
        "await new Promise((r) => setTimeout(r, 8_000)); 'finished'",
      );
      await sleep(300);
      const r = await attacker.run("python", fixture("abort-host.py", { PORT: String(port) }));
      const other = await inFlight;
      if (hostRestarts(attacker) > 0) {
        // The attacker may take its own host down: its run fails cleanly and says why.
        expect(r.status).toBe("error");
        expect(r.message).toMatch(/engine process died/);
      }
      // The secure outcome: one guest cannot take every other sandbox's run down with it.
      expect(other.value, `a bystander's run was killed by another sandbox: ${other.message}`).toBe(
        "'finished'",
      );
    } finally {
      await attacker.close();
      await bystander.close();
      for (const socket of held) socket.destroy();
      server.close();
    }
    await expectRuntimeAnswers(rt);
    await expectKeeperIntact();
  });

  it("T12 kill engine host: SIGKILL mid-run fails the run with 'engine process died' and the server recovers", async () => {
    const sb = await newSandbox(rt, { timeoutMs: 30_000 });
    try {
      await sb.run("python", "x = 42");
      await keeper.run("python", "remembered = 'before the kill'");
      const pid = hostPid(sb);
      const running = sb.run("python", "while True:\n    pass");
      await sleep(1_000);
      process.kill(pid, "SIGKILL");
      const r = await running;
      expect(r.status).toBe("error");
      expect(r.message).toMatch(/engine process died/);
      expect(r.stateLost).toBe(true);
      expect(hostRestarts(sb)).toBe(1);
      // The sandbox itself runs again, on a new host, with its interpreter state gone.
      const again = await sb.run("python", "globals().get('x')");
      expect(again.status).toBe("ok");
      expect(hostPid(sb)).not.toBe(pid);
      // A bystander whose interpreter died with the host must be told its state is gone.
      const bystander = await keeper.run("python", "globals().get('remembered')");
      expect(bystander.status).toBe("ok");
      if (bystander.value !== "'before the kill'") {
        expect(bystander.stateLost, `state silently lost: value ${bystander.value}`).toBe(true);
      }
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
    await expectKeeperIntact();
  });

  it("T12 hang engine host: SIGSTOP mid-run is detected, the host replaced, and the run fails cleanly", async () => {
    const sb = await newSandbox(rt, { timeoutMs: 60_000 });
    try {
      await sb.run("javascript", "1");
      const pid = hostPid(sb);
      const running = sb.run("javascript", "await new Promise((r) => setTimeout(r, 50_000))");
      await sleep(500);
      process.kill(pid, "SIGSTOP");
      const started = Date.now();
      const r = await running;
      expect(r.status).toBe("error");
      expect(r.message).toMatch(/engine process died/);
      // Detected by the liveness ping, well before the run's own 60 s deadline.
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(hostRestarts(sb)).toBe(1);
    } finally {
      await sb.close();
    }
    await expectRuntimeAnswers(rt);
    await expectKeeperIntact();
  }, 90_000);
});

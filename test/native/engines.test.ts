// Native mode end to end: sandboxes whose code runs in the machine's real python3, bash and node,
// each sandbox in its own kernel jail. The engine contract (output, exit codes, errors, state,
// stdin, env, values, and every limit), the shared workspace, and attacks from inside a real
// interpreter: the host's files, other sandboxes, the network, and processes left running.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS, type Dialect } from "../helpers/dialects.js";
import { isPolyboxError, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { buildWheel } from "../helpers/wheel.js";

const LAUNCHER = path.resolve(import.meta.dirname, "../../native/build/polybox-jail");
const usable =
  process.platform === "linux" &&
  existsSync(LAUNCHER) &&
  spawnSync(LAUNCHER, ["--probe"], { timeout: 10_000 }).status === 0;

const CLI = path.resolve(import.meta.dirname, "../../dist/cli/main.js");
const asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
const canRunAsNobody =
  usable &&
  process.getuid?.() === 0 &&
  spawnSync("setpriv", [...asNobody, "test", "-r", CLI]).status === 0;

/** Host processes whose command line contains `marker`. */
function hostProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.includes(marker)) found.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

function parentOf(pid: number): number {
  try {
    return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  } catch {
    return -1;
  }
}

function isZombie(pid: number): boolean {
  try {
    return /State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

/** The languages native mode runs, spoken as in the WASM engines' contract. */
const NATIVE = ["python", "javascript", "typescript", "bash"] as const;

describe.runIf(usable)("native mode", () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await testRuntime({ isolation: "auto", pool: { python: 0, javascript: 0, bash: 0 } });
  });
  afterAll(async () => {
    await runtime?.close();
  });

  describe.each(NATIVE.map((language) => [language, DIALECTS[language]] as const))(
    "%s contract",
    (language, d: Dialect) => {
      let sb: Sandbox;
      beforeAll(async () => {
        sb = await Sandbox.create({ runtime, engine: "native" });
      });
      afterAll(async () => {
        await sb?.close();
      });

      it("captures stdout and stderr separately, with exit codes", async () => {
        const r = await sb.run(language, `${d.print("to out")}\n${d.printErr("to err")}`);
        expect(r).toMatchObject({
          status: "ok",
          exitCode: 0,
          stdout: "to out\n",
          stderr: "to err\n",
        });
        const exited = await sb.run(language, d.exit(7));
        expect(exited).toMatchObject({ status: "error", exitCode: 7 });
      });

      it("reports an uncaught error with the guest's own trace", async () => {
        const r = await sb.run(language, d.raiseCode);
        expect(r.status).toBe("error");
        expect(r.stderr).toMatch(d.raise);
        expect(r.stderr).not.toMatch(/polybox|agent\.js|_serve/);
      });

      it("keeps state between runs and feeds stdin and env", async () => {
        await sb.run(language, d.setVar("counter", 41));
        expect((await sb.run(language, d.echoVar("counter"))).stdout.trim()).toBe("41");
        expect((await sb.run(language, d.readStdin, { stdin: "shout" })).stdout.trim()).toBe(
          "SHOUT",
        );
        const env = await sb.run(language, d.readEnv("GREETING"), { env: { GREETING: "hello" } });
        expect(env.stdout.trim()).toBe("hello");
      });

      it.runIf(d.value)("returns the last expression's value as text", async () => {
        expect((await sb.run(language, d.value!.code)).value).toBe(d.value!.expected);
      });

      it("kills an infinite loop at the timeout, says state was lost, and stays usable", async () => {
        const r = await sb.run(language, d.loop, { timeoutMs: 500 });
        expect(r).toMatchObject({ status: "timeout", exitCode: 124 });
        expect(r.message).toMatch(/timeoutMs=500/);
        const after = await sb.run(language, d.print("alive"));
        expect(after).toMatchObject({ status: "ok", stdout: "alive\n", stateLost: true });
      });

      it("stops a memory bomb with status memory_limit", async () => {
        const r = await sb.run(language, d.memoryBomb, { memoryMb: 128, timeoutMs: 20_000 });
        expect(r.status).toBe("memory_limit");
        expect(r.message).toMatch(/memoryMb=128/);
        expect((await sb.run(language, d.print("fresh"))).stdout).toBe("fresh\n");
      });

      it("caps output and stops the flood", async () => {
        const r = await sb.run(language, d.flood, { maxOutputBytes: 4096, timeoutMs: 20_000 });
        expect(r).toMatchObject({ status: "output_limit", truncated: true });
        expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(4096);
      });
    },
  );

  it("shares one workspace between the languages and the files API", async () => {
    await using sb = await Sandbox.create({ runtime, engine: "native" });
    await sb.files.write("in.txt", "from the host");
    const py = await sb.run(
      "python",
      "data = open('in.txt').read()\nopen('py.txt', 'w').write(data.upper())",
    );
    expect(py.filesChanged).toEqual(["py.txt"]);
    const sh = await sb.run("bash", "cat py.txt; echo ' and bash' > sh.txt");
    expect(sh.stdout).toBe("FROM THE HOST");
    const js = await sb.run("javascript", "require('fs').readFileSync('sh.txt', 'utf8').trim()");
    expect(js.value).toBe("'and bash'");
    expect(await sb.files.read("py.txt", "utf8")).toBe("FROM THE HOST");
    expect(sb.info().engine).toBe("native");
  });

  it("runs real CPython: C extensions, subprocesses and the jail's own user", async () => {
    await using sb = await Sandbox.create({ runtime, engine: "native" });
    const r = await sb.run(
      "python",
      "import sqlite3, subprocess, os, socket\n" +
        "db = sqlite3.connect(':memory:'); print(db.execute('select 6*7').fetchone()[0])\n" +
        "print(subprocess.run(['sh', '-c', 'echo $((1+1))'], capture_output=True, text=True).stdout.strip())\n" +
        "print(os.getuid(), socket.gethostname(), os.getcwd())",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("42\n2\n1000 polybox /workspace\n");
  });

  it("keeps the host's files, other sandboxes and the network out of reach", async () => {
    const canaryDir = mkdtempSync(path.join(os.tmpdir(), "polybox-canary-"));
    writeFileSync(path.join(canaryDir, "secret.txt"), "HOST-SECRET-CANARY");
    const seen: string[] = [];
    const server: Server = createServer((s) => {
      seen.push("connection");
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    await using other = await Sandbox.create({ runtime, engine: "native" });
    await other.run("python", "open('mine.txt', 'w').write('OTHER-SANDBOX-CANARY')");
    await using sb = await Sandbox.create({ runtime, engine: "native" });
    try {
      const r = await sb.run(
        "python",
        [
          "import os, socket, glob",
          `for p in ['/root', '/home', '/var', ${JSON.stringify(canaryDir)}, '/proc/1/root/root']:`,
          "    print(p, os.path.exists(p))",
          "print(sorted(glob.glob('/tmp/**/mine.txt', recursive=True) + glob.glob('/workspace/**/mine.txt', recursive=True)))",
          "print('pids', len([p for p in os.listdir('/proc') if p.isdigit()]) < 12)",
          "s = socket.socket()",
          "try:",
          `    s.connect(('127.0.0.1', ${port})); print('CONNECTED')`,
          "except OSError as e:",
          "    print('connect', e.errno)",
          "try:",
          "    open('/usr/polybox-write-test', 'w')",
          "except OSError as e:",
          "    print('write /usr', e.errno)",
        ].join("\n"),
        { timeoutMs: 20_000 },
      );
      expect(r.stderr).toBe("");
      expect(r.stdout).not.toMatch(/HOST-SECRET|OTHER-SANDBOX|CONNECTED/);
      expect(r.stdout).toContain("/root False");
      expect(r.stdout).toContain("/home False");
      expect(r.stdout).toContain(`${canaryDir} False`);
      expect(r.stdout).toContain("[]\npids True");
      expect(r.stdout).toMatch(/connect (101|111)/); // ENETUNREACH or ECONNREFUSED
      expect(r.stdout).toMatch(/write \/usr (30|13)/); // EROFS or EACCES
      expect(seen).toEqual([]);
    } finally {
      server.close();
      rmSync(canaryDir, { recursive: true, force: true });
    }
  });

  it("ends the processes a run leaves behind, and the whole jail when the sandbox closes", async () => {
    const marker = `polybox-stray-${process.pid}-${Date.now()}`;
    const agentMarker = "dist/guest/native-agent/agent.js";
    // A runtime without spare jails, so that the only jail started from here on is this sandbox's.
    await using own = await testRuntime({
      isolation: "auto",
      pool: { python: 0, javascript: 0, bash: 0 },
      nativeSpares: 0,
    });
    const agentsBefore = new Set(hostProcesses(agentMarker));
    const sb = await Sandbox.create({ runtime: own, engine: "native" });
    const r = await sb.run(
      "bash",
      `(exec -a ${marker} sleep 300 &) ; setsid sh -c 'exec -a ${marker} sleep 300' & echo started`,
    );
    expect(r.stdout).toBe("started\n");
    expect(hostProcesses(marker)).toEqual([]);
    // The launcher (our child), the jail's init and the agent all carry the agent's path.
    const mine = hostProcesses(agentMarker).filter((pid) => !agentsBefore.has(pid));
    const launcher = mine.filter((pid) => parentOf(pid) === process.pid);
    expect(launcher).toHaveLength(1);
    const jail = mine.filter((pid) => pid === launcher[0] || parentOf(pid) !== process.pid);
    expect(jail.length).toBeGreaterThanOrEqual(3);
    await sb.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const alive = hostProcesses(agentMarker);
    expect(jail.filter((pid) => alive.includes(pid) && !isZombie(pid))).toEqual([]);
  });

  // Needs root to switch users, and a checkout that user can read.
  it.runIf(canRunAsNobody)(
    "works for an unprivileged user too: polybox run --isolation=native as nobody",
    () => {
      const home = mkdtempSync(path.join(os.tmpdir(), "polybox-nobody-"));
      spawnSync("chown", ["65534:65534", home]);
      try {
        const r = spawnSync(
          "setpriv",
          [
            ...asNobody,
            "env",
            `HOME=${home}`,
            `XDG_CACHE_HOME=${home}`,
            process.execPath,
            CLI,
            "run",
            "--isolation=native",
            "--lang",
            "python",
            "-e",
            "import os\nprint(os.getuid(), open('/proc/self/status').read().count('NoNewPrivs:\\t1'))",
          ],
          { encoding: "utf8", timeout: 60_000 },
        );
        expect(r.stdout).toBe("1000 1\n");
        expect(r.status).toBe(0);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it("installs Python packages the trusted side resolved, for that sandbox only", async () => {
    const wheel = buildWheel(
      "polybox-native-demo",
      "1.0.0",
      "polybox_native_demo",
      "ANSWER = 42\n",
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-wheels-"));
    writeFileSync(path.join(dir, wheel.fileName), wheel.data);
    const rt = await testRuntime({
      isolation: "native",
      pythonPackages: [dir],
      cacheDir: mkdtempSync(path.join(os.tmpdir(), "polybox-cache-")),
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      await using sb = await Sandbox.create({ runtime: rt });
      expect(sb.engine).toBe("native");
      expect(await sb.installPackages("polybox-native-demo")).toEqual(["polybox-native-demo"]);
      const r = await sb.run("python", "import polybox_native_demo\npolybox_native_demo.ANSWER");
      expect(r).toMatchObject({ status: "ok", value: "42" });
      await using other = await Sandbox.create({ runtime: rt });
      const missing = await other.run("python", "import polybox_native_demo");
      expect(missing.stderr).toMatch(/ModuleNotFoundError/);
    } finally {
      await rt.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses native sandboxes on a runtime made with isolation wasm", async () => {
    const wasm = await testRuntime({
      isolation: "wasm",
      pool: { python: 0, javascript: 0, bash: 0 },
    });
    try {
      const err = await Sandbox.create({ runtime: wasm, engine: "native" }).catch((e) => e);
      expect(isPolyboxError(err, "ISOLATION_UNAVAILABLE")).toBe(true);
    } finally {
      await wasm.close();
    }
  });
});

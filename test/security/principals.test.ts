// T25 two principals never share a process. One-shot runs no longer get an engine host each:
// every principal (the library's `principal` option; over MCP the caller: one stdio client, one
// HTTP bearer token, one token-less HTTP session) has ONE engine host process for all its
// one-shots (src/supervisor/fleet.ts, forPrincipal), and stateful sandboxes keep one each. So
// the process is the wall between principals: another principal's one-shots, sequential or in
// parallel, run elsewhere and never see what a hostile one-shot planted in its own process's
// realm or file systems; a dead host fails only its own principal's runs in flight; releasing a
// principal ends its process.
import { readFileSync } from "node:fs";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OneShotOptions } from "../../dist/index.js";
import { fleetOf, hostPidOf } from "../helpers/internals.js";
import { call, type HttpHandle, httpServer } from "../helpers/mcp-client.js";
import {
  type Language,
  type RunResult,
  type Runtime,
  run,
  Sandbox,
  testRuntime,
} from "../helpers/runtime.js";
import { childPids } from "../helpers/security-env.js";

const SECRET = "principal-a-secret-41d9";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("T25: two principals never share a process (library)", () => {
  let rt: Runtime;

  beforeAll(async () => {
    rt = await testRuntime({ pool: { typescript: 0 } });
  });

  afterAll(async () => {
    await rt?.close();
  });

  const as = (
    principal: string,
    language: Language,
    code: string,
    more: Omit<OneShotOptions, "language" | "code"> = {},
  ): Promise<RunResult> => run({ runtime: rt, language, code, principal, ...more });
  const pidOf = (principal: string) => fleetOf(rt).principalPid(principal);

  it("one process serves all of a principal's one-shots, another principal's are elsewhere, and sandboxes have their own", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    try {
      expect((await sb.run("javascript", "1")).status).toBe("ok");
      for (const p of ["a", "b"]) expect((await as(p, "javascript", "1")).status).toBe("ok");
      const a = pidOf("a")!;
      const b = pidOf("b")!;
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(0);
      expect(a).not.toBe(b);
      expect(readFileSync(`/proc/${a}/cmdline`, "utf8")).toContain("engine-host");

      // Several one-shots of each, in every language, at once: still the same two processes.
      const say = (l: Language, s: string) =>
        l === "bash" ? `echo ${s}` : l === "python" ? `print("${s}")` : `console.log("${s}")`;
      const LANGS = ["javascript", "bash", "python", "javascript", "bash"] as const;
      const batch = (p: string) => LANGS.map((l, i) => as(p, l, say(l, `${p}${i}`)));
      const results = await Promise.all([...batch("a"), ...batch("b")]);
      for (const [i, r] of results.entries()) {
        expect(r.status, `${i}: ${r.message} ${r.stderr}`).toBe("ok");
        expect(r.stdout).toBe(`${i < LANGS.length ? "a" : "b"}${i % LANGS.length}\n`);
      }
      for (let i = 0; i < 5; i++) await as("a", "javascript", `${i}`);
      expect(pidOf("a")).toBe(a);
      expect(pidOf("b")).toBe(b);
      expect(alive(a) && alive(b)).toBe(true);

      const other = await Sandbox.create({ runtime: rt });
      try {
        expect((await other.run("bash", "true")).status).toBe("ok");
        const sandboxes = [hostPidOf(sb), hostPidOf(other)];
        expect(new Set([a, b, ...sandboxes]).size).toBe(4);
        // Claimed hosts: two principals and two sandboxes, however many one-shots ran.
        expect(fleetOf(rt).stats().claimed).toBe(4);
        expect(fleetOf(rt).principalCount).toBeGreaterThanOrEqual(2);
      } finally {
        await other.close();
      }
    } finally {
      await sb.close();
    }
  }, 180_000);

  it("what a hostile one-shot of one principal plants in its process never reaches another's", async () => {
    // a plants everything at once and holds its interpreters open while b looks.
    const planting = new Set<Language>();
    const hostile = (language: Language, code: string) =>
      as("a", language, code, {
        onOutput: (_, text) => {
          if (text.includes("planted")) planting.add(language);
        },
      });
    const planted = Promise.all([
      hostile(
        "python",
        `import js, os, time
from pyodide.code import run_js
js.globalThis.stolen = "${SECRET}"
run_js("globalThis.stolen2 = '${SECRET}'")
os.environ["STOLEN"] = "${SECRET}"
open("/tmp/stolen", "w").write("${SECRET}")
print("planted", flush=True)
time.sleep(5)`,
      ),
      hostile(
        "javascript",
        `globalThis.stolen = '${SECRET}'; Object.prototype.stolen = '${SECRET}'; process.env.STOLEN = '${SECRET}';
console.log('planted'); await new Promise((r) => setTimeout(r, 5000));`,
      ),
      hostile(
        "bash",
        `export STOLEN=${SECRET}; echo ${SECRET} > /tmp/stolen; echo planted; sleep 5`,
      ),
    ]);
    await until(() => planting.size === 3, 60_000, "a's one-shots planted");
    const [py, js, sh] = await Promise.all([
      as(
        "b",
        "python",
        `import js, os
from pyodide.code import run_js
print(getattr(js.globalThis, "stolen", None), run_js("typeof globalThis.stolen2"), os.environ.get("STOLEN"), os.path.exists("/tmp/stolen"))`,
      ),
      as(
        "b",
        "javascript",
        "console.log(typeof globalThis.stolen, ({}).stolen, process.env.STOLEN)",
      ),
      as("b", "bash", 'echo "[$STOLEN]"; cat /tmp/stolen'),
    ]);
    expect(py!.stdout, py!.stderr).toBe("None undefined None False\n");
    expect(js!.stdout, js!.stderr).toBe("undefined undefined undefined\n");
    expect(sh!.stdout).toBe("[]\n");
    expect(sh!.stderr).toContain("No such file");
    for (const r of [py!, js!, sh!]) expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
    for (const r of await planted) expect(r.stdout, `${r.message} ${r.stderr}`).toBe("planted\n");
    expect(pidOf("a")).not.toBe(pidOf("b"));
  }, 180_000);

  it("a killed host fails only its own principal's runs in flight; that principal's next one-shot works", async () => {
    // Both hosts hold a Python interpreter already, so the runs below start at once.
    for (const p of ["a", "b"]) expect((await as(p, "python", "1")).status).toBe("ok");
    const a = pidOf("a")!;
    const b = pidOf("b")!;
    const started = new Set<string>();
    const long = (p: string, seconds: number) =>
      as(
        p,
        "python",
        `import time\nprint("started", flush=True)\ntime.sleep(${seconds})\nprint("woke")`,
        {
          limits: { timeoutMs: 30_000 },
          onOutput: (_, text) => {
            if (text.includes("started")) started.add(p);
          },
        },
      );
    const runA = long("a", 20);
    const runB = long("b", 4);
    await until(() => started.size === 2, 60_000, "both runs started");
    process.kill(a, "SIGKILL");
    const [ra, rb] = await Promise.all([runA, runB]);
    expect(ra.status).toBe("error");
    expect(ra.stateLost).toBe(true);
    expect(ra.message).toMatch(/engine process died/);
    expect(ra.stdout).not.toContain("woke");
    expect(rb.status, `${rb.message} ${rb.stderr}`).toBe("ok");
    expect(rb.stdout).toBe("started\nwoke\n");
    expect(rb.stateLost).toBeFalsy();
    expect(pidOf("b")).toBe(b);
    expect(alive(b)).toBe(true);

    const next = await as("a", "python", "print('again')");
    expect(next.status, `${next.message} ${next.stderr}`).toBe("ok");
    expect(next.stdout).toBe("again\n");
    expect(pidOf("a")).not.toBe(a);
    expect(pidOf("a")).not.toBe(b);
  }, 180_000);

  it("releasing a principal ends its process; its next one-shot gets a new one", async () => {
    expect((await as("a", "javascript", "1")).status).toBe("ok");
    expect((await as("b", "javascript", "1")).status).toBe("ok");
    const a = pidOf("a")!;
    const b = pidOf("b")!;
    await fleetOf(rt).releasePrincipal("a");
    expect(pidOf("a")).toBeNull();
    await until(() => !alive(a), 10_000, `principal a's process ${a} ends`);
    expect(alive(b)).toBe(true);
    expect(pidOf("b")).toBe(b);
    const again = await as("a", "javascript", "'back'");
    expect(again.value).toBe("'back'");
    expect(pidOf("a")).toBeGreaterThan(0);
    expect(pidOf("a")).not.toBe(a);
    expect(pidOf("a")).not.toBe(b);
  }, 120_000);
});

/** Pids of a process's descendants (Linux): children first, then theirs. */
function descendants(pid: number): number[] {
  return childPids(pid).flatMap((child) => [child, ...descendants(child)]);
}

/** The server's engine host processes: the Node processes running the engine host's main. */
function engineHosts(server: HttpHandle): Set<number> {
  const hosts = new Set<number>();
  for (const pid of descendants(server.child.pid!)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv[0] === process.execPath && argv.some((a) => a.includes("engine-host")))
        hosts.add(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return hosts;
}

describe.runIf(process.platform === "linux")(
  "T25: two MCP clients never share a process (HTTP)",
  () => {
    let server: HttpHandle | null = null;

    afterAll(async () => {
      if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
    });

    it("each session's one-shots run in an engine host of its own, ended with the session", async () => {
      // No warm hosts: every engine host there is was claimed by a client.
      server = await httpServer(["--pool=python=0,javascript=0,typescript=0,bash=0,ruby=0,wasm=0"]);
      expect(engineHosts(server).size).toBe(0);
      const a = server.client;
      const b = await server.connect();
      const ok = async (client: typeof a, tool: string, code: string): Promise<string> => {
        const r = await call(client, tool, { code });
        expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
        expect(r.structuredContent?.sandbox_id).toBeNull();
        return r.structuredContent?.stdout;
      };

      expect(await ok(a, "execute_bash", `echo ${SECRET} > /tmp/mark; cat /tmp/mark`)).toBe(
        `${SECRET}\n`,
      );
      const hostsA = engineHosts(server);
      expect(hostsA.size).toBe(1);
      const [pidA] = hostsA;
      const seen = await call(b, "execute_bash", { code: "cat /tmp/mark" });
      expect(seen.structuredContent?.status).toBe("error");
      expect(seen.structuredContent?.stderr).toContain("No such file");
      const both = engineHosts(server);
      expect(both.size).toBe(2);
      expect(both.has(pidA!)).toBe(true);

      expect(
        await ok(
          a,
          "execute_python",
          `import js\njs.globalThis.mark = "${SECRET}"\nprint(js.globalThis.mark)`,
        ),
      ).toBe(`${SECRET}\n`);
      expect(
        await ok(b, "execute_python", 'import js\nprint(getattr(js.globalThis, "mark", None))'),
      ).toBe("None\n");
      expect(
        await ok(a, "execute_javascript", `globalThis.mark = '${SECRET}'; console.log(mark)`),
      ).toBe(`${SECRET}\n`);
      expect(await ok(b, "execute_javascript", "console.log(typeof globalThis.mark)")).toBe(
        "undefined\n",
      );
      // Many one-shots in three languages later: still one process per client.
      expect(engineHosts(server)).toEqual(both);

      // A token-less session is a client: when it ends, its one-shot process ends with it.
      await (a.transport as StreamableHTTPClientTransport).terminateSession();
      await until(() => !alive(pidA!), 10_000, `session a's engine host ${pidA} ends`);
      const left = engineHosts(server);
      expect(left.size).toBe(1);
      expect(left.has(pidA!)).toBe(false);
      expect(await ok(b, "execute_javascript", "console.log('still here')")).toBe("still here\n");
      expect(engineHosts(server)).toEqual(left);
    }, 180_000);

    it("with tokens, each token's sessions share one engine host; another token's is another", async () => {
      if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
      server = await httpServer([
        "--token=alpha-5b1e,beta-77c0",
        "--pool=python=0,javascript=0,typescript=0,bash=0,ruby=0,wasm=0",
      ]);
      const a = server.client;
      const a2 = await server.connect("alpha-5b1e");
      const b = await server.connect("beta-77c0");
      const stdout = async (client: typeof a, code: string) =>
        (await call(client, "execute_bash", { code })).structuredContent?.stdout;
      expect(await stdout(a, `echo ${SECRET} > /tmp/mark; echo a`)).toBe("a\n");
      const [pidA] = engineHosts(server);
      expect(await stdout(a2, "cat /tmp/mark 2>/dev/null; echo a2")).toBe("a2\n");
      expect(engineHosts(server)).toEqual(new Set([pidA]));
      expect(await stdout(b, "cat /tmp/mark 2>/dev/null; echo b")).toBe("b\n");
      const both = engineHosts(server);
      expect(both.size).toBe(2);
      expect(both.has(pidA!)).toBe(true);
    }, 180_000);
  },
);

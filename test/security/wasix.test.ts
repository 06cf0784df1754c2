// T30 WASIX engine (@wasmer/sdk): a hostile WASIX program, built from C by the test, tries the
// host's files, the server's environment, host processes and the network, then memory, CPU and
// output. The sdk runs inside the engine host (L2, and L3 on Linux) with its network policy
// disabled; its own worker threads are hardened as engine workers are (L1). Each attempt must
// get nothing, end in its own status, and leave the runtime answering.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import {
  type Canary,
  ENV_CANARY_NAME,
  expectNoLeak,
  expectRuntimeAnswers,
  type Listener,
  markerPath,
  newSandbox,
  plantCanaries,
  plantEnvCanary,
  Runtime,
  type Sandbox,
  sleep,
  startListener,
} from "../helpers/security-env.js";
import { wasixModule } from "../helpers/wasix-modules.js";

// Built from fixtures/wasix-attack.c by test/fixtures/wasix/build.mjs.
const ATTACK = wasixModule("wasix-attack");

let rt: Runtime;
let sb: Sandbox;
let canaries: { tmp: Canary; repo: Canary };
let envSecret: string;
let server: Listener;

beforeAll(async () => {
  canaries = plantCanaries();
  envSecret = plantEnvCanary();
  server = await startListener();
  rt = await Runtime.create({ pool: { python: 1, javascript: 0, bash: 0, wasix: 1 } });
}, 120_000);
afterEach(async () => {
  await sb?.close();
});
afterAll(async () => {
  await rt?.close();
  await server?.close();
  canaries?.tmp.remove();
  canaries?.repo.remove();
  delete process.env[ENV_CANARY_NAME];
});

async function attack(...args: string[]) {
  await sb.files.write("attack.wasm", ATTACK);
  const r = await sb.run("wasix", "attack.wasm", { args });
  expectNoLeak(r, canaries.tmp.secret, canaries.repo.secret, envSecret);
  return r;
}

it("T30 WASIX file access: host paths, the repo and /proc are not in the sdk's file system", async () => {
  sb = await newSandbox(rt);
  expect(readFileSync(canaries.tmp.path, "utf8")).toContain(canaries.tmp.secret);
  for (const target of [
    canaries.tmp.path,
    canaries.repo.path,
    `/workspace/../../../..${canaries.tmp.path}`,
    "/etc/passwd",
    "/proc/self/environ",
  ]) {
    const r = await attack("file", target);
    expect(r.stdout, target).toMatch(/^blocked /);
  }
  // The sdk's root is its own (bin, dev, etc, tmp, usr, workspace: all virtual and near empty).
  const root = await attack("list", "/");
  expect(root.stdout).toMatch(/entry workspace\n/);
  expect(root.stdout).not.toMatch(/entry (home|root|proc|work|var|opt|srv|mnt)\n/);
  expect((await attack("list", "/etc")).stdout).not.toMatch(/entry (passwd|hostname|hosts)\n/);
  const tmp = await attack("list", "/tmp");
  expect(tmp.stdout).not.toContain(path.basename(canaries.tmp.path));
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX environment: the server's variables never reach the guest", async () => {
  sb = await newSandbox(rt);
  expect(process.env[ENV_CANARY_NAME]).toBe(envSecret);
  const r = await attack("env");
  const names = [...r.stdout.matchAll(/^env ([^=]+)=/gm)].map((m) => m[1]);
  expect(names).not.toContain(ENV_CANARY_NAME);
  expect(names).not.toContain("PATH");
  expect(names).toContain("HOME");
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX processes: exec of host programs starts nothing on the host", async () => {
  sb = await newSandbox(rt);
  const marker = markerPath("wasix-exec");
  for (const program of ["/bin/sh", "sh", "/usr/bin/touch"]) {
    const args =
      program === "/usr/bin/touch" ? [program, marker] : [program, "-c", `touch ${marker}`];
    const r = await attack("exec", ...args);
    expect(r.stdout, program).toMatch(/^blocked exec/);
  }
  await sleep(300);
  expect(existsSync(marker)).toBe(false);
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX network: sockets and name lookups reach no listener", async () => {
  sb = await newSandbox(rt);
  server.reset();
  const r = await attack("connect", String(server.port));
  expect(r.stdout).not.toMatch(/GOT/);
  const lookup = await attack("resolve", "localhost");
  expect(lookup.stdout).toMatch(/^blocked resolve/);
  await sleep(300);
  expect(server.seen).toEqual([]);
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX memory: malloc stops at the cap written into the module", async () => {
  sb = await newSandbox(rt);
  await sb.files.write("grow.wasm", wasixModule("grow"));
  const r = await sb.run("wasix", "grow.wasm", { memoryMb: 64 });
  expect(r.exitCode).toBe(12);
  const held = Number(/held (\d+) MiB/.exec(r.stdout)?.[1]);
  expect(held).toBeGreaterThan(8);
  expect(held).toBeLessThan(64);
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX CPU and output: a spin loop times out, a flood is cut at the cap", async () => {
  sb = await newSandbox(rt, { timeoutMs: 3_000, maxOutputBytes: 4096 });
  await sb.files.write("spin.wasm", wasixModule("spin"));
  const started = Date.now();
  const spin = await sb.run("wasix", "spin.wasm");
  expect(spin.status).toBe("timeout");
  // The deadline, plus the engine host's kill grace and a loaded machine's slack.
  expect(Date.now() - started).toBeLessThan(30_000);
  await sb.files.write("flood.wasm", wasixModule("flood"));
  const flood = await sb.run("wasix", "flood.wasm");
  expect(flood.status).toBe("output_limit");
  expect(flood.stdout.length).toBeLessThanOrEqual(4096);
  await expectRuntimeAnswers(rt);
}, 120_000);

it("T30 WASIX processes: a fork bomb is stopped, other sandboxes answer, its own runs again", async () => {
  sb = await newSandbox(rt, { timeoutMs: 10_000 });
  const bomb = wasixModule("forkbomb");
  await sb.files.write("bomb.wasm", bomb);
  const r = await sb.run("wasix", "bomb.wasm");
  // Each child is a thread of the tenant's engine host with a copy of memory: the host's memory
  // ceiling ends them all, or the deadline does first on a slow machine.
  expect(["memory_limit", "timeout"]).toContain(r.status);
  expect(r.stdout).toBe("forking\n");
  await expectRuntimeAnswers(rt);
  // Its sandbox runs again at once: the kill could not stop the sdk's threads, so the engine
  // host asked to be replaced and the next run starts in a new one.
  await sb.files.write("hello.wasm", wasixModule("hello"));
  await sb.files.write("out/keep.txt", "");
  const again = await sb.run("wasix", "hello.wasm", { args: ["again"] });
  // hello.c exits with its argument count.
  expect(again).toMatchObject({ exitCode: 2, filesChanged: ["out/result.txt"] });
  expect(again.stdout).toMatch(/^args: again\n/);
}, 180_000);

it("T30 the library prints nothing of its own while a fork bomb makes its engine host warn", async () => {
  // An embedding program's stdout and stderr are its own (stdout may be MCP stdio): the
  // runtime's diagnostics go to the `log` option only, and by default nowhere.
  const dir = mkdtempSync(path.join(tmpdir(), "polybox-quiet-"));
  try {
    writeFileSync(path.join(dir, "bomb.wasm"), wasixModule("forkbomb"));
    const index = pathToFileURL(path.resolve("dist/index.js")).href;
    const script = `
      import { readFileSync } from "node:fs";
      import { Runtime, Sandbox } from ${JSON.stringify(index)};
      const logged = [];
      const quiet = await Runtime.create({ pool: { python: 0, javascript: 0, bash: 0, wasix: 1 } });
      const told = await Runtime.create({
        pool: { python: 0, javascript: 0, bash: 0, wasix: 0 },
        log: (level, message, untrusted) => logged.push(level + ": " + message + " " + (untrusted ?? "")),
      });
      const statuses = [];
      for (const runtime of [quiet, told]) {
        const sb = await Sandbox.create({ runtime, timeoutMs: 10000 });
        await sb.files.write("bomb.wasm", readFileSync(${JSON.stringify(path.join(dir, "bomb.wasm"))}));
        statuses.push((await sb.run("wasix", "bomb.wasm")).status);
        await sb.close();
      }
      await quiet.close();
      await told.close();
      process.stdout.write(JSON.stringify({ statuses, logged }));
    `;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 150_000,
    });
    expect(child.stderr).toBe("");
    const out = JSON.parse(child.stdout) as { statuses: string[]; logged: string[] };
    // The same event, told to a runtime's own logger, shows that there was something to say.
    if (out.statuses[1] === "memory_limit")
      expect(out.logged.join("\n")).toMatch(/resident memory passed/);
    expect(out.statuses.every((s) => s === "memory_limit" || s === "timeout")).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

// T17 WASI engine: Ruby and user WebAssembly modules attack the host through WASI — file access
// outside the mounted workspace (`..`, absolute paths, symlinks, unopened descriptors), network
// sockets, unbounded memory growth, infinite loops and output floods. Each must fail to get
// through, end in its own status, and leave the runtime answering.
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import {
  type Canary,
  expectNoLeak,
  expectRuntimeAnswers,
  type Listener,
  newSandbox,
  plantCanaries,
  REPO_DIR,
  Runtime,
  type Sandbox,
  sleep,
  startListener,
} from "../helpers/security-env.js";
import { openAndReport, wasiProgram, wat } from "../helpers/wat.js";

let rt: Runtime;
let sb: Sandbox;
let canaries: { tmp: Canary; repo: Canary };
let server: Listener;

beforeAll(async () => {
  canaries = plantCanaries();
  server = await startListener();
  rt = await Runtime.create({ pool: { python: 1, javascript: 0, bash: 0, ruby: 1, wasm: 1 } });
});
afterEach(async () => {
  await sb?.close();
});
afterAll(async () => {
  await rt?.close();
  await server?.close();
  canaries?.tmp.remove();
  canaries?.repo.remove();
});

const ERRNO_BADF = "08";
const ERRNO_NOTCAPABLE = "76";

it("T17 WASI file access: `..`, absolute paths and unopened descriptors reach nothing outside /workspace", async () => {
  sb = await newSandbox(rt);
  const relRepo = path.relative(REPO_DIR, canaries.repo.path);
  const attempts: [number, string, string][] = [
    [3, `../${path.basename(canaries.tmp.path)}`, ERRNO_NOTCAPABLE],
    [3, `../../../../../../..${canaries.tmp.path}`, ERRNO_NOTCAPABLE],
    [3, canaries.tmp.path, ERRNO_NOTCAPABLE],
    [3, `sub/../../${relRepo}`, ERRNO_NOTCAPABLE],
    [4, `../workspace/../..${canaries.repo.path}`, ERRNO_NOTCAPABLE],
    [5, canaries.tmp.path, ERRNO_BADF],
    [9, "etc/passwd", ERRNO_BADF],
  ];
  for (const [fd, target, errno] of attempts) {
    await sb.files.write("open.wasm", openAndReport(fd, target));
    const r = await sb.run("wasm", "open.wasm");
    expect(r.stdout, `path_open(${fd}, ${target})`).toBe(`${errno}\n`);
    expectNoLeak(r, canaries.tmp.secret, canaries.repo.secret);
  }
  await expectRuntimeAnswers(rt);
});

it("T17 WASI file access: Ruby reads, globs and symlinks stay inside the in-memory workspace", async () => {
  sb = await newSandbox(rt);
  const r = await sb.run(
    "ruby",
    [
      `[${JSON.stringify(canaries.tmp.path)}, ${JSON.stringify(canaries.repo.path)}, "../../etc/passwd", "/etc/passwd", "/proc/self/environ"].each do |p|`,
      '  begin; File.read(p); puts "GOT #{p}"; rescue SystemCallError, IOError => e; puts "blocked #{e.class}"; end',
      "end",
      'begin; File.symlink("/etc/passwd", "link"); puts "GOT symlink #{File.read("link")}"; rescue NotImplementedError, SystemCallError => e; puts "blocked #{e.class}"; end',
      'puts Dir.glob("/*").sort.inspect',
    ].join("\n"),
  );
  expect(r.stdout).not.toMatch(/GOT/);
  expect(r.stdout.match(/blocked/g)?.length).toBe(6);
  expect(r.stdout).not.toMatch(/"\/(home|root|proc|etc|work)"/);
  expectNoLeak(r, canaries.tmp.secret, canaries.repo.secret);
  await expectRuntimeAnswers(rt);
});

it("T17 WASI network: Ruby sockets and a module's sock_* calls reach no listener", async () => {
  sb = await newSandbox(rt);
  server.reset();
  const ruby = await sb.run(
    "ruby",
    `begin; require "socket"; TCPSocket.new("127.0.0.1", ${server.port}); puts "GOT"; rescue LoadError, StandardError, NotImplementedError => e; puts "blocked #{e.class}"; end`,
  );
  expect(ruby.stdout).toMatch(/^blocked/);
  await sb.files.write(
    "sock.wasm",
    wat(`(module
      (import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "_start") (drop (call $accept (i32.const 3) (i32.const 0) (i32.const 0)))))`),
  );
  const wasm = await sb.run("wasm", "sock.wasm");
  expect(wasm.status).toBe("error");
  await sleep(300);
  expect(server.seen).toEqual([]);
  await expectRuntimeAnswers(rt);
});

it("T17 WASI memory: a memory.grow loop ends in memory_limit, not host memory", async () => {
  sb = await newSandbox(rt);
  await sb.files.write(
    "grow.wasm",
    wasiProgram(`(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      unreachable`),
  );
  const r = await sb.run("wasm", "grow.wasm", { memoryMb: 64 });
  expect(r.status).toBe("memory_limit");
  expect(r.message).toMatch(/memoryMb=64/);
  // A module that asks for more initial memory than allowed never starts.
  await sb.files.write("big.wasm", wasiProgram("", "", 2048));
  expect((await sb.run("wasm", "big.wasm", { memoryMb: 64 })).status).toBe("memory_limit");
  await expectRuntimeAnswers(rt);
});

it("T17 WASI CPU and output: an infinite loop times out, a flood that ignores errors is stopped", async () => {
  sb = await newSandbox(rt);
  await sb.files.write("spin.wasm", wasiProgram("(loop $l (br $l))"));
  const spin = await sb.run("wasm", "spin.wasm", { timeoutMs: 500 });
  expect(spin.status).toBe("timeout");
  await sb.files.write(
    "flood.wasm",
    wasiProgram(
      "(loop $l (drop (call $write (i32.const 1) (i32.const 64) (i32.const 32))) (br $l))",
      '(data (i32.const 64) "floodfloodfloodfloodfloodflood\\n")',
    ),
  );
  const flood = await sb.run("wasm", "flood.wasm", { maxOutputBytes: 4096, timeoutMs: 10_000 });
  expect(flood).toMatchObject({ status: "output_limit", truncated: true });
  expect(Buffer.byteLength(flood.stdout)).toBeLessThanOrEqual(4096);
  const rubyFlood = await sb.run("ruby", "loop { print 'x' * 1000 }", { maxOutputBytes: 4096 });
  expect(rubyFlood.status).toBe("output_limit");
  expect((await sb.run("ruby", "1 + 1")).value).toBe("2");
  await expectRuntimeAnswers(rt);
});

it("T17 Ruby's JS interop reaches no JavaScript", async () => {
  sb = await newSandbox(rt);
  const r = await sb.run("ruby", 'require "js"; JS.global[:process][:env].to_s');
  expect(r.status).toBe("error");
  expect(r.stderr).toMatch(/JS interop is not available/);
  expect(r.stateLost).toBe(true);
  expect((await sb.run("ruby", "40 + 2")).value).toBe("42");
  await expectRuntimeAnswers(rt);
});

// T16 the engine host's process jail (L2), checked from outside, the way the server starts it:
// its command line carries the permission flag and read grants only for engine assets, no write,
// child-process, addon, WASI or inspector grants; its environment is empty; its working
// directory is an empty private temp dir. Linux only (it reads /proc). The OS jail (L3) is
// turned off here so that L2 is shown to hold on its own; l3-jail.test.ts checks the jail.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hostPid,
  newSandbox,
  REPO_DIR,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
/** A sandbox that has run code, so that its own engine host is up to be inspected. */
let probe: Sandbox;

beforeAll(async () => {
  rt = await securityRuntime({ osJail: false });
  probe = await newSandbox(rt);
  await probe.run("javascript", "1");
});

afterAll(async () => {
  await rt?.close();
});

const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
const expectedFlag =
  major > 22 || (major === 22 && minor >= 13) ? "--permission" : "--experimental-permission";

describe.skipIf(process.platform !== "linux")("T16 L2 engine host process", () => {
  it("T16 L2 command line: permission flag, read grants only for engine assets, no other grants", () => {
    const argv = readFileSync(`/proc/${hostPid(probe)}/cmdline`, "utf8")
      .split("\0")
      .filter(Boolean);
    expect(argv).toContain(expectedFlag);
    for (const flag of [
      "--allow-fs-write",
      "--allow-child-process",
      "--allow-addons",
      "--allow-wasi",
      "--allow-inspector",
      "--allow-net",
    ]) {
      expect(
        argv.filter((a) => a.startsWith(flag)),
        flag,
      ).toEqual([]);
    }
    expect(argv.filter((a) => a === "--allow-fs-read=*" || a === "--allow-fs-read")).toEqual([]);
    expect(
      argv.some((a) =>
        /^--(inspect|expose|require|import|loader|experimental-loader|env-file)/.test(a),
      ),
    ).toBe(false);
    const reads = argv
      .filter((a) => a.startsWith("--allow-fs-read="))
      .map((a) => a.slice("--allow-fs-read=".length));
    expect(reads.length).toBeGreaterThan(0);
    const allowed = [path.join(REPO_DIR, "dist"), path.join(REPO_DIR, "node_modules")];
    for (const p of reads) {
      const ok =
        allowed.some((dir) => p === dir || p.startsWith(`${dir}/`)) ||
        /\.snapshot$/.test(p) ||
        // The boot caches' directory: the Python snapshot and the QuickJS boot image.
        /\/polybox\/boot$/.test(p);
      expect(ok, `read grant ${p} is not an engine asset`).toBe(true);
    }
    for (const forbidden of ["/", os.tmpdir(), os.homedir(), REPO_DIR]) {
      expect(reads, `read grant covers ${forbidden}`).not.toContain(forbidden);
    }
  });

  it("T16 L2 environment: the engine host's environment holds nothing but Node's IPC channel and polybox's allocator setting", () => {
    const entries = readFileSync(`/proc/${hostPid(probe)}/environ`, "utf8")
      .split("\0")
      .filter(Boolean);
    // Node itself adds NODE_CHANNEL_FD (and the serialization mode) for the IPC channel; polybox
    // sets one constant, glibc's arena cap, which nothing of the server's environment feeds.
    expect(entries.filter((e) => !/^NODE_CHANNEL_(FD|SERIALIZATION_MODE)=/.test(e))).toEqual([
      "MALLOC_ARENA_MAX=2",
    ]);
    for (const name of ["HOME", "PATH", "USER", "POLYBOX_CANARY"]) {
      expect(
        entries.some((e) => e.startsWith(`${name}=`)),
        name,
      ).toBe(false);
    }
  });

  it("T16 L2 working directory: an empty private temp dir", () => {
    const cwd = readlinkSync(`/proc/${hostPid(probe)}/cwd`);
    expect(path.dirname(cwd)).toBe(os.tmpdir());
    expect(path.basename(cwd)).toMatch(/^polybox-host-/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("T16 L2 process: the engine host is a separate process, not the server", () => {
    expect(hostPid(probe)).not.toBe(process.pid);
    const status = readFileSync(`/proc/${hostPid(probe)}/status`, "utf8");
    expect(status).toMatch(new RegExp(`PPid:\\s+${process.pid}\\b`));
  });
});

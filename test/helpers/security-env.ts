// Shared scaffolding for the attack suite (test/security): one runtime per file with small pools,
// host-side canaries (files, an environment variable, a loopback HTTP server) that every attack
// tries to reach, fixture loading with placeholder substitution, and the assertions each attack
// ends with: the secret never shows up in what the guest got back, and the runtime still answers.

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { type RunResult, Runtime, type RuntimeOptions, Sandbox } from "../../dist/index.js";
import { hostPidOf } from "./internals.js";

export type { Language, RunResult } from "../../dist/index.js";
export { isPolyboxError, PolyboxError, Runtime, Sandbox } from "../../dist/index.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = path.resolve(HERE, "..", "..");
export const SECURITY_DIR = path.join(REPO_DIR, "test", "security");
export const FIXTURES_DIR = path.join(SECURITY_DIR, "fixtures");

/** The name and value of the environment canary, set in this (the server's) process. */
export const ENV_CANARY_NAME = "POLYBOX_CANARY";

/**
 * Sets the environment canary before the runtime exists, so that a leak from the server's env
 * into the engine host (or its workers) would carry it. Returns its value.
 */
export function plantEnvCanary(): string {
  const value = `secret-env-${randomBytes(8).toString("hex")}`;
  process.env[ENV_CANARY_NAME] = value;
  return value;
}

/** One runtime per test file, small pools: this suite runs on a 2-core machine. */
export function securityRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  return Runtime.create({
    pool: { python: 1, javascript: 1, bash: 1, ruby: 0, wasm: 0 },
    ...options,
  });
}

/** Limits for attack runs: short enough that a hanging attack fails the run, not the suite. */
export const ATTACK_LIMITS = { timeoutMs: 15_000 } as const;

export async function newSandbox(
  rt: Runtime,
  limits: Record<string, number> = ATTACK_LIMITS,
): Promise<Sandbox> {
  return Sandbox.create({ runtime: rt, limits });
}

export interface Canary {
  /** Where the file is, on the host. */
  path: string;
  /** Its secret content: it must never appear in anything a guest gets back. */
  secret: string;
  remove(): void;
}

/** A file with a random secret, readable by this process (checked), in `dir`. */
export function plantCanaryFile(dir: string, prefix = "polybox-canary-"): Canary {
  const secret = `CANARY-${randomBytes(12).toString("hex")}`;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${prefix}${randomBytes(4).toString("hex")}.txt`);
  writeFileSync(file, `${secret}\n`);
  // The attack can only fail meaningfully if the secret is really there for the taking.
  expect(readFileSync(file, "utf8")).toContain(secret);
  return { path: file, secret, remove: () => rmSync(file, { force: true }) };
}

/** The canaries every host-read attack aims at: one in the OS temp dir, one in the repo. */
export function plantCanaries(): { tmp: Canary; repo: Canary } {
  return {
    tmp: plantCanaryFile(os.tmpdir()),
    repo: plantCanaryFile(SECURITY_DIR, ".canary-"),
  };
}

/** A host path that must not exist after an attack (a file a guest tried to create). */
export function markerPath(label: string): string {
  const file = path.join(os.tmpdir(), `polybox-marker-${label}-${randomBytes(6).toString("hex")}`);
  expect(existsSync(file)).toBe(false);
  return file;
}

/** Reads a fixture and fills in `{{NAME}}` placeholders; an unfilled placeholder is a test bug. */
export function fixture(name: string, values: Record<string, string | number> = {}): string {
  let text = readFileSync(path.join(FIXTURES_DIR, name), "utf8");
  for (const [key, value] of Object.entries(values))
    text = text.replaceAll(`{{${key}}}`, String(value));
  const left = text.match(/\{\{[A-Z_]+\}\}/);
  if (left) throw new Error(`fixture ${name}: placeholder ${left[0]} was not filled`);
  return text;
}

/** Everything a guest got back from a run, as one string, for "does the secret appear" checks. */
export function everything(r: RunResult): string {
  return [r.stdout, r.stderr, r.value ?? "", r.message ?? ""].join("\n");
}

export function expectNoLeak(r: RunResult, ...secrets: string[]): void {
  const all = everything(r);
  for (const secret of secrets)
    expect(all, `secret ${secret} leaked to the guest`).not.toContain(secret);
}

/** After an attack, the runtime must still run code normally, in a brand-new sandbox. */
export async function expectRuntimeAnswers(rt: Runtime): Promise<void> {
  const sb = await Sandbox.create({ runtime: rt, limits: { timeoutMs: 60_000 } });
  try {
    const r = await sb.run("python", "1+1");
    expect(r.status, `runtime did not answer after the attack: ${r.message ?? r.stderr}`).toBe(
      "ok",
    );
    expect(r.value).toBe("2");
  } finally {
    await sb.close();
  }
}

/** A loopback HTTP server that counts every TCP connection, request and upgrade it sees. */
export interface Listener {
  port: number;
  url: string;
  /** Everything seen since the last reset: "connection", "GET /path", "UPGRADE /path". */
  seen: string[];
  reset(): void;
  close(): Promise<void>;
}

export async function startListener(): Promise<Listener> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.end("HELLO-FROM-THE-HOST-LOOPBACK");
  });
  server.on("connection", () => seen.push("connection"));
  server.on("upgrade", (req, socket) => {
    seen.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const listener: Listener = {
    port,
    url: `http://127.0.0.1:${port}/`,
    seen,
    reset: () => {
      seen.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  // The server must really be reachable, or "it saw nothing" proves nothing.
  const res = await fetch(listener.url);
  expect(await res.text()).toBe("HELLO-FROM-THE-HOST-LOOPBACK");
  expect(seen).toContain("GET /");
  listener.reset();
  return listener;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pid of a sandbox's own engine host, failing the test if it has none yet. */
export function hostPid(sb: Sandbox): number {
  const pid = hostPidOf(sb);
  expect(pid, "the sandbox's engine host is not running").toBeTypeOf("number");
  return pid!;
}

/** How many times a sandbox's engine host died and was replaced. */
export function hostRestarts(sb: Sandbox): number {
  return (sb as unknown as { host: { restarts: number } }).host.restarts;
}

/** Pids of the direct children of a process (Linux), from /proc/<pid>/task/<tid>/children. */
export function childPids(pid: number): number[] {
  if (process.platform !== "linux") return [];
  const out: number[] = [];
  try {
    for (const tid of readdirSafe(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // The process is gone; it has no children to report.
  }
  return out;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A sandbox's engine host's resident memory in bytes (Linux), or null where /proc is not available. */
export function hostRssBytes(sb: Sandbox): number | null {
  if (process.platform !== "linux") return null;
  try {
    const pages = Number(readFileSync(`/proc/${hostPid(sb)}/statm`, "utf8").split(" ")[1]);
    return pages * 4096;
  } catch {
    return null;
  }
}

/** The internal host directory of a sandbox's workspace (trusted side), for size checks. */
export function workspaceDir(sb: Sandbox): string | null {
  // A workspace's home holds its files under workspace/ (beside its staging directory).
  const home = (sb as unknown as { workspace: { home: string | null } }).workspace.home;
  return home === null ? null : path.join(home, "workspace");
}

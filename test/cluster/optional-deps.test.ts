// bullmq and ioredis are optional peer dependencies: an app that embeds polybox without them
// runs the library, and only the cluster's entry points refuse, with DEPENDENCY_MISSING and the
// command that adds them. Each check runs in a fresh Node process whose module resolution is made
// to fail for the two packages (as it does where npm did not install them), with the built
// package in dist/.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI } from "../helpers/mcp-client.js";

const DIST = path.resolve(import.meta.dirname, "../../dist");
const pkg = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8"),
) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
/** The command the refusal must name: the versions package.json declares, not a copy of them. */
const INSTALL = `npm install ${Object.entries(pkg.peerDependencies)
  .map(([name, version]) => `${name}@${version}`)
  .join(" ")}`;
let dir: string;
let hide: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "polybox-optional-"));
  // Resolving either package (or a path inside it) fails as Node fails for an absent package.
  const hooks = `
    export async function resolve(specifier, context, next) {
      if (/^(bullmq|ioredis)(\\/|$)/.test(specifier)) {
        const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
        error.code = "ERR_MODULE_NOT_FOUND";
        throw error;
      }
      return next(specifier, context);
    }`;
  writeFileSync(path.join(dir, "hooks.mjs"), hooks);
  hide = path.join(dir, "hide.mjs");
  writeFileSync(
    hide,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(path.join(dir, "hooks.mjs")).href)});\n`,
  );
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function node(args: string[]) {
  return spawnSync(process.execPath, ["--import", hide, ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
}

it("without bullmq and ioredis, the library loads and polybox/cluster says what to install", () => {
  const script = `
    const lib = await import(${JSON.stringify(pathToFileURL(path.join(DIST, "index.js")).href)});
    const hidden = await import("bullmq").then(() => "present", (e) => e.code);
    let cluster;
    try {
      await import(${JSON.stringify(pathToFileURL(path.join(DIST, "cluster/index.js")).href)});
      cluster = "loaded";
    } catch (e) {
      cluster = { code: e.code, message: e.message, package: e.details?.package };
    }
    console.log(JSON.stringify({ runtime: typeof lib.Runtime.create, hidden, cluster }));`;
  const r = node(["--input-type=module", "-e", script]);
  expect(r.stderr).toBe("");
  const out = JSON.parse(r.stdout) as {
    runtime: string;
    hidden: string;
    cluster: { code: string; message: string; package: string };
  };
  expect(out.hidden).toBe("ERR_MODULE_NOT_FOUND");
  expect(out.runtime).toBe("function");
  expect(out.cluster.code).toBe("DEPENDENCY_MISSING");
  expect(out.cluster.package).toMatch(/^(bullmq|ioredis)$/);
  expect(out.cluster.message).toContain(INSTALL);
});

it("the peers are bullmq and ioredis, at the versions the project installs and tests", () => {
  expect(INSTALL).toMatch(/^npm install bullmq@\S+ ioredis@\S+$/);
  for (const [name, version] of Object.entries(pkg.peerDependencies))
    expect(pkg.devDependencies[name], name).toBe(version);
});

it("without them, `polybox router` and `polybox serve --cluster` fail at start with that message", () => {
  for (const args of [
    ["router", "--cluster=redis://127.0.0.1:9", "--cluster-secret=s", "--token=t", "--port=0"],
    ["serve", "--cluster=redis://127.0.0.1:9", "--cluster-secret=s", "--port=0"],
  ]) {
    const r = node([CLI, ...args]);
    expect(r.status, args.join(" ")).not.toBe(0);
    expect(r.stderr, args.join(" ")).toMatch(/needs the optional packages bullmq and ioredis/);
    expect(r.stderr).toContain(INSTALL);
  }
});

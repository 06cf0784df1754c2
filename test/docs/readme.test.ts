// Every code block in README must work as written. JavaScript blocks run unchanged, with
// "polybox" resolved to this package the way an installed dependency is, on every Node the
// project supports that this machine has (this one, plus any listed in POLYBOX_TEST_NODES), and
// must print what their comments say and then exit by themselves: a library that keeps a
// program alive is a defect. JSON blocks must parse and never run a package by name from the
// registry; shell blocks may only name commands that exist.
import { execFile, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { initializeRequest } from "../helpers/mcp-client.js";

const root = path.resolve(import.meta.dirname, "../..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-readme-"));
mkdirSync(path.join(dir, "node_modules"));
symlinkSync(root, path.join(dir, "node_modules", "polybox"), "dir");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
  lang: m[1]!,
  code: m[2]!,
}));

/** Node binaries to run JavaScript blocks with: this one, and any the environment names. */
const nodes = [
  process.execPath,
  ...(process.env.POLYBOX_TEST_NODES ?? "").split(path.delimiter).filter(Boolean),
];

/** `console.log(a, b); // x y` → the expected printed line, with \n escapes expanded. */
function expectedOutput(snippet: string): string[] {
  return [...snippet.matchAll(/console\.log\(.*\);\s*\/\/\s*(.*)$/gm)].map((m) =>
    m[1]!.replace(/\\n/g, "\n"),
  );
}

describe("README", () => {
  const scripts = blocks.filter((b) => b.lang === "js" || b.lang === "ts");

  it("has a library example", () => {
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.every((b) => b.lang === "js")).toBe(true);
  });

  describe.each(nodes)("on %s", (node) => {
    it.each(scripts.map((b, i) => [i, b.code] as const))(
      "JavaScript block %i runs as written, prints what it says and exits by itself",
      async (i, code) => {
        const file = path.join(dir, `block-${i}.mjs`);
        writeFileSync(file, code);
        // No shutdown call appended: the program must end on its own.
        const { stdout } = await promisify(execFile)(node, [file], {
          cwd: dir,
          timeout: 90_000,
          killSignal: "SIGKILL",
        });
        const expected = expectedOutput(code);
        expect(expected.length).toBeGreaterThanOrEqual(1);
        for (const line of expected) expect(stdout).toContain(line);
      },
      120_000,
    );
  });

  it("JSON blocks parse, and MCP configs run a clone or an installed command, never npx", () => {
    const json = blocks.filter((b) => b.lang === "json");
    expect(json.length).toBeGreaterThan(0);
    for (const b of json) {
      const config = JSON.parse(b.code) as {
        mcpServers?: Record<string, { command: string; args: string[] }>;
      };
      for (const server of Object.values(config.mcpServers ?? {})) {
        expect(server.command).not.toBe("npx");
        if (server.command === "node") expect(server.args[0]).toMatch(/dist\/cli\/main\.js$/);
        else expect(server.command).toBe("polybox");
      }
    }
  });

  it("shell blocks name only commands that exist", async () => {
    const { stdout: help } = await promisify(execFile)(process.execPath, [
      path.join(root, "dist", "cli", "main.js"),
      "--help",
    ]);
    for (const b of blocks.filter((x) => x.lang === "sh")) {
      for (const line of b.code.split("\n").filter((l) => l.trim() && !l.startsWith("#"))) {
        const [command, sub] = line.trim().split(/\s+/);
        expect(["npm", "node", "polybox"]).toContain(command);
        if (command === "polybox" && sub && !sub.startsWith("-"))
          expect(help, `polybox ${sub}`).toContain(`polybox ${sub}`);
      }
    }
  });
});

// An MCP client reads the server's stdout as JSON-RPC from its first byte: the command README
// gives for serving MCP must put nothing else there, not npm's lines, not the build's.
describe("README's MCP command", () => {
  const setup = blocks.find((b) => b.lang === "sh")!;
  const line = setup.code.split("\n").find((l) => /serves MCP/.test(l)) ?? "";
  const steps = line
    .replace(/\s+#.*$/, "")
    .split("&&")
    .map((s) => s.trim());
  const server = steps.at(-1)!;

  it("the Set-up block has one, and each step before the server sends its stdout elsewhere", () => {
    expect(line, "a Set-up line that serves MCP").not.toBe("");
    for (const step of steps.slice(0, -1))
      expect(step, `\`${step}\` prints where the MCP client reads`).toMatch(
        /(?:>&2|>\s*\/dev\/null)$/,
      );
  });

  it("the build `npm ci` runs writes its progress to stderr, none to stdout", () => {
    // prepare's steps (tsc prints nothing when it succeeds): the guest sources copied next to the
    // compiled modules, the polyfill bundles and the native launcher, run as npm runs them, in a copy of the package (the scripts and the launcher's
    // sources, this node_modules), so that they rewrite nothing the other tests are reading.
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const nodeSteps = pkg.scripts
      .prepare!.split("&&")
      .map((s) => s.trim())
      .filter((s) => s.startsWith("node "));
    expect(nodeSteps).toEqual([
      "node wasm/clean.mjs",
      "node wasm/guest-sources.mjs",
      "node wasm/polyfills.mjs",
      "node native/build.mjs",
    ]);
    const copy = path.join(dir, "package-copy");
    mkdirSync(path.join(copy, "wasm"), { recursive: true });
    for (const script of ["clean.mjs", "guest-sources.mjs", "polyfills.mjs"])
      cpSync(path.join(root, "wasm", script), path.join(copy, "wasm", script));
    cpSync(path.join(root, "src", "guest"), path.join(copy, "src", "guest"), { recursive: true });
    cpSync(path.join(root, "native"), path.join(copy, "native"), {
      recursive: true,
      filter: (from) => path.basename(from) !== "build",
    });
    symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
    for (const step of nodeSteps) {
      const r = spawnSync(process.execPath, step.split(/\s+/).slice(1), {
        cwd: copy,
        encoding: "utf8",
        timeout: 240_000,
      });
      expect(r.status, `${step}: ${r.stderr}`).toBe(0);
      expect(r.stdout, `${step} wrote to stdout`).toBe("");
    }
  }, 300_000);

  it("the server step writes nothing but JSON-RPC to stdout", async () => {
    const child = spawn(server, { cwd: root, shell: true, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.resume();
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const answered = (id: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (stdout.includes(`"id":${id}`)) resolve();
          else if (child.exitCode !== null) reject(new Error(`exited: ${stdout}`));
          else setTimeout(check, 20);
        };
        check();
      });
    send(initializeRequest("readme"));
    await answered(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    await answered(2);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin.end();
    await exited;
    const lines = stdout.split("\n").filter((l) => l !== "");
    for (const l of lines) {
      let message: { jsonrpc?: string } | undefined;
      try {
        message = JSON.parse(l);
      } catch {}
      expect(message?.jsonrpc, `\`${server}\` wrote a line that is not JSON-RPC: ${l}`).toBe("2.0");
    }
    expect(lines.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});

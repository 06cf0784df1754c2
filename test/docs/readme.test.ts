// Every code block in README must work as written. JavaScript blocks run unchanged, with
// "polybox" resolved to this package the way an installed dependency is, on every Node the
// project supports that this machine has (this one, plus any listed in POLYBOX_TEST_NODES), and
// must print what their comments say and then exit by themselves: a library that keeps a
// program alive is a defect. JSON blocks must parse and never run a package by name from the
// registry; shell blocks may only name commands that exist.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

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

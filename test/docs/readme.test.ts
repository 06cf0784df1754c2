// The README's library example must run as written and print what its comments say. The snippet
// is TypeScript with `await using`, which Node 20 cannot parse, so it is transpiled the way a
// user's own TypeScript build would, with "polybox" resolved to this package.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-readme-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function librarySnippet(): string {
  const section = readme.slice(readme.indexOf("## Library"));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error("README has no ts block under ## Library");
  return match[1]!;
}

/** `console.log(a, b); // x y` → the expected printed line, with \n escapes expanded. */
function expectedOutput(snippet: string): string[] {
  return [...snippet.matchAll(/console\.log\(.*\);\s*\/\/\s*(.*)$/gm)].map((m) =>
    m[1]!.replace(/\\n/g, "\n"),
  );
}

describe("README", () => {
  it("library example runs as written and prints what its comments say", async () => {
    const snippet = librarySnippet();
    const js = ts.transpileModule(
      snippet.replace('from "polybox"', `from ${JSON.stringify(path.join(root, "dist/index.js"))}`),
      {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      },
    ).outputText;
    const file = path.join(dir, "example.mjs");
    writeFileSync(
      file,
      `${js}\nawait (await import(${JSON.stringify(path.join(root, "dist/index.js"))})).shutdown();\n`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 60_000 });
    const printed = stdout;
    for (const line of expectedOutput(snippet)) expect(printed).toContain(line);
    expect(expectedOutput(snippet).length).toBeGreaterThanOrEqual(3);
  });
});

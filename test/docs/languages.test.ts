// Every language polybox runs is named wherever a user or a model learns what it can run: the
// CLI's help, doctor, the MCP server's instructions, the language enum of the execute_code tool,
// and README. All of them read the one language table (src/protocol/languages.ts).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LANGUAGES } from "../../dist/index.js";
import { LANGUAGE_INFO } from "../../dist/protocol/languages.js";
import { CLI, type McpHandle, stdioServer } from "../helpers/mcp-client.js";

let server: McpHandle;
beforeAll(async () => {
  server = await stdioServer();
});
afterAll(async () => {
  await server?.close();
});

describe("the language list", () => {
  it("polybox --help names every language", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, "--help"]);
    for (const language of LANGUAGES) expect(stdout, language).toContain(language);
  });

  it("polybox doctor checks every language's engine, and says which run natively", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, "doctor", "--json"]);
    const report = JSON.parse(stdout) as { engines: { name: string }[]; native: unknown[] };
    expect(report.engines.map((e) => e.name)).toEqual([...LANGUAGES]);
    const text = JSON.stringify(report.native);
    for (const language of LANGUAGES) expect(text, language).toContain(language);
  });

  it("README's language table is the language table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const language of LANGUAGES) {
      const info = LANGUAGE_INFO[language];
      const row = [
        `\`${language}\``,
        info.aliases.map((a) => `\`${a}\``).join(", "),
        info.extensions.join(" "),
        info.engine,
        info.native ?? "—",
        info.value,
      ];
      expect(readme, language).toContain(`| ${row.join(" | ")} |`);
    }
  });

  it("the MCP server's instructions and execute_code's schema name every language", async () => {
    const instructions = server.client.getInstructions() ?? "";
    for (const language of LANGUAGES) expect(instructions, language).toContain(language);
    const { tools } = await server.client.listTools();
    const executeCode = tools.find((t) => t.name === "execute_code");
    const schema = JSON.stringify(executeCode?.inputSchema ?? {});
    for (const language of LANGUAGES) expect(schema, language).toContain(`"${language}"`);
  });
});

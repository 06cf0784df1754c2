// Every language polybox runs is named wherever a user or a model learns what it can run: the
// CLI's help, the MCP server's instructions, and the language enum of the execute_code tool.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LANGUAGES } from "../../dist/index.js";
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

  it("the MCP server's instructions and execute_code's schema name every language", async () => {
    const instructions = server.client.getInstructions() ?? "";
    for (const language of LANGUAGES) expect(instructions, language).toContain(language);
    const { tools } = await server.client.listTools();
    const executeCode = tools.find((t) => t.name === "execute_code");
    const schema = JSON.stringify(executeCode?.inputSchema ?? {});
    for (const language of LANGUAGES) expect(schema, language).toContain(`"${language}"`);
  });
});

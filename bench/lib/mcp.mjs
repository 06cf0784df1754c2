// MCP over stdio, measured with the SDK's real client against `polybox mcp` as a child process:
// server start to tools/list answered, to the first Python result, and tools/call round trips.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { now, round, sleep, summarize } from "./stats.mjs";

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli/main.js");

async function connect() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    stderr: "ignore",
  });
  const client = new Client({ name: "polybox-bench", version: "1" });
  await client.connect(transport);
  return client;
}

const call = (client, tool, code) => client.callTool({ name: tool, arguments: { code } });

export async function startup() {
  const t = now();
  const client = await connect();
  await client.listTools();
  const toList = now() - t;
  await call(client, "execute_python", "print(1)");
  const toPython = now() - t;
  await client.close();
  return { toList: round(toList), toPython: round(toPython) };
}

// Each call is a one-shot with an engine host of its own; the pause lets the server's fleet start
// the next warm host (a Node start and an interpreter boot), so a call measures a warm claim.
const PAUSE_MS = { execute_python: 2000, execute_javascript: 800, execute_bash: 1000 };

export async function roundTrips(runs) {
  const client = await connect();
  await sleep(6000); // the fleet warm
  const out = {};
  for (const [tool, code] of [
    ["execute_python", "print(1)"],
    ["execute_javascript", "console.log(1)"],
    ["execute_bash", "echo 1"],
  ]) {
    await call(client, tool, code);
    const samples = [];
    for (let i = 0; i < runs; i++) {
      await sleep(PAUSE_MS[tool]);
      const t = now();
      await call(client, tool, code);
      samples.push(now() - t);
    }
    out[tool] = summarize(samples);
  }
  await client.close();
  return out;
}

// `polybox mcp` writes nothing but JSON-RPC to stdout — not its logs, not the guest's prints —
// and exits when the client closes stdin. Checked on the raw byte stream, without the SDK.

import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { CLI } from "../helpers/mcp-client.js";

it("keeps stdout for the protocol and exits 0 when stdin closes", async () => {
  const child = spawn(process.execPath, [CLI, "mcp"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => {
    stdout += c;
  });
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answered = (id: number) =>
    new Promise<void>((resolve) => {
      const check = () => (stdout.includes(`"id":${id}`) ? resolve() : setTimeout(check, 20));
      check();
    });
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    },
  });
  await answered(1);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: {
      name: "execute_python",
      arguments: { code: "import sys; print('guest out'); print('guest err', file=sys.stderr)" },
    },
  });
  await answered(2);
  send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "execute_python", arguments: "not an object" },
  });
  await answered(3);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin.end();
  expect(await exited).toBe(0);

  const messages = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
  expect(messages.every((m) => m.jsonrpc === "2.0")).toBe(true);
  expect(messages[1].result.structuredContent).toMatchObject({
    stdout: "guest out\n",
    stderr: "guest err\n",
  });
  expect(messages[2].error ?? messages[2].result?.isError).toBeTruthy();
  expect(stderr).toContain("MCP server on stdio");
});

// `polybox mcp` writes nothing but JSON-RPC to stdout — not its logs, not the guest's prints —
// and exits when the client closes stdin. Checked on the raw byte stream, without the SDK.

import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { CLI, initializeRequest } from "../helpers/mcp-client.js";

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
  send(initializeRequest());
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

it("answers a line that is not JSON-RPC, and malformed tools/call params, with a plain error", async () => {
  const child = spawn(process.execPath, [CLI, "mcp"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (c) => {
    stdout += c;
  });
  child.stderr.resume();
  const lines = () =>
    stdout
      .trim()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number; message: string } });
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const poll = () => (check() ? resolve() : setTimeout(poll, 20));
      poll();
    });
  const send = (line: string) => child.stdin.write(`${line}\n`);
  send(JSON.stringify(initializeRequest()));
  await until(() => lines().some((m) => m.id === 1));
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  send("this is not json");
  send(JSON.stringify({ hello: "world" }));
  const bad: unknown[] = [
    { name: "execute_bash", arguments: ["echo", "x"] },
    { name: "execute_bash", arguments: "echo x" },
    { name: 7 },
    undefined,
  ];
  for (const [i, params] of bad.entries())
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 10 + i,
        method: "tools/call",
        ...(params ? { params } : {}),
      }),
    );
  send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 20,
      method: "tools/call",
      params: { name: "execute_bash", arguments: { code: "echo still" } },
    }),
  );
  await until(() => lines().some((m) => m.id === 20));
  const all = lines();
  const unread = all.filter((m) => m.id === null);
  expect(unread.map((m) => m.error?.code).sort()).toEqual([-32600, -32700]);
  for (let i = 0; i < bad.length; i++) {
    const answer = all.find((m) => m.id === 10 + i);
    expect(answer?.error?.code, JSON.stringify(answer)).toBe(-32602);
    expect(answer?.error?.message).not.toContain("\n");
    expect(answer?.error?.message).toMatch(/tools\/call/);
  }
  expect(JSON.stringify(all.find((m) => m.id === 20))).toContain("still");
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin.end();
  expect(await exited).toBe(0);
}, 60_000);

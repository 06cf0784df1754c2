// `files` with binary content, end to end over stdio: { "path": { "base64": "…" } } puts bytes in
// the workspace before the run, next to plain text entries, so that create_run_close can run a
// WebAssembly module it was handed (the module is assembled from WAT by test/helpers/wat.ts).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";
import { dataString, wasiProgram } from "../helpers/wat.js";

let server: McpHandle;

beforeAll(async () => {
  server = await stdioServer();
  await server.client.listTools();
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

const HELLO = wasiProgram(
  `(call $print (i32.const 2048) (i32.const 16))`,
  dataString(2048, "hello from wasm\n"),
);

describe("files with base64 content", () => {
  it("create_run_close runs a WASI module sent as base64", async () => {
    const r = await call(server.client, "create_run_close", {
      language: "wasm",
      code: "bin/hello.wasm",
      files: { "bin/hello.wasm": { base64: b64(HELLO) }, "notes.txt": "text still works" },
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      status: "ok",
      exit_code: 0,
      stdout: "hello from wasm\n",
    });
  });

  it("execute_python sees the exact bytes, and text entries as text", async () => {
    const r = await call(server.client, "execute_python", {
      code: "print(list(open('data.bin', 'rb').read()), open('a.txt').read())",
      files: { "data.bin": { base64: "AAEC/w==" }, "a.txt": "plain" },
    });
    expect(r.structuredContent?.stdout).toBe("[0, 1, 2, 255] plain\n");
  });

  it("refuses content that is not base64, and an unknown key, before running anything", async () => {
    const bad = await call(server.client, "create_run_close", {
      language: "bash",
      code: "echo ran",
      files: { "x.bin": { base64: "not base64!" } },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^INVALID_ARGUMENT: files\["x.bin"\]\.base64 is not valid base64/);
    const odd = await call(server.client, "create_run_close", {
      language: "bash",
      code: "echo ran",
      files: { "x.bin": { hex: "00" } },
    });
    expect(odd.isError).toBe(true);
    expect(text(odd)).not.toContain("ran");
  });
});

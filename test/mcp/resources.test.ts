// End to end with the SDK's real client: a sandbox's files as MCP resources through the template
// polybox://sandbox/{sandbox_id}/{+path}. Text comes back as text and other files as base64 with
// their sniffed mime type; resources/list pages through the caller's files; bad URIs, unknown or
// other clients' sandboxes, paths that leave the workspace, missing files and files over the
// response limit are JSON-RPC errors that lead with polybox's code, and the server keeps serving.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  type HttpHandle,
  httpServer,
  type McpHandle,
  stdioServer,
} from "../helpers/mcp-client.js";

const TEMPLATE = "polybox://sandbox/{sandbox_id}/{+path}";
const MADE_UP = "00000000-0000-4000-8000-000000000000";
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 255]);

let server: McpHandle;
let sandbox: string;

beforeAll(async () => {
  server = await stdioServer(["--max-response=64K"]);
  sandbox = (await call(server.client, "create_sandbox", {})).structuredContent?.sandbox_id;
  await call(server.client, "write_file", {
    sandbox_id: sandbox,
    path: "notes/a b ü.txt",
    content: "hello, resources\n",
  });
  await call(server.client, "write_file", {
    sandbox_id: sandbox,
    path: "plot.png",
    content: PNG.toString("base64"),
    encoding: "base64",
  });
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

/** The JSON-RPC error a resources/read of `uri` gets (the test fails if it succeeds). */
async function refusal(client: Client, uri: string): Promise<McpError> {
  const error = await client.readResource({ uri }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `${uri} was read`).toBeInstanceOf(McpError);
  return error as McpError;
}

/** The server still answers a tool call after a refusal. */
async function stillServes(client: Client): Promise<void> {
  const r = await call(client, "execute_javascript", { code: "console.log('alive')" });
  expect(r.structuredContent?.stdout).toBe("alive\n");
}

describe("the sandbox file template", () => {
  it("is listed by resources/templates/list", async () => {
    const { resourceTemplates } = await server.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(TEMPLATE);
  });

  it("reads text as text and binary as base64, with the sniffed mime type", async () => {
    const textUri = `polybox://sandbox/${sandbox}/notes/a%20b%20%C3%BC.txt`;
    const text = await server.client.readResource({ uri: textUri });
    expect(text.contents).toEqual([
      { uri: textUri, mimeType: "text/plain", text: "hello, resources\n" },
    ]);
    const pngUri = `polybox://sandbox/${sandbox}/plot.png`;
    const png = await server.client.readResource({ uri: pngUri });
    expect(png.contents).toEqual([
      { uri: pngUri, mimeType: "image/png", blob: PNG.toString("base64") },
    ]);
  });

  it("reads a file a run wrote", async () => {
    await call(server.client, "execute_code", {
      sandbox_id: sandbox,
      language: "bash",
      code: "mkdir -p out && echo '{\"n\": 1}' > out/r.json",
    });
    const uri = `polybox://sandbox/${sandbox}/out/r.json`;
    const r = await server.client.readResource({ uri });
    expect(r.contents[0]).toMatchObject({ mimeType: "application/json", text: '{"n": 1}\n' });
  });
});

describe("resources/list", () => {
  it("pages through the caller's files, 100 at a time, and names each by its template URI", async () => {
    const other = (await call(server.client, "create_sandbox", {})).structuredContent?.sandbox_id;
    await call(server.client, "execute_code", {
      sandbox_id: other,
      language: "bash",
      code: "for i in $(seq 1 150); do echo $i > f$i.txt; done",
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await server.client.listResources(cursor ? { cursor } : {});
      expect(page.resources.length).toBeLessThanOrEqual(100);
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((u) => u.startsWith(`polybox://sandbox/${other}/f`))).toHaveLength(150);
    expect(seen).toContain(`polybox://sandbox/${sandbox}/plot.png`);
    expect(seen).toContain(`polybox://sandbox/${sandbox}/notes/a%20b%20%C3%BC.txt`);
    await call(server.client, "close_sandbox", { sandbox_id: other });
    const after = await server.client.listResources();
    expect(after.resources.some((r) => r.uri.includes(other))).toBe(false);
  });

  it("refuses a cursor it did not give", async () => {
    const error = await server.client.listResources({ cursor: "not-a-cursor" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toMatch(/INVALID_ARGUMENT: the cursor/);
  });
});

describe("refusals", () => {
  const cases: [string, () => string, number, RegExp][] = [
    [
      "another scheme",
      () => "https://example.com/a.txt",
      -32602,
      /INVALID_ARGUMENT: .*polybox:\/\/sandbox\/\{sandbox_id\}/,
    ],
    ["no path", () => `polybox://sandbox/${sandbox}`, -32602, /INVALID_ARGUMENT/],
    [
      "a malformed escape",
      () => `polybox://sandbox/${sandbox}/a%E0%A4%A`,
      -32602,
      /malformed %-escape/,
    ],
    ["an unknown sandbox", () => `polybox://sandbox/${MADE_UP}/a.txt`, -32002, /SANDBOX_NOT_FOUND/],
    ["a missing file", () => `polybox://sandbox/${sandbox}/nope.txt`, -32002, /FILE_NOT_FOUND/],
    ["a directory", () => `polybox://sandbox/${sandbox}/notes`, -32602, /NOT_A_FILE/],
    ["..", () => `polybox://sandbox/${sandbox}/../../etc/passwd`, -32602, /PATH_OUTSIDE_WORKSPACE/],
    [
      "an escaped ..",
      () => `polybox://sandbox/${sandbox}/%2e%2e/%2e%2e/etc/passwd`,
      -32602,
      /PATH_OUTSIDE_WORKSPACE/,
    ],
    [
      "an absolute host path",
      () => `polybox://sandbox/${sandbox}//etc/passwd`,
      -32602,
      /PATH_OUTSIDE_WORKSPACE/,
    ],
  ];

  it.each(cases)(
    "%s is a clear error and the server keeps serving",
    async (_label, uri, code, message) => {
      const error = await refusal(server.client, uri());
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(error.message).not.toMatch(/MCP error .*MCP error/);
      await stillServes(server.client);
    },
  );

  it("a file whose answer would pass --max-response is refused with what to do instead", async () => {
    await call(server.client, "execute_code", {
      sandbox_id: sandbox,
      language: "python",
      code: "open('big.txt', 'w').write('a' * 100_000)",
    });
    const error = await refusal(server.client, `polybox://sandbox/${sandbox}/big.txt`);
    expect(error.message).toMatch(/over the response limit of 64 KiB \(--max-response\)/);
    expect(error.message).toMatch(/head, tail/);
    await stillServes(server.client);
  });
});

describe("T22: another client's sandbox, over HTTP", () => {
  let http: HttpHandle;

  beforeAll(async () => {
    http = await httpServer();
  });

  afterAll(async () => {
    expect(await http.close()).toEqual({ code: 0, signal: null });
  });

  it("reads as an unknown sandbox and is never listed", async () => {
    const a = http.client;
    const id: string = (await call(a, "create_sandbox", {})).structuredContent?.sandbox_id;
    await call(a, "write_file", { sandbox_id: id, path: "secret.txt", content: "a's secret" });
    const own = await a.readResource({ uri: `polybox://sandbox/${id}/secret.txt` });
    expect(own.contents[0]).toMatchObject({ text: "a's secret" });

    const b = await http.connect();
    const theirs = await refusal(b, `polybox://sandbox/${id}/secret.txt`);
    const unknown = await refusal(b, `polybox://sandbox/${MADE_UP}/secret.txt`);
    expect(theirs.code).toBe(-32002);
    expect(theirs.message.replaceAll(id, "<id>")).toBe(unknown.message.replaceAll(MADE_UP, "<id>"));
    expect((await b.listResources()).resources).toEqual([]);
    await stillServes(b);
  });
});

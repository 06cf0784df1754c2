// End to end with the SDK's real client: output longer than the inline limit (--inline-output)
// comes back as its head and tail with a marker where the middle was cut, and the whole stream is
// kept and linked from the answer (a resource_link, and full_output in the structured content):
// in the sandbox's workspace for a run in a sandbox, in the server's store for a one-shot run
// (for --job-retention). Every answer is checked against its tool's output schema by the client.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  type HttpHandle,
  httpServer,
  type McpHandle,
  stdioServer,
  type ToolResult,
  text,
} from "../helpers/mcp-client.js";

const INLINE = 4 * 1024;
/** What a result's stream may take: the inline limit; the marker is inside it. */
const bytes = (s: string) => Buffer.byteLength(s);
const LINES = "for i in range(5000): print('line', i)";
const WHOLE = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join("");

let server: McpHandle;
let sandbox: string;

beforeAll(async () => {
  server = await stdioServer([`--inline-output=${INLINE}`, "--job-retention=4s"]);
  sandbox = (await call(server.client, "create_sandbox", { language: "python" })).structuredContent
    ?.sandbox_id;
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

function links(r: ToolResult) {
  return r.content.flatMap((c) => (c.type === "resource_link" ? [c] : []));
}

async function readWhole(client: Client, uri: string): Promise<string> {
  const { contents } = await client.readResource({ uri });
  const first = contents[0];
  expect(first).toMatchObject({ uri, mimeType: "text/plain" });
  return first && "text" in first ? first.text : "";
}

/** The head, the marker and the tail of a cut stream, each checked. */
function expectCut(stream: string, whole: string, where: RegExp): void {
  expect(bytes(stream)).toBeLessThanOrEqual(INLINE);
  expect(stream.length).toBeLessThan(whole.length);
  const [head, tail] = stream.split(/\n?\[… polybox cut .*? …\]\n/);
  expect(stream).toMatch(where);
  expect(whole.startsWith(head!)).toBe(true);
  expect(whole.endsWith(tail!)).toBe(true);
  expect(head!.length).toBeGreaterThan(INLINE / 4);
  expect(tail!.length).toBeGreaterThan(INLINE / 4);
}

describe("a run in a sandbox", () => {
  it("keeps the head and tail inline and the whole stream in the workspace, linked", async () => {
    const r = await call(server.client, "execute_code", { sandbox_id: sandbox, code: LINES });
    expect(r.structuredContent?.status).toBe("ok");
    const stdout: string = r.structuredContent?.stdout;
    expect(stdout.startsWith("line 0\nline 1\n")).toBe(true);
    expect(stdout.endsWith("line 4998\nline 4999\n")).toBe(true);
    expectCut(stdout, WHOLE, /in the workspace at \.polybox\/output\/[0-9a-f-]+\.stdout/);

    const full = r.structuredContent?.full_output.stdout;
    expect(full).toMatchObject({ bytes: bytes(WHOLE), expires_at: null });
    expect(full.path).toMatch(/^\.polybox\/output\/[0-9a-f-]+\.stdout$/);
    expect(full.uri).toBe(`polybox://sandbox/${sandbox}/${full.path}`);
    expect(r.structuredContent?.full_output.stderr).toBeUndefined();
    expect(links(r)).toEqual([
      expect.objectContaining({ uri: full.uri, mimeType: "text/plain", size: bytes(WHOLE) }),
    ]);
    expect(text(r)).toContain(`whole stdout (`);
    expect(text(r)).toContain(full.uri);

    expect(await readWhole(server.client, full.uri)).toBe(WHOLE);
    const file = await call(server.client, "read_file", { sandbox_id: sandbox, path: full.path });
    expect(file.structuredContent?.content).toBe(WHOLE);
    // The guest can work on the whole of it too.
    const tail = await call(server.client, "execute_code", {
      sandbox_id: sandbox,
      language: "bash",
      code: `tail -n 1 ${full.path}`,
    });
    expect(tail.structuredContent?.stdout).toBe("line 4999\n");
  });

  it("cuts both streams, each at character boundaries", async () => {
    const code =
      "import sys\nfor i in range(3000):\n    print('é✓', i)\n    print('ü', i, file=sys.stderr)";
    const r = await call(server.client, "execute_code", { sandbox_id: sandbox, code });
    for (const stream of ["stdout", "stderr"]) {
      const s: string = r.structuredContent?.[stream];
      expect(bytes(s)).toBeLessThanOrEqual(INLINE);
      expect(s).not.toContain("\uFFFD");
      expect(s).toMatch(/polybox cut/);
      expect(r.structuredContent?.full_output[stream].bytes).toBeGreaterThan(INLINE);
    }
    expect(links(r)).toHaveLength(2);
  });

  it("leaves output within the limit alone", async () => {
    const r = await call(server.client, "execute_code", {
      sandbox_id: sandbox,
      code: "print('short')",
    });
    expect(r.structuredContent?.stdout).toBe("short\n");
    expect(r.structuredContent?.full_output).toBeUndefined();
    expect(links(r)).toEqual([]);
  });

  it("keeps the newest 20 output files of a sandbox and removes older ones", async () => {
    const sb = (await call(server.client, "create_sandbox", { language: "bash" })).structuredContent
      ?.sandbox_id;
    const uris: string[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await call(server.client, "execute_code", {
        sandbox_id: sb,
        code: "seq 1 2000; seq 1 2000 >&2",
      });
      uris.push(...links(r).map((l) => l.uri));
    }
    expect(uris).toHaveLength(22);
    const files = await call(server.client, "list_files", {
      sandbox_id: sb,
      path: ".polybox/output",
    });
    const kept = files.structuredContent?.files.map((f: { path: string }) => f.path);
    expect(kept).toHaveLength(20);
    for (const uri of uris.slice(-20))
      expect(await readWhole(server.client, uri)).toMatch(/^1\n2\n/);
  });

  it("a sandbox with no room keeps the whole output in the server's store instead, and says so", async () => {
    const sb = (
      await call(server.client, "create_sandbox", { language: "python", workspace_quota_mb: 1 })
    ).structuredContent?.sandbox_id;
    const r = await call(server.client, "execute_code", {
      sandbox_id: sb,
      code: "open('fill.bin', 'wb').write(b'x' * 1_000_000)\nprint('y' * 100_000)",
    });
    expect(r.structuredContent?.status).toBe("ok");
    const full = r.structuredContent?.full_output.stdout;
    expect(full.path).toBeNull();
    expect(full.uri).toMatch(/^polybox:\/\/output\/[0-9a-f-]+\/stdout$/);
    expect(r.structuredContent?.notes.join("\n")).toMatch(
      /could not be put in the sandbox's workspace .*QUOTA|quota/,
    );
    expect(await readWhole(server.client, full.uri)).toBe(`${"y".repeat(100_000)}\n`);
  });

  it("an async job's result links its whole output, named by the job", async () => {
    const submitted = await call(server.client, "execute_code", {
      sandbox_id: sandbox,
      code: LINES,
      async: true,
    });
    const jobId: string = submitted.structuredContent?.job_id;
    let r: ToolResult | undefined;
    for (let i = 0; i < 300; i++) {
      r = await call(server.client, "check_job_status", { job_id: jobId });
      if (r.structuredContent?.finished_at) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const full = r?.structuredContent?.result.full_output.stdout;
    expect(full.path).toBe(`.polybox/output/${jobId}.stdout`);
    expect(links(r!).map((l) => l.uri)).toEqual([full.uri]);
    expect(await readWhole(server.client, full.uri)).toBe(WHOLE);
  });

  it("keeping it does not wait for a run queued behind it in the same sandbox", async () => {
    const submit = async (code: string) =>
      (await call(server.client, "execute_code", { sandbox_id: sandbox, code, async: true }))
        .structuredContent?.job_id as string;
    const first = await submit(LINES);
    const second = await submit("import time\ntime.sleep(10)");
    let done: ToolResult | undefined;
    for (let i = 0; i < 300 && !done?.structuredContent?.finished_at; i++) {
      await new Promise((res) => setTimeout(res, 100));
      done = await call(server.client, "check_job_status", { job_id: first });
    }
    expect(done?.structuredContent?.result.full_output.stdout.path).toBe(
      `.polybox/output/${first}.stdout`,
    );
    const behind = await call(server.client, "check_job_status", { job_id: second });
    expect(behind.structuredContent?.finished_at).toBeNull();
    await call(server.client, "cancel_job", { job_id: second });
  });
});

describe("a one-shot run", () => {
  it("keeps the whole output for --job-retention, readable through polybox://output/", async () => {
    const r = await call(server.client, "execute_python", { code: LINES });
    const stdout: string = r.structuredContent?.stdout;
    expectCut(stdout, WHOLE, /kept for 4 s as stdout of run [0-9a-f-]+/);
    const full = r.structuredContent?.full_output.stdout;
    expect(full).toMatchObject({ path: null, bytes: bytes(WHOLE) });
    expect(full.uri).toMatch(/^polybox:\/\/output\/[0-9a-f-]+\/stdout$/);
    expect(Date.parse(full.expires_at)).toBeGreaterThan(Date.now());
    expect(links(r).map((l) => l.uri)).toEqual([full.uri]);
    expect(await readWhole(server.client, full.uri)).toBe(WHOLE);

    // Forgotten after the retention time: a clear "not found", and the server keeps serving.
    await new Promise((res) => setTimeout(res, 4500));
    const gone = await server.client.readResource({ uri: full.uri }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(gone).toBeInstanceOf(McpError);
    expect((gone as McpError).code).toBe(-32002);
    expect((gone as McpError).message).toMatch(/FILE_NOT_FOUND: .*kept for 4 s/);
    const after = await call(server.client, "execute_javascript", { code: "console.log(1)" });
    expect(after.structuredContent?.stdout).toBe("1\n");
  });

  it("a bad output URI is a clear error", async () => {
    for (const [uri, message] of [
      ["polybox://output/00000000-0000-4000-8000-000000000000/stdout", /FILE_NOT_FOUND/],
      ["polybox://output/abc/stdin", /INVALID_ARGUMENT: .*stdout or stderr/],
      ["polybox://output/a%20b/stdout", /INVALID_ARGUMENT: .*not a run id/],
    ] as const) {
      const error = await server.client.readResource({ uri }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, uri).toBeInstanceOf(McpError);
      expect((error as McpError).message).toMatch(message);
    }
  });
});

describe("over HTTP, between clients", () => {
  let http: HttpHandle;

  beforeAll(async () => {
    http = await httpServer([`--inline-output=${INLINE}`]);
  });

  afterAll(async () => {
    expect(await http.close()).toEqual({ code: 0, signal: null });
  });

  it("a one-shot run's kept output is the caller's alone", async () => {
    const r = await call(http.client, "execute_python", { code: LINES });
    const uri: string = r.structuredContent?.full_output.stdout.uri;
    expect(await readWhole(http.client, uri)).toBe(WHOLE);
    const other = await http.connect();
    const refused = await other.readResource({ uri }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((refused as McpError).code).toBe(-32002);
  });
});

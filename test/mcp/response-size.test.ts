// T26, end to end with the SDK's real client over stdio and Streamable HTTP: no tool answer
// passes the response limit (--max-response, default 8 MiB), however much a run produces. The
// SDK's stdio client drops the connection on a message over 10 MiB, and with it the server and
// every sandbox of the session; here three 4.5 MB PNGs (each within the image limits) and a 5 MB
// display must come back as an answer within the limit that says what was left out and how to
// fetch it, and the connection must stay up for the next call.

import { afterEach, describe, expect, it } from "vitest";
import {
  call,
  httpServer,
  type McpHandle,
  stdioServer,
  type ToolResult,
  text,
} from "../helpers/mcp-client.js";

let server: McpHandle | null = null;

afterEach(async () => {
  if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
  server = null;
});

const MiB = 1024 * 1024;

/** Three incompressible 4.5 MB PNGs (signature + random bytes) and one 5 MB display. */
const FLOOD = `import random
sig = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
for i in range(3):
    open(f"p{i}.png", "wb").write(sig + random.randbytes(4_500_000))
class Big:
    def _repr_html_(self):
        return "<p>" + "x" * 3_000_000 + "</p>"
    def __repr__(self):
        return "Big(" + "y" * 2_000_000 + ")"
display(Big())
print("done")`;

const wire = (r: ToolResult) => Buffer.byteLength(JSON.stringify(r));

async function floodAndRecover(h: McpHandle, limit: number): Promise<void> {
  await h.client.listTools();
  const sandbox = (await call(h.client, "create_sandbox", { language: "python" })).structuredContent
    ?.sandbox_id;
  const r = await call(h.client, "execute_code", { sandbox_id: sandbox, code: FLOOD });
  expect(r.isError, text(r)).toBeFalsy();
  expect(wire(r)).toBeLessThanOrEqual(limit);
  expect(r.structuredContent?.status).toBe("ok");
  expect(r.structuredContent?.stdout).toBe("done\n");
  // Every image is accounted for: attached, or named in a note with how to fetch it.
  const attached = r.content.filter((c) => c.type === "image").length;
  const notes: string[] = r.structuredContent?.notes ?? [];
  // Left out by the run's own rich-output budget (core), or by the answer's budget (MCP).
  const budget = notes.filter((n) => /^image p\d\.png .* was not returned: .*in all/.test(n));
  const left = notes.filter((n) => /^image p\d\.png .* was not attached: .*--max-response/.test(n));
  expect(attached + budget.length + left.length).toBe(3);
  expect(budget.length + left.length).toBeGreaterThan(0);
  for (const note of left) expect(note).toContain(`read_file {"sandbox_id": "${sandbox}"`);
  for (const note of [...budget, ...left]) expect(text(r)).toContain(note);
  left.push(...budget);

  // The connection is up, and a left-out image comes whole through read_file.
  const path = /^image (p\d\.png)/.exec(left[0]!)![1]!;
  const file = await call(h.client, "read_file", { sandbox_id: sandbox, path });
  expect(file.isError, text(file)).toBeFalsy();
  expect(wire(file)).toBeLessThanOrEqual(limit);
  expect(Buffer.from(file.structuredContent?.content, "base64").byteLength).toBe(4_500_008);
  const next = await call(h.client, "execute_python", { code: "print(6 * 7)" });
  expect(next.structuredContent?.stdout).toBe("42\n");
}

describe("T26: response size", () => {
  it("T26: over stdio, a run's images and display stay within the default 8 MiB and the client stays connected", async () => {
    server = await stdioServer();
    await floodAndRecover(server, 8 * MiB);
  });

  it("T26: over HTTP the same holds, with another --max-response", async () => {
    server = await httpServer(["--max-response=7M"]);
    await floodAndRecover(server, 7 * MiB);
    // A display bigger than the budget is left out too, with a note saying how to get it.
    const r = await call(server.client, "execute_python", {
      code: 'class H:\n    def _repr_html_(self):\n        return "z" * 8_000_000\ndisplay(H())',
    });
    expect(wire(r)).toBeLessThanOrEqual(7 * MiB);
    expect(r.structuredContent?.displays).toEqual([]);
    expect(r.structuredContent?.notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/^display 1 \(text\/html, .*read_file/)]),
    );
  });

  it("T26: output past a small --max-response is cut, marked, and still matches the output schema", async () => {
    server = await stdioServer(["--max-response=64K"]);
    await server.client.listTools();
    const r = await call(server.client, "execute_python", {
      code: 'print("é\\x00" * 200_000)',
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(wire(r)).toBeLessThanOrEqual(64 * 1024);
    expect(text(r)).toMatch(
      /\[cut: this answer was over the 64 KiB response limit \(--max-response\)\]$/,
    );
    expect(r.structuredContent?.status).toBe("ok");
    // read_file refuses a file that cannot fit rather than send a cut one; a smaller one comes whole.
    const sandbox_id = (await call(server.client, "create_sandbox", {})).structuredContent
      ?.sandbox_id;
    const made = await call(server.client, "execute_python", {
      sandbox_id,
      code: 'open("big.txt", "w").write("a" * 100_000)\nopen("small.bin", "wb").write(bytes(range(256)) * 40)',
    });
    expect(made.structuredContent?.status).toBe("ok");
    const big = await call(server.client, "read_file", { sandbox_id, path: "big.txt" });
    expect(big.isError).toBe(true);
    expect(text(big)).toMatch(
      /^INVALID_ARGUMENT: big\.txt is 100000 bytes, over the response limit .*--max-response/,
    );
    const small = await call(server.client, "read_file", { sandbox_id, path: "small.bin" });
    expect(small.isError, text(small)).toBeFalsy();
    expect(wire(small)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.from(small.structuredContent?.content, "base64").byteLength).toBe(10_240);
  });
});

// End to end over stdio: sandbox lifecycle and files — state across calls, a file Python writes
// read by Bash, every file tool, status listings, and what a closed sandbox answers.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;
let id: string;

beforeAll(async () => {
  server = await stdioServer();
  const r = await call(server.client, "create_sandbox", {
    language: "python",
    timeout_seconds: 20,
  });
  expect(r.isError).toBeFalsy();
  id = r.structuredContent?.sandbox_id;
  expect(r.structuredContent?.sandbox).toMatchObject({
    sandbox_id: id,
    default_language: "python",
    limits: { timeout_ms: 20_000 },
  });
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

describe("a sandbox keeps state and files", () => {
  it("keeps Python variables across calls, with execute_code's default language", async () => {
    await call(server.client, "execute_code", { sandbox_id: id, code: "x = 41" });
    const r = await call(server.client, "execute_python", { sandbox_id: id, code: "x + 1" });
    expect(r.structuredContent).toMatchObject({ status: "ok", value: "42", sandbox_id: id });
  });

  it("lets Bash read a file Python wrote", async () => {
    const w = await call(server.client, "execute_python", {
      sandbox_id: id,
      code: "open('report.txt', 'w').write('from python\\n')",
    });
    expect(w.structuredContent?.files_changed).toContain("report.txt");
    const r = await call(server.client, "execute_code", {
      sandbox_id: id,
      language: "bash",
      code: "cat report.txt | tr a-z A-Z",
    });
    expect(r.structuredContent?.stdout).toBe("FROM PYTHON\n");
  });

  it("writes, lists and reads text and binary files", async () => {
    const t = await call(server.client, "write_file", {
      sandbox_id: id,
      path: "notes/a.txt",
      content: "héllo",
    });
    expect(t.structuredContent).toEqual({ path: "notes/a.txt", size: 6 });
    const b = await call(server.client, "write_file", {
      sandbox_id: id,
      path: "blob.bin",
      content: Buffer.from([0, 1, 2, 255]).toString("base64"),
      encoding: "base64",
    });
    expect(b.structuredContent).toEqual({ path: "blob.bin", size: 4 });

    const list = await call(server.client, "list_files", { sandbox_id: id });
    const paths = list.structuredContent?.files.map((f: { path: string }) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(["blob.bin", "notes", "notes/a.txt", "report.txt"]),
    );
    const sub = await call(server.client, "list_files", { sandbox_id: id, path: "notes" });
    expect(sub.structuredContent?.files.map((f: { path: string }) => f.path)).toEqual([
      "notes/a.txt",
    ]);

    const text1 = await call(server.client, "read_file", {
      sandbox_id: id,
      path: "/workspace/notes/a.txt",
    });
    expect(text1.structuredContent).toMatchObject({
      encoding: "utf8",
      content: "héllo",
      mime_type: "text/plain",
    });
    const bin = await call(server.client, "read_file", { sandbox_id: id, path: "blob.bin" });
    expect(bin.structuredContent).toMatchObject({
      encoding: "base64",
      mime_type: "application/octet-stream",
      size: 4,
    });
    expect([...Buffer.from(bin.structuredContent?.content, "base64")]).toEqual([0, 1, 2, 255]);
    const seen = await call(server.client, "execute_python", {
      sandbox_id: id,
      code: "list(open('blob.bin', 'rb').read())",
    });
    expect(seen.structuredContent?.value).toBe("[0, 1, 2, 255]");
  });

  it("reads a PNG back as image content", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
    await call(server.client, "write_file", {
      sandbox_id: id,
      path: "dot.png",
      content: png.toString("base64"),
      encoding: "base64",
    });
    const r = await call(server.client, "read_file", { sandbox_id: id, path: "dot.png" });
    expect(r.structuredContent).toMatchObject({ mime_type: "image/png", encoding: "base64" });
    expect(r.content).toContainEqual({
      type: "image",
      data: png.toString("base64"),
      mimeType: "image/png",
    });
  });

  it("reports status for one sandbox and for all", async () => {
    const one = await call(server.client, "get_sandbox_status", { sandbox_id: id });
    const info = one.structuredContent?.sandboxes[0];
    expect(info).toMatchObject({
      sandbox_id: id,
      languages: expect.arrayContaining(["python", "bash"]),
      running: false,
    });
    expect(info.file_count).toBeGreaterThanOrEqual(4);
    expect(info.bytes).toBeGreaterThan(0);
    const all = await call(server.client, "get_sandbox_status", {});
    expect(
      all.structuredContent?.sandboxes.map((s: { sandbox_id: string }) => s.sandbox_id),
    ).toContain(id);
    expect(all.structuredContent).toMatchObject({
      max_sandboxes: 64,
      concurrency: expect.any(Number),
    });
  });

  it("refuses upload_file when the server grants no host paths, naming --allow-read", async () => {
    const r = await call(server.client, "upload_file", {
      sandbox_id: id,
      local_path: "/etc/hostname",
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^PERMISSION_DENIED: .*permissions\.read.*--allow-read/);
  });

  it("keeps sandboxes apart", async () => {
    const other = await call(server.client, "create_sandbox", {});
    const r = await call(server.client, "execute_bash", {
      sandbox_id: other.structuredContent?.sandbox_id,
      code: "ls",
    });
    expect(r.structuredContent?.stdout).toBe("");
    await call(server.client, "close_sandbox", { sandbox_id: other.structuredContent?.sandbox_id });
  });

  it("destroys a sandbox on close; its id then fails clearly", async () => {
    const r = await call(server.client, "close_sandbox", { sandbox_id: id });
    expect(r.structuredContent).toEqual({ sandbox_id: id, closed: true });
    const after = await call(server.client, "execute_code", { sandbox_id: id, code: "x" });
    expect(after.isError).toBe(true);
    expect(text(after)).toMatch(
      /^SANDBOX_NOT_FOUND: sandbox .* no longer exists: it was closed; create a new one .*create_sandbox/,
    );
    const status = await call(server.client, "get_sandbox_status", {});
    expect(status.structuredContent?.sandboxes).toEqual([]);
  });
});

// Small answers a newcomer met that said something untrue: a write to "d/" made a file named
// "d", listing a file said there was no such directory, and a finished job that printed nothing
// said "(no output yet)".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;
beforeAll(async () => {
  server = await stdioServer();
});
afterAll(async () => {
  await server?.close();
});

describe("answers that say what happened", () => {
  it("write_file to a path ending in a slash is refused, and writes nothing", async () => {
    const created = await call(server.client, "create_sandbox", {});
    const id = created.structuredContent?.sandbox_id as string;
    const r = await call(server.client, "write_file", { sandbox_id: id, path: "d/", content: "x" });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/ends with a slash/);
    const listed = await call(server.client, "list_files", { sandbox_id: id });
    expect(JSON.stringify(listed.structuredContent)).not.toMatch(/"d"/);
  });

  it("list_files on a file says it is a file", async () => {
    const created = await call(server.client, "create_sandbox", {});
    const id = created.structuredContent?.sandbox_id as string;
    await call(server.client, "write_file", { sandbox_id: id, path: "f.txt", content: "x" });
    const r = await call(server.client, "list_files", { sandbox_id: id, path: "f.txt" });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/"f\.txt" is a file, not a directory/);
  });

  it("get_job_logs of a finished job that printed nothing says no output, not 'yet'", async () => {
    const started = await call(server.client, "execute_bash", { code: "true", async: true });
    const job = started.structuredContent?.job_id as string;
    let status = "";
    for (let i = 0; i < 300 && status !== "completed"; i++) {
      status = (await call(server.client, "check_job_status", { job_id: job })).structuredContent
        ?.status as string;
      if (status !== "completed") await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe("completed");
    const logs = await call(server.client, "get_job_logs", { job_id: job });
    expect(text(logs)).toContain("(no output)");
    expect(text(logs)).not.toContain("yet");
  }, 60_000);
});

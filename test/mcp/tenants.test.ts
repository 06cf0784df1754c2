// T22, end to end over Streamable HTTP: one client may not see, use or close another client's
// sandbox or job. Another client's ids get the very answer a made-up id gets, so they cannot be
// probed. Without tokens each session is a client and its sandboxes close with it; with tokens
// each token is one, and per-client limits keep one client from locking the others out.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { call, type HttpHandle, httpServer, text } from "../helpers/mcp-client.js";

let server: HttpHandle | null = null;

afterEach(async () => {
  if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
  server = null;
});

const MADE_UP = "00000000-0000-4000-8000-000000000000";

/** The answer with the id replaced, so answers about two different ids can be compared. */
const anon = (answer: string, id: string) => answer.replaceAll(id, "<id>");

async function listed(client: Client): Promise<string[]> {
  await client.listTools();
  const r = await call(client, "get_sandbox_status", {});
  expect(r.isError, text(r)).toBeFalsy();
  return r.structuredContent?.sandboxes.map((s: { sandbox_id: string }) => s.sandbox_id);
}

describe("T22: another client's sandbox and jobs, over HTTP", () => {
  it("T22: a second session neither lists nor uses nor closes the first session's sandbox or job", async () => {
    server = await httpServer();
    const a = server.client;
    await a.listTools();
    const created = await call(a, "create_sandbox", { language: "python" });
    const id: string = created.structuredContent?.sandbox_id;
    await call(a, "write_file", { sandbox_id: id, path: "secret.txt", content: "a's secret" });
    const job = await call(a, "execute_javascript", {
      sandbox_id: id,
      code: "let t = Date.now(); while (Date.now() - t < 60000) {}",
      async: true,
    });
    const jobId: string = job.structuredContent?.job_id;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);

    const b = await server.connect();
    expect(await listed(b)).toEqual([]);
    expect(await listed(a)).toEqual([id]);

    // Every sandbox tool: refused with the answer an unknown id gets, word for word.
    const attempts: [string, Record<string, unknown>][] = [
      ["get_sandbox_status", {}],
      ["execute_code", { code: "print(open('secret.txt').read())" }],
      ["execute_python", { code: "print(open('secret.txt').read())" }],
      ["list_files", {}],
      ["read_file", { path: "secret.txt" }],
      ["write_file", { path: "secret.txt", content: "b was here" }],
      ["upload_file", { local_path: "/etc/hostname" }],
      ["install_package", { package_name: "six" }],
      ["close_sandbox", {}],
    ];
    for (const [tool, args] of attempts) {
      const theirs = await call(b, tool, { ...args, sandbox_id: id });
      const unknown = await call(b, tool, { ...args, sandbox_id: MADE_UP });
      expect(theirs.isError, `${tool}: ${text(theirs)}`).toBe(true);
      expect(text(theirs)).toMatch(/^SANDBOX_NOT_FOUND: /);
      expect(anon(text(theirs), id)).toBe(anon(text(unknown), MADE_UP));
    }
    for (const tool of ["check_job_status", "get_job_logs", "cancel_job"]) {
      const theirs = await call(b, tool, { job_id: jobId });
      const unknown = await call(b, tool, { job_id: MADE_UP });
      expect(theirs.isError, `${tool}: ${text(theirs)}`).toBe(true);
      expect(text(theirs)).toMatch(/^JOB_NOT_FOUND: /);
      expect(anon(text(theirs), jobId)).toBe(anon(text(unknown), MADE_UP));
    }

    // The owner's sandbox and job are untouched (file tools wait while a run holds the sandbox).
    expect((await call(a, "check_job_status", { job_id: jobId })).structuredContent?.status).toBe(
      "running",
    );
    expect((await call(a, "cancel_job", { job_id: jobId })).structuredContent?.status).toBe(
      "cancelled",
    );
    const read = await call(a, "read_file", { sandbox_id: id, path: "secret.txt" });
    expect(read.structuredContent?.content).toBe("a's secret");
    expect((await call(a, "close_sandbox", { sandbox_id: id })).isError).toBeFalsy();
    // Closed: its owner hears why; anyone else hears what a made-up id gets.
    expect(text(await call(a, "list_files", { sandbox_id: id }))).toMatch(/no longer exists/);
    const after = await call(b, "list_files", { sandbox_id: id });
    const never = await call(b, "list_files", { sandbox_id: MADE_UP });
    expect(anon(text(after), id)).toBe(anon(text(never), MADE_UP));
  });

  it("T22: a session's sandboxes are closed when the session ends, freeing their places", async () => {
    server = await httpServer(["--max-sandboxes=1"]);
    const a = server.client;
    await a.listTools();
    const made = await call(a, "create_sandbox", {});
    expect(made.isError, text(made)).toBeFalsy();
    const b = await server.connect();
    await b.listTools();
    const refused = await call(b, "create_sandbox", {});
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^TOO_MANY_SANDBOXES: /);

    await (a.transport as StreamableHTTPClientTransport).terminateSession();
    let again = refused;
    for (let i = 0; i < 50 && again.isError; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await call(b, "create_sandbox", {});
    }
    expect(again.isError, text(again)).toBeFalsy();
  });
});

describe("T22: tokens are clients, with limits of their own", () => {
  it("T22: each token owns its sandboxes; one token's cap leaves the other's places free", async () => {
    server = await httpServer([
      "--token=alpha-7f3a,beta-91c2",
      "--max-sandboxes=4",
      "--max-sandboxes-per-client=2",
      "--concurrency=1",
      "--max-runs-per-client=2",
    ]);
    const a = server.client; // token alpha
    const a2 = await server.connect("alpha-7f3a");
    const b = await server.connect("beta-91c2");
    await a.listTools();
    const one = (await call(a, "create_sandbox", {})).structuredContent?.sandbox_id;
    const two = (await call(a2, "create_sandbox", {})).structuredContent?.sandbox_id;
    // Another session of the same token is the same client: it sees both.
    expect((await listed(a)).sort()).toEqual([one, two].sort());
    expect((await listed(a2)).sort()).toEqual([one, two].sort());
    expect(await listed(b)).toEqual([]);

    // A session answers only the token that opened it: another token's request is "unknown session".
    const sid = (a.transport as StreamableHTTPClientTransport).sessionId!;
    const asToken = (token: string) =>
      fetch(server!.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-06-18",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 99,
          method: "tools/call",
          params: { name: "get_sandbox_status", arguments: {} },
        }),
      });
    const hijack = await asToken("beta-91c2");
    expect(hijack.status).toBe(404);
    expect(await hijack.text()).not.toContain(one);
    const own = await asToken("alpha-7f3a");
    expect(own.status).toBe(200);
    expect(await own.text()).toContain(one);

    const third = await call(a, "create_sandbox", {});
    expect(third.isError).toBe(true);
    expect(text(third)).toMatch(
      /^TOO_MANY_SANDBOXES: this client has 2 sandboxes open, .*--max-sandboxes-per-client=2/,
    );
    for (let i = 0; i < 2; i++) {
      const mine = await call(b, "create_sandbox", {});
      expect(mine.isError, text(mine)).toBeFalsy();
    }
    const status = await call(b, "get_sandbox_status", {});
    expect(status.structuredContent).toMatchObject({
      max_sandboxes: 4,
      max_sandboxes_per_client: 2,
    });

    // Runs: alpha holds its two places; beta still gets in.
    const busy = "let t = Date.now(); while (Date.now() - t < 60000) {}";
    const jobs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await call(a, "execute_javascript", { code: busy, async: true });
      expect(r.isError, text(r)).toBeFalsy();
      jobs.push(r.structuredContent?.job_id);
    }
    const over = await call(a, "execute_javascript", { code: "1", async: true });
    expect(over.isError).toBe(true);
    expect(text(over)).toMatch(
      /^SERVER_BUSY: this client has 2 runs .*maxRunsPerClient=2.*cancel_job.*--max-runs-per-client/,
    );
    const theirs = await call(b, "execute_javascript", { code: "1", async: true });
    expect(theirs.isError, text(theirs)).toBeFalsy();
    for (const id of jobs) await call(a, "cancel_job", { job_id: id });
  });
});

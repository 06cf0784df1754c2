// End to end over stdio: the server started with --allow-net, --deny-net and --net-header; a
// sandbox narrowed by create_sandbox's `net`; each run's network record in the structured result
// and its text; the header seen by the loopback server and never by the guest.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

const KEY = "mcp-boundary-secret";
const TOKEN = "mcp-flag-secret-13579";
const OWN = "mcp-sandbox-secret-24680";
const seen: { url: string; key: string | undefined; auth?: string | undefined }[] = [];
const site = http.createServer((req, res) => {
  seen.push({
    url: req.url ?? "",
    key: req.headers["x-key"] as string | undefined,
    auth: req.headers.authorization,
  });
  // An echo of the credential, as a debugging endpoint gives it.
  res.end(
    `hello from ${req.url}${req.headers.authorization ? ` as ${req.headers.authorization}` : ""}`,
  );
});
let port = 0;
let server: McpHandle;

beforeAll(async () => {
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
  port = (site.address() as AddressInfo).port;
  server = await stdioServer(
    [
      `--allow-net=127.0.0.1:${port},example.invalid`,
      "--deny-net=blocked.invalid",
      `--net-header=127.0.0.1:${port}=X-Key:POLYBOX_TEST_NET_KEY`,
      `--net-secret=POLYBOX_TEST_TOKEN@127.0.0.1:${port}`,
      "--pool=python=0,javascript=1,typescript=0,bash=0,ruby=0,wasm=0",
    ],
    { POLYBOX_TEST_NET_KEY: KEY, POLYBOX_TEST_TOKEN: TOKEN },
  );
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
  await new Promise((r) => site.close(r));
});

describe("the guest's network over MCP", () => {
  it("--net-secret and create_sandbox's secrets: the code holds placeholders, the host gets the values, no answer holds them", async () => {
    const created = await call(server.client, "create_sandbox", {
      secrets: [{ name: "OWN_TOKEN", value: OWN, hosts: [`127.0.0.1:${port}`] }],
    });
    expect(created.isError, text(created)).toBeFalsy();
    const sandbox_id = created.structuredContent!.sandbox_id as string;
    const r = await call(server.client, "execute_code", {
      sandbox_id,
      language: "bash",
      code: `curl -sS -H "Authorization: $POLYBOX_TEST_TOKEN" http://127.0.0.1:${port}/flag; echo
curl -sS -H "Authorization: $OWN_TOKEN" http://127.0.0.1:${port}/own; echo
env | grep -c '^[A-Z_]*TOKEN=POLYBOX_SECRET_'`,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const out = r.structuredContent!.stdout as string;
    expect(out).toMatch(/^hello from \/flag as POLYBOX_SECRET_POLYBOX_TEST_TOKEN_[0-9a-f]{32}\n/);
    expect(out).toMatch(/\nhello from \/own as POLYBOX_SECRET_OWN_TOKEN_[0-9a-f]{32}\n2\n$/);
    expect(seen.find((s) => s.url === "/flag")?.auth).toBe(TOKEN);
    expect(seen.find((s) => s.url === "/own")?.auth).toBe(OWN);
    const status = await call(server.client, "get_sandbox_status", { sandbox_id });
    for (const answer of [created, r, status]) {
      expect(JSON.stringify(answer)).not.toContain(TOKEN);
      expect(JSON.stringify(answer)).not.toContain(OWN);
    }
    const bad = await call(server.client, "create_sandbox", {
      secrets: [{ name: "X", value: "long-enough-value", hosts: ["elsewhere.invalid"] }],
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/elsewhere\.invalid/);
    await call(server.client, "close_sandbox", { sandbox_id });
  });

  it("the run tools' descriptions name the granted hosts and each language's client", async () => {
    const { tools } = await server.client.listTools();
    const js = tools.find((t) => t.name === "execute_javascript")!;
    expect(js.description).toContain(`to 127.0.0.1:${port}, example.invalid only`);
    expect(js.description).toContain("curl (Bash)");
    expect(js.annotations?.openWorldHint).toBe(true);
  });

  it("a run's requests are listed in its result, allowed and refused", async () => {
    const r = await call(server.client, "execute_javascript", {
      code: `const a = await (await fetch("http://127.0.0.1:${port}/mcp")).text();
let b; try { await fetch("http://127.0.0.1:1/"); } catch (e) { b = e.message }
[a, b, typeof process.env.POLYBOX_TEST_NET_KEY]`,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.value).toContain("hello from /mcp");
    expect(s.value).toContain("network access to 127.0.0.1:1 is not granted");
    expect(s.value).toContain("'undefined'");
    expect(s.network).toEqual([
      { method: "GET", host: `127.0.0.1:${port}`, status: 200, bytes_out: 0, bytes_in: 15 },
      {
        method: "GET",
        host: "127.0.0.1:1",
        status: null,
        bytes_out: 0,
        bytes_in: 0,
        denied: expect.stringContaining("--allow-net=127.0.0.1"),
      },
    ]);
    expect(text(r)).toContain(`network: GET 127.0.0.1:${port} → 200, 0 bytes out, 15 in`);
    expect(text(r)).toContain("network: GET 127.0.0.1:1 → refused:");
    expect(seen.find((x) => x.url === "/mcp")?.key).toBe(KEY);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it("create_sandbox narrows the grant, and refuses one wider than the server's", async () => {
    const made = await call(server.client, "create_sandbox", { net: ["example.invalid"] });
    expect(made.isError, text(made)).toBeFalsy();
    const sandbox_id = made.structuredContent?.sandbox_id;
    const r = await call(server.client, "execute_code", {
      sandbox_id,
      language: "javascript",
      code: `try { await fetch("http://127.0.0.1:${port}/narrowed") } catch (e) { e.message }`,
    });
    expect(r.structuredContent?.value).toContain(
      `network access to 127.0.0.1:${port} is not granted`,
    );
    expect(seen.some((x) => x.url === "/narrowed")).toBe(false);
    const wider = await call(server.client, "create_sandbox", { net: ["elsewhere.invalid"] });
    expect(wider.isError).toBe(true);
    expect(text(wider)).toContain("PERMISSION_DENIED");
    expect(text(wider)).toContain("--allow-net=elsewhere.invalid");
    await call(server.client, "close_sandbox", { sandbox_id });
  });
});

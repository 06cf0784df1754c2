// get_sandbox_status over MCP when a client has many sandboxes: the listing comes in pages
// (limit, default 50; next_cursor to follow), each page within --max-response, and following
// the cursors lists every sandbox once. The named-sandbox cap answers with its typed error.

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

// No warm interpreters: nothing here runs code.
const COLD = "--pool=python=0,javascript=0,typescript=0,bash=0,ruby=0,wasm=0";

let dataDir: string;
let server: McpHandle | null = null;

beforeEach(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "polybox-status-paging-"));
});

afterEach(async () => {
  await server?.close().catch(() => undefined);
  server = null;
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(...args: string[]): Promise<McpHandle> {
  server = await stdioServer([`--data-dir=${dataDir}`, COLD, ...args]);
  return server;
}

function ok(r: Awaited<ReturnType<typeof call>>) {
  expect(r.isError, text(r)).toBeFalsy();
  return r.structuredContent!;
}

interface Page {
  sandboxes: { sandbox_id: string }[];
  stored: { sandbox_id: string; name: string }[];
  next_cursor: string | null;
}

/** A listing's answer, checked as `ok` checks it. */
function page(r: Awaited<ReturnType<typeof call>>): Page {
  return ok(r) as unknown as Page;
}

/** Every page of the listing, from the first, following next_cursor. */
async function allPages(s: McpHandle, limit?: number): Promise<{ pages: Page[]; bytes: number[] }> {
  const pages: Page[] = [];
  const bytes: number[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const r = await call(s.client, "get_sandbox_status", {
      ...(cursor !== undefined ? { cursor } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    const listed = page(r);
    pages.push(listed);
    bytes.push(Buffer.byteLength(JSON.stringify(r)));
    if (listed.next_cursor === null) return { pages, bytes };
    cursor = listed.next_cursor;
  }
  throw new Error("the cursor never ended");
}

const ids = (pages: Page[]) =>
  pages.flatMap((p) => [...p.sandboxes, ...p.stored].map((x) => x.sandbox_id));

describe("get_sandbox_status lists in pages", () => {
  it("50 at a time by default, or `limit`; the cursors lead through every sandbox once", async () => {
    const s = await start();
    const made: string[] = [];
    // 60 named ones kept on disk (closed), 5 open, 3 of them ephemeral.
    for (let i = 0; i < 62; i++) {
      const id: string = ok(
        await call(s.client, "create_sandbox", { name: `kept-${String(i).padStart(2, "0")}` }),
      ).sandbox_id;
      made.push(id);
      if (i < 60) ok(await call(s.client, "close_sandbox", { sandbox_id: id }));
    }
    for (let i = 0; i < 3; i++)
      made.push(ok(await call(s.client, "create_sandbox", {})).sandbox_id);

    const first = page(await call(s.client, "get_sandbox_status", {}));
    expect(first.sandboxes.length + first.stored.length).toBe(50);
    // Open ones first.
    expect(first.sandboxes).toHaveLength(5);
    expect(first.next_cursor).toEqual(expect.any(String));

    const byDefault = await allPages(s);
    expect(byDefault.pages.map((p) => p.sandboxes.length + p.stored.length)).toEqual([50, 15]);
    expect(ids(byDefault.pages).sort()).toEqual([...made].sort());

    const small = await allPages(s, 7);
    expect(small.pages).toHaveLength(10);
    expect(small.pages.slice(0, -1).every((p) => p.sandboxes.length + p.stored.length === 7)).toBe(
      true,
    );
    const listed = ids(small.pages);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.sort()).toEqual([...made].sort());

    // A page of one sandbox is not paged.
    const one = ok(await call(s.client, "get_sandbox_status", { sandbox_id: made[61] }));
    expect(one).toMatchObject({ next_cursor: null, stored: [] });

    const bad = await call(s.client, "get_sandbox_status", { cursor: "not-a-cursor" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^INVALID_ARGUMENT: cursor is not one get_sandbox_status gave/);
  }, 120_000);

  it("a cursor survives sandboxes opening and closing between pages", async () => {
    const s = await start();
    const names = ["a", "b", "c", "d", "e", "f"];
    const byName = new Map<string, string>();
    for (const name of names) {
      const id: string = ok(await call(s.client, "create_sandbox", { name })).sandbox_id;
      byName.set(name, id);
      ok(await call(s.client, "close_sandbox", { sandbox_id: id }));
    }
    const first = page(await call(s.client, "get_sandbox_status", { limit: 3 }));
    expect(first.stored.map((n) => n.name)).toEqual(["a", "b", "c"]);
    // "a" is deleted and "z" made before the next page: the rest is as it is now.
    ok(await call(s.client, "create_sandbox", { name: "a" }));
    const a = ok(await call(s.client, "get_sandbox_status", {})).sandboxes[0].sandbox_id;
    ok(await call(s.client, "close_sandbox", { sandbox_id: a, delete: true }));
    const z: string = ok(await call(s.client, "create_sandbox", { name: "z" })).sandbox_id;
    ok(await call(s.client, "close_sandbox", { sandbox_id: z }));
    const rest = page(
      await call(s.client, "get_sandbox_status", { limit: 3, cursor: first.next_cursor }),
    );
    expect(rest.stored.map((n) => n.name)).toEqual(["d", "e", "f"]);
    const last = page(
      await call(s.client, "get_sandbox_status", { limit: 3, cursor: rest.next_cursor }),
    );
    expect(last.stored.map((n) => n.name)).toEqual(["z"]);
    expect(last.next_cursor).toBeNull();
  }, 60_000);

  it("keeps each page within --max-response, however many are asked for", async () => {
    const s = await start("--max-response=16K");
    const made: string[] = [];
    for (let i = 0; i < 40; i++)
      made.push(ok(await call(s.client, "create_sandbox", {})).sandbox_id);
    const { pages, bytes } = await allPages(s, 500);
    expect(pages.length).toBeGreaterThan(1);
    for (const b of bytes) expect(b).toBeLessThanOrEqual(16 * 1024);
    // Nothing was cut to fit: every page is whole, and together they list every sandbox.
    for (const p of pages) expect(JSON.stringify(p)).not.toMatch(/\[cut:/);
    expect(ids(pages).sort()).toEqual([...made].sort());
  }, 120_000);
});

describe("the named-sandbox cap over MCP", () => {
  it("refuses a new name past --max-named-sandboxes with TOO_MANY_SANDBOXES; a delete frees a place", async () => {
    const s = await start("--max-named-sandboxes=2");
    const first: string = ok(await call(s.client, "create_sandbox", { name: "first" })).sandbox_id;
    const second: string = ok(
      await call(s.client, "create_sandbox", { name: "second" }),
    ).sandbox_id;
    ok(await call(s.client, "close_sandbox", { sandbox_id: second }));
    const refused = await call(s.client, "create_sandbox", { name: "third" });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /^TOO_MANY_SANDBOXES: this client keeps 2 named sandboxes, open or not, .*maxNamedSandboxesPerClient=2/,
    );
    expect(ok(await call(s.client, "get_sandbox_status", {}))).toMatchObject({
      max_named_sandboxes_per_client: 2,
    });
    ok(await call(s.client, "close_sandbox", { sandbox_id: first, delete: true }));
    ok(await call(s.client, "create_sandbox", { name: "third" }));
  }, 60_000);
});

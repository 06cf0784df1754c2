// State that outlives the server, end to end over MCP: a named sandbox's files survive a
// restart and a SIGKILL in the middle of writes (every acknowledged write whole), snapshots
// restore and fork, quotas and bad ids answer with typed errors, and an id that is gone says
// whether it expired or was lost with an earlier process. Each test has a data dir of its own.

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  call,
  type HttpHandle,
  httpServer,
  type McpHandle,
  stdioServer,
  text,
} from "../helpers/mcp-client.js";

// No warm interpreters: these tests start many servers and run little code.
const COLD = "--pool=python=0,javascript=0,typescript=0,bash=0,ruby=0,wasm=0";

let dataDir: string;
const servers: (McpHandle | HttpHandle)[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "polybox-mcp-state-"));
});

afterEach(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(...args: string[]): Promise<McpHandle> {
  const s = await stdioServer([`--data-dir=${dataDir}`, COLD, ...args]);
  servers.push(s);
  return s;
}

async function stop(s: McpHandle): Promise<void> {
  servers.splice(servers.indexOf(s), 1);
  await s.close();
}

function ok(r: Awaited<ReturnType<typeof call>>) {
  expect(r.isError, text(r)).toBeFalsy();
  return r.structuredContent!;
}

describe("named sandboxes across restarts", () => {
  it("reopens with every file byte for byte, and the first run says its state was lost", async () => {
    const binary = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7 + 3) % 256));
    let s = await start();
    const made = ok(
      await call(s.client, "create_sandbox", { name: "project", language: "javascript" }),
    );
    const id: string = made.sandbox_id;
    expect(made.sandbox.name).toBe("project");
    ok(
      await call(s.client, "write_file", { sandbox_id: id, path: "src/a.txt", content: "héllo\n" }),
    );
    ok(
      await call(s.client, "write_file", {
        sandbox_id: id,
        path: "bin/data.bin",
        content: binary.toString("base64"),
        encoding: "base64",
      }),
    );
    const ran = ok(
      await call(s.client, "execute_code", {
        sandbox_id: id,
        code: "globalThis.counter = 5; require('fs').writeFileSync('made-by-guest.txt', 'guest'); 1",
      }),
    );
    expect(ran.status).toBe("ok");
    await stop(s);

    s = await start();
    // Stored, not open: the status lists it by name.
    const status = ok(await call(s.client, "get_sandbox_status", {}));
    expect(status.sandboxes).toEqual([]);
    expect(status.stored).toMatchObject([{ name: "project", sandbox_id: id }]);
    const again = ok(await call(s.client, "create_sandbox", { name: "project" }));
    expect(again.sandbox_id).toBe(id);
    const files = ok(await call(s.client, "list_files", { sandbox_id: id })).files.map(
      (f: { path: string }) => f.path,
    );
    expect(files).toEqual(["bin", "bin/data.bin", "made-by-guest.txt", "src", "src/a.txt"]);
    expect(
      ok(await call(s.client, "read_file", { sandbox_id: id, path: "src/a.txt" })).content,
    ).toBe("héllo\n");
    const bin = ok(await call(s.client, "read_file", { sandbox_id: id, path: "bin/data.bin" }));
    expect(Buffer.from(bin.content, "base64").equals(binary)).toBe(true);
    const first = ok(
      await call(s.client, "execute_javascript", {
        sandbox_id: id,
        code: "typeof globalThis.counter",
      }),
    );
    expect(first.state_lost).toBe(true);
    expect(first.value).toBe("'undefined'");
    expect(first.notes.join(" ")).toMatch(/reopened.*interpreters are new/);

    // close_sandbox unloads (files kept); delete: true destroys.
    ok(await call(s.client, "close_sandbox", { sandbox_id: id }));
    const reopened = ok(await call(s.client, "create_sandbox", { name: "project" }));
    expect(reopened.sandbox.file_count).toBe(3);
    ok(await call(s.client, "close_sandbox", { sandbox_id: id, delete: true }));
    expect(ok(await call(s.client, "get_sandbox_status", {})).stored).toEqual([]);
    const bad = await call(s.client, "create_sandbox", { name: "../escape" });
    expect(text(bad)).toMatch(/^INVALID_ARGUMENT: a sandbox name is/);
  });

  it("keeps every acknowledged write whole when the server is killed mid-write", async () => {
    const rounds = 10;
    const acked = new Map<string, string>();
    const sent = new Map<string, Set<string>>();
    for (let round = 0; round < rounds; round++) {
      const s = await start();
      const id: string = ok(await call(s.client, "create_sandbox", { name: "crashy" })).sandbox_id;
      // Writes of distinct sizes, some to one shared path, all in flight at once.
      const writes = Array.from({ length: 24 }, (_, i) => {
        const file = i % 6 === 0 ? "shared.txt" : `r${round}/f${i}.txt`;
        const content = `${round}:${i}:`.padEnd(
          2000 + ((i * 7919) % 60_000),
          String.fromCharCode(97 + (i % 26)),
        );
        if (!sent.has(file)) sent.set(file, new Set());
        sent.get(file)!.add(content);
        return call(s.client, "write_file", { sandbox_id: id, path: file, content }).then(
          (r) => {
            if (!r.isError) acked.set(file, content);
          },
          () => undefined,
        );
      });
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 150)));
      process.kill(s.pid!, "SIGKILL");
      await Promise.allSettled(writes);
      servers.splice(servers.indexOf(s), 1);
      await s.close().catch(() => undefined);
    }
    const s = await start();
    const id: string = ok(await call(s.client, "create_sandbox", { name: "crashy" })).sandbox_id;
    const listed = ok(await call(s.client, "list_files", { sandbox_id: id })).files as {
      path: string;
      type: string;
    }[];
    const present = new Set(listed.filter((f) => f.type === "file").map((f) => f.path));
    expect(acked.size).toBeGreaterThan(0);
    for (const [file, content] of acked) {
      expect(present.has(file), `${file} was acknowledged`).toBe(true);
      const got = ok(await call(s.client, "read_file", { sandbox_id: id, path: file })).content;
      // The shared path may hold a later write that was sent but not acknowledged; never a torn one.
      if (file === "shared.txt") expect(sent.get(file)!.has(got)).toBe(true);
      else expect(got).toBe(content);
    }
    for (const file of present) {
      const got = ok(await call(s.client, "read_file", { sandbox_id: id, path: file })).content;
      expect(sent.get(file)?.has(got), `${file} holds what was sent`).toBe(true);
    }
  }, 300_000);
});

describe("snapshots over MCP", () => {
  it("restore, fork, list and delete; a fork diverges without touching its parent", async () => {
    const s = await start("--max-snapshots=2");
    const id: string = ok(await call(s.client, "create_sandbox", { name: "base" })).sandbox_id;
    ok(await call(s.client, "write_file", { sandbox_id: id, path: "v.txt", content: "one" }));
    const snap = ok(await call(s.client, "snapshot_sandbox", { sandbox_id: id, label: "first" }));
    expect(snap.snapshot).toMatchObject({
      label: "first",
      files: 1,
      bytes: 3,
      sandbox_name: "base",
    });
    ok(await call(s.client, "write_file", { sandbox_id: id, path: "v.txt", content: "two" }));
    ok(await call(s.client, "write_file", { sandbox_id: id, path: "extra.txt", content: "x" }));

    const fork = ok(
      await call(s.client, "fork_sandbox", { snapshot_id: snap.snapshot_id, name: "branch" }),
    );
    const live = ok(await call(s.client, "fork_sandbox", { sandbox_id: id }));
    expect(live.sandbox.name).toBeNull();
    ok(
      await call(s.client, "write_file", {
        sandbox_id: fork.sandbox_id,
        path: "v.txt",
        content: "branch",
      }),
    );
    const read = async (sid: string, p: string) =>
      ok(await call(s.client, "read_file", { sandbox_id: sid, path: p })).content;
    expect(await read(id, "v.txt")).toBe("two");
    expect(await read(live.sandbox_id, "v.txt")).toBe("two");
    expect(await read(fork.sandbox_id, "v.txt")).toBe("branch");

    const restored = ok(
      await call(s.client, "restore_sandbox", { sandbox_id: id, snapshot_id: snap.snapshot_id }),
    );
    expect(restored.snapshot.snapshot_id).toBe(snap.snapshot_id);
    expect(await read(id, "v.txt")).toBe("one");
    expect(text(await call(s.client, "read_file", { sandbox_id: id, path: "extra.txt" }))).toMatch(
      /^FILE_NOT_FOUND/,
    );
    const after = ok(await call(s.client, "execute_bash", { sandbox_id: id, code: "cat v.txt" }));
    expect(after.stdout).toBe("one");
    expect(after.state_lost).toBe(true);

    ok(await call(s.client, "snapshot_sandbox", { sandbox_id: id }));
    const third = await call(s.client, "snapshot_sandbox", { sandbox_id: id });
    expect(text(third)).toMatch(
      /^QUOTA_EXCEEDED: .*maxSnapshotsPerSandbox=2.*delete_snapshot.*--max-snapshots=2/,
    );
    const listed = ok(await call(s.client, "list_snapshots", { sandbox_id: id })).snapshots;
    expect(listed).toHaveLength(2);
    ok(await call(s.client, "delete_snapshot", { snapshot_id: snap.snapshot_id }));
    for (const [tool, args] of [
      ["restore_sandbox", { sandbox_id: id, snapshot_id: snap.snapshot_id }],
      ["restore_sandbox", { sandbox_id: id, snapshot_id: "../../etc/passwd" }],
      ["fork_sandbox", { snapshot_id: "snap-nope" }],
      ["delete_snapshot", { snapshot_id: snap.snapshot_id }],
    ] as const) {
      const r = await call(s.client, tool, args);
      expect(text(r), tool).toMatch(/^SNAPSHOT_NOT_FOUND: .*list_snapshots/);
    }
    const both = await call(s.client, "fork_sandbox", { sandbox_id: id, snapshot_id: "x" });
    expect(text(both)).toMatch(/^INVALID_ARGUMENT/);
  });

  it("a snapshot keeps the JavaScript interpreter: restore and fork bring its variables back", async () => {
    const s = await start();
    const id: string = ok(await call(s.client, "create_sandbox", {})).sandbox_id;
    ok(
      await call(s.client, "execute_javascript", {
        sandbox_id: id,
        code: "let total = 40; const seen = new Set(['a']); const add = (n) => (total += n);",
      }),
    );
    ok(await call(s.client, "execute_bash", { sandbox_id: id, code: "x=1" }));
    const snap = ok(await call(s.client, "snapshot_sandbox", { sandbox_id: id }));
    expect(snap.snapshot.state.javascript).toMatchObject({ kept: "memory" });
    expect(snap.snapshot.state.bash).toMatchObject({ kept: "none" });
    ok(await call(s.client, "execute_javascript", { sandbox_id: id, code: "total = 0" }));
    const restored = await call(s.client, "restore_sandbox", {
      sandbox_id: id,
      snapshot_id: snap.snapshot_id,
    });
    expect(text(restored)).toMatch(/javascript: memory, bash: none/);
    const back = ok(
      await call(s.client, "execute_javascript", {
        sandbox_id: id,
        code: "add(2); [total, seen.has('a')].join()",
      }),
    );
    expect(back.value).toBe("'42,true'");
    expect(back.state_lost).toBeFalsy();
    expect(back.notes.join(" ")).toMatch(/javascript interpreter was restored whole/);
    const fork = ok(await call(s.client, "fork_sandbox", { snapshot_id: snap.snapshot_id }));
    const forked = ok(
      await call(s.client, "execute_javascript", { sandbox_id: fork.sandbox_id, code: "add(1)" }),
    );
    expect(forked.value).toBe("41");
    const parent = ok(
      await call(s.client, "execute_javascript", { sandbox_id: id, code: "total" }),
    );
    expect(parent.value).toBe("42");
  });

  it("the data dir quota stops growth with a typed error naming its flag", async () => {
    const s = await start("--data-quota=1M");
    const id: string = ok(await call(s.client, "create_sandbox", { name: "full" })).sandbox_id;
    const big = "z".repeat(600 * 1024);
    ok(await call(s.client, "write_file", { sandbox_id: id, path: "a.txt", content: big }));
    const over = await call(s.client, "write_file", {
      sandbox_id: id,
      path: "b.txt",
      content: big,
    });
    expect(text(over)).toMatch(
      /^QUOTA_EXCEEDED: the data directory .*dataDirQuotaBytes.*--data-quota/,
    );
    // A guest's write past it is refused like the workspace quota, as a result.
    const run = ok(
      await call(s.client, "execute_javascript", {
        sandbox_id: id,
        code: `require("fs").writeFileSync("c.bin", "z".repeat(700000))`,
      }),
    );
    expect(run.status).toBe("workspace_limit");
    expect(run.message).toMatch(/dataDirQuotaBytes/);
  });
});

describe("ids that are gone", () => {
  it("says SANDBOX_LOST for an ephemeral sandbox of an earlier server, SANDBOX_EXPIRED past its lifetime", async () => {
    let s = await start();
    const lost: string = ok(await call(s.client, "create_sandbox", {})).sandbox_id;
    await stop(s);
    s = await start("--max-lifetime=2s");
    const r = await call(s.client, "list_files", { sandbox_id: lost });
    expect(text(r)).toMatch(
      /^SANDBOX_LOST: sandbox .* was lost: .*earlier server process.*create_sandbox/,
    );
    const never = await call(s.client, "list_files", {
      sandbox_id: "00000000-0000-4000-8000-000000000000",
    });
    expect(text(never)).toMatch(/^SANDBOX_NOT_FOUND/);
    const short: string = ok(await call(s.client, "create_sandbox", {})).sandbox_id;
    await new Promise((r) => setTimeout(r, 3500));
    expect(text(await call(s.client, "list_files", { sandbox_id: short }))).toMatch(
      /^SANDBOX_EXPIRED: .*maximum lifetime of 2 s \(maxLifetimeMs\).*--max-lifetime/,
    );
  });
});

describe("named sandboxes and snapshots between clients", () => {
  it("one token cannot reach another's named sandbox or snapshot; a tokenless session cannot name", async () => {
    const server = await httpServer([`--data-dir=${dataDir}`, COLD, "--token=tok-a,tok-b"]);
    servers.push(server);
    const a = server.client;
    const b = await server.connect("tok-b");
    const mine = ok(await call(a, "create_sandbox", { name: "same" })).sandbox_id;
    ok(await call(a, "write_file", { sandbox_id: mine, path: "secret.txt", content: "a's" }));
    const snap = ok(await call(a, "snapshot_sandbox", { sandbox_id: mine })).snapshot_id;
    // The same name is another sandbox for b: empty, with an id of its own.
    const theirs = ok(await call(b, "create_sandbox", { name: "same" }));
    expect(theirs.sandbox_id).not.toBe(mine);
    expect(theirs.sandbox.file_count).toBe(0);
    expect(text(await call(b, "fork_sandbox", { snapshot_id: snap }))).toMatch(
      /^SNAPSHOT_NOT_FOUND/,
    );
    expect(
      text(await call(b, "restore_sandbox", { sandbox_id: theirs.sandbox_id, snapshot_id: snap })),
    ).toMatch(/^SNAPSHOT_NOT_FOUND/);
    expect(ok(await call(b, "list_snapshots", {})).snapshots).toEqual([]);
    expect(text(await call(b, "snapshot_sandbox", { sandbox_id: mine }))).toMatch(
      /^SANDBOX_NOT_FOUND/,
    );
    expect(ok(await call(b, "get_sandbox_status", {})).stored).toEqual([]);

    const open = await httpServer([`--data-dir=${dataDir}`, COLD]);
    servers.push(open);
    const named = await call(open.client, "create_sandbox", { name: "same" });
    expect(text(named)).toMatch(/^PERMISSION_DENIED: named sandboxes need a client identity/);
  });
});

// How many named sandboxes one client may keep, at the library level: a scope's named sandboxes
// in the data directory, open or not, are capped (maxNamedSandboxesPerClient, default 100) with a
// typed error, racing creates cannot pass the cap, deleting one frees a place, and what each
// named sandbox holds besides its files counts against the data directory's quota.

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Caller, SandboxManager, SandboxService } from "../../dist/index.js";
import { type Runtime, testRuntime } from "../helpers/runtime.js";

const COLD = { python: 0, javascript: 0, bash: 0, ruby: 0, wasm: 0 };

let dataDir: string;
let rt: Runtime;
let service: SandboxService;

const alice: Caller = { owner: "alice-connection", scope: "alice" };
const bob: Caller = { owner: "bob-connection", scope: "bob" };

/** The named sandboxes' directories in the data dir, every scope's. */
function namedDirs(): string[] {
  const scopes = path.join(dataDir, "scopes");
  return readdirSync(scopes).flatMap((scope) => {
    const base = path.join(scopes, scope, "sandboxes");
    try {
      return readdirSync(base);
    } catch {
      return [];
    }
  });
}

beforeEach(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "polybox-named-cap-"));
  rt = await testRuntime({ dataDir, pool: COLD });
});

afterEach(async () => {
  await service?.close();
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("maxNamedSandboxesPerClient", () => {
  it("is 100 unless set, and must be a positive integer", () => {
    const m = new SandboxManager({ runtime: rt, idleTimeoutMs: 0 });
    expect(m.maxNamedSandboxesPerClient).toBe(100);
    for (const bad of [0, -1, 2.5])
      expect(
        () => new SandboxManager({ runtime: rt, maxNamedSandboxesPerClient: bad }),
      ).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("refuses a new name past the cap, open or closed ones alike; a deleted one frees a place", async () => {
    service = new SandboxService({ runtime: rt, maxNamedSandboxesPerClient: 3 });
    const one = await service.createSandbox(alice, { name: "one" });
    await service.createSandbox(alice, { name: "two" });
    const three = await service.createSandbox(alice, { name: "three" });
    // Closed, it is kept on disk: it still counts.
    await service.closeSandbox(alice, three.id);

    const refused = service.createSandbox(alice, { name: "four" });
    await expect(refused).rejects.toMatchObject({
      code: "TOO_MANY_SANDBOXES",
      details: { limit: "maxNamedSandboxesPerClient", value: 3 },
    });
    await expect(refused).rejects.toThrow(
      /this client keeps 3 named sandboxes, open or not, .*\(maxNamedSandboxesPerClient=3\); delete one first/,
    );
    // A fork to a new name is a new named sandbox too.
    await expect(
      service.forkSandbox(alice, { sandboxId: one.id }, { name: "fork" }),
    ).rejects.toMatchObject({
      code: "TOO_MANY_SANDBOXES",
      details: { limit: "maxNamedSandboxesPerClient" },
    });
    // Nothing is left of the names refused.
    expect(namedDirs().sort()).toEqual(["one", "three", "two"]);

    // Reopening one it has is not one more; nor is an ephemeral sandbox; nor another client's.
    const again = await service.createSandbox(alice, { name: "three" });
    expect(again.id).toBe(three.id);
    await service.createSandbox(alice, {});
    await service.createSandbox(bob, { name: "four" });

    await service.closeSandbox(alice, one.id, { delete: true });
    const four = await service.createSandbox(alice, { name: "four" });
    expect(four.name).toBe("four");
    await expect(service.createSandbox(alice, { name: "five" })).rejects.toMatchObject({
      code: "TOO_MANY_SANDBOXES",
    });
  });

  it("holds when many creates race", async () => {
    service = new SandboxService({ runtime: rt, maxNamedSandboxesPerClient: 4 });
    await service.createSandbox(alice, { name: "first" });
    const tries = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => service.createSandbox(alice, { name: `racer-${i}` })),
    );
    const made = tries.filter((t) => t.status === "fulfilled");
    expect(made).toHaveLength(3);
    for (const t of tries)
      if (t.status === "rejected") expect(t.reason).toMatchObject({ code: "TOO_MANY_SANDBOXES" });
    expect(await service.storedSandboxes(alice)).toEqual([]);
    expect(namedDirs()).toHaveLength(4);
  });
});

describe("the data directory's quota", () => {
  it("counts what a named sandbox holds besides its files", async () => {
    await rt.close();
    // Room for a few empty named sandboxes: each is three directories and its metadata.
    rt = await testRuntime({ dataDir, pool: COLD, dataDirQuotaBytes: 64 * 1024 });
    service = new SandboxService({ runtime: rt });
    const made: string[] = [];
    let refusal: unknown;
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      try {
        made.push((await service.createSandbox(alice, { name: `empty-${i}` })).id);
      } catch (error) {
        refusal = error;
      }
    }
    expect(refusal).toMatchObject({
      code: "QUOTA_EXCEEDED",
      details: { limit: "dataDirQuotaBytes" },
    });
    expect(made.length).toBeGreaterThan(1);
    expect(made.length).toBeLessThan(6);
    expect(namedDirs()).toHaveLength(made.length);
    // Deleting one gives its bytes back.
    await service.closeSandbox(alice, made[0]!, { delete: true });
    await service.createSandbox(alice, { name: "after-delete" });

    // A new process takes stock of the same bytes.
    await service.close();
    await rt.close();
    rt = await testRuntime({ dataDir, pool: COLD, dataDirQuotaBytes: 64 * 1024 });
    service = new SandboxService({ runtime: rt });
    await expect(service.createSandbox(alice, { name: "one-more" })).rejects.toMatchObject({
      code: "QUOTA_EXCEEDED",
      details: { limit: "dataDirQuotaBytes" },
    });
  });
});

// T22 another client's sandbox and jobs, through the library the MCP server is a thin adapter
// over: `SandboxService` with two callers. Alice plants a secret in a sandbox file and holds a
// running job; Mallory, who knows both ids, tries every service call on them. Each must fail
// exactly as a made-up id does, Alice must still reach her secret (so it was there for the
// taking), and per-client caps must leave Mallory room when Alice has filled hers.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, SandboxService } from "../../dist/index.js";
import {
  expectRuntimeAnswers,
  isPolyboxError,
  type Runtime,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let service: SandboxService;
const alice: Caller = { owner: "session:alice", account: "address:10.0.0.1" };
const mallory: Caller = { owner: "session:mallory", account: "address:10.0.0.2" };
const secret = `tenant-secret-${randomBytes(8).toString("hex")}`;
const MADE_UP = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  rt = await securityRuntime();
  service = new SandboxService({ runtime: rt, maxSandboxes: 6, maxSandboxesPerClient: 2 });
});

afterAll(async () => {
  await service?.close();
  await rt?.close();
});

/** The error a call fails with, its id replaced so that answers about two ids compare. */
async function refusal(call: () => unknown, id: string): Promise<string> {
  try {
    await call();
  } catch (error) {
    expect(isPolyboxError(error), String(error)).toBe(true);
    return `${(error as { code: string }).code}: ${id ? (error as Error).message.replaceAll(id, "<id>") : (error as Error).message}`;
  }
  throw new Error("the call was not refused");
}

describe("T22: another client's sandbox and jobs (library)", () => {
  it("T22: every sandbox and job call on another owner's id fails as on an unknown id", async () => {
    const box = await service.createSandbox(alice, { language: "python" });
    await service.writeFile(alice, box.id, "secret.txt", secret);
    const job = service.submit(alice, {
      language: "javascript",
      code: "let t = Date.now(); while (Date.now() - t < 60000) {}",
    });
    const calls: [string, (id: string) => unknown][] = [
      ["sandboxStatus", (id) => service.sandboxStatus(mallory, id)],
      ["languageFor", (id) => service.languageFor(mallory, id, undefined)],
      [
        "execute",
        (id) => service.execute(mallory, { language: "python", code: "1", sandboxId: id }),
      ],
      ["submit", (id) => service.submit(mallory, { language: "python", code: "1", sandboxId: id })],
      ["listFiles", (id) => service.listFiles(mallory, id)],
      ["readFile", (id) => service.readFile(mallory, id, "secret.txt")],
      ["writeFile", (id) => service.writeFile(mallory, id, "secret.txt", "overwritten")],
      ["uploadFile", (id) => service.uploadFile(mallory, id, "/etc/hostname")],
      ["installPackages", (id) => service.installPackages(mallory, id, ["six"])],
      ["closeSandbox", (id) => service.closeSandbox(mallory, id)],
    ];
    for (const [name, call] of calls) {
      const theirs = await refusal(() => call(box.id), box.id);
      expect(theirs, name).toMatch(/^SANDBOX_NOT_FOUND: /);
      expect(theirs, name).toBe(await refusal(() => call(MADE_UP), MADE_UP));
    }
    const jobCalls: [string, (id: string) => unknown][] = [
      ["jobStatus", (id) => service.jobStatus(mallory, id)],
      ["jobLogs", (id) => service.jobLogs(mallory, id)],
      ["cancelJob", (id) => service.cancelJob(mallory, id)],
    ];
    for (const [name, call] of jobCalls) {
      const theirs = await refusal(() => call(job.id), job.id);
      expect(theirs, name).toMatch(/^JOB_NOT_FOUND: /);
      expect(theirs, name).toBe(await refusal(() => call(MADE_UP), MADE_UP));
    }
    expect(service.sandboxStatus(mallory)).toEqual([]);
    expect(service.sandboxStatus(alice).map((s) => s.id)).toEqual([box.id]);
    expect(service.jobStatus(alice, job.id).finishedAt).toBeNull();
    expect((await service.cancelJob(alice, job.id)).status).toBe("cancelled");
    const read = await service.readFile(alice, box.id, "secret.txt");
    expect(read.text).toBe(secret);
    await service.closeSandbox(alice, box.id);
  });

  it("T22: one account's cap leaves the others room; a released owner's sandboxes close", async () => {
    const mine = [
      await service.createSandbox(alice),
      await service.createSandbox({ owner: "session:alice-2", account: alice.account! }),
    ];
    const over = await refusal(() => service.createSandbox(alice), "");
    expect(over).toMatch(/^TOO_MANY_SANDBOXES: this client has 2 sandboxes open/);
    const theirs = await service.createSandbox(mallory);
    expect(await service.releaseOwner(alice.owner, "its session ended")).toEqual([mine[0]!.id]);
    expect(await refusal(() => service.listFiles(alice, mine[0]!.id), "")).toMatch(
      /no longer exists: its session ended/,
    );
    await service.createSandbox(alice); // the place came back
    await service.closeSandbox(mallory, theirs.id);
    await expectRuntimeAnswers(rt);
  });
});

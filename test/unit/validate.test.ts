// Unit tier: the trusted side's checks on what the engine host sends back.
import { describe, expect, it } from "vitest";
import { validateHostEvent, validateResult } from "../../dist/protocol/validate.js";

const good = {
  status: "ok",
  stdout: "hi\n",
  stderr: "",
  exitCode: 0,
  value: "1",
  truncated: false,
  changes: {
    files: [{ path: "a.txt", data: new Uint8Array([1]), mtimeMs: 1 }],
    dirs: [],
    removed: [],
  },
};

describe("validateResult", () => {
  it("passes a well-formed result through", () => {
    expect(validateResult(good, 100)).toMatchObject({ status: "ok", stdout: "hi\n", value: "1" });
  });

  it("discards results with malformed fields or unsafe paths", () => {
    for (const bad of [
      { ...good, status: "pwned" },
      { ...good, exitCode: "0" },
      {
        ...good,
        changes: {
          files: [{ path: "../../etc/cron.d/x", data: new Uint8Array(), mtimeMs: 0 }],
          dirs: [],
          removed: [],
        },
      },
      { ...good, changes: { files: [], dirs: ["/abs"], removed: [] } },
      {
        ...good,
        changes: { files: [{ path: "a", data: "not bytes", mtimeMs: 0 }], dirs: [], removed: [] },
      },
      null,
    ]) {
      const r = validateResult(bad, 100);
      expect(r.status).toBe("error");
      expect(r.message).toMatch(/invalid result/);
      expect(r.changes.files).toHaveLength(0);
    }
  });

  it("keeps a run whose guest made a file the workspace cannot store, leaving that file out", () => {
    const r = validateResult(
      {
        ...good,
        changes: {
          files: [
            { path: "a\\b.txt", data: new Uint8Array([1]), mtimeMs: 1 },
            { path: `${"n".repeat(300)}`, data: new Uint8Array([1]), mtimeMs: 1 },
            { path: "kept.txt", data: new Uint8Array([2]), mtimeMs: 1 },
          ],
          dirs: ["dir\\x"],
          removed: [],
        },
      },
      100,
    );
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("hi\n");
    expect(r.changes.files.map((f) => f.path)).toEqual(["kept.txt"]);
    expect(r.changes.dirs).toEqual([]);
    expect(r.notes?.[0]).toMatch(/not kept in the workspace: "a\\\\b.txt", "n+…?"/);
  });

  it("enforces the output cap again on the trusted side", () => {
    const r = validateResult({ ...good, stdout: "x".repeat(1000) }, 100);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(100);
    expect(r.truncated).toBe(true);
  });
});

describe("validateHostEvent", () => {
  it("drops unknown or malformed events", () => {
    expect(
      validateHostEvent({ type: "output", id: 1, stream: "stdout", text: "x" }),
    ).not.toBeNull();
    expect(validateHostEvent({ type: "output", id: 1, stream: "stdin", text: "x" })).toBeNull();
    expect(validateHostEvent({ type: "exec", cmd: "rm -rf /" })).toBeNull();
    expect(validateHostEvent("ready")).toBeNull();
  });
});

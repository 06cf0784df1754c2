// Bad input gets a typed PolyboxError with a stable code and a message that says what is allowed,
// and never disturbs another sandbox.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PolyboxError, type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
let bystander: Sandbox;
beforeAll(async () => {
  runtime = await testRuntime();
  bystander = await Sandbox.create({ runtime });
  await bystander.run("python", "state = 'intact'");
  await bystander.files.write("keep.txt", "intact");
});
afterAll(async () => {
  await bystander.close();
  await runtime.close();
});

async function rejection(p: Promise<unknown>): Promise<PolyboxError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PolyboxError);
  return error as PolyboxError;
}

describe("bad input", () => {
  it("unknown language lists the supported ones", async () => {
    await using sb = await Sandbox.create({ runtime });
    const e = await rejection(sb.run("cobol" as never, "DISPLAY 'HI'"));
    expect(e.code).toBe("UNSUPPORTED_LANGUAGE");
    expect(e.message).toMatch(/python, javascript, typescript, bash/);
  });

  it("non-string code, oversize code and unknown options", async () => {
    await using sb = await Sandbox.create({ runtime, limits: { maxCodeBytes: 100 } });
    expect((await rejection(sb.run("python", 42 as never))).code).toBe("INVALID_ARGUMENT");
    const big = await rejection(sb.run("python", "#".repeat(101)));
    expect(big.code).toBe("CODE_TOO_LARGE");
    expect(big.message).toMatch(/maxCodeBytes=100/);
    expect((await rejection(sb.run("python", "1", { timeout: 5 } as never))).message).toMatch(
      /unknown run option "timeout"/,
    );
    expect((await rejection(sb.run("python", "1", { timeoutMs: -1 }))).code).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await rejection(sb.run("python", "1", { env: { A: 1 } } as never))).code).toBe(
      "INVALID_ARGUMENT",
    );
  });

  it("paths that leave the workspace", async () => {
    await using sb = await Sandbox.create({ runtime });
    for (const p of ["../x", "/etc/passwd", "a/../../b"]) {
      expect((await rejection(sb.files.write(p, "x"))).code).toBe("PATH_OUTSIDE_WORKSPACE");
      expect((await rejection(sb.files.read(p))).code).toBe("PATH_OUTSIDE_WORKSPACE");
    }
    expect((await rejection(sb.files.read("missing.txt"))).code).toBe("FILE_NOT_FOUND");
  });

  it("limits above the runtime's ceiling", async () => {
    const e = await rejection(Sandbox.create({ runtime, limits: { memoryMb: 1_000_000 } }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/memoryMb/);
  });

  it("a closed sandbox", async () => {
    const sb = await Sandbox.create({ runtime });
    await sb.close();
    expect((await rejection(sb.run("python", "1"))).code).toBe("SANDBOX_CLOSED");
    expect((await rejection(sb.files.write("a", "b"))).code).toBe("SANDBOX_CLOSED");
  });

  it("left the bystander sandbox untouched", async () => {
    expect((await bystander.run("python", "state")).value).toBe("'intact'");
    expect(await bystander.files.read("keep.txt", "utf8")).toBe("intact");
  });
});

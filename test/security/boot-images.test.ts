// T32: what fresh interpreters boot from. Python restores the Pyodide memory snapshot (with the
// runner's modules imported) and JavaScript the QuickJS boot image, both built by processes that
// run no guest code. Neither may carry one tenant's draws of randomness into another's, and
// nothing a guest does to its interpreter reaches the image the next one restores.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSandbox, type Runtime, securityRuntime } from "../helpers/security-env.js";

let rt: Runtime;

beforeAll(async () => {
  rt = await securityRuntime({ pool: { python: 1, javascript: 1, bash: 0, ruby: 0, wasm: 0 } });
});

afterAll(async () => {
  await rt?.close();
});

async function fresh(language: "python" | "javascript", code: string): Promise<string> {
  const sb = await newSandbox(rt);
  try {
    const r = await sb.run(language, code);
    expect(r.status, r.stderr).toBe("ok");
    return r.stdout.trim();
  } finally {
    await sb.close();
  }
}

describe("T32 boot images", () => {
  it("each fresh Python interpreter draws its own random numbers", async () => {
    const code = "import random; print(random.random(), random.getrandbits(64))";
    const draws = [await fresh("python", code), await fresh("python", code)];
    expect(draws[0]).not.toBe(draws[1]);
  }, 120_000);

  it("each fresh JavaScript interpreter draws its own Math.random sequence", async () => {
    const code = "console.log(Math.random(), Math.random())";
    const draws = [await fresh("javascript", code), await fresh("javascript", code)];
    expect(draws[0]).not.toBe(draws[1]);
  }, 120_000);

  it("each fresh JavaScript interpreter draws its own crypto randomness", async () => {
    const code =
      "const a = new Uint8Array(16); crypto.getRandomValues(a); console.log(crypto.randomUUID(), Array.from(a).join(), require('crypto').randomBytes(8).toString('hex'))";
    const draws = [await fresh("javascript", code), await fresh("javascript", code)];
    expect(draws[0]).toMatch(/^[0-9a-f-]{36} [\d,]+ [0-9a-f]{16}$/);
    expect(draws[0]).not.toBe(draws[1]);
    for (const [i, part] of draws[0]!.split(" ").entries())
      expect(part).not.toBe(draws[1]!.split(" ")[i]);
  }, 120_000);

  it("what a guest does to its interpreter's set-up is not in the next one's", async () => {
    await fresh(
      "javascript",
      `Object.prototype.polluted = 1; Array.prototype.map = () => "poisoned";
       console.log = () => {}; globalThis.left = "behind"; console.error("done")`,
    );
    const next = await fresh(
      "javascript",
      `console.log(typeof left, ({}).polluted, [1, 2].map(String).join(","), typeof require("fs").readFileSync)`,
    );
    expect(next).toBe("undefined undefined 1,2 function");
    await fresh(
      "python",
      "import random, zipfile; zipfile.ZipFile = None; random.seed(1); print('done')",
    );
    const python = await fresh(
      "python",
      "import random, zipfile; random.seed(1); a = random.random(); print(zipfile.ZipFile.__name__, a == 0.13436424411240122)",
    );
    expect(python).toBe("ZipFile True");
  }, 120_000);
});

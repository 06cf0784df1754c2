// A JavaScript sandbox's memory holds what its guest keeps, not what the engine forgot to free:
// bytes crossing between QuickJS and the host (file writes of typed arrays, reads, displays)
// are copied out of the WebAssembly heap and the copies released.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 1, bash: 0 } });
});
afterAll(async () => {
  await runtime?.close();
});

it("writes 40 × 1 MiB Uint8Arrays per run, 100 runs, in a 128 MiB sandbox", async () => {
  await using sb = await Sandbox.create({ runtime, limits: { memoryMb: 128 } });
  const code = `
    for (let k = 0; k < 40; k++) require("fs").writeFileSync("b" + (k % 4) + ".bin", new Uint8Array(1024 * 1024).fill(k));
    { const back = require("fs").readFileSync("b3.bin"); new TextDecoder().decode(back.subarray(0, 4)).length + back[0]; }`;
  for (let i = 0; i < 100; i++) {
    const r = await sb.run("javascript", code);
    expect(r.status, `run ${i}: ${r.message ?? r.stderr}`).toBe("ok");
    expect(r.value).toBe("43");
    expect(r.stateLost, `run ${i} lost its interpreter`).toBeUndefined();
  }
}, 300_000);

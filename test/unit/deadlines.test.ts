// Unit tier: the grace ladder past a run's deadline (src/protocol/deadlines.ts). Each layer must
// get its chance before the layer outside it steps in, or an outer timer would kill what an
// inner one was about to end cleanly (and the run's output and state would be lost for nothing).
import { expect, it } from "vitest";
import * as d from "../../dist/protocol/deadlines.js";

it("each rung of the ladder ends inside the one after it", () => {
  // The engine stops itself; failing that, its host kills the worker before a network wait ends.
  expect(d.ENGINE_DEADLINE_GRACE_MS).toBeLessThan(d.NET_WAIT_GRACE_MS);
  // The worker's own give-up comes before the trusted side ends the run as overdue.
  expect(d.NET_WAIT_GRACE_MS).toBeLessThan(d.RUN_GRACE_MS);
  // Storing the files a run changed fits before the caller's bound.
  expect(d.STORE_GRACE_MS).toBeLessThan(d.RUN_GRACE_MS);
  // A cancel is answered by the engine before any backstop kills its host.
  expect(d.CANCEL_GRACE_MS).toBeLessThan(Math.min(d.WASM_BACKSTOP_MS, d.NATIVE_BACKSTOP_MS));
  for (const ms of Object.values(d)) if (typeof ms === "number") expect(ms).toBeGreaterThan(0);
});

it("runDeadline: the trusted side's deadlineAt, never later than timeoutMs from now", () => {
  const now = 1_000_000;
  const limits = { timeoutMs: 5_000 };
  expect(d.runDeadline({ limits, deadlineAt: now + 2_000 }, now)).toBe(now + 2_000);
  // Past already (the wait for an interpreter took it all): the guest stops at once.
  expect(d.runDeadline({ limits, deadlineAt: now - 10 }, now)).toBe(now - 10);
  // A clock that jumped back, a missing or a forged value: timeoutMs from now still bounds it.
  expect(d.runDeadline({ limits, deadlineAt: now + 60_000 }, now)).toBe(now + 5_000);
  expect(d.runDeadline({ limits }, now)).toBe(now + 5_000);
  expect(d.runDeadline({ limits, deadlineAt: Number.NaN }, now)).toBe(now + 5_000);
});

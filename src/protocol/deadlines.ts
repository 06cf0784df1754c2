// Both sides: what a run's `timeoutMs` bounds, and how long each layer waits past it before the
// layer outside it steps in. The deadline is one value: the trusted side sets it as the run
// leaves for its host (`deadlineAt`, `timeoutMs` from then; what the run fetched before counts
// against `timeoutMs` already), and each layer arms its own timer from it, the inner ones first,
// so that the layer nearest the guest ends a run and an outer one acts only when an inner one
// failed to. Waiting inside the host for an interpreter counts against the guest's time:
//
//   deadline     the engine stops the guest itself and reports `timeout` (its output kept)
//   + 1 s        the engine host kills a worker whose engine did not (ENGINE_DEADLINE_GRACE_MS)
//   + 2 s        a worker gives up waiting on a network answer (NET_WAIT_GRACE_MS)
//   + 2 s        the trusted side stores what the run changed, or stops trying (STORE_GRACE_MS)
//   + 3 s        the trusted side ends the run as `timeout` whatever the host is doing, and tells
//                it to stop (RUN_GRACE_MS: also what taking or booting an interpreter may add)
//   + 3 s more   a WebAssembly engine host that has not stopped it is killed (WASM_BACKSTOP_MS);
//   + 2 s more   for a native agent (NATIVE_BACKSTOP_MS)
//
// So a caller never waits longer than timeoutMs + RUN_GRACE_MS for an answer.
// test/unit/deadlines.test.ts checks that each rung stays inside the one after it.

/** How long past its deadline an engine may take to report a timeout itself before its worker is killed. */
export const ENGINE_DEADLINE_GRACE_MS = 1_000;

/** How long a cancelled run has to stop by itself (keeping its output and state) before the kill. */
export const CANCEL_GRACE_MS = 1_000;

/** How long past the run's deadline a worker waits for a network answer before giving up. */
export const NET_WAIT_GRACE_MS = 2_000;

/** How long past a run's timeout the trusted side may take to store the files it changed. */
export const STORE_GRACE_MS = 2_000;

/**
 * Past a run's timeoutMs, how long starting it (taking or booting an interpreter) may take before
 * the run ends on the trusted side as `timeout`, whatever the host is doing.
 */
export const RUN_GRACE_MS = 3_000;

/** After a run ended on the trusted side as overdue, how long a WebAssembly engine host has to stop it before it is killed. */
export const WASM_BACKSTOP_MS = 3_000;

/** The same for the native agent. */
export const NATIVE_BACKSTOP_MS = 2_000;

/**
 * The run's deadline (epoch ms) as the untrusted side arms its timers: `deadlineAt`, never later
 * than `timeoutMs` from now (a clock that jumped, or a request without one, still gets a bound).
 */
export function runDeadline(
  request: { limits: { timeoutMs: number }; deadlineAt?: number },
  now = Date.now(),
): number {
  const latest = now + request.limits.timeoutMs;
  const at = request.deadlineAt;
  return typeof at === "number" && Number.isFinite(at) ? Math.min(at, latest) : latest;
}

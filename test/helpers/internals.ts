// Typed access to the members polybox marks @internal (stripped from its public .d.ts), for the
// tests that watch the machinery itself: a runtime's fleet of engine hosts, a sandbox's process.

import type { Runtime, Sandbox } from "../../dist/index.js";
import type { HostFleet } from "../../dist/supervisor/fleet.js";

export function fleetOf(runtime: Runtime): HostFleet {
  return (runtime as unknown as { fleet: HostFleet }).fleet;
}

export function hostPidOf(sandbox: Sandbox): number | null {
  return (sandbox as unknown as { hostPid: number | null }).hostPid;
}

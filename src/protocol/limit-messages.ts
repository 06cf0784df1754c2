// How a limit is named in a result's message, shared by both sides so that a user sees the same
// words whichever side stopped the run: the status, the limit's option name, and its value.

import type { EngineStatus, RunLimits } from "./messages.js";

export function limitMessage(
  status: EngineStatus,
  limits: RunLimits,
  detail = "",
): string | undefined {
  const tail = detail ? `; ${detail}` : "";
  switch (status) {
    case "timeout":
      return `timed out: timeoutMs=${limits.timeoutMs}${tail}`;
    case "memory_limit":
      return `memory limit reached: memoryMb=${limits.memoryMb} (${limits.memoryMb} MiB)${tail}`;
    case "output_limit":
      return `output limit reached: maxOutputBytes=${limits.maxOutputBytes}; the run was stopped and the rest of its output dropped${tail}`;
    case "workspace_limit":
      return `workspace quota exceeded: workspaceQuotaBytes=${limits.workspaceQuotaBytes}${tail}`;
    default:
      return undefined;
  }
}

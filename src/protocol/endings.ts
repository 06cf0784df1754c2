// Every way a run can end, and the exit code each ending gives. Both sides read this one table,
// so a run stopped by a limit reports the same code whichever stopped it: an engine, the engine
// host, the supervisor or the server. Plain data with no imports, so guest-side engines load it.

/** How a run can end: `ok`/`error` are the guest's doing, the rest name what stopped it. */
export const RUN_STATUSES = [
  "ok",
  "error",
  "timeout",
  "memory_limit",
  "output_limit",
  "workspace_limit",
  "cancelled",
] as const;
export type EngineStatus = (typeof RUN_STATUSES)[number];

/**
 * The exit code of each ending. Where a limit or a cancel stopped the run, the code is the same in
 * every language and mode (the program did not choose it): 124 for a timeout, as timeout(1)
 * reports; 130 for a cancel, as for Ctrl-C; 137 for memory, as for the kernel's OOM kill; 141 for
 * output, as for a closed pipe. Otherwise the program's own code stands, except that a run over
 * the workspace quota failed even if its program did not: 1 where the program gave 0.
 */
export const RUN_EXIT_CODES = Object.freeze({
  ok: "program",
  error: "program",
  timeout: 124,
  memory_limit: 137,
  output_limit: 141,
  workspace_limit: "program, or 1",
  cancelled: 130,
} as const satisfies Record<EngineStatus, number | "program" | "program, or 1">);

/** The exit code of a run that ended with `status`, given the one its program gave. */
export function exitCodeOf(status: EngineStatus, programExitCode: number): number {
  const code = RUN_EXIT_CODES[status];
  if (code === "program") return programExitCode;
  if (code === "program, or 1") return programExitCode === 0 ? 1 : programExitCode;
  return code;
}

// Worker side: just-bash's own execution budgets, derived from polybox's limits. just-bash ships
// fixed defaults sized for an agent's scratch shell (100 000 commands, 2 MiB of output per
// command, ...) that everyday data work crosses. Here every budget follows the polybox limit that
// already bounds the same resource, so a user who hits one is told which limit to raise:
//   - counts of work (commands, loop iterations, awk/sed/jq steps, bytes read or passed between
//     commands over the whole run): unbounded here, because `timeoutMs` bounds them;
//   - sizes of data held at once (one string, live buffers, a heredoc, array elements, brace
//     expansions): `memoryMb`;
//   - bytes held in the shell's file system (workspace and /tmp): `workspaceQuotaBytes`;
//   - wall time: `timeoutMs`.
// Output to the caller is not a just-bash budget at all: the worker's OutputSink applies
// `maxOutputBytes` to what the script writes to its own stdout and stderr, which just-bash hands
// over as each statement ends (engine.ts); a script that prints past the cap is stopped there.

import type { BashOptions } from "just-bash";
import type { EngineStatus, RunLimits } from "../../../protocol/messages.js";

/** Large enough never to be reached before the deadline, small enough for just-bash's checks. */
const BY_TIME = 2 ** 50;

/** just-bash stops itself this long before the run's deadline, ahead of the worker's kill. */
const DEADLINE_MARGIN_MS = 50;

export function executionLimits(
  limits: RunLimits,
  remainingMs: number = limits.timeoutMs,
): BashOptions["executionLimits"] {
  const memoryBytes = limits.memoryMb * 1024 * 1024;
  return {
    maxCommandCount: BY_TIME,
    maxLoopIterations: BY_TIME,
    maxAwkIterations: BY_TIME,
    maxSedIterations: BY_TIME,
    maxJqIterations: BY_TIME,
    maxWorkUnits: BY_TIME,
    maxInputBytes: BY_TIME,
    maxOutputSize: BY_TIME,
    maxGlobOperations: BY_TIME,
    maxTraversalWork: BY_TIME,
    maxTraversalEntries: BY_TIME,
    maxCsvRows: BY_TIME,
    maxCsvCells: BY_TIME,
    maxStringLength: Math.floor(memoryBytes / 4),
    maxHeredocSize: Math.floor(memoryBytes / 4),
    maxLiveBytes: Math.floor(memoryBytes / 2),
    // An element costs at least 16 bytes of heap. just-bash also caps `seq` at this count.
    maxArrayElements: Math.floor(memoryBytes / 16),
    maxBraceExpansionResults: Math.floor(memoryBytes / 16),
    maxFileSystemBytes: limits.workspaceQuotaBytes + 1,
    // At its deadline just-bash ends the script itself, so the interpreter outlives a timeout.
    maxExecutionTimeMs: Math.max(1, remainingMs - DEADLINE_MARGIN_MS),
  };
}

/** What a fixed budget of just-bash (one no polybox limit raises) says instead of its own hint. */
const FIXED =
  "a fixed limit of polybox's WASM bash (just-bash), not one of polybox's limits; " +
  'run the script in native mode (engine: "native") for real bash';

/**
 * just-bash stops a script that exceeds one of its budgets with exit code 126 (124 at its
 * deadline) and a message on the last line of stderr. Which polybox status (and message) that
 * is, by the budget's family above; undefined for an ordinary exit 126 or 124.
 */
export function limitVerdict(
  stderr: string,
): { status: EngineStatus; message?: string } | undefined {
  const last = stderr.trimEnd().split("\n").pop() ?? "";
  if (!/limit exceeded|size exceeded|execution deadline|too many|maximum .*depth/.test(last))
    return undefined;
  if (/execution deadline/.test(last)) return { status: "timeout" };
  if (/file ?system/i.test(last)) return { status: "workspace_limit" };
  // Iteration caps left below BY_TIME are those just-bash takes from maxArrayElements (`seq`).
  if (
    /string length|live byte|array elements|heredoc|brace expansion|output size|iteration/.test(
      last,
    )
  )
    return { status: "memory_limit" };
  if (/command|work limit|input size/.test(last)) return { status: "timeout" };
  return { status: "error", message: `${last.replace(/^bash: /, "")}: ${FIXED}` };
}

/** just-bash's advice to raise `executionLimits.*` names settings a polybox user does not have. */
export function withoutTuningHint(stderr: string): string {
  return stderr.replace(/, increase executionLimits\.\w+/g, "");
}

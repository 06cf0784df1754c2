// Trusted side: one run of a sandbox, from a checked request to its result: what the run fetches
// first, the interpreter state it puts back, the run in the host, and storing the files it
// changed in the workspace, all by the run's deadline.

import { STORE_GRACE_MS } from "../../protocol/deadlines.js";
import { exitCodeOf } from "../../protocol/endings.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import type { EngineLanguage, EngineResult, RunRequest } from "../../protocol/messages.js";
import { isPolyboxError } from "../errors.js";
import { describeLimit, MAX_WORKSPACE_ENTRIES } from "../limits.js";
import type { Wheel } from "../packages/packages.js";
import { parseWasmerPackage } from "../packages/wasmer-packages.js";
import { type Language, notStartedResult, type RunOptions, type RunResult } from "../types.js";
import { Preparation, Stopped, wheelsFor } from "./installation.js";
import type { SandboxParts } from "./interpreters.js";
import { FRESH_NOTES, restoreState } from "./persistence.js";
import { collectRichOutput } from "./rich-output.js";
import type { BaseRequest } from "./run-request.js";

/**
 * Runs `asked` in `session` (null: a fresh interpreter, discarded after) and stores what it
 * changed. `extraWheels`: packages to install, instead of those the code asks for.
 */
export async function execute(
  parts: SandboxParts,
  language: Language,
  asked: BaseRequest,
  options: RunOptions,
  session: string | null,
  extraWheels?: Wheel[],
): Promise<RunResult> {
  const { interpreters } = parts;
  const started = performance.now();
  interpreters.lastUsedAt = Date.now();
  if (options.signal?.aborted) return cancelledBeforeStart();
  const { limits } = asked;
  const notes: string[] = [];
  // What the run fetches before its guest starts (wheels, a Wasmer package) counts against its
  // timeout, and a cancel stops the wait: the guest gets what time is left.
  const preparing = new Preparation(limits.timeoutMs, options.signal);
  let newWheels: Wheel[] = extraWheels ?? [];
  let wasmerPackage: RunRequest["wasmerPackage"];
  try {
    if (language === "python" && !extraWheels) {
      try {
        newWheels = await preparing.wait(
          wheelsFor(parts.runtime.packages, parts.engine, interpreters.wheels, asked.code, notes),
        );
      } catch (error) {
        if (!isPolyboxError(error)) throw error;
        return notStartedResult(
          `the script's inline dependencies could not be installed: ${error.message}`,
        );
      }
    }
    // A Wasmer package comes from the cache or the registry before the run starts; what it
    // cannot fetch (unknown, refused, unreachable) is an error of the call, as a bad argument is.
    if (options.wasmerPackage !== undefined)
      wasmerPackage = await preparing.wait(
        parts.runtime.wasmerPackages.fetch(parseWasmerPackage(options.wasmerPackage)),
      );
  } catch (error) {
    if (!(error instanceof Stopped)) throw error;
    return error.why === "cancelled"
      ? cancelledBeforeStart()
      : notStartedResult(
          limitMessage("timeout", limits, "fetching its packages took the whole time") ?? "",
          "timeout",
        );
  }
  // Only fetching cuts the guest's share (and is named if the run then times out): reading the
  // code's imports to find there was nothing to fetch takes a millisecond, which is no news.
  const fetched = (newWheels.length > 0 && !extraWheels) || wasmerPackage !== undefined;
  const timeLeft = fetched ? preparing.timeLeft() : limits.timeoutMs;
  const base =
    timeLeft < limits.timeoutMs ? { ...asked, limits: { ...limits, timeoutMs: timeLeft } } : asked;
  const host = interpreters.host;
  await host.start(language as EngineLanguage);
  let stateLost = interpreters.noticeHostRestart().has(language);
  if (interpreters.lossToRetell.delete(language)) stateLost = true;
  const fresh = session === null ? undefined : interpreters.freshState.get(language);
  const freshNotes: string[] = [];
  let restoredWheels = false;
  if (fresh && session !== null) {
    interpreters.freshState.delete(language);
    const back = fresh.state
      ? await restoreState(parts, session, language, fresh.state, fresh.why)
      : null;
    if (back?.restored) {
      freshNotes.push(...back.notes);
      restoredWheels = language === "python";
    } else {
      stateLost = true;
      freshNotes.push(FRESH_NOTES[fresh.why], ...(back?.notes ?? []));
      if (fresh.reason && fresh.why !== "reopened")
        freshNotes.push(`the snapshot holds no ${language} state: ${fresh.reason}`);
    }
  }
  const since = session === null ? null : (interpreters.synced.get(language) ?? null);
  // A fresh interpreter gets every package this sandbox installed before, then the new ones
  // (a restored Python interpreter got them with its state).
  const wheels =
    language === "python"
      ? [...(since === null && !restoredWheels ? interpreters.wheels.values() : []), ...newWheels]
      : [];
  const request: RunRequest = {
    ...base,
    ...(wasmerPackage ? { wasmerPackage } : {}),
    fullSync: since === null,
    sync: await parts.workspace.changesSince(since),
    ...(wheels.length > 0
      ? {
          wheels: wheels.map(({ fileName, data, installDir }) => ({
            fileName,
            data,
            installDir,
          })),
        }
      : {}),
  };
  interpreters.runs++;
  // Storing what the run changed is part of the run: it ends by the same deadline (plus a
  // moment for the files of a run that used all its time).
  const deadline = Date.now() + base.limits.timeoutMs + STORE_GRACE_MS;
  let result: EngineResult;
  const net = parts.runtime.netSession(
    parts.netGrant,
    Date.now() + base.limits.timeoutMs,
    parts.netSecrets,
  );
  try {
    result = await host.run({
      session,
      language: language as EngineLanguage,
      request,
      output: (stream, text) => options.onOutput?.(stream, text),
      ...(options.signal ? { signal: options.signal } : {}),
      net,
    });
  } finally {
    interpreters.runs--;
    net.close();
  }
  interpreters.noticeHostRestart();
  stateLost ||= result.stateLost === true;
  if (stateLost && session !== null && options.signal?.aborted)
    interpreters.lossToRetell.add(language);
  if (!stateLost && session !== null) for (const w of newWheels) interpreters.wheels.set(w.name, w);
  const { status, message, filesChanged } = await storeChanges(
    parts,
    language,
    session,
    result,
    stateLost,
    deadline,
    base.limits,
  );
  // The guest's share was cut by what fetching took; the limit named is the run's own.
  const said =
    status === "timeout" && base.limits.timeoutMs !== limits.timeoutMs
      ? limitMessage(
          "timeout",
          limits,
          `${Math.round(limits.timeoutMs - base.limits.timeoutMs)} ms of it went to fetching packages`,
        )
      : message;
  interpreters.lastUsedAt = Date.now();
  const rich = await collectRichOutput(parts.workspace, filesChanged, result.displays);
  // A package the code imports but no source had is worth a note only if the import failed:
  // the interpreter may have it already (native mode's python3 with Debian's numpy).
  if (!/\bNo module named\b/.test(result.stderr)) notes.length = 0;
  rich.notes.unshift(...notes, ...(result.notes ?? []), ...freshNotes);
  return {
    status,
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: exitCodeOf(status, result.exitCode),
    value: status === "ok" ? result.value : null,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
    truncated: result.truncated,
    filesChanged,
    ...(said ? { message: said } : {}),
    ...(stateLost ? { stateLost: true } : {}),
    images: rich.images,
    displays: rich.displays,
    ...(rich.notes.length > 0 ? { notes: rich.notes } : {}),
    ...(net.record.length > 0 ? { network: net.record.map((entry) => ({ ...entry })) } : {}),
  };
}

/**
 * Writes the run's file changes into the workspace, unless they break its quota (bytes or
 * entries), and records what the language's interpreter has now seen.
 */
async function storeChanges(
  parts: SandboxParts,
  language: Language,
  session: string | null,
  result: EngineResult,
  stateLost: boolean,
  deadline: number,
  limits: RunRequest["limits"],
): Promise<{ status: RunResult["status"]; message: string | undefined; filesChanged: string[] }> {
  const { workspace, interpreters } = parts;
  const quota = parts.limits.workspaceQuotaBytes;
  const bytes = workspace.projectedBytes(result.changes);
  const entries = workspace.projectedEntries(result.changes);
  let refusal: string | undefined;
  if (bytes > quota) {
    refusal = `workspace quota exceeded: the run's files would take ${bytes} bytes, over ${describeLimit("workspaceQuotaBytes", quota)}; its file changes were discarded`;
  } else if (entries > MAX_WORKSPACE_ENTRIES) {
    refusal = `workspace quota exceeded: the run would leave ${entries} files and directories, over the limit of ${MAX_WORKSPACE_ENTRIES}; its file changes were discarded`;
  } else if (parts.home !== null) {
    // A named workspace also counts against the data directory's quota.
    try {
      parts.runtime.state.check(bytes - workspace.usedBytes);
    } catch (error) {
      if (!isPolyboxError(error, "QUOTA_EXCEEDED")) throw error;
      refusal = `${error.message}; the run's file changes were discarded`;
    }
  }
  if (refusal) {
    interpreters.synced.set(language, null);
    return { status: "workspace_limit", message: refusal, filesChanged: [] };
  }
  if (result.status === "workspace_limit") {
    // The engine side already dropped the run's changes: its copy of the workspace is not ours.
    interpreters.synced.set(language, null);
    return { status: result.status, message: result.message, filesChanged: [] };
  }
  try {
    // Files the host cannot store under the guest's names are dropped with a note.
    result.notes ??= [];
    const filesChanged = await workspace.apply(result.changes, deadline, result.notes);
    interpreters.synced.set(language, stateLost || session === null ? null : workspace.generation);
    return { status: result.status, message: result.message, filesChanged };
  } catch (error) {
    interpreters.synced.set(language, null);
    if (isPolyboxError(error) && error.code === "TIMEOUT") {
      return {
        status: "timeout",
        message: limitMessage(
          "timeout",
          limits,
          "storing the run's file changes passed the deadline; the rest of them were dropped",
        ),
        filesChanged: [],
      };
    }
    const why = error instanceof Error ? error.message : String(error);
    return {
      status: "error",
      message: `the run's files could not be stored: ${why}`,
      filesChanged: [],
    };
  }
}

const cancelledBeforeStart = () => notStartedResult("cancelled before it started", "cancelled");

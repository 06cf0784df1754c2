// Trusted side: what outlives a sandbox's interpreters: named sandboxes in the data directory,
// snapshots of files and interpreter state, and putting that state back into a new interpreter
// after a reopen, a restore or a fork.

import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import { type EngineLanguage, NO_INTERPRETER, type StateImage } from "../../protocol/messages.js";
import { isPolyboxError, PolyboxError } from "../errors.js";
import type { Limits } from "../limits.js";
import type { Language } from "../types.js";
import type { Fresh, PendingState, SandboxParts } from "./interpreters.js";
import { defaultRuntime, type EngineKind, type RunHost, type SandboxRuntime } from "./run-host.js";
import { checkName, type DataDir, type SnapshotStateInfo, type StateRecord } from "./state.js";
import type { Workspace, WorkspaceEntry } from "./workspace.js";

/** Why a language's interpreter is new, for its first run's notes. */
export const FRESH_NOTES: Record<Fresh, string> = {
  reopened:
    "this named sandbox was reopened: its files are as they were, but its interpreters are new (variables, imports and installed packages from before are gone)",
  restored:
    "this sandbox's files were restored from a snapshot: its interpreters are new (variables and imports from before are gone; installed packages are installed again)",
  forked:
    "this sandbox is a fork: it has its source's files, but this interpreter is new (the snapshot held none of its state)",
};

/** What a restore brought back, per kind of state, for the first run's notes. */
const RESTORED_NOTES: Record<StateImage["kind"], (language: Language, why: Fresh) => string> = {
  memory: (language, why) =>
    `this sandbox was ${why === "forked" ? "forked" : "restored from a snapshot"}: its ${language} interpreter was restored whole, as it was when the state was captured`,
  globals: (language, why) =>
    `this sandbox was ${why === "forked" ? "forked" : "restored from a snapshot"}: its ${language} interpreter is new, with the global values and imported modules that could be captured put back`,
};

/** A state captured for a snapshot or a fork: what the info says, and its bytes. */
export interface CapturedState {
  info: SnapshotStateInfo;
  pending?: PendingState;
}

/** A named sandbox as the data directory holds it, open or not. */
export interface NamedSandboxInfo {
  id: string;
  name: string;
  engine: EngineKind;
  createdAt: number;
  /** What its workspace holds, as counted against `dataDirQuotaBytes`. */
  bytes: number;
  limits: Limits;
}

/** The named sandboxes of `scope`, open or not. */
export async function namedSandboxes(state: DataDir, scope: string): Promise<NamedSandboxInfo[]> {
  return (await state.listNamed(scope)).map((m) => ({
    id: m.id,
    name: m.name,
    engine: m.engine,
    createdAt: m.createdAt,
    bytes: state.bytesOf(state.sandboxDir(scope, m.name)),
    limits: m.limits,
  }));
}

/** Deletes the named sandbox `name` of `scope`, which must not be open. */
export async function deleteNamed(state: DataDir, scope: string, name: string): Promise<void> {
  const home = state.sandboxDir(scope, checkName(name));
  const meta = await state.readMeta(home);
  if (!meta) {
    throw new PolyboxError("SANDBOX_NOT_FOUND", `no sandbox named ${JSON.stringify(name)}`, {
      details: { name },
    });
  }
  await state.lock(home, name);
  try {
    await state.deleteNamed(scope, home, meta.id);
  } finally {
    await state.unlock(home);
  }
}

/** Every entry of the workspace, each file's content in the object store. */
export async function captureFiles(
  workspace: Workspace,
  state: DataDir,
): Promise<WorkspaceEntry[]> {
  const entries = await workspace.describe((host) => state.objects.ingest(host));
  for (const e of entries) {
    // A hash known from before may name an object collected since (its snapshots deleted).
    if (e.hash && !(await state.objects.has(e.hash)))
      e.hash = await state.objects.ingest(await workspace.hostFile(e.path));
  }
  return entries;
}

/**
 * Each interpreter's state, as far as its engine captures it faithfully: languages that have an
 * interpreter now, and languages whose restored state is still waiting for their next run (that
 * state is still theirs). A refused or failed capture keeps nothing, and says why.
 */
export async function captureStates(parts: SandboxParts): Promise<Map<Language, CapturedState>> {
  const { interpreters, limits, engine } = parts;
  const host = interpreters.host;
  const out = new Map<Language, CapturedState>();
  for (const [language, entry] of interpreters.freshState) {
    if (entry.state) out.set(language, { info: infoOfPending(entry.state), pending: entry.state });
  }
  // After a host restart no interpreter of before is left (the next run will say so).
  if (interpreters.hostRestarted) return out;
  const maxBytes = limits.memoryMb * 1024 * 1024;
  for (const language of interpreters.synced.keys()) {
    if (out.has(language)) continue;
    if (!host.captureState) {
      out.set(language, {
        info: { kept: "none", bytes: 0, reason: `${engine} interpreters are not captured` },
      });
      continue;
    }
    let answer: Awaited<ReturnType<NonNullable<RunHost["captureState"]>>>;
    try {
      answer = await host.captureState(interpreters.sessionKey(language), maxBytes);
    } catch (error) {
      if (!isPolyboxError(error)) throw error;
      answer = { captured: false, reason: `the engine's answer was refused: ${error.message}` };
    }
    if (!answer.captured) {
      if (answer.reason !== NO_INTERPRETER)
        out.set(language, { info: { kept: "none", bytes: 0, reason: answer.reason } });
      continue;
    }
    const pending: PendingState = {
      kind: answer.kind,
      data: answer.data,
      bytes: answer.data.byteLength,
      notKept: answer.notKept,
    };
    out.set(language, { info: infoOfPending(pending), pending });
  }
  return out;
}

/** Puts a state into a new interpreter for `session`; says what came back, or why nothing. */
export async function restoreState(
  parts: SandboxParts,
  session: string,
  language: Language,
  state: PendingState,
  why: Fresh,
): Promise<{ restored: boolean; notes: string[] }> {
  const { interpreters, limits, engine } = parts;
  const host = interpreters.host;
  const failed = (message: string) => ({
    restored: false,
    notes: [`the snapshot's ${language} state could not be restored: ${message}`],
  });
  if (!host.restoreState) return failed(`${engine} interpreters are not restored`);
  const maxBytes = limits.memoryMb * 1024 * 1024;
  try {
    const data =
      state.data ?? (await parts.runtime.state.objects.loadState(state.hash ?? "", maxBytes));
    const answer = await host.restoreState(
      session,
      language as EngineLanguage,
      { kind: state.kind, data },
      limits.memoryMb,
      language === "python"
        ? [...interpreters.wheels.values()].map(({ fileName, data, installDir }) => ({
            fileName,
            data,
            installDir,
          }))
        : [],
    );
    if (!answer.restored) return failed(answer.message ?? "the engine refused it");
    const notKept = [...state.notKept, ...answer.notKept];
    return {
      restored: true,
      notes: [
        RESTORED_NOTES[state.kind](language, why),
        ...(notKept.length > 0 ? [`not kept: ${notKept.slice(0, 20).join("; ")}`] : []),
      ],
    };
  } catch (error) {
    if (!isPolyboxError(error) && !(error instanceof RangeError)) throw error;
    return failed(error.message);
  }
}

/** The runtime's data directory, ready. */
export async function stateOf(runtime: SandboxRuntime | undefined): Promise<DataDir> {
  const state = (runtime ?? (await defaultRuntime())).state;
  await state.init();
  return state;
}

/** Limits a named sandbox was made with, lowered to ceilings that may have dropped since. */
export function withinCeilings(limits: Limits, max: Readonly<Limits>): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const key of Object.keys(max) as (keyof Limits)[])
    if (typeof limits[key] === "number") out[key] = Math.min(limits[key], max[key]);
  return out;
}

/** A snapshot's states as states to restore (languages with none keep their reason). */
export function pendingFromRecords(
  records: Partial<Record<Language, StateRecord>>,
): Map<Language, CapturedState> {
  const out = new Map<Language, CapturedState>();
  for (const [language, r] of Object.entries(records) as [Language, StateRecord][]) {
    const { hash, ...info } = r;
    out.set(
      language,
      r.kept !== "none" && hash
        ? {
            info,
            pending: { kind: r.kept, hash, bytes: r.bytes, notKept: r.notKept ?? [] },
          }
        : { info },
    );
  }
  return out;
}

function infoOfPending(p: PendingState): SnapshotStateInfo {
  return { kept: p.kind, bytes: p.bytes, ...(p.notKept.length > 0 ? { notKept: p.notKept } : {}) };
}

/** A hard link to `source` at `dest`, or a copy where the file system refuses links. */
export async function linkOrCopy(source: string, dest: string, mtimeMs: number): Promise<void> {
  try {
    await fs.link(source, dest);
  } catch {
    await fs.copyFile(source, dest, C.COPYFILE_EXCL);
    const t = new Date(mtimeMs);
    await fs.utimes(dest, t, t).catch(() => undefined);
  }
}

// Trusted side: what a workspace path may be called. Every path from outside (API caller, MCP
// client, engine) becomes a workspace-relative one here or is refused; and what this host's file
// system cannot store under its own name (Windows' devices and streams, a name differing only in
// case from one already there) is found here, so that the workspace leaves it out with a note
// rather than storing something else.

import { randomUUID } from "node:crypto";
import { constants as C } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { GUEST_WORKSPACE as GUEST_ROOT } from "../../protocol/paths.js";
import { PolyboxError } from "../errors.js";

/**
 * Turns a caller's path into a workspace-relative one (`a/b.txt`), or throws. Accepted: relative
 * paths, and absolute ones under /workspace (the path guests see). `..` may not climb out.
 */
export function resolveWorkspacePath(
  input: unknown,
  { allowRoot = false, file = false } = {},
): string {
  if (typeof input !== "string") {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `path must be a string, got ${input === null ? "null" : typeof input}`,
    );
  }
  if (input.includes("\0")) throw new PolyboxError("INVALID_ARGUMENT", "path contains a NUL byte");
  // A file's path: "d/" names a directory, and writing it would make a file named "d".
  if (file && /[/\\]$/.test(input))
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `"${input.slice(0, 200)}" ends with a slash, so it names a directory: give a file's path`,
    );
  let rest = input.replace(/\\/g, "/");
  if (rest.startsWith("/")) {
    if (rest !== GUEST_ROOT && !rest.startsWith(`${GUEST_ROOT}/`)) {
      throw new PolyboxError(
        "PATH_OUTSIDE_WORKSPACE",
        `"${input}" is outside the workspace: use a relative path or one under ${GUEST_ROOT}/`,
      );
    }
    rest = rest.slice(GUEST_ROOT.length);
  }
  const parts: string[] = [];
  for (const part of rest.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) {
        throw new PolyboxError(
          "PATH_OUTSIDE_WORKSPACE",
          `"${input}" climbs out of the workspace with ".."`,
        );
      }
      parts.pop();
    } else parts.push(part);
  }
  const rel = parts.join("/");
  if (parts.some((part) => Buffer.byteLength(part) > 255)) {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `"${input.slice(0, 80)}…" has a name longer than 255 bytes`,
    );
  }
  if (rel === "" && !allowRoot)
    throw new PolyboxError("INVALID_ARGUMENT", `"${input}" names the workspace root, not a file`);
  return rel;
}

/** Names a Windows file system refuses, or takes for a device (with any extension). */
const WINDOWS_DEVICES = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])$/i;
const WINDOWS_FORBIDDEN = /[<>:"|?*\\\x00-\x1f]/;

/**
 * Why Windows cannot store `name` (one path component) as that name, or null. Windows refuses
 * some of these and silently makes others into something else: `a:b` is stream `b` of file `a`,
 * `name.` and `name ` are `name`, `CON` and `nul.txt` are devices. Case is not checked here (see
 * `Workspace.newTarget`).
 */
export function windowsNameProblem(name: string): string | null {
  const bad = WINDOWS_FORBIDDEN.exec(name);
  if (bad) {
    const c = bad[0];
    return c < " "
      ? `a control character (U+${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}) is not allowed in a Windows file name`
      : `${JSON.stringify(c)} is not allowed in a Windows file name`;
  }
  if (/[. ]$/.test(name)) return "Windows drops a trailing dot or space from a file name";
  const stem = name.split(".")[0]?.trimEnd() ?? "";
  if (WINDOWS_DEVICES.test(stem))
    return `Windows reserves ${stem.toUpperCase()} (with any extension) for a device`;
  return null;
}

/**
 * Why this host cannot store the workspace-relative path `rel` under that name, or null: on
 * Windows, the first component `windowsNameProblem` refuses; elsewhere every name that reaches
 * here is storable (what the host still refuses, it says with an error).
 */
export function hostNameProblem(
  rel: string,
  platform: NodeJS.Platform = process.platform,
): string | null {
  if (platform !== "win32") return null;
  for (const part of rel.split("/")) {
    const problem = windowsNameProblem(part);
    if (problem) return part === rel ? problem : `${JSON.stringify(part)}: ${problem}`;
  }
  return null;
}

/** What the probe found, per directory it probed: workspaces' parents, a handful per process. */
const caseProbes = new Map<string, Promise<boolean>>();
let forcedCase: boolean | null = null;

/**
 * Whether the volume holding `dir` takes names that differ only in case for one name (APFS and
 * NTFS as they come): a file made there under a lower-case name is looked up under its upper-case
 * one. Asked once per directory and process; a probe that cannot be made answers false, leaving
 * the check on each write (`newTarget`) to catch a twin.
 */
export function caseInsensitiveAt(dir: string): Promise<boolean> {
  if (forcedCase !== null) return Promise.resolve(forcedCase);
  let probe = caseProbes.get(dir);
  if (!probe) {
    probe = (async () => {
      const name = `.polybox-case-${randomUUID().replace(/-/g, "")}`;
      const lower = path.join(dir, name);
      try {
        await (await fs.open(lower, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o600)).close();
      } catch {
        return false;
      }
      try {
        return (await fs.lstat(path.join(dir, name.toUpperCase())).catch(() => null)) !== null;
      } finally {
        await fs.rm(lower, { force: true });
      }
    })();
    caseProbes.set(dir, probe);
  }
  return probe;
}

/**
 * For tests on a case-sensitive host (index.ts does not export it): what `caseInsensitiveAt`
 * answers from now on (null: probe again). Workspaces that already probed keep what they found.
 */
export function forceCaseInsensitive(value: boolean | null): void {
  forcedCase = value;
}

/** A path the host cannot store under its name: a run's change to it is left out with a note. */
export class Unstorable extends PolyboxError {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super("INVALID_ARGUMENT", `"${path}" cannot be stored on this host: ${why}`);
  }
}

/**
 * The error as an Unstorable for `rel`, or null. Besides this module's own checks, on Windows the
 * codes with which its file system refuses a name (a device, a stream, a name it will not make).
 */
export function asUnstorable(error: unknown, rel: string): Unstorable | null {
  if (error instanceof Unstorable) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (
    process.platform === "win32" &&
    code &&
    ["EINVAL", "ENOENT", "EEXIST", "EPERM"].includes(code)
  )
    return new Unstorable(rel, `the host's file system refused the name (${code})`);
  return null;
}

const MAX_NOTED_NAMES = 5;

export function droppedNote(dropped: readonly Unstorable[]): string {
  const names = dropped
    .slice(0, MAX_NOTED_NAMES)
    .map(
      (d) =>
        `${JSON.stringify(d.path.length > 200 ? `${d.path.slice(0, 200)}…` : d.path)} (${d.why})`,
    )
    .join(", ");
  const more =
    dropped.length > MAX_NOTED_NAMES ? ` and ${dropped.length - MAX_NOTED_NAMES} more` : "";
  return `not kept in the workspace, as this host cannot store the name: ${names}${more}`;
}

/** Whether a name read from disk is one the workspace would store under itself. */
export function isStorableName(rel: string): boolean {
  try {
    return resolveWorkspacePath(rel) === rel;
  } catch {
    return false;
  }
}

/** The parent of a workspace-relative path ("" at the top). */
export function parentOf(relPath: string): string {
  const slash = relPath.lastIndexOf("/");
  return slash < 0 ? "" : relPath.slice(0, slash);
}

/** An entry of a tree on disk, as `readTree` finds it. */
export interface TreeFile {
  path: string;
  type: "file" | "dir";
  size: number;
  mtimeMs: number;
}

/**
 * The regular files and directories under `root` whose names the workspace stores under
 * themselves, parents first; anything else (a symbolic link, a device, a name the workspace would
 * not make) is never followed and is returned in `skipped`.
 */
export async function readTree(root: string): Promise<{ entries: TreeFile[]; skipped: string[] }> {
  const entries: TreeFile[] = [];
  const skipped: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const d of await fs.readdir(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${d.name}` : d.name;
      if (!isStorableName(rel) || !(d.isFile() || d.isDirectory())) {
        skipped.push(rel);
        continue;
      }
      const st = await fs.lstat(path.join(dir, d.name));
      if (st.isDirectory()) {
        entries.push({ path: rel, type: "dir", size: 0, mtimeMs: st.mtimeMs });
        await walk(path.join(dir, d.name), rel);
      } else if (st.isFile()) {
        entries.push({ path: rel, type: "file", size: st.size, mtimeMs: st.mtimeMs });
      } else skipped.push(rel);
    }
  };
  await walk(root, "");
  return { entries, skipped };
}

// Trusted side: layer L3 on macOS. The engine host runs under `sandbox-exec` with a profile that
// denies all network access and all file writes except to its own temporary directory; reads
// are left to the permission model (L2), which already limits them to the engine assets.
// sandbox-exec cannot run on Linux or Windows, so the profile is built by a pure function that
// the tests check, and `doctor` reports whether it is in use.

import { existsSync } from "node:fs";
import type { HostWrapper } from "../../core/config.js";

export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** Quotes a path for an SBPL string literal. */
function sbplString(value: string): string {
  if (value.includes("\0") || value.includes("\n"))
    throw new Error("path is not usable in a sandbox profile");
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * The Seatbelt profile for the engine host. `writableDir` is its private temp dir; `nodePath` the
 * one program it may exec (sandbox-exec applies the profile, then execs node). Later rules win.
 */
export function engineHostProfile(writableDir: string, nodePath: string): string {
  return [
    "(version 1)",
    "(allow default)",
    ";; No network, in or out, for anything the engine host or its workers do.",
    "(deny network*)",
    ";; No writes anywhere but the host's own empty temp dir (and /dev/null for stdio).",
    "(deny file-write*)",
    `(allow file-write* (subpath ${sbplString(writableDir)}))`,
    '(allow file-write-data (literal "/dev/null"))',
    ";; No new programs: sandbox-exec execs node once, and nothing runs after it.",
    "(deny process-exec)",
    `(allow process-exec (literal ${sbplString(nodePath)}))`,
    "(deny process-fork)",
    "",
  ].join("\n");
}

export function sandboxExecAvailable(): boolean {
  return process.platform === "darwin" && existsSync(SANDBOX_EXEC);
}

/** Wraps the engine host's command line in sandbox-exec with the profile. */
export const sandboxExecWrapper: HostWrapper = (command, args, tmpDir) => [
  SANDBOX_EXEC,
  ["-p", engineHostProfile(tmpDir, command), command, ...args],
];

// Trusted side: layer L3 on macOS. The engine host runs under `sandbox-exec` with a profile that
// denies all network access and all file writes except to its own temporary directory; reads
// are left to the permission model (L2), which already limits them to the engine assets.
// sandbox-exec cannot run on Linux or Windows, so the profile is built by a pure function that
// the tests parse and check (test/unit/seatbelt-profile.test.ts), and `doctor` reports whether it
// is in use.
//
// Seatbelt matches a rule's path against the path the kernel resolved, so a rule for
// `/var/folders/…` (what TMPDIR says) never matches: the file is `/private/var/folders/…`. Every
// path is therefore given in both spellings (grantSpellings). Each restricted class of operation
// is denied whole and then opened by an allow-list, never the reverse: a deny of one path can be
// walked around by another spelling of it (a link, or another case on a case-insensitive volume).
//
// The profile's default stays `allow`: what a Node process needs under `(deny default)` (Mach
// services, sysctls, JIT memory) cannot be checked without a Mac, and a profile missing one of
// them would stop every engine host there from starting.

import { existsSync } from "node:fs";
import type { HostWrapper } from "../../core/config.js";
import { grantSpellings } from "./permissions.js";

export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** Quotes a path for an SBPL string literal. */
function sbplString(value: string): string {
  if (value.includes("\0") || value.includes("\n"))
    throw new Error("path is not usable in a sandbox profile");
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** One rule per spelling of `path`: separate rules, whose union is plainly what is allowed. */
function allowEach(operation: string, kind: "subpath" | "literal", path: string): string[] {
  return grantSpellings([path]).map((p) => `(allow ${operation} (${kind} ${sbplString(p)}))`);
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
    ...allowEach("file-write*", "subpath", writableDir),
    '(allow file-write-data (literal "/dev/null"))',
    ";; No new programs: sandbox-exec execs node once, and nothing runs after it.",
    "(deny process-exec)",
    ...allowEach("process-exec", "literal", nodePath),
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

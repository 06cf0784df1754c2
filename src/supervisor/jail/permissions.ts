// Trusted side: the Node permission-model flags (layer L2) for the engine host. The flag is
// `--permission` from Node 22.13 and `--experimental-permission` before it; the grants are the
// same: read the engine assets, start worker threads, nothing else (no writes, no child
// processes, no native addons, no inspector, no WASI).
//
// Grants are allow-lists only, each given in every spelling a path may be reached by: as given,
// and as the file system resolves it. The permission model compares paths as text, so a grant
// of `/var/folders/x` does not cover `/private/var/folders/x` (macOS's /var, /tmp and /etc are
// links into /private), and the same holds for Seatbelt rules and the Linux jail's binds
// (test/core/macos-traps.test.ts). A deny-list would be worse than useless: on a case-insensitive
// volume `/Secret` and `/secret` are one file but two strings (nodejs/node#47105).

import { realpathSync } from "node:fs";
import path from "node:path";

const flags = process.allowedNodeEnvironmentFlags;

export function permissionFlag(): "--permission" | "--experimental-permission" {
  return flags.has("--permission") ? "--permission" : "--experimental-permission";
}

/**
 * The path the file system resolves `p` to (links followed, and on a case-insensitive volume
 * the stored case), or null when no part of it exists. A path not made yet resolves through its
 * nearest existing parent, so that a grant given before a directory exists still holds after.
 */
export function realSpelling(p: string): string | null {
  let head = path.resolve(p);
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync.native(head), ...tail);
    } catch {
      const up = path.dirname(head);
      if (up === head) return null;
      tail.unshift(path.basename(head));
      head = up;
    }
  }
}

/**
 * Each path as given and, where it differs, as the file system resolves it: what a grant must
 * name to hold whichever spelling the holder uses. Order kept, duplicates dropped; a trailing
 * separator (a directory grant) is kept on both.
 */
export function grantSpellings(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    out.add(p);
    const real = realSpelling(p);
    if (real === null) continue;
    const dir = p.endsWith(path.sep) && !real.endsWith(path.sep);
    const spelled = dir ? `${real}${path.sep}` : real;
    if (path.resolve(spelled) !== path.resolve(p)) out.add(spelled);
  }
  return [...out];
}

export function engineHostNodeArgs(readPaths: string[]): string[] {
  const args = [
    permissionFlag(),
    ...grantSpellings(readPaths).map((p) => `--allow-fs-read=${p}`),
    "--allow-worker",
  ];
  // Where Node has it and it is not yet the default (22; 24 has it on): AsyncLocalStorage kept
  // in the async context frame instead of promise hooks. just-bash's defense in depth holds each
  // command's context in one, and with hooks every promise of a Bash loop paid for it: a loop of
  // echo, read and arithmetic ran 25-37% faster on Node 22 with the frame.
  if (flags.has("--experimental-async-context-frame"))
    args.push("--experimental-async-context-frame");
  // The permission model warns on every start that it is experimental and that workers "could
  // invalidate" it; workers do inherit it (test/security checks), so these warnings are noise.
  if (flags.has("--disable-warning"))
    args.push("--disable-warning=ExperimentalWarning", "--disable-warning=SecurityWarning");
  else args.push("--no-warnings");
  return args;
}

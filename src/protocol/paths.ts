// Which workspace-relative paths an engine may report, and which of them the workspace stores.
// Both sides load this module (the native agent too), so it imports nothing.

/** Where every engine, in either mode, shows the guest its workspace. */
export const GUEST_WORKSPACE = "/workspace";

/** Longest file name a host file system takes (bytes per path component). */
export const MAX_NAME_BYTES = 255;

/**
 * A path no honest engine reports: absolute, empty, with `.`/`..` or empty components or a NUL.
 * Such a path is forged, and the result carrying it is discarded.
 */
export function isForgedPath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.includes("\0") || p.startsWith("/")) return true;
  return p.split("/").some((part) => part === "" || part === "." || part === "..");
}

/**
 * A name that is not valid UTF-8 on the guest's side, as it reaches this side: a lone surrogate
 * (how a WebAssembly file system decodes stray bytes) or U+FFFD (how a decoder replaces them).
 * Linear in the name's length.
 */
const NOT_UTF8 = /[\p{Cs}\uFFFD]/u;

/**
 * A name a guest can make but the workspace does not store (a backslash, which is a separator on
 * Windows; a component longer than a host file system takes; bytes that are not UTF-8, which no
 * client could be shown or send back faithfully): the file is left out of the result, with a
 * note, and the rest of the run is kept.
 */
export function isUnstorablePath(p: string): boolean {
  return (
    p.includes("\\") ||
    NOT_UTF8.test(p) ||
    p.split("/").some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)
  );
}

/** A workspace-relative path as engines report it: no absolute paths, no `..`, no NUL, names a host can store. */
export function isSafeRelativePath(p: unknown): p is string {
  if (
    typeof p !== "string" ||
    p.length === 0 ||
    p.length > 4096 ||
    p.includes("\0") ||
    p.includes("\\") ||
    /\p{Cs}/u.test(p)
  )
    return false;
  if (p.startsWith("/")) return false;
  return p
    .split("/")
    .every(
      (part) =>
        part !== "" && part !== "." && part !== ".." && Buffer.byteLength(part) <= MAX_NAME_BYTES,
    );
}

// Trusted side: the files the package fetchers keep in the per-user cache (Python wheels, Wasmer
// packages), named or checked by their sha256 and written whole or not at all.

import { createHash } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";

/** The lowercase hex sha256 of `data`. */
export function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Writes a checked file to the cache: whole or not at all (a temp file, then a rename). */
export async function storeCacheFile(file: string, data: Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temp, data);
  await rename(temp, file);
}

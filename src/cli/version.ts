// CLI: polybox's version, read from its package.json (two levels up from both src/cli and
// dist/cli), so it cannot drift from what npm installed.

import { readFileSync } from "node:fs";

export function version(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The Node versions polybox supports, from package.json "engines". */
export function nodeRequirement(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { engines?: { node?: string } };
    return pkg.engines?.node ?? ">=20";
  } catch {
    return ">=20";
  }
}

// Cluster: the packages only a cluster needs, bullmq and ioredis, are optional peer dependencies
// of polybox, so that an app embedding the library does not install a queue and a Redis client it
// never uses. Everything under cluster/ is loaded through `loadCluster`, which turns their absence
// into one clear error instead of Node's "Cannot find package" from deep inside a module.

import { PolyboxError } from "../core/errors.js";

/** The versions polybox is built and tested against (package.json's devDependencies). */
export const CLUSTER_PACKAGES = { bullmq: "6.7.0", ioredis: "6.0.0" } as const;

/** Imports a cluster module; if a cluster package is missing, says which and how to add it. */
export async function loadCluster<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const missing = missingPackage(error);
    if (missing === null) throw error;
    const install = Object.entries(CLUSTER_PACKAGES)
      .map(([name, version]) => `${name}@${version}`)
      .join(" ");
    throw new PolyboxError(
      "DEPENDENCY_MISSING",
      `a polybox cluster needs the optional packages bullmq and ioredis, and ${missing} is not installed: npm install ${install}`,
      { cause: error, details: { package: missing } },
    );
  }
}

function missingPackage(error: unknown): string | null {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code !== "ERR_MODULE_NOT_FOUND" || typeof e.message !== "string") return null;
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(e.message)?.[1];
  if (name === undefined) return null;
  return Object.keys(CLUSTER_PACKAGES).find((p) => name === p || name.startsWith(`${p}/`)) ?? null;
}

// The library's errors name its options (`maxSandboxes`, `permissions.net`); people using polybox
// through its server or its command line set those with flags and act through tools. This turns
// an error's structured details into their words: the flag that governs the limit, and the tool
// that gets the caller past it.

import type { PolyboxError } from "../index.js";

/** The command-line flag that sets each library option an error can name. */
const FLAGS: Record<string, string> = {
  maxSandboxes: "--max-sandboxes",
  maxSandboxesPerClient: "--max-sandboxes-per-client",
  maxNamedSandboxesPerClient: "--max-named-sandboxes",
  concurrency: "--concurrency",
  maxRunsPerClient: "--max-runs-per-client",
  rateLimit: "--rate-limit",
  retentionMs: "--job-retention",
  idleTimeoutMs: "--idle-timeout",
  maxLifetimeMs: "--max-lifetime",
  dataDirQuotaBytes: "--data-quota",
  maxSnapshotsPerSandbox: "--max-snapshots",
  maxSnapshotBytesPerSandbox: "--snapshot-quota",
  "permissions.read": "--allow-read",
  "permissions.net": "--allow-net",
  pythonPackages: "--python-packages",
  cachedOnly: "--cached-only",
  pyodideCdn: "--pyodide-cdn",
  wasmerRegistry: "--wasmer-registry",
  wasmerDownloadHosts: "--wasmer-download-host",
  allowPrivateIndex: "--allow-private-index",
  "nativeInterpreters.python": "--native-python",
  "nativeInterpreters.bash": "--native-bash",
  "nativeInterpreters.node": "--native-node",
  timeoutMs: "--timeout",
  memoryMb: "--memory",
  maxOutputBytes: "--max-output",
  workspaceQuotaBytes: "--workspace-quota",
  maxCodeBytes: "--max-code",
  inlineOutputBytes: "--inline-output",
};

/**
 * The flag an operator would change for the option an error names, if there is one, with its
 * current value where the flag takes the option's value as it is (counts, hosts).
 */
export function flagFor(error: PolyboxError): string | undefined {
  const { limit, value, hosts } = error.details;
  const flag = limit === undefined ? undefined : FLAGS[limit];
  if (!flag) return undefined;
  if (hosts?.length) return `${flag}=${hosts.join(",")}`;
  const literal = typeof value === "number" && !/(Ms|Mb|Bytes)$/.test(limit!);
  return literal || limit === "rateLimit" ? `${flag}=${value}` : flag;
}

/** How an operator fills the package cache for the package a PACKAGE_NOT_CACHED error names. */
function warmupAdvice(error: PolyboxError): string {
  const pkg = error.details.package ?? "NAME";
  // A Wasmer package (namespace/name@version) is cached by running it once while online.
  if (pkg.includes("/"))
    return `fill the cache while online by running ${pkg} once without --cached-only (with the same --wasmer-registry)`;
  return `fill the cache while online with polybox warmup --python-packages=${pkg} (plus the same package sources), or run without --cached-only`;
}

/** What an MCP client can do about `error`, in tools and server flags; undefined if nothing. */
export function toolHint(error: PolyboxError): string | undefined {
  if (error.code === "PACKAGE_NOT_CACHED")
    return `the server refuses package downloads (--cached-only); its operator can ${warmupAdvice(error)}`;
  const flag = flagFor(error);
  const operator = flag ? `the server's operator sets this with ${flag}` : undefined;
  const advice = ((): string | undefined => {
    switch (error.code) {
      case "TOO_MANY_SANDBOXES":
        // A closed named sandbox still counts: only deleting one frees its place.
        return error.details?.limit === "maxNamedSandboxesPerClient"
          ? "delete a named sandbox with close_sandbox and delete: true"
          : "close one with close_sandbox";
      case "SANDBOX_NOT_FOUND":
        return "use a sandbox_id returned by create_sandbox (get_sandbox_status lists yours), or omit sandbox_id for a one-shot run";
      case "SANDBOX_EXPIRED":
      case "SANDBOX_LOST":
        return "create_sandbox makes a new one; a named sandbox (create_sandbox with name) keeps its files and reopens by name";
      case "SNAPSHOT_NOT_FOUND":
        return "use a snapshot_id returned by snapshot_sandbox (list_snapshots lists yours)";
      case "QUOTA_EXCEEDED":
        return error.details.limit === "maxSnapshotsPerSandbox" ||
          error.details.limit === "maxSnapshotBytesPerSandbox" ||
          error.details.limit === "dataDirQuotaBytes"
          ? "delete snapshots with delete_snapshot, or named sandboxes with close_sandbox and delete: true"
          : undefined;
      case "CODE_TOO_LARGE":
        return "send large data as a file (the files argument, write_file or upload_file) and read it from the code";
      case "JOB_NOT_FOUND":
        return "use a job_id returned by a call with async: true";
      case "SERVER_BUSY":
        return error.details.limit === "maxRunsPerClient"
          ? "wait for one to finish (check_job_status), or cancel_job one"
          : undefined;
      default:
        return undefined;
    }
  })();
  const parts = [advice, operator].filter((p) => p !== undefined);
  return parts.length ? parts.join("; ") : undefined;
}

/** What a command-line user can do about `error`: the flag to pass. */
export function flagHint(error: PolyboxError): string | undefined {
  if (error.code === "PACKAGE_NOT_CACHED") return warmupAdvice(error);
  const flag = flagFor(error);
  return flag ? `set with ${flag}` : undefined;
}

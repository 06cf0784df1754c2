// Trusted side: the Node permission-model flags (layer L2) for the engine host. The flag is
// `--permission` from Node 22.13 and `--experimental-permission` before it; the grants are the
// same: read the engine assets, start worker threads, nothing else (no writes, no child
// processes, no native addons, no inspector, no WASI).

const flags = process.allowedNodeEnvironmentFlags;

export function permissionFlag(): "--permission" | "--experimental-permission" {
  return flags.has("--permission") ? "--permission" : "--experimental-permission";
}

export function engineHostNodeArgs(readPaths: string[]): string[] {
  const args = [
    permissionFlag(),
    ...readPaths.map((p) => `--allow-fs-read=${p}`),
    "--allow-worker",
  ];
  // The permission model warns on every start that it is experimental and that workers "could
  // invalidate" it; workers do inherit it (test/security checks), so these warnings are noise.
  if (flags.has("--disable-warning"))
    args.push("--disable-warning=ExperimentalWarning", "--disable-warning=SecurityWarning");
  else args.push("--no-warnings");
  return args;
}

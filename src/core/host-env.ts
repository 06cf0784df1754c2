// The host's environment as a guest may see it: only the variables the operator allowed
// (`permissions.env`, the CLI's --allow-env), "*" meaning all of them.

export function allowedHostEnv(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const all = names.includes("*");
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (all || names.includes(name))) out[name] = value;
  }
  return out;
}

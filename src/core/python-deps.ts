// Trusted side: which Python packages a piece of code asks for. PEP 723 inline metadata
// (`# /// script` … `dependencies = [...]`) is a requirement: if it cannot be met the run does
// not start. Imports that match a package in Pyodide's lock file are a wish: installed when a
// source has them, otherwise the import fails in the guest as it would anywhere.

/** Distribution names from a PEP 723 `script` block (version specifiers dropped). */
export function inlineDependencies(code: string): string[] {
  const block = /^# \/\/\/ script[ \t]*\r?\n((?:^#(?:[ \t].*)?\r?\n)*?)^# \/\/\/[ \t]*$/m.exec(
    code,
  );
  if (!block) return [];
  const toml = block[1]!.replace(/^# ?/gm, "");
  const list = /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(toml);
  if (!list) return [];
  return [...list[1]!.matchAll(/["']\s*([A-Za-z0-9][A-Za-z0-9._-]*)/g)].map((m) => m[1]!);
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Checks package names from a caller: plain distribution names, optionally with a version pin. */
export function packageNames(input: unknown): string[] | null {
  const list = typeof input === "string" ? [input] : input;
  if (!Array.isArray(list) || list.length === 0) return null;
  const names: string[] = [];
  for (const item of list) {
    if (typeof item !== "string") return null;
    const name = item.trim().split(/[<>=!~\s[;]/)[0]!;
    if (!NAME.test(name)) return null;
    names.push(name);
  }
  return names;
}

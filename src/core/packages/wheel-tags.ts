// Trusted side: which wheels an interpreter can install, by their compatibility tags (PEP 425,
// with PEP 600's manylinux names). A wheel's file name carries its tag sets, each possibly
// compressed (`cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64`); an interpreter supports
// an ordered list of `python-abi-platform` tags, best first (what `packaging.tags.sys_tags()`
// gives). A wheel fits if one of its expanded tags is in that list; the earliest such tag ranks it.
// File names come from index pages (untrusted text): parsing is a few splits of one name.

/** `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl` split into its parts, or null. */
export function wheelFileParts(
  fileName: string,
): { name: string; version: string; python: string; abi: string; platform: string } | null {
  if (!fileName.endsWith(".whl")) return null;
  const parts = fileName.slice(0, -4).split("-");
  if (parts.length !== 5 && parts.length !== 6) return null;
  const [python, abi, platform] = parts.slice(-3) as [string, string, string];
  return { name: parts[0]!, version: parts[1]!, python, abi, platform };
}

/** Every `python-abi-platform` tag a wheel's file name stands for (compressed sets expanded). */
export function wheelTags(fileName: string): string[] {
  const parts = wheelFileParts(fileName);
  if (!parts) return [];
  const tags: string[] = [];
  // Bounded: a name is at most a few hundred characters, so the product stays small; cap anyway.
  for (const py of parts.python.split(".").slice(0, 16))
    for (const abi of parts.abi.split(".").slice(0, 16))
      for (const platform of parts.platform.split(".").slice(0, 16))
        tags.push(`${py}-${abi}-${platform}`.toLowerCase());
  return tags;
}

/**
 * How well a wheel fits an interpreter that supports `supported` (tag → rank, best 0): the best
 * rank among the wheel's tags, or null if it does not fit at all.
 */
export function wheelRank(fileName: string, supported: ReadonlyMap<string, number>): number | null {
  let best: number | null = null;
  for (const tag of wheelTags(fileName)) {
    const rank = supported.get(tag);
    if (rank !== undefined && (best === null || rank < best)) best = rank;
  }
  return best;
}

/** An ordered tag list as a lookup table: tag → its position. */
export function tagRanks(tags: readonly string[]): Map<string, number> {
  const ranks = new Map<string, number>();
  tags.forEach((tag, i) => {
    const key = tag.toLowerCase();
    if (!ranks.has(key)) ranks.set(key, i);
  });
  return ranks;
}

/** What a Pyodide lock file's `info` says of the distribution it describes. */
export interface PyodideInfo {
  python?: string;
  abi_version?: string;
  platform?: string;
  arch?: string;
}

/**
 * The tags a Pyodide distribution accepts, best first, in `packaging.tags`' order: its CPython
 * version on the `pyemscripten_<abi>_<arch>` / `pyodide_<abi>_<arch>` and emscripten platforms,
 * abi3, then pure Python. Null when the lock file does not say (an old lock): callers then take
 * pure-Python wheels first.
 */
export function pyodideTags(info: PyodideInfo | undefined): string[] | null {
  const version = /^(\d+)\.(\d+)/.exec(info?.python ?? "");
  if (!version) return null;
  const major = Number(version[1]);
  const minor = Number(version[2]);
  const arch = info?.arch ?? "wasm32";
  // PEP 783's name first (`pyemscripten_2026_0_wasm32`), then the older `pyodide_…` one.
  const platforms = [
    ...(info?.abi_version
      ? [`pyemscripten_${info.abi_version}_${arch}`, `pyodide_${info.abi_version}_${arch}`]
      : []),
    ...(info?.platform ? [`${info.platform.replace(/[.-]/g, "_")}_${arch}`] : []),
  ];
  const own = `cp${major}${minor}`;
  const tags: string[] = [];
  for (const abi of [own, "abi3", "none"])
    for (const p of platforms) tags.push(`${own}-${abi}-${p}`);
  for (let m = minor - 1; m >= 2; m--)
    for (const p of platforms) tags.push(`cp${major}${m}-abi3-${p}`);
  const pys = [`py${major}${minor}`, `py${major}`];
  for (let m = minor - 1; m >= 0; m--) pys.push(`py${major}${m}`);
  for (const py of pys) for (const p of platforms) tags.push(`${py}-none-${p}`);
  tags.push(`${own}-none-any`, ...pys.map((py) => `${py}-none-any`));
  return tags;
}

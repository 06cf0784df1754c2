// Worker side: `zip`, which just-bash lacks, through fflate.

import { unzipSync, zipSync } from "fflate";
import { defineCommand } from "just-bash";
import { type Ctx, fail } from "./shared/context.js";

async function collect(
  ctx: Ctx,
  name: string,
  recursive: boolean,
  into: Record<string, Uint8Array>,
  log: string[],
): Promise<boolean> {
  const path = ctx.fs.resolvePath(ctx.cwd, name);
  let st: Awaited<ReturnType<Ctx["fs"]["stat"]>>;
  try {
    st = await ctx.fs.stat(path);
  } catch {
    return false;
  }
  const clean = name.replace(/^\.\//, "").replace(/^\/+/, "");
  if (st.isDirectory) {
    into[`${clean.replace(/\/+$/, "")}/`] = new Uint8Array(0);
    log.push(`${clean.replace(/\/+$/, "")}/`);
    if (recursive)
      for (const child of (await ctx.fs.readdir(path)).sort())
        await collect(ctx, `${clean.replace(/\/+$/, "")}/${child}`, true, into, log);
    return true;
  }
  into[clean] = await ctx.fs.readFileBuffer(path);
  log.push(clean);
  return true;
}

/** `zip [-r] [-q] [-j] ARCHIVE FILE...`: a new archive, or files added to an existing one. */
export const zip = defineCommand("zip", async (args, ctx) => {
  let recursive = false;
  let quiet = false;
  let junk = false;
  const operands: string[] = [];
  for (const a of args) {
    if (/^-[rqj0-9]+$/.test(a)) {
      recursive ||= a.includes("r");
      quiet ||= a.includes("q");
      junk ||= a.includes("j");
    } else if (a.startsWith("-") && a !== "-") return fail("zip", `unsupported option ${a}`, 16);
    else operands.push(a);
  }
  if (operands.length === 0) return fail("zip", "missing archive name", 16);
  let archive = operands[0]!;
  if (!/\.[^/]*$/.test(archive)) archive += ".zip";
  const archivePath = ctx.fs.resolvePath(ctx.cwd, archive);
  const entries: Record<string, Uint8Array> = {};
  let existed = false;
  try {
    Object.assign(entries, unzipSync(await ctx.fs.readFileBuffer(archivePath)));
    existed = true;
  } catch {
    // A new archive.
  }
  let stdout = "";
  let stderr = "";
  let added = 0;
  for (const name of operands.slice(1)) {
    const found: Record<string, Uint8Array> = {};
    const log: string[] = [];
    if (!(await collect(ctx, name, recursive, found, log))) {
      stderr += `\tzip warning: name not matched: ${name}\n`;
      continue;
    }
    for (const [entry, data] of Object.entries(found)) {
      const key = junk ? (entry.endsWith("/") ? "" : entry.split("/").pop()!) : entry;
      if (!key) continue;
      const update = key in entries;
      entries[key] = data;
      added++;
      if (!quiet)
        stdout += `  ${update ? "updating" : "adding"}: ${key}${entry.endsWith("/") ? " (stored 0%)" : data.length === 0 ? " (stored 0%)" : " (deflated)"}\n`;
    }
  }
  if (added === 0 && !existed)
    return { stdout, stderr: `${stderr}\nzip error: Nothing to do! (${archive})\n`, exitCode: 12 };
  await ctx.fs.writeFile(archivePath, zipSync(entries, { level: 6 }));
  return { stdout, stderr, exitCode: 0 };
});

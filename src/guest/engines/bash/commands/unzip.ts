// Worker side: `unzip`, which just-bash lacks, through fflate.

import { unzipSync } from "fflate";
import { bytesOutput, defineCommand, unsafeBytesFromLatin1 } from "just-bash";
import { fail, ok } from "./shared/context.js";

const two = (n: number) => String(n).padStart(2, "0");

/** `unzip [-l] [-q] [-o] [-p] [-d DIR] ARCHIVE [FILE...]`. */
export const unzip = defineCommand("unzip", async (args, ctx) => {
  let list = false;
  let quiet = false;
  let pipe = false;
  let dir = ".";
  const operands: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "-d") dir = args[++k] ?? ".";
    else if (/^-[lqopn]+$/.test(a)) {
      list ||= a.includes("l");
      quiet ||= a.includes("q");
      pipe ||= a.includes("p");
    } else if (a.startsWith("-")) return fail("unzip", `unsupported option ${a}`, 10);
    else operands.push(a);
  }
  const [archive, ...wanted] = operands;
  if (!archive) return fail("unzip", "missing archive name", 10);
  let data: Uint8Array;
  let shown = archive;
  try {
    data = await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, archive));
  } catch {
    try {
      shown = `${archive}.zip`;
      data = await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, shown));
    } catch {
      return {
        stdout: "",
        stderr: `unzip:  cannot find or open ${archive}, ${archive}.zip or ${archive}.ZIP.\n`,
        exitCode: 9,
      };
    }
  }
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(data);
  } catch {
    return {
      stdout: "",
      stderr: `  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.\n`,
      exitCode: 9,
    };
  }
  const names = Object.keys(files).filter((n) => wanted.length === 0 || wanted.includes(n));
  if (pipe) {
    const bytes = names.map((n) => Buffer.from(files[n]!).toString("latin1")).join("");
    return { ...bytesOutput(unsafeBytesFromLatin1(bytes)), stderr: "", exitCode: 0 };
  }
  if (list) {
    const now = new Date();
    const when = `${two(now.getUTCMonth() + 1)}-${two(now.getUTCDate())}-${now.getUTCFullYear()} ${two(now.getUTCHours())}:${two(now.getUTCMinutes())}`;
    let out = `Archive:  ${shown}\n  Length      Date    Time    Name\n---------  ---------- -----   ----\n`;
    let total = 0;
    for (const n of names) {
      const size = files[n]!.length;
      total += size;
      out += `${String(size).padStart(9)}  ${when}   ${n}\n`;
    }
    out += `---------                     -------\n${String(total).padStart(9)}                     ${names.length} file${names.length === 1 ? "" : "s"}\n`;
    return ok(out);
  }
  let out = quiet ? "" : `Archive:  ${shown}\n`;
  const base = ctx.fs.resolvePath(ctx.cwd, dir);
  for (const n of names) {
    const target = ctx.fs.resolvePath(base, n);
    if (!target.startsWith(base === "/" ? "/" : `${base}/`) && target !== base)
      return fail("unzip", `skipping ${n}: outside the destination`, 1);
    if (n.endsWith("/")) {
      await ctx.fs.mkdir(target, { recursive: true });
      if (!quiet) out += `   creating: ${dir === "." ? "" : `${dir}/`}${n}\n`;
      continue;
    }
    await ctx.fs.mkdir(target.slice(0, target.lastIndexOf("/")) || "/", { recursive: true });
    await ctx.fs.writeFile(target, files[n]!);
    if (!quiet) out += `  inflating: ${dir === "." ? "" : `${dir}/`}${n}  \n`;
  }
  return ok(out);
});

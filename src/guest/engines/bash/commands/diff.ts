// Worker side: `diff` as GNU diffutils prints it. just-bash's diff prints only a unified diff
// (with a header of its own) and has no `-r`; GNU's default is the "normal" format (`2c2`, `< a`,
// `---`, `> b`), which scripts and models read. The line matching is the `diff` package's.

import { diffArrays, structuredPatch } from "diff";
import { defineCommand, latin1FromBytes } from "just-bash";
import { type Ctx, fail, type Result } from "./shared/context.js";

interface Options {
  unified: number | null;
  brief: boolean;
  recursive: boolean;
  newFile: boolean;
  ignoreCase: boolean;
  ignoreAllSpace: boolean;
  ignoreSpaceChange: boolean;
  ignoreBlankLines: boolean;
  /** The option words as given, for the `diff -r …` lines GNU prints between files. */
  words: string[];
}

function parseOptions(args: string[]): { options: Options; operands: string[] } | string {
  const options: Options = {
    unified: null,
    brief: false,
    recursive: false,
    newFile: false,
    ignoreCase: false,
    ignoreAllSpace: false,
    ignoreSpaceChange: false,
    ignoreBlankLines: false,
    words: [],
  };
  const operands: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "--") {
      operands.push(...args.slice(k + 1));
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      operands.push(a);
      continue;
    }
    options.words.push(a);
    if (a === "--unified" || a === "--brief" || a === "--recursive" || a === "--new-file") {
      if (a === "--unified") options.unified = 3;
      if (a === "--brief") options.brief = true;
      if (a === "--recursive") options.recursive = true;
      if (a === "--new-file") options.newFile = true;
      continue;
    }
    if (a.startsWith("--unified=")) {
      options.unified = Number(a.slice(10));
      continue;
    }
    if (a === "-U") {
      options.unified = Number(args[++k]);
      options.words.push(args[k] ?? "");
      continue;
    }
    if (/^-U\d+$/.test(a)) {
      options.unified = Number(a.slice(2));
      continue;
    }
    if (a === "--ignore-case") options.ignoreCase = true;
    else if (a === "--ignore-all-space") options.ignoreAllSpace = true;
    else if (a === "--ignore-space-change") options.ignoreSpaceChange = true;
    else if (a === "--ignore-blank-lines") options.ignoreBlankLines = true;
    else if (a.startsWith("--")) return a;
    else
      for (const f of a.slice(1)) {
        if (f === "u") options.unified ??= 3;
        else if (f === "q") options.brief = true;
        else if (f === "r") options.recursive = true;
        else if (f === "N") options.newFile = true;
        else if (f === "i") options.ignoreCase = true;
        else if (f === "w") options.ignoreAllSpace = true;
        else if (f === "b") options.ignoreSpaceChange = true;
        else if (f === "B") options.ignoreBlankLines = true;
        else if (/\d/.test(f) && options.unified !== null)
          options.unified = Number(a.replace(/\D/g, ""));
        else return a;
      }
  }
  return { options, operands };
}

interface Text {
  lines: string[];
  /** Whether the last line ends with a newline. */
  endsWithNewline: boolean;
}

function splitLines(text: string): Text {
  if (text === "") return { lines: [], endsWithNewline: true };
  const endsWithNewline = text.endsWith("\n");
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  return { lines, endsWithNewline };
}

function comparer(o: Options): (a: string, b: string) => boolean {
  return (a, b) => {
    let x = a;
    let y = b;
    if (o.ignoreCase) {
      x = x.toLowerCase();
      y = y.toLowerCase();
    }
    if (o.ignoreAllSpace) {
      x = x.replace(/\s+/g, "");
      y = y.replace(/\s+/g, "");
    } else if (o.ignoreSpaceChange) {
      x = x.replace(/\s+/g, " ").replace(/ $/, "");
      y = y.replace(/\s+/g, " ").replace(/ $/, "");
    }
    return x === y;
  };
}

const range = (start: number, count: number) =>
  count <= 1 ? `${count === 0 ? start - 1 : start}` : `${start},${start + count - 1}`;

/** GNU's normal format, from the `diff` package's edit script. */
function normalDiff(a: Text, b: Text, o: Options): string {
  const parts = diffArrays(a.lines, b.lines, { comparator: comparer(o) });
  let out = "";
  let i = 1; // next line of a
  let j = 1; // next line of b
  const noNewline = "\\ No newline at end of file\n";
  const lineOf = (t: Text, n: number, mark: string) =>
    `${mark} ${t.lines[n - 1]}\n${n === t.lines.length && !t.endsWithNewline ? noNewline : ""}`;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    const count = part.value.length;
    if (!part.added && !part.removed) {
      i += count;
      j += count;
      continue;
    }
    let removed = 0;
    let added = 0;
    if (part.removed) {
      removed = count;
      if (parts[k + 1]?.added) added = parts[++k]!.value.length;
    } else added = count;
    if (o.ignoreBlankLines) {
      const blank = (t: Text, from: number, n: number) =>
        t.lines.slice(from - 1, from - 1 + n).every((l) => l.trim() === "");
      if (blank(a, i, removed) && blank(b, j, added)) {
        i += removed;
        j += added;
        continue;
      }
    }
    if (removed && added) out += `${range(i, removed)}c${range(j, added)}\n`;
    else if (removed) out += `${range(i, removed)}d${j - 1}\n`;
    else out += `${i - 1}a${range(j, added)}\n`;
    for (let n = 0; n < removed; n++) out += lineOf(a, i + n, "<");
    if (removed && added) out += "---\n";
    for (let n = 0; n < added; n++) out += lineOf(b, j + n, ">");
    i += removed;
    j += added;
  }
  // A last line that differs only by its missing newline.
  if (out === "" && a.endsWithNewline !== b.endsWithNewline && a.lines.length && b.lines.length) {
    const n = a.lines.length;
    out = `${n}c${b.lines.length}\n${lineOf(a, n, "<")}---\n${lineOf(b, b.lines.length, ">")}`;
  }
  return out;
}

function stamp(mtime: Date | null): string {
  const d = mtime ?? new Date();
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.` +
    `${pad(d.getUTCMilliseconds(), 3)}000000 +0000`
  );
}

/** GNU's unified format. */
function unifiedDiff(
  names: [string, string],
  texts: [string, string],
  times: [Date | null, Date | null],
  context: number,
  o: Options,
): string {
  const patch = structuredPatch(names[0], names[1], texts[0], texts[1], "", "", {
    context,
    ...(o.ignoreCase ? { ignoreCase: true } : {}),
  });
  if (patch.hunks.length === 0) return "";
  let out = `--- ${names[0]}\t${stamp(times[0])}\n+++ ${names[1]}\t${stamp(times[1])}\n`;
  for (const h of patch.hunks) {
    const side = (start: number, lines: number) =>
      lines === 1 ? `${start}` : `${lines === 0 ? start : start},${lines}`;
    out += `@@ -${side(h.oldStart, h.oldLines)} +${side(h.newStart, h.newLines)} @@\n`;
    for (const line of h.lines) out += `${line}\n`;
  }
  return out;
}

interface Entry {
  kind: "file" | "dir" | "missing";
  text?: string;
  mtime?: Date | null;
}

async function load(ctx: Ctx, name: string): Promise<Entry> {
  if (name === "-")
    return {
      kind: "file",
      text: Buffer.from(latin1FromBytes(ctx.stdin), "latin1").toString("utf8"),
      mtime: null,
    };
  const path = ctx.fs.resolvePath(ctx.cwd, name);
  try {
    const st = await ctx.fs.stat(path);
    if (st.isDirectory) return { kind: "dir" };
    return { kind: "file", text: await ctx.fs.readFile(path), mtime: st.mtime };
  } catch {
    return { kind: "missing" };
  }
}

const basename = (p: string) => p.replace(/\/+$/, "").split("/").pop() ?? p;
const join = (dir: string, name: string) => `${dir.replace(/\/+$/, "")}/${name}`;

async function compare(
  ctx: Ctx,
  names: [string, string],
  o: Options,
  top: boolean,
  out: { stdout: string; stderr: string; status: number },
): Promise<void> {
  let [x, y] = [await load(ctx, names[0]), await load(ctx, names[1])];
  // `diff file dir` compares with dir/file (GNU), at the top level only.
  if (top && x.kind === "file" && y.kind === "dir") {
    names = [names[0], join(names[1], basename(names[0]))];
    y = await load(ctx, names[1]);
  } else if (top && x.kind === "dir" && y.kind === "file") {
    names = [join(names[0], basename(names[1])), names[1]];
    x = await load(ctx, names[0]);
  }
  if (o.newFile && x.kind === "missing" && y.kind === "file")
    x = { kind: "file", text: "", mtime: new Date(0) };
  if (o.newFile && y.kind === "missing" && x.kind === "file")
    y = { kind: "file", text: "", mtime: new Date(0) };
  for (const [k, e] of [x, y].entries())
    if (e.kind === "missing") {
      out.stderr += `diff: ${names[k]}: No such file or directory\n`;
      out.status = 2;
      return;
    }
  if (x.kind === "dir" && y.kind === "dir") {
    if (!o.recursive && !top) {
      out.stdout += `Common subdirectories: ${names[0]} and ${names[1]}\n`;
      return;
    }
    const left = new Set(await ctx.fs.readdir(ctx.fs.resolvePath(ctx.cwd, names[0])));
    const right = new Set(await ctx.fs.readdir(ctx.fs.resolvePath(ctx.cwd, names[1])));
    const all = [...new Set([...left, ...right])].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
    for (const name of all) {
      if (!right.has(name) && !o.newFile) {
        out.stdout += `Only in ${names[0]}: ${name}\n`;
        out.status = Math.max(out.status, 1);
      } else if (!left.has(name) && !o.newFile) {
        out.stdout += `Only in ${names[1]}: ${name}\n`;
        out.status = Math.max(out.status, 1);
      } else if (o.recursive || (await load(ctx, join(names[0], name))).kind !== "dir")
        await compare(ctx, [join(names[0], name), join(names[1], name)], o, false, out);
      else
        out.stdout += `Common subdirectories: ${join(names[0], name)} and ${join(names[1], name)}\n`;
    }
    return;
  }
  if (x.kind !== y.kind) {
    const what = (e: Entry) => (e.kind === "dir" ? "directory" : "regular file");
    out.stdout += `File ${names[0]} is a ${what(x)} while file ${names[1]} is a ${what(y)}\n`;
    out.status = Math.max(out.status, 1);
    return;
  }
  const a = splitLines(x.text!);
  const b = splitLines(y.text!);
  const body =
    o.unified !== null
      ? unifiedDiff(names, [x.text!, y.text!], [x.mtime ?? null, y.mtime ?? null], o.unified, o)
      : normalDiff(a, b, o);
  if (body === "") return;
  out.status = Math.max(out.status, 1);
  if (o.brief) {
    out.stdout += `Files ${names[0]} and ${names[1]} differ\n`;
    return;
  }
  if (!top) out.stdout += `diff ${o.words.join(" ")} ${names[0]} ${names[1]}\n`;
  out.stdout += body;
}

export const diff = defineCommand("diff", async (args, ctx): Promise<Result> => {
  const parsed = parseOptions(args);
  // Formats this command does not write (-c, -y, --color…) stay just-bash's.
  if (typeof parsed === "string") {
    if (!ctx.origCommand) return fail("diff", `unrecognized option '${parsed}'`, 2);
    return ctx.origCommand(args);
  }
  const { options, operands } = parsed;
  if (operands.length !== 2) {
    return fail(
      "diff",
      operands.length < 2
        ? `missing operand after '${operands.at(-1) ?? "diff"}'`
        : `extra operand '${operands[2]}'`,
      2,
    );
  }
  const out = { stdout: "", stderr: "", status: 0 };
  await compare(ctx, operands as [string, string], options, true, out);
  return { stdout: out.stdout, stderr: out.stderr, exitCode: out.status };
});

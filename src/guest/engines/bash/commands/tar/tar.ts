// Worker side: `tar`, written to GNU tar's behaviour over just-bash's file system (ctx.fs), with
// fflate for gzip. just-bash's own tar loads its dependencies through CommonJS `require`, which the
// worker's hardening closes. The archive format is GNU tar's default ("gnu": ustar headers with
// the "ustar  " magic and ././@LongLink entries for names over 100 bytes), so that GNU tar and
// file(1) read what this one writes as they read their own.
// The archive format is archive.ts; this is the command: its options, create, list and extract.

import { gzipSync } from "fflate";
import { bytesOutput, defineCommand, latin1FromBytes, unsafeBytesFromLatin1 } from "just-bash";
import type { Ctx, Result } from "../shared/context.js";
import { USER } from "../shared/identity.js";
import { zonedParts } from "../shared/time.js";
import { gunzip, type Member, readTar, writeTar } from "./archive.js";

const USAGE = "Try 'tar --help' or 'tar --usage' for more information.\n";

const TYPE_CHAR: Record<string, string> = {
  "1": "h",
  "2": "l",
  "3": "c",
  "4": "b",
  "5": "d",
  "6": "p",
};

/** `ls -l`'s mode string. */
export function modeString(type: string, mode: number): string {
  const bit = (m: number, c: string) => (mode & m ? c : "-");
  const exec = (x: number, s: number, on: string, off: string) =>
    mode & s ? (mode & x ? on : off) : bit(x, "x");
  return (
    (TYPE_CHAR[type] ?? "-") +
    bit(0o400, "r") +
    bit(0o200, "w") +
    exec(0o100, 0o4000, "s", "S") +
    bit(0o40, "r") +
    bit(0o20, "w") +
    exec(0o10, 0o2000, "s", "S") +
    bit(0o4, "r") +
    bit(0o2, "w") +
    exec(0o1, 0o1000, "t", "T")
  );
}

/** "YYYY-MM-DD HH:MM" in the shell's TZ (UTC when it names no zone the platform knows). */
function stamp(seconds: number, tz: string | undefined): string {
  const p = zonedParts(seconds, tz, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  });
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

/** A glob as GNU tar's --exclude reads it: `*` and `?` match `/` too. */
function globRegex(pattern: string): RegExp {
  let re = "";
  for (let k = 0; k < pattern.length; k++) {
    const c = pattern[k]!;
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", k + 2);
      if (end < 0) re += "\\[";
      else {
        re += `[${pattern
          .slice(k + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        k = end;
      }
    } else if (c === "\\" && k + 1 < pattern.length) re += `\\${pattern[++k]}`;
    else re += c.replace(/[.+^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether --exclude's patterns match a name or any of its trailing sequences of components. */
function excluded(name: string, patterns: RegExp[]): boolean {
  if (patterns.length === 0) return false;
  const parts = name.replace(/\/+$/, "").split("/");
  for (let k = 0; k < parts.length; k++) {
    const tail = parts.slice(k).join("/");
    if (patterns.some((p) => p.test(tail))) return true;
  }
  return false;
}

/** GNU's safer_name_suffix: leading `/` and `../` taken off a member name, and which prefix it was. */
function stripPrefix(name: string): { name: string; removed: string } {
  let k = 0;
  let removed = "";
  for (;;) {
    const rest = name.slice(k);
    const m = /^(\/+|\.\.(\/+|$))/.exec(rest);
    if (!m) break;
    k += m[0].length;
    removed = name.slice(0, k);
  }
  if (!removed) return { name, removed };
  return { name: name.slice(k), removed: removed.replace(/\/+/g, "/") };
}

type Mode = "c" | "x" | "t";

interface Options {
  mode?: Mode;
  file?: string;
  gzip: boolean;
  verbose: number;
  toStdout: boolean;
  keepOld: boolean;
  /** -P: leading `/` and `..` kept. */
  absolute: boolean;
  /** Operands, each with the -C directory in force where it stands. */
  operands: { name: string; dir: string }[];
  exclude: RegExp[];
  dir: string;
}

class Usage extends Error {}

const LONG_FLAGS: Record<string, string> = {
  create: "c",
  extract: "x",
  get: "x",
  list: "t",
  gzip: "z",
  gunzip: "z",
  ungzip: "z",
  verbose: "v",
  "to-stdout": "O",
  "keep-old-files": "k",
  "absolute-names": "P",
};

function parse(args: string[]): Options {
  const o: Options = {
    gzip: false,
    verbose: 0,
    toStdout: false,
    keepOld: false,
    absolute: false,
    operands: [],
    exclude: [],
    dir: ".",
  };
  const setMode = (m: Mode) => {
    if (o.mode && o.mode !== m)
      throw new Usage(
        "You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option",
      );
    o.mode = m;
  };
  const queue = [...args];
  /** A letter; `takeArg` gives it its argument when it needs one. */
  const letter = (c: string, takeArg: () => string | undefined) => {
    const need = () => {
      const v = takeArg();
      if (v === undefined) throw new Usage(`option requires an argument -- '${c}'`);
      return v;
    };
    if (c === "c" || c === "x" || c === "t") setMode(c);
    else if (c === "z") o.gzip = true;
    else if (c === "v") o.verbose++;
    else if (c === "O") o.toStdout = true;
    else if (c === "k") o.keepOld = true;
    else if (c === "P") o.absolute = true;
    else if (c === "f") o.file = need();
    else if (c === "C") o.dir = need();
    else if (!"pom".includes(c)) throw new Usage(`invalid option -- '${c}'`);
  };
  // Old style: a first word without a dash is a bundle of letters whose arguments follow it.
  if (queue.length && queue[0] && !queue[0].startsWith("-")) {
    const bundle = queue.shift()!;
    for (const c of bundle) letter(c, () => queue.shift());
  }
  let onlyOperands = false;
  while (queue.length) {
    const a = queue.shift()!;
    if (onlyOperands || a === "-" || !a.startsWith("-")) {
      o.operands.push({ name: a, dir: o.dir });
    } else if (a === "--") onlyOperands = true;
    else if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const key = a.slice(2, eq < 0 ? undefined : eq);
      const value = () => (eq < 0 ? queue.shift() : a.slice(eq + 1));
      if (key in LONG_FLAGS) letter(LONG_FLAGS[key]!, () => undefined);
      else if (key === "file") o.file = value() ?? "";
      else if (key === "directory") o.dir = value() ?? ".";
      else if (key === "exclude") o.exclude.push(globRegex((value() ?? "").replace(/\/+$/, "")));
      else if (key === "preserve-permissions" || key === "same-owner" || key === "no-same-owner")
        continue;
      else throw new Usage(`unrecognized option '${a}'`);
    } else {
      for (let k = 1; k < a.length; k++) {
        const c = a[k]!;
        const rest = a.slice(k + 1);
        let used = false;
        letter(c, () => {
          used = true;
          return rest ? rest : queue.shift();
        });
        if (used) break;
      }
    }
  }
  return o;
}

const failure = (stderr: string, exitCode = 2): Result => ({ stdout: "", stderr, exitCode });

async function create(ctx: Ctx, o: Options): Promise<Result> {
  if (o.operands.length === 0)
    return failure(`tar: Cowardly refusing to create an empty archive\n${USAGE}`);
  const members: Member[] = [];
  let stderr = "";
  let status = 0;
  let log = "";
  const warned = new Set<string>();
  const add = async (dir: string, name: string) => {
    const path = ctx.fs.resolvePath(ctx.fs.resolvePath(ctx.cwd, dir), name);
    let st: Awaited<ReturnType<Ctx["fs"]["lstat"]>>;
    try {
      st = await ctx.fs.lstat(path);
    } catch {
      stderr += `tar: ${name}: Cannot stat: No such file or directory\n`;
      status = 2;
      return;
    }
    const { name: stored, removed } = o.absolute ? { name, removed: "" } : stripPrefix(name);
    if (removed && !warned.has(removed)) {
      warned.add(removed);
      stderr += `tar: Removing leading \`${removed}' from member names\n`;
    }
    const base: Omit<Member, "name" | "type"> = {
      mode: st.mode & 0o7777,
      uid: USER.uid,
      gid: USER.gid,
      user: USER.name,
      group: USER.name,
      mtime: Math.floor(st.mtime.getTime() / 1000),
      link: "",
      data: new Uint8Array(0),
    };
    const push = (m: Member) => {
      members.push(m);
      if (o.verbose) log += `${m.name}\n`;
    };
    if (st.isSymbolicLink) {
      if (stored) push({ ...base, name: stored, type: "2", link: await ctx.fs.readlink(path) });
    } else if (st.isDirectory) {
      const dirName = stored.replace(/\/+$/, "");
      if (dirName) push({ ...base, name: `${dirName}/`, type: "5" });
      for (const child of (await ctx.fs.readdir(path)).sort()) {
        const childName = name.endsWith("/") ? `${name}${child}` : `${name}/${child}`;
        if (excluded(childName, o.exclude)) continue;
        await add(dir, childName);
      }
    } else if (stored)
      push({ ...base, name: stored, type: "0", data: await ctx.fs.readFileBuffer(path) });
  };
  for (const { name, dir } of o.operands) {
    if (excluded(name, o.exclude)) continue;
    await add(dir, name);
  }
  let archive = writeTar(members);
  if (o.gzip) archive = gzipSync(archive, { level: 6, mtime: 0 });
  if (status) stderr += "tar: Exiting with failure status due to previous errors\n";
  if (!o.file || o.file === "-") {
    return {
      ...bytesOutput(unsafeBytesFromLatin1(Buffer.from(archive).toString("latin1"))),
      stderr: log + stderr,
      exitCode: status,
    };
  }
  await ctx.fs.writeFile(ctx.fs.resolvePath(ctx.cwd, o.file), archive);
  return { stdout: log, stderr, exitCode: status };
}

/** Whether a member is one the operands ask for (the name itself, or inside a named directory). */
const wanted = (name: string, operands: string[]) =>
  operands.length === 0 ||
  operands.some((op) => {
    const n = op.replace(/\/+$/, "");
    const m = name.replace(/\/+$/, "");
    return m === n || m.startsWith(`${n}/`);
  });

async function readArchive(ctx: Ctx, o: Options): Promise<Member[] | Result> {
  let data: Uint8Array;
  const file = o.file ?? "-";
  if (file === "-") data = Buffer.from(latin1FromBytes(ctx.stdin), "latin1");
  else {
    try {
      data = await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, file));
    } catch {
      return failure(
        `tar: ${file}: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n`,
      );
    }
  }
  // GNU tar recognises a compressed archive by its bytes whether or not -z was given.
  if (data[0] === 0x1f && data[1] === 0x8b) {
    try {
      data = gunzip(data, ctx.limits?.maxLiveBytes ?? 256 * 1024 * 1024);
    } catch (e) {
      if (e instanceof RangeError)
        return failure("tar: archive too large to inflate within the sandbox's memory limit\n");
      return failure(
        "\ngzip: stdin: invalid compressed data--format violated\ntar: Child returned status 1\ntar: Error is not recoverable: exiting now\n",
      );
    }
  } else if (o.gzip && data.length) {
    return failure(
      "\ngzip: stdin: not in gzip format\ntar: Child returned status 1\ntar: Error is not recoverable: exiting now\n",
    );
  }
  try {
    return readTar(data);
  } catch {
    return failure(
      "tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n",
    );
  }
}

async function listOrExtract(ctx: Ctx, o: Options): Promise<Result> {
  const got = await readArchive(ctx, o);
  if (!Array.isArray(got)) return got;
  const names = o.operands.map((op) => op.name);
  const found = new Set<string>();
  let stdout = "";
  let stderr = "";
  let status = 0;
  const warned = new Set<string>();
  const tz = ctx.env.get("TZ");
  let ugsWidth = 19;
  const base = ctx.fs.resolvePath(ctx.cwd, o.dir);
  const dirModes: [string, number, number][] = [];
  const out: string[] = [];
  for (const m of got) {
    const { name, removed } = o.absolute ? { name: m.name, removed: "" } : stripPrefix(m.name);
    if (removed && !warned.has(removed)) {
      warned.add(removed);
      stderr += `tar: Removing leading \`${removed}' from member names\n`;
    }
    if (!name) continue;
    const match = names.find((n) => wanted(name, [n]));
    if (names.length && match === undefined) continue;
    if (match !== undefined) found.add(match);
    // GNU refuses a `..` anywhere in the name as it stands in the archive, even a leading one.
    if (o.mode === "x" && !o.absolute && m.name.split("/").includes("..")) {
      stderr += `tar: ${m.name}: Member name contains '..'\n`;
      status = 2;
      continue;
    }
    let line = m.name;
    if (o.verbose > (o.mode === "t" ? 0 : 1)) {
      const user = m.user || String(m.uid);
      const group = m.group || String(m.gid);
      const size = String(m.type === "0" || m.type === "7" ? m.data.length : 0);
      const pad = user.length + 1 + group.length + 1 + size.length;
      if (pad > ugsWidth) ugsWidth = pad;
      line = `${modeString(m.type, m.mode)} ${user}/${group} ${size.padStart(ugsWidth - pad + size.length)} ${stamp(m.mtime, tz)} ${m.name}`;
      if (m.type === "2") line += ` -> ${m.link}`;
      if (m.type === "1") line += ` link to ${m.link}`;
    }
    if (o.mode === "t" || o.verbose) {
      if (o.toStdout) stderr += `${line}\n`;
      else stdout += `${line}\n`;
    }
    if (o.mode === "t") continue;
    if (o.toStdout) {
      if (m.type === "0" || m.type === "7") out.push(Buffer.from(m.data).toString("latin1"));
      continue;
    }
    const target = ctx.fs.resolvePath(base, name);
    const parent = target.slice(0, target.lastIndexOf("/")) || "/";
    try {
      await ctx.fs.mkdir(parent, { recursive: true });
      if (m.type === "5") {
        await ctx.fs.mkdir(target, { recursive: true });
        dirModes.push([target, m.mode, m.mtime]);
        continue;
      }
      let exists = false;
      try {
        await ctx.fs.lstat(target);
        exists = true;
      } catch {}
      if (exists && o.keepOld) {
        stderr += `tar: ${name}: Cannot open: File exists\n`;
        status = 2;
        continue;
      }
      if (exists) await ctx.fs.rm(target, { recursive: false, force: true });
      if (m.type === "2") await ctx.fs.symlink(m.link, target);
      else if (m.type === "1")
        await ctx.fs.link(
          ctx.fs.resolvePath(base, o.absolute ? m.link : stripPrefix(m.link).name),
          target,
        );
      else if (m.type === "0" || m.type === "7") {
        await ctx.fs.writeFile(target, m.data);
        await ctx.fs.chmod(target, m.mode & 0o7777);
        await ctx.fs.utimes(target, new Date(), new Date(m.mtime * 1000));
      }
    } catch (e) {
      stderr += `tar: ${name}: Cannot open: ${e instanceof Error && /EISDIR|directory/i.test(e.message) ? "Is a directory" : "No such file or directory"}\n`;
      status = 2;
    }
  }
  // Directories last, as GNU does, so that a read-only directory still receives its files.
  for (const [dir, mode, mtime] of dirModes.reverse()) {
    try {
      await ctx.fs.chmod(dir, mode & 0o7777);
      await ctx.fs.utimes(dir, new Date(), new Date(mtime * 1000));
    } catch {}
  }
  for (const n of names)
    if (!found.has(n)) {
      stderr += `tar: ${n}: Not found in archive\n`;
      status = 2;
    }
  if (status) stderr += "tar: Exiting with failure status due to previous errors\n";
  if (o.toStdout)
    return { ...bytesOutput(unsafeBytesFromLatin1(out.join(""))), stderr, exitCode: status };
  return { stdout, stderr, exitCode: status };
}

/** `tar -c|-x|-t [-z] [-v] [-f ARCHIVE] [-C DIR] [--exclude=PATTERN] [FILE...]`. */
export const tar = defineCommand("tar", async (args, ctx) => {
  let o: Options;
  try {
    o = parse(args);
  } catch (e) {
    return failure(`tar: ${(e as Error).message}\n${USAGE}`);
  }
  if (!o.mode)
    return failure(
      `tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n${USAGE}`,
    );
  if (o.mode === "c") return create(ctx, o);
  return listOrExtract(ctx, o);
});

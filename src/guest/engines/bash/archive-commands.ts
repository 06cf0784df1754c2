// Worker side: `iconv` (character sets, through the platform's TextDecoder tables), `zip` and `unzip` (through fflate),
// and `mkfifo`, which cannot be real here: just-bash runs a pipeline's commands one after
// another, so a FIFO could never have a reader and a writer at once. It says so and fails.

import { unzipSync, zipSync } from "fflate";
import { bytesOutput, defineCommand, latin1FromBytes, unsafeBytesFromLatin1 } from "just-bash";
import { file } from "./file-command.js";
import { tar } from "./tar.js";
import { type Ctx, fail, type Result } from "./unix-commands.js";

const ok = (stdout: string, stderr = ""): Result => ({ stdout, stderr, exitCode: 0 });

/** Encodings iconv names differently from the WHATWG labels TextDecoder knows. */
const ALIASES: Record<string, string> = {
  latin1: "iso-8859-1",
  l1: "iso-8859-1",
  "iso8859-1": "iso-8859-1",
  "iso-8859-1": "iso-8859-1",
  "iso_8859-1": "iso-8859-1",
  "us-ascii": "ascii",
  ascii: "ascii",
  "ansi_x3.4-1968": "ascii",
  utf8: "utf-8",
  "utf-8": "utf-8",
  utf16: "utf-16",
  "utf-16": "utf-16",
  "utf-16le": "utf-16le",
  "utf-16be": "utf-16be",
  cp1252: "windows-1252",
};

/**
 * A character set as a decoder and an encoder. ISO-8859-1 and ASCII are exact (TextDecoder reads
 * "latin1" as windows-1252, which differs in 0x80–0x9F); the UTF-16s are written here; any other
 * single-byte set TextDecoder knows is encoded through the inverse of its table.
 */
interface Charset {
  decode(bytes: Uint8Array): string;
  encode(text: string): { bytes: Uint8Array; bad: number };
}

function charset(label: string): Charset | null {
  const name = ALIASES[label.toLowerCase()] ?? label.toLowerCase();
  const byteMap = (limit: number): Charset => ({
    decode: (b) => Array.from(b, (x) => String.fromCharCode(x)).join(""),
    encode(text) {
      const out: number[] = [];
      let k = 0;
      for (const ch of text) {
        const c = ch.codePointAt(0)!;
        if (c >= limit) return { bytes: Uint8Array.from(out), bad: k };
        out.push(c);
        k++;
      }
      return { bytes: Uint8Array.from(out), bad: -1 };
    },
  });
  if (name === "iso-8859-1") return byteMap(256);
  if (name === "ascii") return byteMap(128);
  if (name === "utf-8")
    return {
      decode: (b) => new TextDecoder("utf-8").decode(b),
      encode: (t) => ({ bytes: new TextEncoder().encode(t), bad: -1 }),
    };
  if (name === "utf-16le" || name === "utf-16be" || name === "utf-16") {
    const big = name === "utf-16be";
    return {
      decode: (b) => new TextDecoder(big ? "utf-16be" : "utf-16le").decode(b),
      encode(t) {
        // Plain UTF-16 starts with a byte order mark, little-endian (as glibc writes it).
        const units = (name === "utf-16" ? "\ufeff" : "") + t;
        const out = new Uint8Array(units.length * 2);
        for (let k = 0; k < units.length; k++) {
          const u = units.charCodeAt(k);
          out[2 * k] = big ? u >> 8 : u & 0xff;
          out[2 * k + 1] = big ? u & 0xff : u >> 8;
        }
        return { bytes: out, bad: -1 };
      },
    };
  }
  let decoder: { decode(bytes: Uint8Array): string };
  try {
    decoder = new TextDecoder(name);
  } catch {
    return null;
  }
  const table = new Map<string, number>();
  for (let b = 255; b >= 0; b--) {
    const ch = decoder.decode(Uint8Array.of(b));
    if (ch !== "\ufffd") table.set(ch, b);
  }
  if (table.size < 200) return null; // a multi-byte set: reading only would be half an answer
  return {
    decode: (b) => decoder.decode(b),
    encode(text) {
      const out: number[] = [];
      let k = 0;
      for (const ch of text) {
        const b = table.get(ch);
        if (b === undefined) return { bytes: Uint8Array.from(out), bad: k };
        out.push(b);
        k++;
      }
      return { bytes: Uint8Array.from(out), bad: -1 };
    },
  };
}

/** `iconv -f FROM -t TO[//TRANSLIT|//IGNORE] [FILE...]`. */
export const iconv = defineCommand("iconv", async (args, ctx) => {
  let from = "UTF-8";
  let to = "UTF-8";
  let skipInvalid = false;
  const files: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === "-f" || a === "--from-code") from = args[++k] ?? "";
    else if (a.startsWith("--from-code=")) from = a.slice(12);
    else if (a.startsWith("-f") && a.length > 2) from = a.slice(2);
    else if (a === "-t" || a === "--to-code") to = args[++k] ?? "";
    else if (a.startsWith("--to-code=")) to = a.slice(10);
    else if (a.startsWith("-t") && a.length > 2) to = a.slice(2);
    else if (a === "-c") skipInvalid = true;
    else if (a === "-s" || a === "--silent") continue;
    else if (a.startsWith("-") && a !== "-") return fail("iconv", `unrecognized option '${a}'`);
    else files.push(a);
  }
  const [toName = "", ...suffixes] = to.split("//");
  const ignore = skipInvalid || suffixes.some((s) => /^ignore$/i.test(s));
  const translit = suffixes.some((s) => /^translit$/i.test(s));
  const source = charset(from);
  if (!source) return fail("iconv", `conversion from '${from}' is not supported`);
  const target = charset(toName);
  if (!target) return fail("iconv", `conversion to '${toName}' is not supported`);
  const inputs: Uint8Array[] = [];
  for (const f of files.length ? files : ["-"]) {
    try {
      inputs.push(
        f === "-"
          ? Buffer.from(latin1FromBytes(ctx.stdin), "latin1")
          : await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, f)),
      );
    } catch {
      return fail("iconv", `cannot open input file '${f}': No such file or directory`);
    }
  }
  let text = source.decode(Buffer.concat(inputs));
  if (translit) text = text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  let stderr = "";
  let exitCode = 0;
  const parts: Uint8Array[] = [];
  for (;;) {
    const { bytes, bad } = target.encode(text);
    parts.push(bytes);
    if (bad < 0) break;
    const rest = [...text].slice(bad);
    if (translit) {
      parts.push(target.encode("?").bytes);
    } else if (!ignore) {
      stderr = `iconv: cannot convert\n`;
      exitCode = 1;
      break;
    } else exitCode = 1;
    text = rest.slice(1).join("");
  }
  const out = Buffer.concat(parts).toString("latin1");
  return { ...bytesOutput(unsafeBytesFromLatin1(out)), stderr, exitCode };
});

/** `mkfifo`: not possible here (see the top of this file). */
export const mkfifo = defineCommand("mkfifo", async (args) =>
  fail(
    "mkfifo",
    `cannot create fifo '${args.filter((a) => !a.startsWith("-")).join(" ")}': named pipes are not supported in polybox's WASM bash (its pipelines run one command after another); use a pipe (|), a temporary file, or a native sandbox`,
  ),
);

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

export const archiveCommands = [iconv, mkfifo, zip, unzip, tar, file];

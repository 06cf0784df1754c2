// Worker side: `file`, written to file(1)'s answers (version 5.4x) for the kinds a shell meets:
// empty files, directories, symbolic links, text (ASCII, UTF-8, ISO-8859; line terminators, long
// lines, scripts, JSON, HTML, XML) and the common binary formats by their magic numbers (PNG,
// JPEG, GIF, PDF, Zip, gzip, tar, ELF). just-bash's own file loads libmagic through CommonJS
// `require`, which the worker closes; this reads just-bash's file system (ctx.fs) only.

import { defineCommand, latin1FromBytes } from "just-bash";
import type { Ctx, Result } from "./shared/context.js";
import { zonedParts } from "./shared/time.js";

/** What file(1) says of some bytes: its description, mime type and charset. */
interface Kind {
  desc: string;
  mime: string;
  charset: string;
}

const latin1 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString("latin1");

/** file(1) reads this much of a file. */
const READ_LIMIT = 1024 * 1024;
/** A line longer than this is a "very long line". */
const MAX_LINE = 300;

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32be = (b: Uint8Array, at: number) => u16be(b, at) * 65536 + u16be(b, at + 2);
const u32le = (b: Uint8Array, at: number) => u16le(b, at) + u16le(b, at + 2) * 65536;
const starts = (b: Uint8Array, magic: number[] | string, at = 0) =>
  typeof magic === "string"
    ? [...magic].every((c, k) => b[at + k] === c.charCodeAt(0))
    : magic.every((x, k) => b[at + k] === x);

/** The text encoding of some bytes, as file(1) names it, or null when they are not text. */
function encoding(b: Uint8Array): { name: string; charset: string } | null {
  // Control characters file(1) counts as text: BEL BS TAB LF VT FF CR ESC.
  const textControl = (c: number) => (c >= 7 && c <= 13) || c === 27;
  let ascii = true;
  for (const c of b) {
    if (c >= 0x80) ascii = false;
    else if (c < 0x20 && !textControl(c)) return null;
    else if (c === 0x7f) return null;
  }
  if (ascii) return { name: "ASCII", charset: "us-ascii" };
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(b);
    const bom = starts(b, [0xef, 0xbb, 0xbf]);
    return {
      name: bom ? "Unicode text, UTF-8 (with BOM)" : "Unicode text, UTF-8",
      charset: "utf-8",
    };
  } catch {
    // Not UTF-8: an 8-bit character set.
  }
  if (b.every((c) => c < 0x80 || c >= 0xa0)) return { name: "ISO-8859", charset: "iso-8859-1" };
  return { name: "Non-ISO extended-ASCII", charset: "unknown-8bit" };
}

/** ", with CRLF line terminators" and the like, as file(1) appends them to a text's kind. */
function lineNotes(b: Uint8Array): string {
  let crlf = 0;
  let cr = 0;
  let lf = 0;
  let longest = 0;
  let line = 0;
  let escapes = false;
  for (let k = 0; k < b.length; k++) {
    const c = b[k]!;
    if (c === 13 && b[k + 1] === 10) {
      crlf++;
      k++;
    } else if (c === 13) cr++;
    else if (c === 10) lf++;
    else {
      if (c === 27) escapes = true;
      line++;
      continue;
    }
    longest = Math.max(longest, line);
    line = 0;
  }
  longest = Math.max(longest, line);
  let notes = "";
  if (longest > MAX_LINE) notes += `, with very long lines (${longest})`;
  if (!crlf && !cr && !lf) notes += ", with no line terminators";
  else if (crlf || cr) {
    const kinds = [crlf && "CRLF", cr && "CR", lf && "LF"].filter(Boolean);
    notes += `, with ${kinds.join(", ")} line terminators`;
  }
  if (escapes) notes += ", with escape sequences";
  return notes;
}

/** Script kinds by interpreter: [description before the encoding, mime type, encoding shown]. */
const SCRIPTS: [RegExp, string, string][] = [
  [/^bash$/, "Bourne-Again shell script, ", "text/x-shellscript"],
  [/^(sh|dash|ash)$/, "POSIX shell script, ", "text/x-shellscript"],
  [/^zsh$/, "Paul Falstad's zsh script, ", "text/x-shellscript"],
  [/^python[0-9.]*$/, "Python script, ", "text/x-script.python"],
];

function textKind(b: Uint8Array, enc: { name: string; charset: string }): Kind {
  const text = latin1(b.subarray(0, 4096));
  const plain = `${enc.name} text`;
  const notes = lineNotes(b);
  const shebang = /^#!\s*(\S+)(?:[ \t]+(\S+))?/.exec(text);
  if (shebang) {
    const path = shebang[1]!;
    const base = path.split("/").pop()!;
    const interp = base === "env" && shebang[2] ? shebang[2] : base;
    if (interp === "node" || interp === "nodejs")
      return {
        desc: `Node.js script executable, ${plain}${notes}`,
        mime: "application/javascript",
        charset: enc.charset,
      };
    if (interp === "perl")
      return { desc: "Perl script text executable", mime: "text/x-perl", charset: enc.charset };
    for (const [re, desc, mime] of SCRIPTS)
      if (re.test(interp))
        return { desc: `${desc}${plain} executable${notes}`, mime, charset: enc.charset };
    return {
      desc: `a ${path} script, ${plain} executable${notes}`,
      mime: "text/plain",
      charset: enc.charset,
    };
  }
  const trimmed = text.replace(/^\s+/, "");
  if (/^[[{]/.test(trimmed)) {
    try {
      JSON.parse(new TextDecoder().decode(b));
      return { desc: "JSON text data", mime: "application/json", charset: enc.charset };
    } catch {
      // Not JSON.
    }
  }
  if (/^<\?xml version="([0-9.]+)"/.test(trimmed)) {
    const v = /^<\?xml version="([0-9.]+)"/.exec(trimmed)![1];
    return { desc: `XML ${v} document, ${plain}${notes}`, mime: "text/xml", charset: enc.charset };
  }
  if (/^<(!doctype html|html)[\s>]/i.test(trimmed))
    return { desc: `HTML document, ${plain}${notes}`, mime: "text/html", charset: enc.charset };
  return { desc: `${plain}${notes}`, mime: "text/plain", charset: enc.charset };
}

/** ctime(3)'s "Mon Nov 23 18:34:58 2026", in the shell's TZ (UTC when the platform knows no such zone). */
function ctime(seconds: number, tz: string | undefined): string {
  const p = zonedParts(seconds, tz, {
    weekday: "short",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    year: "numeric",
  });
  return `${p.weekday} ${p.month} ${String(p.day).padStart(2)} ${p.hour}:${p.minute}:${p.second} ${p.year}`;
}

function gzipKind(b: Uint8Array, whole: boolean, tz: string | undefined): string {
  let desc = "gzip compressed data";
  const flags = b[3]!;
  if (flags & 8) {
    let at = 10;
    if (flags & 4) at += 2 + u16le(b, 10);
    const end = b.indexOf(0, at);
    desc += `, was "${latin1(b.subarray(at, end < 0 ? b.length : end))}"`;
  }
  const mtime = u32le(b, 4);
  if (mtime) desc += `, last modified: ${ctime(mtime, tz)}`;
  if (b[8] === 2) desc += ", max compression";
  else if (b[8] === 4) desc += ", max speed";
  const os: Record<number, string> = {
    0: "FAT filesystem (MS-DOS, OS/2, NT)",
    3: "Unix",
    7: "Macintosh",
    11: "NTFS filesystem (NT)",
  };
  if (os[b[9]!]) desc += `, from ${os[b[9]!]}`;
  // file(1) reads the trailer only from a file it can seek in, not from a pipe.
  if (whole && b.length >= 18) desc += `, original size modulo 2^32 ${u32le(b, b.length - 4)}`;
  return desc;
}

const PNG_COLOUR: Record<number, string> = {
  0: " grayscale",
  2: "/color RGB",
  3: " colormap",
  4: " gray+alpha",
  6: "/color RGBA",
};

function jpegKind(b: Uint8Array): string {
  let desc = "JPEG image data";
  if (starts(b, "JFIF\0", 6)) {
    const units =
      ["aspect ratio", "resolution (DPI)", "resolution (DPCM)"][b[13]!] ?? "aspect ratio";
    desc += `, JFIF standard ${b[11]}.${String(b[12]).padStart(2, "0")}, ${units}, density ${u16be(b, 14)}x${u16be(b, 16)}, segment length ${u16be(b, 4)}`;
  }
  // The frame header (SOFn) has the precision, size and components.
  let at = 2;
  while (at + 9 < b.length && b[at] === 0xff) {
    const marker = b[at + 1]!;
    const len = u16be(b, at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const kind =
        marker === 0xc0 ? "baseline" : marker === 0xc2 ? "progressive" : "extended sequential";
      desc += `, ${kind}, precision ${b[at + 4]}, ${u16be(b, at + 7)}x${u16be(b, at + 5)}, components ${b[at + 9]}`;
      break;
    }
    at += 2 + len;
  }
  return desc;
}

/** The kind of a regular file's bytes. `whole` is false for a pipe (stdin). */
function kindOf(b: Uint8Array, whole: boolean, tz: string | undefined): Kind {
  if (b.length === 0) return { desc: "empty", mime: "inode/x-empty", charset: "binary" };
  const enc = encoding(b);
  const charset = enc?.charset ?? "binary";
  if (b.length === 1)
    return {
      desc: "very short file (no magic)",
      mime: enc ? "text/plain" : "application/octet-stream",
      charset,
    };
  const magic = (desc: string, mime: string): Kind => ({ desc, mime, charset });
  if (starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) && starts(b, "IHDR", 12)) {
    const colour = PNG_COLOUR[b[25]!] ?? "";
    return magic(
      `PNG image data, ${u32be(b, 16)} x ${u32be(b, 20)}, ${b[24]}-bit${colour}, ${b[28] ? "interlaced" : "non-interlaced"}`,
      "image/png",
    );
  }
  if (starts(b, "GIF87a") || starts(b, "GIF89a"))
    return magic(
      `GIF image data, version ${latin1(b.subarray(3, 6))}, ${u16le(b, 6)} x ${u16le(b, 8)}`,
      "image/gif",
    );
  if (starts(b, [0xff, 0xd8, 0xff])) return magic(jpegKind(b), "image/jpeg");
  if (starts(b, "%PDF-")) {
    const v = /^%PDF-(\d+\.\d+)/.exec(latin1(b.subarray(0, 16)));
    return magic(`PDF document${v ? `, version ${v[1]}` : ""}`, "application/pdf");
  }
  if (starts(b, [0x50, 0x4b, 0x03, 0x04])) {
    const need = u16le(b, 4);
    const method =
      ({ 0: "store", 8: "deflate" } as Record<number, string>)[u16le(b, 8)] ?? String(u16le(b, 8));
    return magic(
      `Zip archive data, at least v${Math.floor(need / 10)}.${need % 10} to extract, compression method=${method}`,
      "application/zip",
    );
  }
  if (starts(b, [0x1f, 0x8b])) return magic(gzipKind(b, whole, tz), "application/gzip");
  if (b.length >= 512 && starts(b, "ustar  \0", 257))
    return magic("POSIX tar archive (GNU)", "application/x-tar");
  if (b.length >= 512 && starts(b, "ustar\0", 257))
    return magic("POSIX tar archive", "application/x-tar");
  if (starts(b, [0x7f, 0x45, 0x4c, 0x46])) {
    const bits = b[4] === 2 ? "64-bit" : "32-bit";
    const order = b[5] === 2 ? "MSB" : "LSB";
    return magic(`ELF ${bits} ${order}`, "application/octet-stream");
  }
  if (!enc) return { desc: "data", mime: "application/octet-stream", charset: "binary" };
  return textKind(b, enc);
}

type Output = "desc" | "mime-type" | "mime";

/** `file [-b] [-L|-h] [-i|--mime|--mime-type] FILE...`. */
export const file = defineCommand("file", async (args, ctx: Ctx): Promise<Result> => {
  let brief = false;
  let follow = false;
  let output: Output = "desc";
  const names: string[] = [];
  let options = true;
  for (const a of args) {
    if (options && a === "--") options = false;
    else if (options && a.startsWith("--") && a.length > 2) {
      if (a === "--brief") brief = true;
      else if (a === "--mime-type") output = "mime-type";
      else if (a === "--mime") output = "mime";
      else if (a === "--dereference") follow = true;
      else if (a === "--no-dereference") follow = false;
      else return { stdout: "", stderr: `file: unrecognized option '${a}'\n`, exitCode: 1 };
    } else if (options && a.startsWith("-") && a.length > 1) {
      for (const c of a.slice(1)) {
        if (c === "b") brief = true;
        else if (c === "i") output = "mime";
        else if (c === "L") follow = true;
        else if (c === "h") follow = false;
        else return { stdout: "", stderr: `file: invalid option -- '${c}'\n`, exitCode: 1 };
      }
    } else names.push(a);
  }
  if (names.length === 0)
    return {
      stdout: "",
      stderr:
        "Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]\n            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]\n            <file> ...\n       file -C [-m <magicfiles>]\n       file [--help]\n",
      exitCode: 1,
    };
  const tz = ctx.env.get("TZ");
  const shown = names.map((n) => (n === "-" ? "/dev/stdin" : n));
  const width = Math.max(...shown.map((n) => n.length));
  let stdout = "";
  for (const [k, name] of names.entries()) {
    let kind: Kind | string;
    if (name === "-") {
      const bytes = Buffer.from(latin1FromBytes(ctx.stdin), "latin1");
      kind = kindOf(bytes.subarray(0, READ_LIMIT), false, tz);
    } else {
      const path = ctx.fs.resolvePath(ctx.cwd, name);
      kind = `cannot open \`${name}' (No such file or directory)`;
      try {
        const st = follow ? await ctx.fs.stat(path) : await ctx.fs.lstat(path);
        if (st.isSymbolicLink) {
          const target = await ctx.fs.readlink(path);
          const broken = !(await ctx.fs.exists(path));
          kind = {
            desc: `${broken ? "broken " : ""}symbolic link to ${target}`,
            mime: "inode/symlink",
            charset: "binary",
          };
        } else if (st.isDirectory)
          kind = { desc: "directory", mime: "inode/directory", charset: "binary" };
        else {
          const bytes = await ctx.fs.readFileBuffer(path);
          kind = kindOf(bytes.subarray(0, READ_LIMIT), bytes.length <= READ_LIMIT, tz);
        }
      } catch {
        // Reported as file(1) reports it, with exit status 0.
      }
    }
    const answer =
      typeof kind === "string"
        ? kind
        : output === "mime-type"
          ? kind.mime
          : output === "mime"
            ? `${kind.mime}; charset=${kind.charset}`
            : kind.desc;
    const label = shown[k]!;
    stdout += brief ? `${answer}\n` : `${label}:${" ".repeat(width - label.length)} ${answer}\n`;
  }
  return { stdout, stderr: "", exitCode: 0 };
});

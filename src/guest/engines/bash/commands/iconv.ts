// Worker side: `iconv`, which just-bash lacks, over the platform's TextDecoder tables (iconv-lite
// is CommonJS, which the hardened worker cannot load).

import { bytesOutput, defineCommand, latin1FromBytes, unsafeBytesFromLatin1 } from "just-bash";
import { fail } from "./shared/context.js";

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

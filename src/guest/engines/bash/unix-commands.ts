// Worker side: everyday Unix commands that just-bash does not ship, written to GNU coreutils'
// behaviour (output format, options people use, exit codes). Like extra-commands.ts, they work on
// just-bash's own file system through the command context and see nothing outside it.

import { defineCommand, latin1FromBytes } from "just-bash";
import { MACHINE } from "../common/machine.js";

export type Result = { stdout: string; stderr: string; exitCode: number };
export type Ctx = Parameters<Parameters<typeof defineCommand>[1]>[1];

const ok = (stdout: string): Result => ({ stdout, stderr: "", exitCode: 0 });
/** Single-quotes a word for the shell. */
export const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

export const fail = (name: string, message: string, exitCode = 1): Result => ({
  stdout: "",
  stderr: `${name}: ${message}\n`,
  exitCode,
});

/** stdin or a file's bytes; `-` is stdin. */
export async function readInput(ctx: Ctx, file: string | undefined): Promise<Uint8Array> {
  if (file === undefined || file === "-") return Buffer.from(latin1FromBytes(ctx.stdin), "latin1");
  return ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, file));
}

const missing = (name: string, file: string) => fail(name, `${file}: No such file or directory`);

/** `cmp [-s] FILE1 [FILE2]`: the first byte where two files differ. */
const cmp = defineCommand("cmp", async (args, ctx) => {
  const silent = args.includes("-s") || args.includes("--silent") || args.includes("--quiet");
  const files = args.filter((a) => !a.startsWith("-") || a === "-");
  if (files.length === 0) return fail("cmp", "missing operand", 2);
  const [a, b = "-"] = files as [string, string?];
  let x: Uint8Array;
  let y: Uint8Array;
  try {
    x = await readInput(ctx, a);
  } catch {
    return { ...missing("cmp", a), exitCode: 2 };
  }
  try {
    y = await readInput(ctx, b);
  } catch {
    return { ...missing("cmp", b), exitCode: 2 };
  }
  let line = 1;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i])
      return {
        stdout: silent ? "" : `${a} ${b} differ: byte ${i + 1}, line ${line}\n`,
        stderr: "",
        exitCode: 1,
      };
    if (x[i] === 10) line++;
  }
  if (x.length === y.length) return ok("");
  const shorter = x.length < y.length ? a : b;
  return {
    stdout: "",
    stderr: silent
      ? ""
      : `cmp: EOF on ${shorter} after byte ${n}, line ${line - (n > 0 && x[n - 1] === 10 ? 1 : 0)}\n`,
    exitCode: 1,
  };
});

const hex = (b: number) => b.toString(16).padStart(2, "0");

/** `xxd [-p] [-c N] [FILE]`: a hex dump in xxd's default layout, or plain (`-p`). */
const xxd = defineCommand("xxd", async (args, ctx) => {
  let plain = false;
  let cols: number | undefined;
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-p" || arg === "-ps" || arg === "-plain") plain = true;
    else if (arg === "-c") cols = Number(args[++i]);
    else if (arg.startsWith("-") && arg !== "-") return fail("xxd", `unsupported option ${arg}`);
    else file = arg;
  }
  let data: Uint8Array;
  try {
    data = await readInput(ctx, file);
  } catch {
    return fail("xxd", `${file}: No such file or directory`, 2);
  }
  if (plain) {
    const width = cols ?? 30;
    let out = "";
    for (let i = 0; i < data.length; i += width)
      out += `${Array.from(data.subarray(i, i + width), hex).join("")}\n`;
    return ok(out);
  }
  const width = cols ?? 16;
  let out = "";
  for (let off = 0; off < data.length; off += width) {
    const row = data.subarray(off, off + width);
    let groups = "";
    for (let i = 0; i < width; i += 2) {
      const pair = Array.from(row.subarray(i, i + 2), hex).join("");
      groups += `${pair.padEnd(4, " ")} `;
    }
    const text = Array.from(row, (b) =>
      b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".",
    ).join("");
    out += `${off.toString(16).padStart(8, "0")}: ${groups} ${text}\n`;
  }
  return ok(out);
});

/** POSIX cksum: CRC-32 (polynomial 0x04C11DB7, MSB first) over the data and then its length. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function posixCksum(data: Uint8Array): number {
  let crc = 0;
  const step = (byte: number) => {
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  };
  // An indexed loop with the step inlined: 64 MiB in well under a second, not six.
  for (let i = 0; i < data.length; i++)
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ data[i]!) & 0xff]!) >>> 0;
  for (let n = data.length; n > 0; n >>>= 8) step(n & 0xff);
  return ~crc >>> 0;
}

/** `cksum [FILE...]`: POSIX checksum and size. */
const cksum = defineCommand("cksum", async (args, ctx) => {
  const files = args.length > 0 ? args : [undefined];
  let stdout = "";
  let stderr = "";
  for (const file of files) {
    try {
      const data = await readInput(ctx, file);
      stdout += `${posixCksum(data)} ${data.length}${file && file !== "-" ? ` ${file}` : ""}\n`;
    } catch {
      stderr += `cksum: ${file}: No such file or directory\n`;
    }
  }
  return { stdout, stderr, exitCode: stderr ? 1 : 0 };
});

function randomIndex(n: number): number {
  const buf = new Uint32Array(1);
  crypto.getRandomValues(buf);
  return buf[0]! % n;
}

/** `shuf [-n N] [-e ARG... | -i LO-HI | FILE]`: a random permutation of the input lines. */
const shuf = defineCommand("shuf", async (args, ctx) => {
  let count = Number.POSITIVE_INFINITY;
  let items: string[] | undefined;
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-n") count = Number(args[++i]);
    else if (arg.startsWith("-n")) count = Number(arg.slice(2));
    else if (arg === "-e") {
      items = args.slice(i + 1).filter((a) => a !== "-n");
      break;
    } else if (arg === "-i") {
      const m = /^(-?\d+)-(-?\d+)$/.exec(args[++i] ?? "");
      if (!m) return fail("shuf", `invalid input range: '${args[i]}'`);
      const lo = Number(m[1]);
      const hi = Number(m[2]);
      if (hi - lo > 10_000_000) return fail("shuf", "input range too large");
      items = [];
      for (let v = lo; v <= hi; v++) items.push(String(v));
    } else if (arg.startsWith("-") && arg !== "-") return fail("shuf", `unsupported option ${arg}`);
    else file = arg;
  }
  if (!Number.isFinite(count) && count !== Number.POSITIVE_INFINITY)
    return fail("shuf", "invalid line count");
  if (!items) {
    let text: string;
    try {
      text = new TextDecoder().decode(await readInput(ctx, file));
    } catch {
      return fail("shuf", `${file}: No such file or directory`);
    }
    items = text.split("\n");
    if (items.at(-1) === "") items.pop();
  }
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomIndex(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  const picked = items.slice(0, Math.min(items.length, count));
  return ok(picked.length ? `${picked.join("\n")}\n` : "");
});

/**
 * The named parts of an instant (`seconds` since the epoch) in the shell's TZ, or in UTC when it
 * names no zone the platform knows: what `tar -tv` and `file` print dates from.
 */
export function zonedParts(
  seconds: number,
  tz: string | undefined,
  options: Intl.DateTimeFormatOptions,
): Partial<Record<Intl.DateTimeFormatPartTypes, string>> {
  let fmt: Intl.DateTimeFormat;
  try {
    fmt = new Intl.DateTimeFormat("en-US", { ...options, hourCycle: "h23", timeZone: tz || "UTC" });
  } catch {
    fmt = new Intl.DateTimeFormat("en-US", { ...options, hourCycle: "h23", timeZone: "UTC" });
  }
  return Object.fromEntries(
    fmt.formatToParts(new Date(seconds * 1000)).map((x) => [x.type, x.value]),
  );
}

/** The sandbox's host name: just-bash's `$HOSTNAME` and `hostname` say it too. */
export const HOST_NAME = MACHINE.host;

/** `uname [-asnrvm]`: the sandbox's own answer, the same everywhere polybox runs. */
const UNAME = { s: "Linux", n: HOST_NAME, r: "6.1.0-polybox", v: "#1 SMP polybox", m: "wasm32" };
const uname = defineCommand("uname", async (args) => {
  const flags = args.join("").replace(/-/g, "").split("");
  if (flags.includes("a"))
    return ok(`${[UNAME.s, UNAME.n, UNAME.r, UNAME.v, UNAME.m, "GNU/Linux"].join(" ")}\n`);
  const keys = flags.length ? flags : ["s"];
  const out: string[] = [];
  for (const k of keys) {
    if (k === "o") out.push("GNU/Linux");
    else if (k in UNAME) out.push(UNAME[k as keyof typeof UNAME]);
    else return fail("uname", `invalid option -- '${k}'`);
  }
  return ok(`${out.join(" ")}\n`);
});

/** `id [-u|-g|-n]` and `whoami`: the sandbox's one user (also in /etc/passwd: see below). */
export const USER = { uid: MACHINE.uid, gid: MACHINE.gid, name: MACHINE.user };

/**
 * /etc/passwd, /etc/group and /etc/hostname, as a Debian-like system has them, naming the same
 * user as `id` and `whoami` and the same host as `hostname`: scripts read them (`cut -d:
 * -f1 /etc/passwd`, `getent`-less lookups of a home directory). Written afresh each run.
 */
export const ETC_FILES: Readonly<Record<string, string>> = {
  "/etc/passwd": `root:x:0:0:root:/root:/bin/bash\n${USER.name}:x:${USER.uid}:${USER.gid}:${USER.name}:${MACHINE.home}:/bin/bash\n`,
  "/etc/group": `root:x:0:\n${USER.name}:x:${USER.gid}:\n`,
  "/etc/hostname": `${HOST_NAME}\n`,
};
const id = defineCommand("id", async (args) => {
  const name = args.includes("-n");
  if (args.includes("-u")) return ok(`${name ? USER.name : USER.uid}\n`);
  if (args.includes("-g")) return ok(`${name ? USER.name : USER.gid}\n`);
  if (args.includes("-G")) return ok(`${name ? USER.name : USER.gid}\n`);
  return ok(
    `uid=${USER.uid}(${USER.name}) gid=${USER.gid}(${USER.name}) groups=${USER.gid}(${USER.name})\n`,
  );
});
const whoami = defineCommand("whoami", async () => ok(`${USER.name}\n`));

/** numfmt's unit systems: SI (1000) and IEC (1024, optionally with an `i` after the letter). */
const SCALES = { si: 1000, iec: 1024, "iec-i": 1024 } as const;
type Scale = keyof typeof SCALES;
const PREFIXES = "KMGTPEZY";

/** Rounds away from zero to `digits` decimals, GNU numfmt's default `--round=from-zero`. */
function fromZero(value: number, digits: number): number {
  const f = 10 ** digits;
  // The epsilon keeps a value that is already exact (1.5 * 10) from being pushed up a step.
  return (Math.sign(value) * Math.ceil(Math.abs(value) * f - 1e-9)) / f;
}

/** A number with an optional unit letter (`2K`, `1.5Mi`) in the `from` system, or null. */
function parseScaled(text: string, from: Scale | "auto" | null): number | null {
  const m = /^([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)([KMGTPEZY])?(i)?$/i.exec(text);
  if (!m) return null;
  const value = Number(m[1]);
  if (!m[2]) return value;
  if (from === null) return null;
  const power = PREFIXES.indexOf(m[2].toUpperCase()) + 1;
  const base = from === "auto" ? (m[3] ? 1024 : 1000) : SCALES[from];
  if (from === "iec-i" && !m[3]) return null;
  return value * base ** power;
}

/** A number in the `to` system, as GNU prints it: one decimal below 10, else a whole number. */
function formatScaled(value: number, to: Scale | null, precision: number | null): string {
  if (to === null)
    return precision === null ? String(fromZero(value, 0)) : value.toFixed(precision);
  const base = SCALES[to];
  let power = 0;
  let scaled = value;
  while (Math.abs(scaled) >= base && power < PREFIXES.length) {
    scaled /= base;
    power++;
  }
  if (power === 0)
    return precision === null ? String(fromZero(value, 0)) : value.toFixed(precision);
  const digits = precision ?? (Math.abs(scaled) < 10 ? 1 : 0);
  let rounded = fromZero(scaled, digits);
  if (precision === null && digits === 1 && Math.abs(rounded) >= 10) rounded = fromZero(scaled, 0);
  const text =
    precision === null && Math.abs(rounded) >= 10 ? String(rounded) : rounded.toFixed(digits);
  return `${text}${PREFIXES[power - 1]}${to === "iec-i" ? "i" : ""}`;
}

/**
 * `numfmt [--from=UNIT] [--to=UNIT] [--suffix=S] [--format=%.Nf] [--field=N] [--header[=N]]
 * [NUMBER...]`: numbers to and from human-readable units (`--to=iec 1048576` → `1.0M`), from the
 * arguments or, one per line, from stdin. UNIT is si, iec, iec-i (and auto for --from).
 */
const numfmt = defineCommand("numfmt", async (args, ctx) => {
  let from: Scale | "auto" | null = null;
  let to: Scale | null = null;
  let suffix = "";
  let precision: number | null = null;
  let field = 1;
  let header = 0;
  const numbers: string[] = [];
  const unit = (value: string, auto: boolean): Scale | "auto" | undefined =>
    value in SCALES || (auto && value === "auto") ? (value as Scale | "auto") : undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const value = () => inline ?? args[++i] ?? "";
    if (a === "--") {
      numbers.push(...args.slice(i + 1));
      break;
    } else if (flag === "--from") {
      const u = unit(value(), true);
      if (u === undefined) return fail("numfmt", `invalid argument for --from`);
      from = u;
    } else if (flag === "--to") {
      const u = unit(value(), false);
      if (u === undefined || u === "auto") return fail("numfmt", `invalid argument for --to`);
      to = u;
    } else if (flag === "--suffix") suffix = value();
    else if (flag === "--format") {
      const m = /%[-0#' ]*\d*(?:\.(\d+))?f/.exec(value());
      if (!m) return fail("numfmt", "invalid format");
      precision = m[1] === undefined ? null : Number(m[1]);
    } else if (flag === "--field") field = Number(value()) || 1;
    else if (flag === "--header") header = inline === undefined ? 1 : Number(inline) || 1;
    else if (a.startsWith("-") && a !== "-" && !/^-\d/.test(a))
      return fail("numfmt", `unsupported option ${a}`);
    else numbers.push(a);
  }
  const convert = (token: string): string | null => {
    const value = parseScaled(token, from);
    return value === null ? null : `${formatScaled(value, to, precision)}${suffix}`;
  };
  const out: string[] = [];
  if (numbers.length > 0) {
    for (const n of numbers) {
      const text = convert(n);
      if (text === null)
        return {
          stdout: out.map((l) => `${l}\n`).join(""),
          stderr: `numfmt: invalid number: '${n}'\n`,
          exitCode: 2,
        };
      out.push(text);
    }
  } else {
    const lines = latin1FromBytes(ctx.stdin).split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    for (const [k, line] of lines.entries()) {
      if (k < header) {
        out.push(line);
        continue;
      }
      // Fields are runs of non-blanks; the blanks between them are kept as they were.
      const parts = line.split(/(\s+)/);
      const lead = parts[0] === "" ? 2 : 0;
      const at = lead + (field - 1) * 2;
      const text = parts[at] === undefined ? null : convert(parts[at]);
      if (text === null)
        return {
          stdout: out.map((l) => `${l}\n`).join(""),
          stderr: `numfmt: invalid number: '${parts[at] ?? ""}'\n`,
          exitCode: 2,
        };
      parts[at] = text;
      out.push(parts.join(""));
    }
  }
  return ok(out.map((l) => `${l}\n`).join(""));
});

export const unixCommands = [cmp, xxd, cksum, shuf, uname, id, whoami, numfmt];

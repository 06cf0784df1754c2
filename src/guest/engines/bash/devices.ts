// Worker side: endless streams, the devices /dev/zero, /dev/urandom, /dev/random and the output of
// `yes`. just-bash has no devices (its /dev/zero is an empty file) and passes each command's whole
// output to the next, so an endless stream cannot exist. The commands that say how much they read
// (`head -c N`, `head -n N`, `dd count=N`) take exactly that much from a device; a command that
// reads a device whole (`cat /dev/urandom`, `tr … < /dev/urandom`), and `yes`, give a window of
// WINDOW_BYTES, and when such a window reaches `head`, `tail` or `dd` unchanged
// (`cat /dev/zero | head -c N`, `head -c N < /dev/zero`, `yes | head -n N`) they recognise it and
// read the endless stream itself. Every size is checked against the run's memory before it is
// allocated, so a read too large for `memoryMb` stops the run with just-bash's live-byte limit (a
// memory_limit status) rather than coming back short.

import { InMemoryFs, unsafeBytesFromLatin1 } from "just-bash";
import type { Ctx } from "./commands/shared/context.js";

/** An endless stream: zeros, random bytes, or one text (yes's line) over and over. */
export type Endless =
  | { readonly kind: "zero" }
  | { readonly kind: "random" }
  | { readonly kind: "repeat"; readonly unit: string };

const ZERO: Endless = { kind: "zero" };
const RANDOM: Endless = { kind: "random" };
const DEVICES: Readonly<Record<string, Endless>> = {
  "/dev/zero": ZERO,
  "/dev/urandom": RANDOM,
  "/dev/random": RANDOM,
};

/** What a whole read of an endless stream gives (bash would read it forever). */
export const WINDOW_BYTES = 1024 * 1024;

/** The commands that read an endless stream themselves when its window reaches them. */
const STREAM_READERS = new Set(["head", "tail", "dd"]);

/** Whole reads whose window may still reach a command that knows the stream (newest last). */
const MAX_WINDOWS = 4;

/** V8's longest string, in chars: just-bash passes a command's output as one. */
const MAX_STRING = 0x1fffffe8;

/** Web Crypto fills at most this many bytes per call. */
const ENTROPY_CHUNK = 65536;

type ReadOptions = Parameters<InMemoryFs["readFile"]>[1];
type WriteOptions = Parameters<InMemoryFs["writeFile"]>[2];

/**
 * Content as the file system stores it. A byte string (what redirects write, a char per byte)
 * becomes bytes natively: just-bash copies it a char at a time, 2 s for 64 MiB.
 */
function bytesOf(content: string | Uint8Array, options: WriteOptions): string | Uint8Array {
  if (typeof content !== "string") return content;
  const encoding = typeof options === "string" ? options : options?.encoding;
  return encoding === "binary" || encoding === "latin1" ? Buffer.from(content, "latin1") : content;
}

/**
 * The first `bytes` bytes of the stream, as a latin1 byte string (a char per byte, just-bash's
 * pipe form). The caller has checked the size with `reserve`.
 */
export function endlessBytes(source: Endless, bytes: number): string {
  if (source.kind === "repeat")
    return source.unit.repeat(Math.ceil(bytes / source.unit.length)).slice(0, bytes);
  const buffer = source.kind === "zero" ? Buffer.alloc(bytes) : Buffer.allocUnsafe(bytes);
  if (source.kind === "random")
    for (let at = 0; at < bytes; at += ENTROPY_CHUNK)
      crypto.getRandomValues(buffer.subarray(at, Math.min(bytes, at + ENTROPY_CHUNK)));
  return buffer.toString("latin1");
}

/**
 * Checks that `bytes` more bytes fit in the run's memory, through just-bash's own accounting: past
 * it, just-bash stops the script (exit 126, "<site>: live byte limit exceeded"), which the engine
 * reports as memory_limit. Commands make their output a string from a buffer, two copies at once,
 * so `bytes` is what they hold at their peak.
 */
export function reserve(ctx: Ctx, bytes: number, site: string): void {
  // One string holds at most this many chars in V8, whatever the memory.
  if (bytes > 2 * MAX_STRING) {
    site = `${site} (more than the ${MAX_STRING} bytes one string can hold)`;
    bytes = Number.POSITIVE_INFINITY;
  }
  const scope = ctx.executionScope;
  if (scope) {
    scope
      .reserveBytes(Number.isSafeInteger(bytes) ? bytes : Number.MAX_SAFE_INTEGER, site)
      .release();
    return;
  }
  if (!(bytes <= ctx.limits.maxLiveBytes))
    throw new Error(`${site}: live byte limit exceeded (${ctx.limits.maxLiveBytes} bytes)`);
}

/**
 * Why a command cannot read what it was given: `label` was made from a window of `source`, and
 * the command would read past the window's end, where the real stream goes on.
 */
export function cutShort(command: string, label: string, source: Endless): string {
  const stream =
    source.kind === "repeat"
      ? "the output of yes"
      : source.kind === "zero"
        ? "/dev/zero"
        : "/dev/urandom";
  return (
    `${command}: ${label} is cut short: it was made from ${stream} read whole, of which ` +
    `polybox's Bash reads ${WINDOW_BYTES / (1024 * 1024)} MiB (bash would read on); ` +
    `read the stream with head -c N or dd count=N before the other commands\n`
  );
}

/** The device a path names (through symbolic links), if any. */
async function deviceOf(
  realpath: (path: string) => Promise<string>,
  path: string,
): Promise<Endless | undefined> {
  const direct = DEVICES[path];
  if (direct) return direct;
  try {
    return DEVICES[await realpath(path)];
  } catch {
    return undefined;
  }
}

/** The device a command's file operand names, if any (`-` is stdin, never a device). */
export function deviceOperand(ctx: Ctx, file: string): Promise<Endless | undefined> {
  if (file === "-") return Promise.resolve(undefined);
  return deviceOf((p) => ctx.fs.realpath(p), ctx.fs.resolvePath(ctx.cwd, file));
}

/** What commands ask of the endless streams beyond reading the devices. */
export interface Devices {
  /**
   * The stream whose window `bytes` is, if it is one still unclaimed this run (it is then
   * claimed): the command reads the stream itself rather than the window's few bytes.
   */
  claim(bytes: string): Endless | undefined;
  /** A window of the stream, which `claim` will know. */
  window(source: Endless): string;
  /**
   * The stream `bytes` were made from, if they are a window that a command changed on its way
   * (`tr -dc a-z < /dev/urandom`), or what a command made of such bytes: input cut at the
   * window's end, where the real stream goes on. A command that would read past that end
   * (`| head -c 2000000`) must fail rather than come back short.
   */
  cutFrom(bytes: string): Endless | undefined;
}

/**
 * just-bash's in-memory file system with the endless devices: reading one whole gives a fresh
 * window, writing to one discards the data (as the kernel's do), and their files stay empty, so
 * `stat` gives size 0 as it does for the real ones.
 */
export class DeviceFs extends InMemoryFs implements Devices {
  private windows: { source: Endless; bytes: string }[] = [];
  /** Outputs made from windows (or from such outputs), by length for a cheap lookup. */
  private cut = new Map<number, { source: Endless; bytes: string }[]>();
  private cutCount = 0;
  private zeros: string | null = null;

  /** Forgets the windows of the last run, and makes sure the device files exist. */
  async startRun(): Promise<void> {
    this.windows = [];
    this.cut.clear();
    this.cutCount = 0;
    await this.mkdir("/dev", { recursive: true });
    // just-bash writes /dev/zero when a shell starts; a guest may have removed the others.
    for (const path of Object.keys(DEVICES))
      if (!(await super.exists(path))) await super.writeFile(path, new Uint8Array(0));
  }

  /** Where `bytes` stands among this run's unclaimed windows (-1: it is none of them). */
  private windowAt(bytes: string): number {
    return this.windows.findIndex((w) => w.bytes.length === bytes.length && w.bytes === bytes);
  }

  claim(bytes: string): Endless | undefined {
    const at = this.windowAt(bytes);
    if (at < 0) return undefined;
    const [window] = this.windows.splice(at, 1);
    return window!.source;
  }

  window(source: Endless): string {
    let bytes: string;
    if (source.kind === "zero") bytes = this.zeros ??= endlessBytes(ZERO, WINDOW_BYTES);
    else if (source.kind === "random") bytes = endlessBytes(RANDOM, WINDOW_BYTES);
    else {
      const unit = source.unit.length;
      bytes = endlessBytes(source, Math.max(1, Math.floor(WINDOW_BYTES / unit)) * unit);
    }
    this.windows.push({ source, bytes });
    if (this.windows.length > MAX_WINDOWS) this.windows.shift();
    return bytes;
  }

  cutFrom(bytes: string): Endless | undefined {
    return this.cut.get(bytes.length)?.find((c) => c.bytes === bytes)?.source;
  }

  /**
   * Runs one command (just-bash's `aroundCommand`). If its stdin is a window no command claimed,
   * or bytes already cut, what it prints is made from a stream cut short, and `cutFrom` will
   * know it. The commands that read the streams themselves (`STREAM_READERS`) decide alone: they
   * read the real stream from a window, and fail rather than read past a cut.
   */
  async aroundCommand<R extends { stdout: string; stdoutKind?: "text" | "bytes" }>(
    name: string,
    stdin: string,
    run: () => Promise<R>,
  ): Promise<R> {
    if (stdin.length === 0 || STREAM_READERS.has(name)) return run();
    const source = this.windows[this.windowAt(stdin)]?.source ?? this.cutFrom(stdin);
    const result = await run();
    if (!source || result.stdout.length === 0) return result;
    // The next command's stdin is the bytes of this output: text goes on as UTF-8.
    const bytes =
      result.stdoutKind === "bytes"
        ? result.stdout
        : Buffer.from(result.stdout, "utf8").toString("latin1");
    // Only a pipeline's last few stages matter; older ones are let go.
    if (++this.cutCount > 4 * MAX_WINDOWS) {
      this.cut.clear();
      this.cutCount = 1;
    }
    const list = this.cut.get(bytes.length) ?? [];
    list.push({ source, bytes });
    this.cut.set(bytes.length, list);
    return result;
  }

  private device(path: string): Promise<Endless | undefined> {
    return deviceOf((p) => this.realpath(p), this.resolvePath("/", path));
  }

  override async readFile(path: string, options?: ReadOptions): Promise<string> {
    const device = await this.device(path);
    if (!device) return super.readFile(path, options);
    const encoding = (typeof options === "string" ? options : options?.encoding) ?? "utf8";
    const bytes = this.window(device);
    if (encoding === "binary" || encoding === "latin1") return bytes;
    return Buffer.from(bytes, "latin1").toString(encoding);
  }

  override async readFileBytes(path: string): ReturnType<InMemoryFs["readFileBytes"]> {
    const device = await this.device(path);
    if (!device) return super.readFileBytes(path);
    return unsafeBytesFromLatin1(this.window(device));
  }

  override async readFileBuffer(path: string): Promise<Uint8Array> {
    const device = await this.device(path);
    if (!device) return super.readFileBuffer(path);
    return Buffer.from(this.window(device), "latin1");
  }

  override async writeFile(...args: Parameters<InMemoryFs["writeFile"]>): Promise<void> {
    if (await this.device(args[0])) return;
    return super.writeFile(args[0], bytesOf(args[1], args[2]), args[2]);
  }

  override async appendFile(...args: Parameters<InMemoryFs["appendFile"]>): Promise<void> {
    if (await this.device(args[0])) return;
    return super.appendFile(args[0], bytesOf(args[1], args[2]), args[2]);
  }
}

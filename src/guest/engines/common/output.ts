// Worker side: collects one run's stdout and stderr under a byte cap and streams them live.
// Output past the cap is dropped (never buffered), and the engine is asked to stop the run.
// Live chunks are flushed at each write, not on a timer: while guest code runs synchronously the
// worker's event loop is blocked and a timer would never fire, and a worker killed at its
// deadline takes unsent output with it. So the first FREE_SENDS writes of a run go out as they
// are made; past that (a flood), a completed line goes out at once unless lines arrive faster
// than LINE_MS apart, which is batched by size and age.

export type StreamName = "stdout" | "stderr";

const FLUSH_BYTES = 8 * 1024;
const FLUSH_MS = 50;
const LINE_MS = 10;
/** Writes sent one by one before batching starts: every ordinary program's output, live. */
const FREE_SENDS = 1000;

export class OutputSink {
  readonly text: Record<StreamName, string> = { stdout: "", stderr: "" };
  private readonly bytes: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  private pending: Record<StreamName, string> = { stdout: "", stderr: "" };
  private lastFlush = 0;
  private sends = 0;
  truncated = false;
  /** Which stream crossed the cap first, if any. */
  overflowed: StreamName | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly live: (stream: StreamName, text: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  write(stream: StreamName, chunk: string): void {
    if (chunk.length === 0) return;
    const room = this.maxBytes - this.bytes[stream];
    let kept = chunk;
    const size = Buffer.byteLength(chunk);
    if (size > room) {
      kept = truncateUtf8(chunk, Math.max(0, room));
      this.truncated = true;
      if (this.overflowed === null) {
        this.overflowed = stream;
        this.onOverflow();
      }
    }
    if (kept.length > 0) {
      this.bytes[stream] += Buffer.byteLength(kept);
      this.text[stream] += kept;
      this.pending[stream] += kept;
    }
    if (this.sends < FREE_SENDS) {
      this.flush();
      return;
    }
    const age = Date.now() - this.lastFlush;
    const lineDone = kept.endsWith("\n") && age >= LINE_MS;
    if (lineDone || this.pending[stream].length >= FLUSH_BYTES || age >= FLUSH_MS) this.flush();
  }

  flush(): void {
    this.lastFlush = Date.now();
    for (const stream of ["stdout", "stderr"] as const) {
      if (this.pending[stream]) {
        this.sends++;
        this.live(stream, this.pending[stream]);
      }
      this.pending[stream] = "";
    }
  }
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `maxBytes`, never splitting a char. */
export function truncateUtf8(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

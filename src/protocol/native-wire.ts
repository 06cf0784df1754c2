// The messages between the trusted side and the agent inside a native jail: one JSON object per
// line. Bytes (file contents, wheels, images) travel as base64 under a `$b64` key.

import type { EngineLanguage, RunRequest } from "./messages.js";
import type { NetReply, TunnelReply } from "./net.js";
import type { AgentEvent } from "./schemas.js";

export type ToAgent =
  | { type: "run"; id: number; language: EngineLanguage; request: RunRequest }
  | { type: "cancel"; id: number }
  /** The answer to a request the agent's proxy relayed for run `id`. */
  | { type: "net-reply"; id: number; req: number; reply: NetReply }
  /** A frame of CONNECT tunnel `tun` of run `id`, from the trusted side. */
  | { type: "tunnel"; id: number; tun: number; reply: TunnelReply }
  /**
   * Start the interpreter for `language` now, as its first run would, so that a jail kept spare
   * for the next sandbox answers that run at once. No guest code has run in the jail yet.
   */
  | { type: "warm"; language: EngineLanguage; memoryMb: number }
  /**
   * The certificate authority (PEM) of the tunnels the trusted side ends itself (hosts it adds
   * headers or secrets to): sent before any interpreter starts, for the jail's programs to trust.
   */
  | { type: "trust"; ca: string };

/** What the agent sends: its schema (schemas.ts) is what the trusted side checks it against. */
export type FromAgent = AgentEvent;

export function encode(message: unknown): string {
  // `this[key]` is the value before toJSON: a Buffer would otherwise arrive as a number array.
  return `${JSON.stringify(message, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Uint8Array ? { $b64: Buffer.from(raw).toString("base64") } : value;
  })}\n`;
}

/** One line's message, or undefined when it is not JSON (the caller validates its shape). */
export function decode(line: string): unknown {
  try {
    return parseLine(line);
  } catch {
    return undefined;
  }
}

function parseLine(line: string): unknown {
  return JSON.parse(line, (_key, value: unknown) => {
    if (
      value &&
      typeof value === "object" &&
      typeof (value as { $b64?: unknown }).$b64 === "string"
    )
      return new Uint8Array(Buffer.from((value as { $b64: string }).$b64, "base64"));
    return value;
  });
}

/**
 * Calls `onLine` for every complete line arriving on `stream`. Each chunk is searched once: the
 * part of a line that came before is kept aside, not searched again, so a long line costs time
 * linear in its length, not in its length times the number of chunks it came in.
 */
export function readLines(
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
  limit?: { maxChars: number; onOverflow: () => void },
): void {
  let pending: string[] = [];
  let pendingChars = 0;
  let overflowed = false;
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    if (overflowed) return;
    let start = 0;
    let at = chunk.indexOf("\n");
    while (at >= 0) {
      pending.push(chunk.slice(start, at));
      const line = pending.join("");
      pending = [];
      pendingChars = 0;
      if (limit && line.length > limit.maxChars) return overflow();
      if (line) onLine(line);
      start = at + 1;
      at = chunk.indexOf("\n", start);
    }
    if (start < chunk.length) {
      pending.push(chunk.slice(start));
      pendingChars += chunk.length - start;
      // A line that never ends must not grow without bound on this side.
      if (limit && pendingChars > limit.maxChars) overflow();
    }
  });
  function overflow(): void {
    overflowed = true;
    pending = [];
    limit?.onOverflow();
  }
}

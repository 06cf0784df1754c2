// MCP adapter: the response budget, the last line of defence between a run's output and the
// client's connection. Clients cap what they read: the SDK's stdio transport drops the connection
// on a line over 10 MiB (its ReadBuffer's STDIO_DEFAULT_MAX_BUFFER_SIZE), and Claude's apps refuse
// a tool result over 1 MB. No tool answer may pass `maxBytes` (JSON, UTF-8, as sent, with room for
// the JSON-RPC envelope): a run's answer first leaves out attached images and then displays, from
// the last, each with a note saying how to fetch it; anything still over is cut, text first.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ExecuteResult, RunImage } from "../index.js";

/** Under the SDK stdio client's 10 MiB line limit, with room to spare. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** The smallest budget that still leaves room for a status line and the notes. */
export const MIN_RESPONSE_BYTES = 16 * 1024;
/** What the JSON-RPC envelope around a result takes: `{"result":…,"jsonrpc":"2.0","id":…}`. */
const ENVELOPE_BYTES = 1024;

const FLAG = "--max-response";

/**
 * The size of a result on the wire. Image and audio data are base64, which JSON never escapes,
 * so their length is counted without copying megabytes into another string.
 */
export function responseBytes(result: CallToolResult): number {
  let blobs = 0;
  const content = result.content.map((c) => {
    if ((c.type === "image" || c.type === "audio") && typeof c.data === "string") {
      blobs += c.data.length;
      return { ...c, data: "" };
    }
    return c;
  });
  return Buffer.byteLength(JSON.stringify({ ...result, content })) + blobs + ENVELOPE_BYTES;
}

/**
 * A run's answer within `maxBytes`: `build` renders the run as given, attaching `attached`;
 * while the answer is too big, the last attached image is left out, then the last display, each
 * named in a note. What is still over is cut by `capResponse` afterwards.
 */
export function fitRun<A extends CallToolResult>(
  run: ExecuteResult,
  inline: readonly RunImage[],
  maxBytes: number,
  build: (run: ExecuteResult, attached: readonly RunImage[]) => A,
): A {
  const attached = [...inline];
  const displays = [...run.displays];
  const notes = [...(run.notes ?? [])];
  const why = `the answer would pass the ${formatBytes(maxBytes)} response limit (${FLAG})`;
  for (;;) {
    const view: ExecuteResult = { ...run, displays, ...(notes.length > 0 ? { notes } : {}) };
    const answer = build(view, attached);
    if (responseBytes(answer) <= maxBytes) return answer;
    const image = attached.pop();
    if (image) {
      notes.push(`${describeImage(image)} was not attached: ${why}; ${howToGet(image, run)}`);
      continue;
    }
    const display = displays.pop();
    if (display) {
      notes.push(
        `display ${displays.length + 1} (${display.mimeType}, ${formatBytes(displayBytes(display))}) was left out: ${why}; write it to a file in the workspace and read it with read_file`,
      );
      continue;
    }
    return answer;
  }
}

function describeImage(image: RunImage): string {
  return `image ${image.path ?? "(displayed)"} (${image.mimeType}, ${formatBytes(image.data.byteLength)})`;
}

function howToGet(image: RunImage, run: ExecuteResult): string {
  if (image.path === null)
    return "save it to a file (e.g. savefig) in a sandbox from create_sandbox and read it with read_file";
  if (run.sandboxId === null)
    return `run in a sandbox from create_sandbox to keep it, then read_file ${image.path}`;
  return `read it with read_file {"sandbox_id": "${run.sandboxId}", "path": "${image.path}"}`;
}

function displayBytes(d: ExecuteResult["displays"][number]): number {
  return Buffer.byteLength(d.text) + (d.data === undefined ? 0 : Buffer.byteLength(d.data));
}

/**
 * Any answer within `maxBytes`, whatever produced it: binary content blocks go first (from the
 * last), then the longest strings are cut (the text block, which repeats the structured content
 * for the model, is usually the longest), each cut marked. If nothing fits, an error that says so.
 */
export function capResponse(result: CallToolResult, maxBytes: number): CallToolResult {
  let size = responseBytes(result);
  if (size <= maxBytes) return result;
  const out: CallToolResult = structuredClone(result);
  const dropped: string[] = [];
  while (size > maxBytes) {
    const at = out.content.findLastIndex((c) => c.type !== "text");
    if (at < 0) break;
    const [block] = out.content.splice(at, 1);
    dropped.push(block?.type ?? "content");
    size = responseBytes(out);
  }
  const why = `this answer was over the ${formatBytes(maxBytes)} response limit (${FLAG})`;
  if (dropped.length > 0) {
    const note = `[left out: ${dropped.length} ${dropped.length === 1 ? "attachment" : "attachments"} (${dropped.join(", ")}); ${why}]`;
    out.content.push({ type: "text", text: note });
    size = responseBytes(out);
  }
  const marker = `\n… [cut: ${why}]`;
  for (let round = 0; size > maxBytes && round < 64; round++) {
    const longest = longestString(out);
    if (!longest || longest.value.length <= marker.length) break;
    // Cut at least the excess (counted in UTF-8 bytes, never fewer characters), at most half.
    const keep = Math.max(
      0,
      Math.min(
        Math.floor(longest.value.length / 2),
        longest.value.length - (size - maxBytes) - marker.length,
      ),
    );
    longest.set(`${longest.value.slice(0, keep)}${marker}`);
    size = responseBytes(out);
  }
  if (size <= maxBytes) return out;
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `RESPONSE_TOO_LARGE: ${why} even after cutting it; ask for less at once (e.g. fewer files, or read parts of a file)`,
      },
    ],
  };
}

interface StringSlot {
  value: string;
  set: (value: string) => void;
}

/** The longest string in the text blocks and the structured content, with a way to replace it. */
function longestString(result: CallToolResult): StringSlot | null {
  let best: StringSlot | null = null;
  const consider = (value: string, set: (v: string) => void) => {
    if (!best || value.length > best.value.length) best = { value, set };
  };
  for (const block of result.content) {
    if (block.type === "text") consider(block.text, (v) => (block.text = v));
  }
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => {
        if (typeof v === "string") consider(v, (s) => (node[i] = s));
        else walk(v);
      });
    } else if (node !== null && typeof node === "object") {
      const obj = node as Record<string, unknown>;
      for (const [k, v] of Object.entries(obj)) {
        if (typeof v === "string") consider(v, (s) => (obj[k] = s));
        else walk(v);
      }
    }
  };
  walk(result.structuredContent);
  return best;
}

/** Sizes in the words a reader uses: 8 MiB, 512 KiB, 300 B. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${+(n / 1024 ** 2).toFixed(1)} MiB`;
}

// Worker side: `tail` as GNU's, byte-exact (the options and the loop over operands are
// shared with head: shared/head-tail.ts). An endless stream has no last part, which it says.

import type { Command } from "just-bash";
import type { Devices } from "../devices.js";
import { fail } from "./shared/context.js";
import { afterLines, headTailCommand, lastLines, type Options } from "./shared/head-tail.js";

function tailOf(text: string, o: Options): string {
  if (o.mode === "bytes") {
    if (o.signed) return text.slice(Math.max(0, o.count - 1));
    return o.count === 0 ? "" : text.slice(Math.max(0, text.length - o.count));
  }
  if (o.signed) {
    if (o.count <= 1) return text;
    const start = afterLines(text, o.count - 1, o.delimiter);
    return start < 0 ? "" : text.slice(start);
  }
  return text.slice(lastLines(text, o.count, o.delimiter));
}

/** `tail`; the endless streams (through `devices`) are refused. */
export const tail = (devices: Devices): Command =>
  headTailCommand("tail", devices, {
    text: tailOf,
    endless: (_ctx, _source, label) =>
      fail("tail", `${label} never ends: it has no last part (bash would read it forever)`),
  });

// Worker side: `head` as GNU's, byte-exact (the options and the loop over operands are
// shared with tail: shared/head-tail.ts). From an endless stream (a device, `yes`) it takes
// exactly the bytes or lines asked for, each size checked against the run's memory first.

import type { Command } from "just-bash";
import { type Devices, type Endless, endlessBytes, reserve } from "../devices.js";
import { type Ctx, fail, type Result } from "./shared/context.js";
import { afterLines, headTailCommand, lastLines, type Options } from "./shared/head-tail.js";

function headOf(text: string, o: Options): string {
  if (o.mode === "bytes")
    return o.signed ? text.slice(0, Math.max(0, text.length - o.count)) : text.slice(0, o.count);
  if (o.signed) return text.slice(0, lastLines(text, o.count, o.delimiter));
  const end = afterLines(text, o.count, o.delimiter);
  return end < 0 ? text : text.slice(0, end);
}

/** Random bytes up to and including the `count`th delimiter. */
function randomLines(ctx: Ctx, count: number, delimiter: string, site: string): string {
  const chunks: string[] = [];
  let held = 0;
  let found = 0;
  const code = delimiter.charCodeAt(0);
  while (found < count) {
    const size = 64 * 1024;
    reserve(ctx, 2 * (held + size), site);
    const chunk = endlessBytes({ kind: "random" }, size);
    let end = size;
    for (let i = 0; i < size; i++)
      if (chunk.charCodeAt(i) === code && ++found === count) {
        end = i + 1;
        break;
      }
    chunks.push(end === size ? chunk : chunk.slice(0, end));
    held += end;
  }
  return chunks.join("");
}

/** What `head` takes from an endless stream, or a failure. */
function headOfEndless(ctx: Ctx, source: Endless, name: string, o: Options): string | Result {
  if (o.signed)
    return fail(
      "head",
      `${name} never ends: all but its last ${o.count} ${o.mode} would never come (bash would read it forever)`,
    );
  const site = `head: ${o.count} ${o.mode} of ${name}`;
  if (o.mode === "bytes") {
    reserve(ctx, 2 * o.count, site);
    return endlessBytes(source, o.count);
  }
  if (o.count === 0) return "";
  if (source.kind === "random") return randomLines(ctx, o.count, o.delimiter, site);
  const unit = source.kind === "zero" ? "\0" : source.unit;
  const perUnit = unit.split(o.delimiter).length - 1;
  // No line end ever comes: GNU's head reads on, holding it all, until memory runs out.
  if (perUnit === 0) reserve(ctx, Number.POSITIVE_INFINITY, `head: ${name} has no line ends`);
  const units = Math.ceil(o.count / perUnit);
  reserve(ctx, 2 * units * unit.length, site);
  const text = endlessBytes(source, units * unit.length);
  return text.slice(0, afterLines(text, o.count, o.delimiter));
}

/** `head`, reading the endless streams through `devices`. */
export const head = (devices: Devices): Command =>
  headTailCommand("head", devices, { text: headOf, endless: headOfEndless });

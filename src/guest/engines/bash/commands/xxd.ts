// Worker side: `xxd`, which just-bash lacks: xxd's default hex dump layout, or plain (`-p`).

import { defineCommand } from "just-bash";
import { fail, ok, readInput } from "./shared/context.js";

const hex = (b: number) => b.toString(16).padStart(2, "0");

/** `xxd [-p] [-c N] [FILE]`: a hex dump in xxd's default layout, or plain (`-p`). */
export const xxd = defineCommand("xxd", async (args, ctx) => {
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

// Worker side: `paste -sd,` and `paste - - -`, in front of just-bash's paste.
// Like every wrapper here, it handles only the forms just-bash gets wrong or refuses and hands
// every other call to just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand, latin1FromBytes } from "just-bash";
import { original } from "./shared/context.js";

/** `paste -sd,`: GNU takes clustered flags with the delimiter attached; just-bash wants them apart. */
export const paste = defineCommand("paste", async (args, ctx) => {
  const out: string[] = [];
  for (const a of args) {
    const m = /^-([sz]*)d(.*)$/.exec(a) ?? /^-(s+)()$/.exec(a);
    if (m && a !== "-") {
      for (const f of m[1]!) out.push(`-${f}`);
      if (a.includes("d")) out.push("-d", ...(m[2] ? [m[2]] : []));
    } else out.push(a);
  }
  // GNU reads stdin when no file is named; just-bash asks for one.
  const isOperand = (a: string, k: number) =>
    (a === "-" || !a.startsWith("-")) && out[k - 1] !== "-d";
  if (!out.some(isOperand)) out.push("-");
  // `paste - - -`: N columns from stdin's lines in turn (just-bash gets three or more wrong).
  const operands = out.filter(isOperand);
  const serial = out.includes("-s");
  if (operands.length >= 2 && operands.every((a) => a === "-") && !serial) {
    const at = out.indexOf("-d");
    const delims =
      at >= 0 ? (out[at + 1] ?? "\t").replace(/\\t/g, "\t").replace(/\\n/g, "\n") : "\t";
    const text = latin1FromBytes(ctx.stdin);
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    let stdout = "";
    for (let k = 0; k < lines.length; k += operands.length) {
      for (let c = 0; c < operands.length; c++) {
        if (c > 0) stdout += delims[(c - 1) % delims.length] ?? "\t";
        stdout += lines[k + c] ?? "";
      }
      stdout += "\n";
    }
    return { stdout: Buffer.from(stdout, "latin1").toString("utf8"), stderr: "", exitCode: 0 };
  }
  return original(ctx, "paste", out);
});

// Worker side: `shuf`, which just-bash lacks: GNU's -n, -e and -i over the platform's
// cryptographic random numbers.

import { defineCommand } from "just-bash";
import { fail, ok, readInput } from "./shared/context.js";

function randomIndex(n: number): number {
  const buf = new Uint32Array(1);
  crypto.getRandomValues(buf);
  return buf[0]! % n;
}

/** `shuf [-n N] [-e ARG... | -i LO-HI | FILE]`: a random permutation of the input lines. */
export const shuf = defineCommand("shuf", async (args, ctx) => {
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

// Worker side: `seq -f FORMAT`, in front of just-bash's seq, which has no -f.
// Like every wrapper here, it handles only those forms and hands every other call to
// just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { defineCommand } from "just-bash";
import { fail, original } from "./shared/context.js";

/** printf's %e/%f/%g (with flags, width, precision) for one number, as C formats it. */
function formatFloat(spec: string, value: number): string | null {
  const m = /^%([-+ #0]*)(\d*)(?:\.(\d+))?([eEfFgG])$/.exec(spec);
  if (!m) return null;
  const [, flags = "", width = "", precision, conv = "g"] = m;
  const p = precision === undefined ? 6 : Number(precision);
  let body: string;
  const abs = Math.abs(value);
  const lower = conv.toLowerCase();
  const exp = (digits: number) => {
    const [mant, e = "0"] = abs.toExponential(digits).split("e");
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  };
  if (lower === "f") body = abs.toFixed(p);
  else if (lower === "e") body = exp(p);
  else {
    const P = p === 0 ? 1 : p;
    const e = abs === 0 ? 0 : Math.floor(Math.log10(abs));
    body = e < -4 || e >= P ? exp(P - 1) : abs.toFixed(Math.max(0, P - 1 - e));
    if (!flags.includes("#"))
      body = body.replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
  }
  if (conv === conv.toUpperCase()) body = body.toUpperCase();
  const sign =
    value < 0 || Object.is(value, -0)
      ? "-"
      : flags.includes("+")
        ? "+"
        : flags.includes(" ")
          ? " "
          : "";
  const w = Number(width || 0);
  if (flags.includes("-")) return (sign + body).padEnd(w);
  if (flags.includes("0")) return sign + body.padStart(w - sign.length, "0");
  return (sign + body).padStart(w);
}

/** `seq -f FORMAT`: each number through the format's one floating-point conversion. */
export const seq = defineCommand("seq", async (args, ctx) => {
  const at = args.findIndex((a) => a === "-f" || a.startsWith("--format") || /^-f./.test(a));
  if (at < 0) return original(ctx, "seq", args);
  const flag = args[at]!;
  const separate = flag === "-f" || flag === "--format";
  const format = separate ? args[at + 1] : flag.replace(/^-f|^--format=/, "");
  if (format === undefined) return original(ctx, "seq", args);
  const rest = [...args.slice(0, at), ...args.slice(separate ? at + 2 : at + 1)];
  const conv = /%[-+ #0]*\d*(?:\.\d+)?[eEfFgG]/.exec(format);
  if (!conv || format.replace(conv[0], "").replace(/%%/g, "").includes("%"))
    return fail("seq", `format '${format}' has no % directive or more than one`);
  let sep = "\n";
  const numbers: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!;
    if (a === "-s") sep = rest[++k] ?? "\n";
    else if (a.startsWith("-s")) sep = a.slice(2);
    else if (a === "-w")
      return fail("seq", "format string may not be specified when printing equal width strings");
    else numbers.push(a);
  }
  const values = numbers.map(Number);
  if (values.length === 0 || values.length > 3 || values.some((v) => !Number.isFinite(v)))
    return original(ctx, "seq", args);
  const [first, step, last] =
    values.length === 1
      ? [1, 1, values[0]!]
      : values.length === 2
        ? [values[0]!, 1, values[1]!]
        : (values as [number, number, number]);
  if (step === 0) return fail("seq", "invalid Zero increment value: '0'");
  const out: string[] = [];
  const decimals = Math.max(
    ...numbers.map((n) => (n.includes(".") ? n.length - n.indexOf(".") - 1 : 0)),
  );
  for (let k = 0; ; k++) {
    const v = Number((first + k * step).toFixed(decimals));
    if (step > 0 ? v > last : v < last) break;
    if (out.length >= 10_000_000) return fail("seq", "too many numbers");
    out.push(format.replace(conv[0], formatFloat(conv[0], v)!).replace(/%%/g, "%"));
  }
  return { stdout: out.length ? `${out.join(sep)}\n` : "", stderr: "", exitCode: 0 };
});

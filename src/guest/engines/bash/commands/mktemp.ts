// Worker side: `mktemp`, which just-bash lacks.

import { defineCommand } from "just-bash";
import { fail } from "./shared/context.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomName(template: string): string {
  const xs = /X*$/.exec(template)![0].length;
  const bytes = new Uint8Array(xs);
  crypto.getRandomValues(bytes);
  let suffix = "";
  for (const b of bytes) suffix += ALPHABET[b % ALPHABET.length];
  return template.slice(0, template.length - xs) + suffix;
}

/** `mktemp [-d] [-p DIR | --tmpdir[=DIR]] [TEMPLATE]`: makes a new file or directory, prints it. */
export const mktemp = defineCommand("mktemp", async (args, ctx) => {
  let directory = false;
  let dir: string | undefined;
  let template: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-d" || arg === "--directory") directory = true;
    else if (arg === "-p") dir = args[++i];
    else if (arg === "-t" || arg === "--tmpdir") dir ??= ctx.env.get("TMPDIR") || "/tmp";
    else if (arg.startsWith("--tmpdir=")) dir = arg.slice("--tmpdir=".length);
    else if (arg.startsWith("-")) return fail("mktemp", `unsupported option ${arg}`);
    else template = arg;
  }
  template ??= "tmp.XXXXXXXXXX";
  if (!/XXX$/.test(template)) return fail("mktemp", `too few X's in template '${template}'`);
  // A bare template is relative to the cwd, as in GNU mktemp; with no template, /tmp.
  if (dir === undefined && !args.some((a) => !a.startsWith("-"))) dir = "/tmp";
  const base = dir === undefined ? template : `${dir.replace(/\/+$/, "")}/${template}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    const path = ctx.fs.resolvePath(ctx.cwd, randomName(base));
    if (await ctx.fs.exists(path)) continue;
    try {
      if (directory) await ctx.fs.mkdir(path);
      else await ctx.fs.writeFile(path, "");
    } catch (error) {
      return fail("mktemp", `failed to create ${path}: ${String(error)}`);
    }
    return { stdout: `${path}\n`, stderr: "", exitCode: 0 };
  }
  return fail("mktemp", `could not find an unused name for '${base}'`);
});

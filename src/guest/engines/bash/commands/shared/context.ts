// Worker side: what every polybox command shares: the command context just-bash hands it, the
// result it hands back, GNU's one-line diagnostics, and the way to pass a call on to just-bash's
// own command of the same name. Commands work on just-bash's own file system through the
// context, like its built-in commands, and see nothing outside it.

import { type defineCommand, latin1FromBytes } from "just-bash";

export type Ctx = Parameters<Parameters<typeof defineCommand>[1]>[1];
export type Result = {
  stdout: string;
  stderr: string;
  exitCode: number;
  stdoutKind?: "text" | "bytes";
  stdoutEncoding?: "binary";
};

export const ok = (stdout: string, stderr = ""): Result => ({ stdout, stderr, exitCode: 0 });

export function failure(stderr: string, exitCode: number): Result {
  return { stdout: "", stderr, exitCode };
}

/** A diagnostic as GNU's tools print one: `name: message`. */
export const fail = (name: string, message: string, exitCode = 1): Result =>
  failure(`${name}: ${message}\n`, exitCode);

/**
 * The call handed to just-bash's own command of the same name (`ctx.origCommand`), for the forms
 * polybox's does not handle; `unavailable` when there is none.
 */
export function original(
  ctx: Ctx,
  name: string,
  args: string[],
  unavailable: Result = fail(name, "not available", 127),
): Promise<Result> {
  if (!ctx.origCommand) return Promise.resolve(unavailable);
  return ctx.origCommand(args);
}

/** Single-quotes a word for the shell. */
export const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** stdin or a file's bytes; `-` is stdin. */
export async function readInput(ctx: Ctx, file: string | undefined): Promise<Uint8Array> {
  if (file === undefined || file === "-") return Buffer.from(latin1FromBytes(ctx.stdin), "latin1");
  return ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, file));
}

/** stdin, or a file's text (`-` is stdin); latin-1 keeps bytes as they are. */
export async function readText(ctx: Ctx, file: string): Promise<string> {
  return Buffer.from(await readInput(ctx, file)).toString("latin1");
}

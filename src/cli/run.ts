// CLI: `polybox run FILE` and `polybox run --lang L -e CODE`. The file is the user's own script
// (read like `deno run` reads it; --allow-read is about what the guest may reach, and the guest
// reaches no host files). Output streams to the terminal as the guest writes it, and the
// process exits with the run's exit code.

import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { PolyboxError } from "../core/errors.js";
import { allowedHostEnv } from "../core/host-env.js";
import { DEFAULT_LIMITS } from "../core/limits.js";
import { run } from "../core/sandbox/index.js";
import { HostFiles } from "../core/server/upload.js";
import {
  knownExtensions,
  LANGUAGES,
  type Language,
  languageNamed,
  languageOfExtension,
  takesModule,
} from "../protocol/languages.js";
import { Runtime } from "../runtime.js";
import { type Flags, UsageError } from "./args.js";
import { runtimeOptions } from "./options.js";

export function languageOf(file: string | undefined, lang: string | undefined): Language {
  if (lang !== undefined) {
    const named = languageNamed(lang);
    if (named) return named;
    throw new UsageError(`unsupported language "${lang}"; supported: ${LANGUAGES.join(", ")}`);
  }
  if (file === undefined)
    throw new UsageError(`-e CODE needs --lang=L (one of ${LANGUAGES.join(", ")})`);
  const byExtension = languageOfExtension(path.extname(file));
  if (byExtension) return byExtension;
  throw new UsageError(
    `cannot tell the language of "${file}" from its extension (${knownExtensions()}); pass --lang=L`,
  );
}

export async function runCommand(flags: Flags): Promise<number> {
  const language = flags.wasmerPackage !== undefined ? "wasix" : languageOf(flags.file, flags.lang);
  if (flags.args !== undefined && !takesModule(language))
    throw new UsageError("program arguments after -- apply only to WebAssembly (.wasm) programs");
  let code: string;
  // A module is bytes: it goes into the workspace under its own name, and `code` names it.
  let files: Record<string, Uint8Array> | undefined;
  if (flags.wasmerPackage !== undefined) {
    // FILE is the package's command here (none: its entrypoint); nothing is read from the host.
    code = flags.file ?? "";
  } else if (takesModule(language)) {
    if (flags.file === undefined)
      throw new UsageError(`--lang ${language} needs a FILE (a .wasm module), not -e`);
    const name = path.basename(flags.file);
    try {
      files = { [name]: await readFile(flags.file) };
    } catch (e) {
      throw new UsageError(
        `cannot read ${flags.file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      );
    }
    code = name;
  } else if (flags.eval !== undefined) code = flags.eval;
  else {
    try {
      code = await readFile(flags.file!, "utf8");
    } catch (e) {
      throw new UsageError(
        `cannot read ${flags.file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      );
    }
  }
  // No warm pools: this process runs one program, so booting spares would only cost time.
  const options = runtimeOptions(flags);
  const inputs = await hostInputs(
    flags.inputs ?? [],
    flags.allowRead,
    options.limits?.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes,
  );
  if (Object.keys(inputs).length > 0) files = { ...inputs, ...files };
  const runtime = await Runtime.create({
    ...options,
    pool: { python: 0, javascript: 0, typescript: 0, bash: 0, ruby: 0, wasm: 0 },
  });
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  try {
    const result = await run({
      language,
      code,
      ...(files ? { files } : {}),
      ...(flags.args ? { args: flags.args } : {}),
      ...(flags.wasmerPackage !== undefined ? { wasmerPackage: flags.wasmerPackage } : {}),
      runtime,
      signal: controller.signal,
      env: allowedHostEnv(flags.allowEnv),
      onOutput: (stream, text) =>
        (stream === "stdout" ? process.stdout : process.stderr).write(text),
    });
    if (result.message) process.stderr.write(`polybox: ${result.status}: ${result.message}\n`);
    for (const note of result.notes ?? []) process.stderr.write(`polybox: note: ${note}\n`);
    return result.exitCode;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    await runtime.close();
  }
}

/**
 * `--file HOST[:WORKSPACE_PATH]`: a host file, or a directory tree, copied into the workspace
 * (under its own name unless a workspace path is given). Like `upload_file`, only what lies under
 * an --allow-read path may be read, and no more than the workspace quota in all.
 */
async function hostInputs(
  specs: readonly string[],
  grants: readonly string[],
  quotaBytes: number,
): Promise<Record<string, Uint8Array>> {
  const out: Record<string, Uint8Array> = {};
  if (specs.length === 0) return out;
  const host = new HostFiles(grants, () => undefined);
  let total = 0;
  const take = async (from: string, to: string) => {
    const data = await host.read(from, quotaBytes - total);
    total += data.length;
    out[to] = data;
  };
  for (const spec of specs) {
    // The last ':' splits off a workspace path, except a Windows drive's (C:\data).
    const colon = spec.lastIndexOf(":");
    const [from, dest] = colon > 1 ? [spec.slice(0, colon), spec.slice(colon + 1)] : [spec, ""];
    const target = dest || path.basename(path.resolve(from));
    try {
      const info = await stat(from);
      if (!info.isDirectory()) {
        await take(from, target);
        continue;
      }
      const entries = await readdir(from, { recursive: true, withFileTypes: true });
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const full = path.join(entry.parentPath ?? entry.path, entry.name);
        await take(full, path.posix.join(target, ...path.relative(from, full).split(path.sep)));
      }
    } catch (error) {
      if (error instanceof PolyboxError) throw new UsageError(`--file ${spec}: ${error.message}`);
      throw new UsageError(
        `--file ${spec}: cannot read ${from}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  }
  return out;
}

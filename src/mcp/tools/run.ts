// MCP adapter: the tools that run code — execute_python / execute_javascript / execute_bash (the
// first predecessor's names), execute_code and create_run_close (the second's). All of them map
// onto SandboxService.execute (wait) or .submit (async job, or the job behind an MCP task).

import { type ExecuteRequest, LANGUAGES, type Language } from "../../index.js";
import { result, runAnswer } from "../render.js";
import {
  argSchemas,
  decodeFiles,
  executeOutputShape,
  type FilesArg,
  secondsToMs,
} from "../schemas.js";
import { type Extra, type ToolContext, type ToolDef, tool } from "../tool.js";
import { progressReporter } from "./progress.js";

interface RunArgs {
  code: string;
  sandbox_id?: string | undefined;
  timeout_seconds?: number | undefined;
  files?: FilesArg | undefined;
  args?: string[] | undefined;
  wasmer_package?: string | undefined;
  async?: boolean | undefined;
}

const ABOUT: Record<string, string> = {
  python:
    "Run Python 3 code (CPython compiled to WebAssembly via Pyodide; the standard library is available). Imports of Pyodide packages load on demand when the server has a package source.",
  javascript:
    "Run JavaScript (ES2023 in QuickJS, not Node.js: console.log, a workspace-only fs/path via require, no npm).",
  typescript:
    "Run TypeScript: types are stripped (not checked) and the result runs as JavaScript in QuickJS.",
  bash: "Run a Bash script (an interpreter with common Unix tools such as ls, cat, grep, sed, awk, cut, sort, uniq, tr, wc, head, tail, jq; no real processes).",
  ruby: "Run Ruby 3.4 (CRuby compiled to WebAssembly, with its standard library; no network, no gems beyond the standard ones). The value is inspect of the last expression.",
  wasix:
    'Run a WASIX (or WASI) program on @wasmer/sdk: code is the workspace path of a .wasm module exporting _start, args its arguments; WASIX calls (processes within the program, getcwd/chdir, extended file calls) work, the network is off, and it sees the workspace at /workspace. Send the module in files as {"app.wasm": {"base64": "..."}}. Or give wasmer_package (a Wasmer registry package, namespace/name@version, e.g. sharrattj/coreutils@1.0.16): code is then the name of one of its commands (empty: its entrypoint), fetched, checked and cached by the server.',
  wasm: 'Run a WebAssembly program: code is the workspace path of a WASI preview 1 .wasm module (exporting _start), args its arguments; it sees the workspace at /workspace and nothing else. Send the module in files as {"app.wasm": {"base64": "..."}} (or with write_file).',
};

/**
 * What guest code may reach, for a tool's description: the hosts the server grants and each
 * language's client, or that there is no network.
 */
export function networkNote(grants: readonly string[]): string {
  if (grants.length === 0) return " No network: the server grants guest code no hosts.";
  const hosts = grants.includes("*") ? "every public host" : grants.slice(0, 20).join(", ");
  return ` Network, through the server, to ${hosts} only: fetch (JavaScript/TypeScript), urllib.request and pyodide.http.pyfetch (Python), curl (Bash); a refused request fails with an error naming the host, and the answer lists the run's requests.`;
}

const COMMON =
  " Without sandbox_id the run is one-shot in a fresh, isolated sandbox that is destroyed afterwards; with sandbox_id (from create_sandbox) variables and files persist between calls." +
  " The working directory is /workspace. The answer gives status (ok, error, timeout, memory_limit, output_limit, ...), exit code, stdout, stderr, the value of the last expression, and changed files.";

export function runTools(ctx: ToolContext): ToolDef[] {
  const a = argSchemas(ctx.service.runtime.maxLimits);
  const runArgs = {
    code: a.code,
    sandbox_id: a.sandboxId.optional(),
    timeout_seconds: a.timeoutSeconds.optional(),
    files: a.files.optional(),
    async: a.async.optional(),
  };
  // A Python run installs what its imports and PEP 723 block name, as install_package does.
  const pythonNet = ctx.service.runtime.packages.mayUseNetwork();
  // A wasix run with wasmer_package fetches it from the Wasmer registry unless it is cached.
  const wasmerNet = ctx.service.runtime.wasmerPackages.mayUseNetwork();
  // Guest code reaches the hosts --allow-net grants (through the server).
  const guestNet = ctx.service.runtime.permissions.net.length > 0;
  const perLanguage = (["python", "javascript", "bash"] as const).map((language) =>
    tool({
      name: `execute_${language}`,
      title: `Run ${language[0]!.toUpperCase()}${language.slice(1)}`,
      description: `${ABOUT[language]}${COMMON}${networkNote(ctx.service.runtime.permissions.net)}`,
      input: runArgs,
      output: executeOutputShape,
      // With a sandbox_id the code may delete or overwrite the files that sandbox keeps.
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: guestNet || (language === "python" && pythonNet),
      },
      run: (args, extra) => execute(ctx, language, args, extra),
      job: (args) => ctx.service.submit(ctx.caller, requestOf(language, args)),
    }),
  );
  return [
    ...perLanguage,
    tool({
      name: "execute_code",
      title: "Run code in a sandbox",
      description: `Run code in an existing sandbox (from create_sandbox), keeping its variables and files between calls. language is one of ${LANGUAGES.join(", ")}; it may be omitted if the sandbox was created with a default language. ${Object.values(ABOUT).join(" ")}${networkNote(ctx.service.runtime.permissions.net)}`,
      input: {
        ...runArgs,
        sandbox_id: a.sandboxId,
        language: a.language.optional(),
        args: a.args.optional(),
        wasmer_package: a.wasmerPackage.optional(),
      },
      output: executeOutputShape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: guestNet || pythonNet || wasmerNet,
      },
      run: (args, extra) =>
        execute(
          ctx,
          ctx.service.languageFor(ctx.caller, args.sandbox_id, args.language),
          args,
          extra,
        ),
      job: (args) =>
        ctx.service.submit(
          ctx.caller,
          requestOf(ctx.service.languageFor(ctx.caller, args.sandbox_id, args.language), args),
        ),
    }),
    tool({
      name: "create_run_close",
      title: "Run code once in a fresh sandbox",
      description: `One shot: create a fresh sandbox, put files in it, run the code, return the result, and destroy the sandbox. Nothing persists. language is one of ${LANGUAGES.join(", ")}.${networkNote(ctx.service.runtime.permissions.net)}`,
      input: {
        code: a.code,
        language: a.language,
        timeout_seconds: runArgs.timeout_seconds,
        files: runArgs.files,
        args: a.args.optional(),
        wasmer_package: a.wasmerPackage.optional(),
      },
      output: executeOutputShape,
      // Its sandbox is its own and gone afterwards: nothing that existed is touched, and a
      // repeat leaves the server as the first call did.
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: guestNet || pythonNet || wasmerNet,
      },
      run: (args, extra) => execute(ctx, args.language, args, extra),
      job: (args) => ctx.service.submit(ctx.caller, requestOf(args.language, args)),
    }),
  ];
}

/** The library's request for a run tool's arguments. */
function requestOf(language: Language, args: RunArgs): ExecuteRequest {
  return {
    language,
    code: args.code,
    ...(args.sandbox_id !== undefined ? { sandboxId: args.sandbox_id } : {}),
    ...(args.files !== undefined ? { files: decodeFiles(args.files) } : {}),
    ...(args.args !== undefined ? { args: args.args } : {}),
    ...(args.wasmer_package !== undefined ? { wasmerPackage: args.wasmer_package } : {}),
    ...(args.timeout_seconds !== undefined ? { timeoutMs: secondsToMs(args.timeout_seconds) } : {}),
  };
}

async function execute(ctx: ToolContext, language: Language, args: RunArgs, extra: Extra) {
  const request = requestOf(language, args);
  if (args.async) {
    const job = ctx.service.submit(ctx.caller, request);
    return result(
      { job_id: job.id, status: job.status, sandbox_id: job.sandboxId },
      `job ${job.id}: ${job.status}. Poll check_job_status with this job_id; get_job_logs shows output so far; cancel_job stops it.`,
    );
  }
  const progress = progressReporter(extra);
  try {
    const r = await ctx.service.execute(ctx.caller, {
      ...request,
      signal: extra.signal,
      onOutput: progress.onOutput,
    });
    return runAnswer(r, ctx.maxResponseBytes);
  } finally {
    progress.stop();
  }
}

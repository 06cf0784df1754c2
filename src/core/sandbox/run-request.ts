// Trusted side: what a caller passes for a run, checked before the engine host sees it, and the
// request it becomes.

import { type RunRequest, WASM_ONLY_LANGUAGES } from "../../protocol/messages.js";
import { PolyboxError } from "../errors.js";
import { describeLimit, type Limits, resolveLimits } from "../limits.js";
import { type NetSecret, NetSecrets } from "../net-secrets.js";
import { parseWasmerPackage } from "../packages/wasmer-packages.js";
import { LANGUAGES, type Language, type RunOptions } from "../types.js";
import type { EngineKind, SandboxRuntime } from "./run-host.js";

/** A run's request before the workspace's changes are added to it. */
export type BaseRequest = Omit<RunRequest, "fullSync" | "sync">;

const RUN_OPTION_KEYS = new Set([
  "timeoutMs",
  "memoryMb",
  "maxOutputBytes",
  "stdin",
  "args",
  "wasmerPackage",
  "env",
  "signal",
  "onOutput",
]);

/** `wasmerPackage` is for `wasix` runs and names one package exactly (INVALID_ARGUMENT if not). */
export function checkWasmerPackage(language: Language, options: RunOptions): void {
  if (options.wasmerPackage === undefined) return;
  if (language !== "wasix")
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `wasmerPackage is for language "wasix" (Wasmer packages run on its engine), not "${language}"`,
      { details: { limit: "wasmerPackage" } },
    );
  parseWasmerPackage(options.wasmerPackage);
}

/** The runtime's secrets and a sandbox's own, each of whose hosts the runtime grants. */
export function checkSecrets(
  runtime: SandboxRuntime,
  secrets: NetSecret[] | undefined,
): NetSecrets {
  if (secrets === undefined) return runtime.netSecrets;
  const own = NetSecrets.create(secrets, "secrets", (host) => runtime.checkNetGrant([host]));
  return runtime.netSecrets.with(own);
}

/** A sandbox's own network grant, checked against the runtime's. */
export function checkNet(runtime: SandboxRuntime, net: unknown): readonly string[] | null {
  if (net === undefined) return null;
  if (!Array.isArray(net) || net.length > 256 || net.some((h) => typeof h !== "string"))
    throw new PolyboxError("INVALID_ARGUMENT", "net must be an array of at most 256 host strings");
  runtime.checkNetGrant(net);
  return [...net];
}

export function checkLanguage(language: unknown): Language {
  if (typeof language === "string" && (LANGUAGES as readonly string[]).includes(language))
    return language as Language;
  throw new PolyboxError(
    "UNSUPPORTED_LANGUAGE",
    `unsupported language ${JSON.stringify(language)}; supported languages: ${LANGUAGES.join(", ")}`,
  );
}

/** Code is a string within the sandbox's `maxCodeBytes`. */
export function checkCode(code: unknown, limits: Readonly<Limits>): asserts code is string {
  if (typeof code !== "string") {
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      `code must be a string, got ${code === null ? "null" : typeof code}`,
    );
  }
  const codeBytes = Buffer.byteLength(code);
  if (codeBytes > limits.maxCodeBytes) {
    throw new PolyboxError(
      "CODE_TOO_LARGE",
      `code is ${codeBytes} bytes, over the limit ${describeLimit("maxCodeBytes", limits.maxCodeBytes)}; put large data in a file and read it from the code`,
      { details: { limit: "maxCodeBytes", value: limits.maxCodeBytes } },
    );
  }
}

/** A language the sandbox's engine runs. */
export function checkEngineLanguage(language: unknown, engine: EngineKind): Language {
  const lang = checkLanguage(language);
  if (engine === "native" && (WASM_ONLY_LANGUAGES as readonly string[]).includes(lang)) {
    throw new PolyboxError(
      "UNSUPPORTED_LANGUAGE",
      `${lang} runs only in the WebAssembly engines; this sandbox uses engine "native"`,
    );
  }
  return lang;
}

/** The request for a run of `code` in a sandbox with `own` limits and secrets. */
export function buildRequest(
  code: string,
  options: RunOptions,
  own: { limits: Readonly<Limits>; maxLimits: Readonly<Limits>; netSecrets: NetSecrets },
): BaseRequest {
  if (typeof options !== "object" || options === null)
    throw new PolyboxError("INVALID_ARGUMENT", "run options must be an object");
  for (const key of Object.keys(options)) {
    if (!RUN_OPTION_KEYS.has(key)) {
      throw new PolyboxError(
        "INVALID_ARGUMENT",
        `unknown run option "${key}"; known options: ${[...RUN_OPTION_KEYS].join(", ")}`,
      );
    }
  }
  const limits = resolveLimits(
    own.limits,
    {
      timeoutMs: options.timeoutMs,
      memoryMb: options.memoryMb,
      maxOutputBytes: options.maxOutputBytes,
    },
    own.maxLimits,
  );
  if (options.stdin !== undefined && typeof options.stdin !== "string") {
    throw new PolyboxError("INVALID_ARGUMENT", "stdin must be a string");
  }
  const args = options.args;
  if (
    args !== undefined &&
    (!Array.isArray(args) || args.some((a) => typeof a !== "string") || args.length > 1024)
  ) {
    throw new PolyboxError("INVALID_ARGUMENT", "args must be an array of at most 1024 strings");
  }
  const env = options.env ?? {};
  if (
    typeof env !== "object" ||
    env === null ||
    Object.values(env).some((v) => typeof v !== "string")
  ) {
    throw new PolyboxError("INVALID_ARGUMENT", "env must be an object of string values");
  }
  return {
    code,
    stdin: options.stdin ?? "",
    ...(args ? { args: [...args] } : {}),
    // The placeholders of the sandbox's secrets, unless the caller sets those names itself.
    env: { ...own.netSecrets.env(), ...env },
    limits: {
      timeoutMs: limits.timeoutMs,
      memoryMb: limits.memoryMb,
      maxOutputBytes: limits.maxOutputBytes,
      workspaceQuotaBytes: limits.workspaceQuotaBytes,
    },
  };
}

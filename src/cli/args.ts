// CLI: parses argv into a command and typed flags, Deno-style. Permissions are denied unless a
// flag grants them: `--allow-read=PATH[,PATH]` grants those paths, and a bare `--allow-read`
// (no value) grants everything, as in Deno. Because of that, --allow-* values must be attached
// with `=`; other flags also accept a separate value (`--port 8080`). Pure: no I/O, so it is
// unit-tested on its own.

import path from "node:path";
import { parseDuration, parseSize } from "../core/limits.js";
import { parseRateLimit, type RateLimit } from "../core/server/scheduler.js";
import { LANGUAGES, type Language, languageNamed } from "../protocol/languages.js";

export type Command = "mcp" | "serve" | "router" | "run" | "doctor" | "warmup" | "help" | "version";

export interface Flags {
  allowRead: string[];
  allowNet: string[];
  /** `--deny-net`: hosts refused even when --allow-net grants them. */
  denyNet: string[];
  /** `--net-header=HOST=NAME:ENVVAR`: headers added at the boundary from the server's env. */
  netHeaders: NetHeaderFlag[];
  netSecrets: NetSecretFlag[];
  allowEnv: string[];
  pythonPackages: string[];
  /** Refuse every package download (Deno's --cached-only). */
  cachedOnly?: boolean;
  /** Base URL of the Pyodide distribution lock-file packages come from. */
  pyodideCdn?: string;
  /** The Wasmer registry's GraphQL endpoint (`wasmerPackage` names are looked up there). */
  wasmerRegistry?: string;
  /** Hosts Wasmer package files may come from besides the registry's. */
  wasmerDownloadHosts?: string[];
  /** Package sources (indexes, CDN, Wasmer registry) may be on a private or loopback network. */
  allowPrivateIndex?: boolean;
  /** `polybox run --wasmer-package NS/NAME@VERSION [COMMAND] [-- ARGS]`: run a Wasmer package. */
  wasmerPackage?: string;
  timeoutMs?: number;
  memoryMb?: number;
  maxOutputBytes?: number;
  workspaceQuotaBytes?: number;
  maxCodeBytes?: number;
  concurrency?: number;
  maxSandboxes?: number;
  maxSandboxesPerClient?: number;
  /** Named sandboxes one client may keep in the data dir, open or not. */
  maxNamedSandboxesPerClient?: number;
  maxRunsPerClient?: number;
  /** Largest MCP tool response, in bytes. */
  maxResponseBytes?: number;
  /** Bytes of each output stream a result holds before its middle is cut. */
  inlineOutputBytes?: number;
  idleTimeoutMs?: number;
  maxLifetimeMs?: number;
  dataDir?: string;
  dataDirQuotaBytes?: number;
  maxSnapshotsPerSandbox?: number;
  maxSnapshotBytesPerSandbox?: number;
  rateLimit?: RateLimit;
  jobRetentionMs?: number;
  tools?: string[];
  port?: number;
  host?: string;
  /** `--allow-host=NAME[,NAME]`: more Host names the HTTP server answers to. */
  allowHosts?: string[];
  token?: string;
  /** Join (serve) or front (router) the cluster in this Redis: redis://HOST:PORT[/DB]. */
  cluster?: string;
  clusterSecret?: string;
  nodeId?: string;
  /** The URL routers reach this node at (default: its own listening address). */
  advertise?: string;
  clusterTtlMs?: number;
  drainGraceMs?: number;
  lang?: string;
  eval?: string;
  file?: string;
  /** `polybox run --file HOST[:WORKSPACE_PATH]`: host files or directories put in the workspace. */
  inputs?: string[];
  /** `polybox run FILE -- ARGS…`: the program's arguments (WebAssembly modules). */
  args?: string[];
  json?: boolean;
  pool?: Partial<Record<PoolLanguage, number>>;
  isolation?: "wasm" | "native" | "auto";
  nativePython?: string;
  nativeBash?: string;
  nativeNode?: string;
}

/** One `--net-header=HOST=NAME:ENVVAR`: the value is read from the environment when used. */
export interface NetHeaderFlag {
  host: string;
  name: string;
  env: string;
}

/**
 * One `--net-secret=NAME[=VALUE]@HOST[,HOST…][/PLACE,…]`: without VALUE, the value is the
 * server's environment variable NAME, read when used (it stays out of the process list).
 */
export interface NetSecretFlag {
  name: string;
  value?: string;
  hosts: string[];
  in?: string[];
}

const POOL_LANGUAGES = LANGUAGES;
type PoolLanguage = Language;

export interface ParsedArgs {
  command: Command;
  flags: Flags;
  /** `polybox CMD --help`: the command whose help was asked for. */
  topic?: Command;
}

/** The commands each flag applies to (for `polybox CMD --help`). */
export function flagCommands(name: string): readonly string[] {
  return FLAGS[name]?.on ?? [];
}

/** A mistake on the command line: main prints it with a pointer to --help and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

type Kind =
  | "list"
  | "allow"
  | "duration"
  | "size"
  | "int"
  | "rate"
  | "string"
  | "bool"
  | "pool"
  | "isolation"
  | "path"
  | "append"
  | "netHeader"
  | "netSecret";

interface FlagSpec {
  kind: Kind;
  key: keyof Flags;
  /** Subcommands that accept it. */
  on: readonly Command[];
}

const RUNNERS = ["mcp", "serve", "run"] as const;
const SERVERS = ["mcp", "serve"] as const;

const FLAGS: Record<string, FlagSpec> = {
  "allow-read": { kind: "allow", key: "allowRead", on: RUNNERS },
  "allow-net": { kind: "allow", key: "allowNet", on: RUNNERS },
  "allow-env": { kind: "allow", key: "allowEnv", on: RUNNERS },
  "deny-net": { kind: "list", key: "denyNet", on: RUNNERS },
  "net-header": { kind: "netHeader", key: "netHeaders", on: RUNNERS },
  "net-secret": { kind: "netSecret", key: "netSecrets", on: RUNNERS },
  "python-packages": { kind: "list", key: "pythonPackages", on: [...RUNNERS, "warmup"] },
  "cached-only": { kind: "bool", key: "cachedOnly", on: RUNNERS },
  "pyodide-cdn": { kind: "string", key: "pyodideCdn", on: [...RUNNERS, "warmup"] },
  "wasmer-registry": { kind: "string", key: "wasmerRegistry", on: RUNNERS },
  "wasmer-download-host": { kind: "list", key: "wasmerDownloadHosts", on: RUNNERS },
  "wasmer-package": { kind: "string", key: "wasmerPackage", on: ["run"] },
  "allow-private-index": { kind: "bool", key: "allowPrivateIndex", on: [...RUNNERS, "warmup"] },
  timeout: { kind: "duration", key: "timeoutMs", on: RUNNERS },
  memory: { kind: "size", key: "memoryMb", on: RUNNERS },
  "max-output": { kind: "size", key: "maxOutputBytes", on: RUNNERS },
  "workspace-quota": { kind: "size", key: "workspaceQuotaBytes", on: RUNNERS },
  "max-code": { kind: "size", key: "maxCodeBytes", on: RUNNERS },
  concurrency: { kind: "int", key: "concurrency", on: SERVERS },
  "max-sandboxes": { kind: "int", key: "maxSandboxes", on: SERVERS },
  "max-sandboxes-per-client": { kind: "int", key: "maxSandboxesPerClient", on: SERVERS },
  "max-named-sandboxes": { kind: "int", key: "maxNamedSandboxesPerClient", on: SERVERS },
  "max-runs-per-client": { kind: "int", key: "maxRunsPerClient", on: SERVERS },
  "max-response": { kind: "size", key: "maxResponseBytes", on: SERVERS },
  "inline-output": { kind: "size", key: "inlineOutputBytes", on: SERVERS },
  "idle-timeout": { kind: "duration", key: "idleTimeoutMs", on: SERVERS },
  "max-lifetime": { kind: "duration", key: "maxLifetimeMs", on: SERVERS },
  "data-dir": { kind: "path", key: "dataDir", on: SERVERS },
  "data-quota": { kind: "size", key: "dataDirQuotaBytes", on: SERVERS },
  "max-snapshots": { kind: "int", key: "maxSnapshotsPerSandbox", on: SERVERS },
  "snapshot-quota": { kind: "size", key: "maxSnapshotBytesPerSandbox", on: SERVERS },
  "rate-limit": { kind: "rate", key: "rateLimit", on: SERVERS },
  "job-retention": { kind: "duration", key: "jobRetentionMs", on: SERVERS },
  tools: { kind: "list", key: "tools", on: SERVERS },
  port: { kind: "int", key: "port", on: ["serve", "router"] },
  host: { kind: "string", key: "host", on: ["serve", "router"] },
  "allow-host": { kind: "list", key: "allowHosts", on: ["serve", "router"] },
  token: { kind: "string", key: "token", on: ["serve", "router"] },
  cluster: { kind: "string", key: "cluster", on: ["serve", "router"] },
  "cluster-secret": { kind: "string", key: "clusterSecret", on: ["serve", "router"] },
  "node-id": { kind: "string", key: "nodeId", on: ["serve"] },
  advertise: { kind: "string", key: "advertise", on: ["serve"] },
  "cluster-ttl": { kind: "duration", key: "clusterTtlMs", on: ["serve"] },
  "drain-grace": { kind: "duration", key: "drainGraceMs", on: ["serve"] },
  lang: { kind: "string", key: "lang", on: ["run"] },
  eval: { kind: "string", key: "eval", on: ["run"] },
  file: { kind: "append", key: "inputs", on: ["run"] },
  json: { kind: "bool", key: "json", on: ["doctor"] },
  pool: { kind: "pool", key: "pool", on: SERVERS },
  isolation: { kind: "isolation", key: "isolation", on: [...RUNNERS, "warmup"] },
  "native-python": { kind: "string", key: "nativePython", on: [...RUNNERS, "warmup"] },
  "native-bash": { kind: "string", key: "nativeBash", on: RUNNERS },
  "native-node": { kind: "string", key: "nativeNode", on: RUNNERS },
};

const SHORT: Record<string, string> = { e: "eval", l: "lang" };
const COMMANDS: readonly string[] = ["mcp", "serve", "router", "run", "doctor", "warmup", "help"];

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ParsedArgs {
  const flags: Flags = {
    allowRead: [],
    allowNet: [],
    denyNet: [],
    netHeaders: [],
    netSecrets: [],
    allowEnv: [],
    pythonPackages: [],
  };
  let command: Command | null = null;
  const positional: string[] = [];
  let programArgs: string[] | undefined;
  const seen: [string, FlagSpec][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      // `run FILE -- ARGS`: what follows FILE is the program's; otherwise `--` ends the flags.
      if (
        command === "run" &&
        (positional.length === 1 || (flags.wasmerPackage !== undefined && positional.length === 0))
      )
        programArgs = argv.slice(i + 1);
      else positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "--help" || arg === "-h")
      return {
        command: "help",
        flags,
        ...(command && command !== "help" ? { topic: command } : {}),
      };
    if (arg === "--version" || arg === "-V") return { command: "version", flags };
    const long = /^--([a-z][a-z-]*)(?:=([\s\S]*))?$/.exec(arg);
    const short = /^-([a-zA-Z])$/.exec(arg);
    if (!long && !short) {
      if (command === null && COMMANDS.includes(arg)) command = arg as Command;
      else if (command === null)
        throw new UsageError(
          `unknown command "${arg}"; commands: mcp, serve, router, run, doctor, warmup`,
        );
      else positional.push(arg);
      continue;
    }
    const name = long ? long[1]! : SHORT[short![1]!];
    const spec = name === undefined ? undefined : FLAGS[name];
    if (!spec || name === undefined)
      throw new UsageError(`unknown flag ${arg}; see polybox --help`);
    let value = long?.[2];
    if (value === undefined && spec.kind !== "allow" && spec.kind !== "bool") {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    seen.push([name, spec]);
    apply(flags, name, spec, value);
  }
  const cmd: Command = command ?? "help";
  for (const [name, spec] of seen) {
    if (!spec.on.includes(cmd))
      throw new UsageError(
        `--${name} does not apply to "polybox ${cmd}" (it applies to: ${spec.on.join(", ")})`,
      );
  }
  if (cmd === "run") {
    if (positional.length > 1)
      throw new UsageError(`polybox run takes one FILE, got: ${positional.join(" ")}`);
    if (positional[0] !== undefined) flags.file = positional[0];
    if (programArgs !== undefined) flags.args = programArgs;
    if (flags.wasmerPackage !== undefined) {
      // The package's command (optional: its entrypoint) takes the FILE's place.
      if (flags.eval !== undefined)
        throw new UsageError(
          "--wasmer-package runs a command of the package: give it as COMMAND, not -e",
        );
      if (flags.lang !== undefined && languageNamed(flags.lang) !== "wasix")
        throw new UsageError(
          "--wasmer-package runs on the wasix engine; drop --lang or use --lang wasix",
        );
    } else if ((flags.file === undefined) === (flags.eval === undefined)) {
      throw new UsageError(
        "polybox run needs a FILE, or -e CODE with --lang (e.g. polybox run --lang python -e 'print(1)')",
      );
    }
  } else if (positional.length > 0) {
    throw new UsageError(`unexpected argument "${positional[0]}" for polybox ${cmd}`);
  }
  if ((cmd === "serve" || cmd === "router") && flags.token === undefined && env.POLYBOX_TOKEN)
    flags.token = env.POLYBOX_TOKEN;
  if (flags.pyodideCdn === undefined && env.POLYBOX_PYODIDE_CDN)
    flags.pyodideCdn = env.POLYBOX_PYODIDE_CDN;
  if (flags.clusterSecret === undefined && env.POLYBOX_CLUSTER_SECRET)
    flags.clusterSecret = env.POLYBOX_CLUSTER_SECRET;
  if (cmd === "router" && flags.cluster === undefined)
    throw new UsageError("polybox router needs --cluster=redis://HOST:PORT[/DB]");
  if (flags.cluster !== undefined && !flags.clusterSecret) {
    throw new UsageError(
      "--cluster needs a cluster secret shared by every node and router: --cluster-secret or POLYBOX_CLUSTER_SECRET",
    );
  }
  return { command: cmd, flags };
}

function apply(flags: Flags, name: string, spec: FlagSpec, value: string | undefined): void {
  if (spec.kind === "allow") {
    // Bare flag: everything, as Deno does. "*" is what the library reads as "all".
    const list = flags[spec.key] as string[];
    if (value === undefined)
      list.push(name === "allow-read" ? path.parse(process.cwd()).root : "*");
    else list.push(...splitList(value, name));
    return;
  }
  (flags as unknown as Record<string, unknown>)[spec.key] = convert(flags, name, spec, value);
}

function convert(flags: Flags, name: string, spec: FlagSpec, value: string | undefined): unknown {
  const fail = (why: string): never => {
    throw new UsageError(`--${name}=${value}: ${why}`);
  };
  const parsed = <T>(fn: (text: string) => T): T => {
    try {
      return fn(value!);
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
  };
  switch (spec.kind) {
    case "append":
      return [...((flags[spec.key] as string[] | undefined) ?? []), value!];
    case "netHeader": {
      const m = /^([^=\s]+)=([!#$%&'*+.^_`|~0-9A-Za-z-]+):([A-Za-z_][A-Za-z0-9_]*)$/.exec(value!);
      if (!m)
        return fail("write it as HOST=NAME:ENVVAR, e.g. api.example.com=Authorization:API_TOKEN");
      return [...flags.netHeaders, { host: m[1]!, name: m[2]!, env: m[3]! }];
    }
    case "netSecret": {
      // The hosts follow the last @ (a value may hold @); places follow the first / after it.
      const at = value!.lastIndexOf("@");
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:=([\s\S]*))?$/.exec(at < 0 ? "" : value!.slice(0, at));
      const [hostList = "", placeList] = value!.slice(at + 1).split("/", 2);
      const hosts = hostList.split(",").filter((h) => h.length > 0);
      if (!m || hosts.length === 0)
        return fail(
          "write it as NAME@HOST[,HOST…] (the value is the environment variable NAME) or NAME=VALUE@HOST[,HOST…], with /url,body after the hosts to put it in those places too",
        );
      const places = placeList === undefined ? undefined : ["headers", ...placeList.split(",")];
      return [
        ...flags.netSecrets,
        {
          name: m[1]!,
          ...(m[2] !== undefined ? { value: m[2] } : {}),
          hosts,
          ...(places ? { in: places } : {}),
        },
      ];
    }
    case "list":
      return [...((flags[spec.key] as string[] | undefined) ?? []), ...splitList(value!, name)];
    case "duration": {
      const ms = parsed(parseDuration);
      return ms > 0 || spec.key === "idleTimeoutMs" ? ms : fail("must be more than 0");
    }
    case "size": {
      const bytes = parsed(parseSize);
      if (spec.key !== "memoryMb")
        return bytes > 0 || spec.key === "workspaceQuotaBytes"
          ? bytes
          : fail("must be more than 0");
      const mb = Math.floor(bytes / 1024 ** 2);
      return mb >= 1 ? mb : fail("memory is counted in MiB: write e.g. 512M or 1G");
    }
    case "int": {
      const n = Number(value);
      const port = spec.key === "port";
      if (!/^\d+$/.test(value!) || n < (port ? 0 : 1) || (port && n > 65535)) {
        fail(`must be a whole number${port ? " from 0 to 65535" : " of at least 1"}`);
      }
      return n;
    }
    case "rate":
      return parsed(parseRateLimit);
    case "pool":
      return parsePool(value!, fail);
    case "path":
      return value === "" ? fail("needs a directory") : path.resolve(value!);
    case "isolation":
      return ["wasm", "native", "auto"].includes(value!)
        ? value
        : fail("must be wasm, native or auto");
    case "bool":
      return value === undefined || value === "true"
        ? true
        : value === "false"
          ? false
          : fail("must be true or false");
    default:
      return value;
  }
}

/** `python=2,javascript=4,bash=2`: warm interpreters per language (0 turns a pool off). */
function parsePool(
  value: string,
  fail: (why: string) => never,
): Partial<Record<PoolLanguage, number>> {
  const out: Partial<Record<PoolLanguage, number>> = {};
  for (const item of value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z]+)=(\d+)$/.exec(item);
    if (!m) fail(`write it as LANG=N[,LANG=N], e.g. python=2,javascript=4`);
    const [, lang, n] = m!;
    if (!(POOL_LANGUAGES as readonly string[]).includes(lang!))
      fail(`unknown language "${lang}"; pools exist for ${POOL_LANGUAGES.join(", ")}`);
    if (Number(n) > 32) fail(`at most 32 warm interpreters per language`);
    out[lang as PoolLanguage] = Number(n);
  }
  return out;
}

function splitList(value: string, name: string): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name}= needs at least one value`);
  return items;
}

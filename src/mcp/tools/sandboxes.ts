// MCP adapter: sandbox lifecycle (create_sandbox, close_sandbox, get_sandbox_status) and
// install_package. A sandbox is a workspace plus per-language interpreter state, named by id.

import { z } from "zod";
import { type ManagedSandboxInfo, type NamedSandboxInfo, PolyboxError } from "../../index.js";
import { responseBytes } from "../budget.js";
import { iso, result } from "../render.js";
import { argSchemas, secondsToMs } from "../schemas.js";
import { CREATES, READS, REPLACES, type ToolContext, type ToolDef, tool } from "../tool.js";

export const sandboxShape = z.object({
  sandbox_id: z.string(),
  name: z
    .string()
    .nullable()
    .describe("A named sandbox's name (its files outlive the server); null for an ephemeral one"),
  default_language: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string(),
  age_seconds: z.number(),
  idle_seconds: z.number(),
  expires_at: z.string().nullable().describe("When it closes if it stays unused (idle timeout)"),
  languages: z.array(z.string()).describe("Languages whose interpreter has state in it"),
  engine: z.enum(["wasm", "native"]).describe("WebAssembly interpreters, or native ones in a jail"),
  file_count: z.number(),
  bytes: z.number(),
  running: z.boolean(),
  limits: z.object({
    timeout_ms: z.number(),
    memory_mb: z.number(),
    max_output_bytes: z.number(),
    workspace_quota_bytes: z.number(),
  }),
});

/** Sandboxes get_sandbox_status lists at a time unless asked for fewer or more. */
const STATUS_PAGE = 50;
const MAX_STATUS_PAGE = 500;

const storedShape = z.object({
  name: z.string(),
  sandbox_id: z.string(),
  engine: z.enum(["wasm", "native"]),
  created_at: z.string(),
  bytes: z.number(),
});

export function sandboxTools({ service, caller, maxResponseBytes }: ToolContext): ToolDef[] {
  const a = argSchemas(service.runtime.maxLimits);
  const max = service.runtime.maxLimits;
  return [
    tool({
      name: "create_sandbox",
      title: "Create a sandbox",
      description: `Create a persistent sandbox and return its sandbox_id. Pass it to execute_python / execute_javascript / execute_bash / execute_code and the file tools: files and interpreter state persist until close_sandbox (or until it is idle too long). Optional limits stay within the server's maximums.`,
      input: {
        language: a.language
          .optional()
          .describe("Default language for execute_code in this sandbox"),
        timeout_seconds: a.timeoutSeconds
          .optional()
          .describe(`Default per-run time limit in seconds (at most ${max.timeoutMs / 1000})`),
        memory_mb: z
          .number()
          .int()
          .min(32)
          .max(max.memoryMb)
          .optional()
          .describe(`Memory per interpreter in MiB (at most ${max.memoryMb})`),
        max_output_bytes: z
          .number()
          .int()
          .min(1)
          .max(max.maxOutputBytes)
          .optional()
          .describe("Bytes of stdout/stderr kept per run"),
        workspace_quota_mb: z
          .number()
          .positive()
          .max(max.workspaceQuotaBytes / 1024 ** 2)
          .optional()
          .describe("Size limit of the sandbox's files in MiB"),
        name: z
          .string()
          .optional()
          .describe(
            'Make the sandbox named and persistent (a-z, 0-9, ".", "_", "-"; up to 64): its files are kept on disk and survive close_sandbox and server restarts; calling create_sandbox with the same name again reopens it (files intact, interpreters fresh)',
          ),
        engine: z
          .enum(["wasm", "native"])
          .optional()
          .describe(
            "wasm (default): WebAssembly interpreters. native: the server machine's real python3, bash and node in a kernel jail (Linux servers started with --isolation=auto or native).",
          ),
        net: z
          .array(z.string().min(1).max(300))
          .max(64)
          .optional()
          .describe(
            "Hosts this sandbox's code may reach (HOST or HOST:PORT), narrower than what the server grants with --allow-net; default: the server's grant. A host outside the server's grant is an error.",
          ),
        secrets: z
          .array(
            z.object({
              name: z
                .string()
                .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/)
                .describe("The environment variable the code sees"),
              value: z.string().min(8).max(16384).describe("The secret (never shown to the code)"),
              hosts: z
                .array(z.string().min(1).max(300))
                .min(1)
                .max(64)
                .describe("Hosts it is sent to (HOST or HOST:PORT), within the server's grant"),
              in: z
                .array(z.enum(["headers", "url", "body"]))
                .optional()
                .describe("Where it is put in (default: headers)"),
            }),
          )
          .max(32)
          .optional()
          .describe(
            "Secrets the code can use but never read: its environment variable name holds a placeholder, and the server puts the value in place of it only in requests to the secret's hosts (a request carrying it elsewhere is refused, and those hosts' answers come back with the placeholder). Kept in memory only: a reopened named sandbox needs them again.",
          ),
      },
      output: { sandbox_id: z.string(), sandbox: sandboxShape },
      annotations: CREATES,
      run: async (args) => {
        const info = await service.createSandbox(caller, {
          ...(args.language ? { language: args.language } : {}),
          ...(args.engine ? { engine: args.engine } : {}),
          ...(args.name !== undefined ? { name: args.name } : {}),
          ...(args.net ? { net: args.net } : {}),
          ...(args.secrets ? { secrets: args.secrets } : {}),
          limits: {
            ...(args.timeout_seconds !== undefined
              ? { timeoutMs: secondsToMs(args.timeout_seconds) }
              : {}),
            ...(args.memory_mb !== undefined ? { memoryMb: args.memory_mb } : {}),
            ...(args.max_output_bytes !== undefined
              ? { maxOutputBytes: args.max_output_bytes }
              : {}),
            ...(args.workspace_quota_mb !== undefined
              ? { workspaceQuotaBytes: Math.round(args.workspace_quota_mb * 1024 ** 2) }
              : {}),
          },
        });
        return result(
          { sandbox_id: info.id, sandbox: describe(info) },
          `${info.name ? `opened sandbox "${info.name}" as` : "created sandbox"} ${info.id}${info.defaultLanguage ? ` (default language ${info.defaultLanguage})` : ""}${info.name && info.fileCount > 0 ? `; ${info.fileCount} files kept from before, interpreters fresh` : ""}`,
        );
      },
    }),
    tool({
      name: "close_sandbox",
      title: "Close a sandbox",
      description:
        "Close a sandbox; the sandbox_id stops working. An ephemeral sandbox is destroyed with every file. A named one is unloaded (its files stay; create_sandbox with its name reopens it) unless delete is true, which destroys its files and snapshots.",
      input: {
        sandbox_id: a.sandboxId,
        delete: z
          .boolean()
          .optional()
          .describe("For a named sandbox: destroy its files and snapshots too (default false)"),
      },
      output: { sandbox_id: z.string(), closed: z.boolean() },
      // Destroys a sandbox's files, or with a name and without delete unloads it (files kept);
      // a second close changes nothing more (it answers SANDBOX_NOT_FOUND).
      annotations: REPLACES,
      run: async ({ sandbox_id, delete: remove }) => {
        const named = service.sandboxStatus(caller, sandbox_id)[0]?.name ?? null;
        await service.closeSandbox(caller, sandbox_id, { delete: remove === true });
        return result(
          { sandbox_id, closed: true },
          named && !remove
            ? `closed sandbox "${named}" (${sandbox_id}); its files are kept for create_sandbox with name "${named}"`
            : `closed sandbox ${sandbox_id}; its files are gone`,
        );
      },
    }),
    tool({
      name: "get_sandbox_status",
      title: "Sandbox status",
      description: `Status of one of your sandboxes (with sandbox_id) or of all of them: age, last use, languages used, file count and bytes, and when it will be closed for idleness; and your named sandboxes that are stored but not open. Other clients' sandboxes are never shown. Also the server's load. The list of all comes in pages (open sandboxes first, oldest first, then stored ones by name), ${STATUS_PAGE} at a time unless limit says otherwise: when next_cursor is not null, call again with it as cursor for the rest.`,
      input: {
        sandbox_id: a.sandboxId.optional(),
        cursor: z
          .string()
          .max(1024)
          .optional()
          .describe(
            "Without sandbox_id: the next_cursor an earlier answer gave, for the next page",
          ),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_STATUS_PAGE)
          .optional()
          .describe(
            `Without sandbox_id: sandboxes per page (default ${STATUS_PAGE}; fewer when the answer would pass the server's response limit)`,
          ),
      },
      output: {
        sandboxes: z.array(sandboxShape),
        stored: z
          .array(storedShape)
          .describe(
            "Your named sandboxes kept on disk and not open: create_sandbox with the name opens one",
          ),
        next_cursor: z
          .string()
          .nullable()
          .describe(
            "More sandboxes follow: pass this as cursor to get them; null on the last page",
          ),
        max_sandboxes: z.number().describe("Sandboxes the server keeps open, all clients together"),
        max_sandboxes_per_client: z.number().describe("Sandboxes one client may have open"),
        max_named_sandboxes_per_client: z
          .number()
          .describe("Named sandboxes one client may keep, open or stored"),
        running_runs: z.number(),
        queued_runs: z.number(),
        concurrency: z.number(),
      },
      annotations: READS,
      run: async ({ sandbox_id, cursor, limit }) => {
        const open = service.sandboxStatus(caller, sandbox_id);
        const stored = sandbox_id === undefined ? await service.storedSandboxes(caller) : [];
        const rows = listing(open, stored);
        const from = cursor === undefined || sandbox_id !== undefined ? 0 : resume(rows, cursor);
        const s = service.scheduler;
        const m = service.sandboxes;
        const answer = (page: Row[], next: string | null) => {
          const sandboxes = page.flatMap((r) => (r.open ? [describe(r.open)] : []));
          const kept = page.flatMap((r) => (r.stored ? [describeStored(r.stored)] : []));
          const lines = [
            `${open.length} sandbox${open.length === 1 ? "" : "es"} of yours open (max ${m.maxSandboxesPerClient} per client, ${m.maxSandboxes} in all)${sandbox_id === undefined ? `, ${stored.length} named stored (max ${m.maxNamedSandboxesPerClient} named per client, open or not)` : ""}; runs: ${s.running} running, ${s.queued} queued (concurrency ${s.concurrency})`,
          ];
          for (const b of sandboxes) {
            lines.push(
              `${b.name ? `"${b.name}" ` : ""}${b.sandbox_id}: ${b.file_count} files, ${b.bytes} bytes, languages [${b.languages.join(", ")}], age ${b.age_seconds} s, idle ${b.idle_seconds} s${b.running ? ", running" : ""}`,
            );
          }
          for (const n of kept)
            lines.push(`"${n.name}" (stored, not open): ${n.bytes} bytes, created ${n.created_at}`);
          if (next !== null || from > 0)
            lines.push(
              (page.length === 0
                ? `nothing after this cursor (${rows.length} in all)`
                : `listed ${from + 1} to ${from + page.length} of ${rows.length}`) +
                (next === null ? "" : `; the rest: get_sandbox_status with cursor "${next}"`),
            );
          return result(
            {
              sandboxes,
              stored: kept,
              next_cursor: next,
              max_sandboxes: m.maxSandboxes,
              max_sandboxes_per_client: m.maxSandboxesPerClient,
              max_named_sandboxes_per_client: m.maxNamedSandboxesPerClient,
              running_runs: s.running,
              queued_runs: s.queued,
              concurrency: s.concurrency,
            },
            lines.join("\n"),
          );
        };
        // One sandbox's status is never paged; a listing is, and shrinks to fit the response limit.
        let take = sandbox_id === undefined ? (limit ?? STATUS_PAGE) : rows.length;
        for (;;) {
          const page = rows.slice(from, from + take);
          const more = from + page.length < rows.length;
          const built = answer(page, more ? cursorOf(page.at(-1)!) : null);
          const size = responseBytes(built);
          if (size <= maxResponseBytes || page.length <= 1 || sandbox_id !== undefined)
            return built;
          take = Math.max(
            1,
            Math.min(page.length - 1, Math.floor((page.length * maxResponseBytes) / size)),
          );
        }
      },
    }),
    tool({
      name: "install_package",
      title: "Install Python packages",
      description: `Install Python packages into a sandbox's Python interpreter (Pyodide's own packages, fetched from its distribution, and wheels from the package sources the server operator configured; in a native sandbox, wheels built for the machine's python3, never built from source). Give package_name or packages, each a requirement that may pin versions (PEP 508/440, e.g. "attrs>=23,<25"): the highest version that satisfies is installed, and a pin no source meets is an error. Installed packages persist in that sandbox only, one version each.`,
      input: {
        sandbox_id: a.sandboxId,
        package_name: z
          .string()
          .min(1)
          .optional()
          .describe('One requirement, e.g. "numpy" or "six==1.16.0"'),
        packages: z
          .array(z.string().min(1))
          .min(1)
          .optional()
          .describe('Several requirements, e.g. ["attrs>=23", "six"]'),
      },
      output: { sandbox_id: z.string(), installed: z.array(z.string()) },
      // Only adds: a package already installed is kept, and a conflicting pin is refused.
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: service.runtime.packages.mayUseNetwork(),
      },
      run: async ({ sandbox_id, package_name, packages }) => {
        if ((package_name === undefined) === (packages === undefined)) {
          throw new PolyboxError(
            "INVALID_ARGUMENT",
            'give exactly one of package_name (a string) or packages (a list), e.g. {"package_name": "numpy"}',
          );
        }
        const installed = await service.installPackages(
          caller,
          sandbox_id,
          packages ?? [package_name!],
        );
        return result(
          { sandbox_id, installed },
          `installed in sandbox ${sandbox_id}: ${installed.join(", ")}`,
        );
      },
    }),
  ];
}

/** One line of the listing: an open sandbox, or a named one stored and not open. */
interface Row {
  open?: ManagedSandboxInfo;
  stored?: NamedSandboxInfo;
  key: Key;
}

/** Where a row sorts: open ones by creation then id, then stored ones by name. */
type Key = ["open", number, string] | ["stored", string];

function listing(open: ManagedSandboxInfo[], stored: NamedSandboxInfo[]): Row[] {
  const rows: Row[] = [
    ...open.map((o): Row => ({ open: o, key: ["open", o.createdAt, o.id] })),
    ...stored.map((n): Row => ({ stored: n, key: ["stored", n.name] })),
  ];
  return rows.sort((x, y) => compare(x.key, y.key));
}

function compare(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] === "open" ? -1 : 1;
  if (a[0] === "open" && b[0] === "open")
    return a[1] !== b[1] ? a[1] - b[1] : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

/**
 * A cursor names the last row a page held, so the next page starts after it even when
 * sandboxes opened or closed in between (none is listed twice, none that stayed is skipped).
 */
function cursorOf(row: Row): string {
  return Buffer.from(JSON.stringify(row.key)).toString("base64url");
}

/** Where the page after `cursor` starts. */
function resume(rows: Row[], cursor: string): number {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = null;
  }
  const valid =
    Array.isArray(key) &&
    ((key.length === 3 &&
      key[0] === "open" &&
      typeof key[1] === "number" &&
      typeof key[2] === "string") ||
      (key.length === 2 && key[0] === "stored" && typeof key[1] === "string"));
  if (!valid)
    throw new PolyboxError(
      "INVALID_ARGUMENT",
      "cursor is not one get_sandbox_status gave (pass next_cursor from its last answer, or no cursor for the first page)",
    );
  const at = rows.findIndex((r) => compare(r.key, key as Key) > 0);
  return at < 0 ? rows.length : at;
}

function describeStored(n: NamedSandboxInfo) {
  return {
    name: n.name,
    sandbox_id: n.id,
    engine: n.engine,
    created_at: iso(n.createdAt)!,
    bytes: n.bytes,
  };
}

export function describe(info: ManagedSandboxInfo) {
  const now = Date.now();
  return {
    sandbox_id: info.id,
    name: info.name,
    default_language: info.defaultLanguage,
    created_at: iso(info.createdAt)!,
    last_used_at: iso(info.lastUsedAt)!,
    age_seconds: Math.round((now - info.createdAt) / 1000),
    idle_seconds: Math.round((now - info.lastUsedAt) / 1000),
    expires_at: iso(info.expiresAt),
    languages: info.languages,
    engine: info.engine,
    file_count: info.fileCount,
    bytes: info.bytes,
    running: info.running,
    limits: {
      timeout_ms: info.limits.timeoutMs,
      memory_mb: info.limits.memoryMb,
      max_output_bytes: info.limits.maxOutputBytes,
      workspace_quota_bytes: info.limits.workspaceQuotaBytes,
    },
  };
}

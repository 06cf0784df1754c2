// Worker side: the Bash engine, just-bash (a Bash interpreter written in TypeScript with its own
// in-memory file system and coreutils). Its network commands and its embedded python/js commands
// stay off. just-bash runs every `exec` in a fresh shell, so state between runs is carried here:
// exported and plain variables and the working directory persist; functions and aliases do not.

import { Bash, InMemoryFs, latin1FromBytes, parse, type SecureFetch } from "just-bash";
import type { RunRequest } from "../../../protocol/messages.js";
import {
  type Engine,
  type EngineOutcome,
  type RunContext,
  recyclable,
  stoppedAt,
} from "../common/engine.js";
import { type GuestEntry, type GuestFs, WorkspaceMirror } from "../common/mirror.js";
import { netFailure } from "../common/net.js";
import { executionLimits, limitVerdict, withoutTuningHint } from "./budgets.js";
import { AVAILABLE, commandsFor } from "./commands/registry.js";
import { shellQuote } from "./commands/shared/context.js";
import { ETC_FILES } from "./commands/shared/identity.js";
import type { Traps } from "./commands/trap.js";
import { DeviceFs } from "./devices.js";
import { EXPORTS_PROBE, ShellState } from "./shell-state.js";

const ROOT = "/workspace";

function adapter(fs: InMemoryFs): GuestFs {
  const abs = (path: string) => `${ROOT}/${path}`;
  return {
    async list() {
      const out = new Map<string, GuestEntry>();
      for (const full of fs.getAllPaths()) {
        if (!full.startsWith(`${ROOT}/`)) continue;
        const st = await fs.lstat(full);
        if (st.isSymbolicLink) continue;
        out.set(full.slice(ROOT.length + 1), {
          type: st.isDirectory ? "dir" : "file",
          size: st.isDirectory ? 0 : st.size,
          mtimeMs: st.mtime.getTime(),
        });
      }
      return out;
    },
    // A file appended to holds its bytes in the front of a larger buffer (the just-bash patch's
    // amortised append); what leaves the worker is the file's bytes alone.
    read: async (path) => {
      const bytes = await fs.readFileBuffer(abs(path));
      return bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    },
    async write(path, data, mtimeMs) {
      const full = abs(path);
      await fs.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
      await fs.writeFile(full, data);
      await fs.utimes(full, new Date(mtimeMs), new Date(mtimeMs));
    },
    mkdir: (path) => fs.mkdir(abs(path), { recursive: true }),
    remove: (path) => fs.rm(abs(path), { recursive: true, force: true }),
  };
}

/**
 * just-bash loads each command's module on first use. Running the common ones once at boot, on an
 * empty scratch file system, moves that cost out of the first guest run and into the pool refill.
 */
const WARM_UP = [
  "echo a | cat | grep a | sed s/a/b/ | tr a-z A-Z | sort | uniq -c | head -1 | tail -1 | wc -l | cut -c1 >/dev/null",
  "printf '%s' x | awk '{print $1}' | xargs echo >/dev/null; seq 1 2 >/dev/null; ls / >/dev/null; env >/dev/null",
  "mkdir -p /w/d; touch /w/f; cp /w/f /w/g; mv /w/g /w/h; rm -r /w; basename /a/b >/dev/null; dirname /a/b >/dev/null; date >/dev/null; find / -maxdepth 0 >/dev/null; test -e / && true",
].join("\n");

/** just-bash's fetch hook over the run's network bridge. */
function bridgedFetch(run: RunContext): SecureFetch {
  return async (url, options = {}) => {
    const headers: [string, string][] = [];
    const given = options.headers;
    if (given instanceof Headers)
      given.forEach((value, name) => {
        headers.push([name, value]);
      });
    else for (const [name, value] of Object.entries(given ?? {})) headers.push([name, value]);
    const body = options.body === undefined ? undefined : new TextEncoder().encode(options.body);
    const reply = run.net({
      method: (options.method ?? "GET").toUpperCase(),
      url,
      headers,
      ...(body ? { body } : {}),
      redirect: options.followRedirects === false ? "manual" : "follow",
    });
    if (!reply.ok) throw new Error(netFailure(reply));
    return {
      status: reply.status,
      statusText: reply.statusText,
      headers: Object.fromEntries(reply.headers),
      body: reply.body,
      url: reply.url,
    };
  };
}

/** How many shorter prefixes `runnablePrefix` tries before giving up on running any. */
const PREFIX_TRIES = 64;

/** A syntax error's line and message, or null if the script parses. */
function syntaxError(code: string): { line: number; message: string } | null {
  try {
    parse(code);
    return null;
  } catch (error) {
    const e = error as { line?: unknown; message?: unknown };
    if (typeof e.line !== "number") return null;
    const message = String(e.message ?? "syntax error").replace(/^Parse error at \d+:\d+: /, "");
    return { line: e.line, message };
  }
}

/**
 * Bash reads a script a command at a time, so the complete commands before a syntax error run
 * (then bash reports it and exits with status 2); just-bash parses the whole script first and
 * runs nothing. This returns what bash would run, the longest prefix of whole lines before the
 * error that parses, followed by the report and `exit 2` (null if the script parses).
 */
function runnablePrefix(code: string): string | null {
  const error = syntaxError(code);
  if (!error) return null;
  const lines = code.split("\n");
  const report =
    `printf '%s\\n' ${shellQuote(`bash: line ${error.line}: ${error.message}`)} ` +
    `${shellQuote(`bash: line ${error.line}: \`${lines[error.line - 1] ?? ""}'`)} >&2; exit 2`;
  for (let end = error.line - 1, tries = 0; end > 0 && tries < PREFIX_TRIES; end--, tries++) {
    const prefix = lines.slice(0, end).join("\n");
    if (syntaxError(prefix) === null) return `${prefix}\n${report}`;
  }
  return report;
}

/**
 * just-bash's defense in depth (it blocks `Function`, `eval`, dynamic imports and the like while
 * a script runs, should a just-bash bug ever let a script reach JavaScript) in its
 * process-lifetime form: `Reflect`, `JSON` and `Math` are frozen for good rather than swapped
 * for proxies at the start of every run and restored at its end. A bash worker is a disposable
 * realm that runs nothing else, which is what that form is for, and it is the stronger one (the
 * scoped proxies, by just-bash's own account, cannot revoke what cached an intrinsic before a run
 * began). Its cost is the same: `echo 1` in an open sandbox, three interleaved pairs of 50-run
 * medians, 5.7/4.3/4.9 ms scoped and 4.8/4.6/4.7 ms process-lifetime. Every Bash of a realm must
 * use the same settings.
 */
const DEFENSE_IN_DEPTH = { enabled: true, processLifetimeIntrinsicHardening: true } as const;

export async function createEngine(): Promise<Engine> {
  await new Bash({ fs: new InMemoryFs(), defenseInDepth: DEFENSE_IN_DEPTH }).exec(WARM_UP);
  return recyclable(createInstance);
}

/** A fresh file system and shell state; the command modules stay loaded. */
async function createInstance(): Promise<Engine> {
  const fs = new DeviceFs();
  await fs.mkdir(ROOT, { recursive: true });
  const mirror = new WorkspaceMirror(adapter(fs));
  const shell = new ShellState();
  let cwd = ROOT;
  let abort: AbortController | null = null;

  return {
    applyFiles: (request: RunRequest) => mirror.apply(request.sync, request.fullSync),
    collectFiles: () => mirror.collect(),
    interrupt: () => abort?.abort(),
    async run(request: RunRequest, run: RunContext): Promise<EngineOutcome> {
      abort = new AbortController();
      let timedOut = false;
      const timer = setTimeout(
        () => {
          timedOut = true;
          abort?.abort();
        },
        Math.max(0, run.deadline - Date.now()),
      );
      // Scripts expect a scratch /tmp; a guest may have removed it in an earlier run.
      await fs.mkdir("/tmp", { recursive: true });
      // /dev/zero, /dev/urandom and /dev/random (devices.ts).
      await fs.startRun();
      await fs.mkdir("/etc", { recursive: true });
      for (const [path, text] of Object.entries(ETC_FILES)) await fs.writeFile(path, text);
      const traps: Traps = { exit: null, err: null };
      const bash = new Bash({
        defenseInDepth: DEFENSE_IN_DEPTH,
        fs,
        cwd,
        env: { HOME: ROOT, ...shell.environment(), ...request.env },
        commands: AVAILABLE,
        // polybox's commands (commands/registry.ts), and the probe of exported variables.
        customCommands: [...commandsFor({ devices: fs, traps }), shell.probe],
        executionLimits: executionLimits(request.limits, run.deadline - Date.now()),
        errTrap: () => traps.err,
        // Marks what commands make of a device's window (devices.ts), so that a short read is
        // an error, not a silent one.
        aroundCommand: (name, context, next) =>
          fs.aroundCommand(name, latin1FromBytes(context.stdin), next),
        // curl and wget: every request goes to the trusted side, which decides.
        fetch: bridgedFetch(run),
      });
      // What the script writes to its own stdout and stderr goes to the run's output as each
      // statement ends (inside loops, functions and groups too), not when the script does: the
      // caller sees it live, and what was printed before a timeout, a cancel or a limit stopped
      // the script is kept. What just-bash hands back at the end is only what remains (the
      // message of the limit that stopped it).
      const onOutput = (stream: "stdout" | "stderr", text: string) =>
        run.output.write(stream, stream === "stderr" ? withoutTuningHint(text) : text);
      try {
        // A script saved on Windows ends its lines with \r\n; bash would read `fi\r` as a word.
        // The script runs as one group, and the probe after it records which variables the
        // script left exported. The brace shares the first line, so line numbers stay right.
        const script = request.code.replace(/\r\n/g, "\n");
        const code = `{ ${runnablePrefix(script) ?? script}\n}\n${EXPORTS_PROBE} $?`;
        const result = await bash.exec(code, {
          signal: abort.signal,
          rawScript: true,
          stdin: request.stdin,
          // The last run's unexported variables, as plain shell variables (shell-state.ts).
          env: shell.unexported(),
          onOutput,
        });
        // just-bash's own codes for a budget it enforced (budgets.ts), not polybox's endings.
        const verdict =
          result.exitCode === 126 || result.exitCode === 124
            ? limitVerdict(result.stderr)
            : undefined;
        // A script stopped by a limit, a timeout or a cancel has had its own output streamed as
        // it went; what just-bash hands back then is output a frame had captured and not yet
        // delivered (a loop's lines for its `> file`, a `$(…)`'s text), which bash would never
        // have printed: only the limit's message on stderr is kept.
        const stopped = verdict !== undefined || abort.signal.aborted;
        if (!stopped) run.output.write("stdout", result.stdout);
        run.output.write("stderr", withoutTuningHint(result.stderr));
        let env = result.env ?? {};
        // The EXIT trap runs when the script ends, however it ended (but not past a limit),
        // in the script's final state; its output follows the script's.
        if (traps.exit !== null && !stopped) {
          const handler = traps.exit;
          traps.exit = null;
          // The handler sees the script's exit status in $?, as bash's does.
          const after = await bash.exec(`{ (exit ${result.exitCode & 255}); ${handler}\n}`, {
            signal: abort.signal,
            rawScript: true,
            env,
            ...(env.PWD ? { cwd: env.PWD } : {}),
            onOutput,
          });
          run.output.write("stdout", after.stdout);
          run.output.write("stderr", withoutTuningHint(after.stderr));
          env = after.env ?? env;
        }
        shell.update(env);
        if (env.PWD) cwd = env.PWD;
        if (timedOut) return stoppedAt("timeout");
        return { exitCode: result.exitCode, value: null, ...verdict };
      } finally {
        clearTimeout(timer);
        abort = null;
      }
    },
  };
}

// CLI: the --help text. Every flag with its default, grouped by what it controls, so that the
// help is the quickest reference to the defaults the code applies. Languages come from the
// language table (src/protocol/languages.ts).

import {
  knownExtensions,
  LANGUAGE_INFO,
  LANGUAGES,
  languageTitles,
} from "../protocol/languages.js";

function languageLines(): string {
  return LANGUAGES.map((l) => {
    const info = LANGUAGE_INFO[l];
    const names = [l, ...info.aliases].join(", ");
    const native = info.native ? "" : " (WebAssembly only)";
    return `  ${names.padEnd(28)}${info.extensions.join(" ")}: ${info.engine}${native}`;
  }).join("\n");
}

export const HELP = `polybox — run untrusted code in sandboxes: ${languageTitles()}

Usage:
  polybox mcp [flags]                 MCP server over stdio (for Claude Desktop and other clients)
  polybox serve [flags]               MCP server over Streamable HTTP at http://HOST:PORT/mcp
  polybox router --cluster=URL [flags]  stateless MCP front for cluster nodes (see Cluster below)
  polybox run [flags] FILE            run a file; language from the extension (${knownExtensions()})
  polybox run [flags] APP.wasm [-- ARGS]  run a WASI preview 1 module with arguments
  polybox run [flags] --lang L -e CODE
  polybox run [flags] --wasmer-package NS/NAME@VERSION [COMMAND] [-- ARGS]
                                      run a Wasmer registry package's command (default: its
                                      entrypoint) on the wasix engine
  polybox doctor [--json]             engines found, Node version, isolation layers on this machine
  polybox warmup [--python-packages=numpy,pandas]
                                      build the Python memory snapshot now (otherwise: on first
                                      start) and cache the packages named, to go offline later
  polybox --help | --version

Permissions (denied unless granted; a bare flag with no value grants everything, as in Deno):
  --allow-read=PATH[,PATH]      host paths upload_file may copy files from
  --allow-net=HOST[:PORT][,…]   hosts guest code may reach (fetch, urllib, curl), through the server;
                                private and loopback addresses only when named literally (127.0.0.1:8080)
  --deny-net=HOST[:PORT][,…]    hosts refused even when --allow-net grants them (a bare --allow-net too)
  --net-header=HOST=NAME:ENV    the server adds header NAME with the value of its env var ENV to
                                requests to HOST; the value never enters the sandbox (repeatable)
  --net-secret=NAME@HOST[,…]    a secret guests use but never read: their env var NAME holds a
                                placeholder, which the server replaces with the value of its own
                                env var NAME in request headers to HOST only (NAME=VALUE@HOST gives
                                the value; /url,body after the hosts: in the URL and body too)
  --allow-env=NAME[,NAME]       host environment variables passed into guests

Python packages (fetched by the server like Deno fetches dependencies: no --allow-net needed):
  --python-packages=DIR|URL[,…] package sources: wheel directories, Pyodide distributions, PEP 503
                                indexes (naming one allows it); on warmup, also the packages to cache
  --cached-only                 refuse every package download: local sources and the cache only
  --pyodide-cdn=URL             where Pyodide's own packages come from (default: jsDelivr's copy of
                                the installed Pyodide; env POLYBOX_PYODIDE_CDN)

Wasmer packages (wasix runs' wasmer_package; fetched by the server, pinned by sha256 and cached):
  --wasmer-registry=URL         the registry's GraphQL endpoint (default https://registry.wasmer.io/graphql;
                                naming one allows it); --cached-only applies too
  --wasmer-download-host=HOST[,…]  hosts package files may come from besides the registry's own
                                (default with the public registry: cdn.wasmer.io)
  --allow-private-index         the package sources above may be on a private or loopback network
                                (a mirror); only their own host and port, never what they link to

Isolation:
  --isolation=auto|wasm|native  auto (default on Linux with the launcher): WebAssembly engines in a
                                kernel jail, real interpreters where a sandbox asks for engine "native";
                                wasm: WebAssembly only; native: the machine's python3, bash and node,
                                one kernel jail per sandbox (Linux)
  --native-python=PATH          interpreters native mode runs (default /usr/bin/python3,
  --native-bash=PATH              /bin/bash, and the Node running polybox)
  --native-node=PATH

Limits (a flag sets the default and the most a client may ask for):
  --timeout=30s                 wall-clock time per run
  --memory=512M                 memory per interpreter
  --max-output=1M               stdout/stderr bytes kept per run and stream
  --workspace-quota=100M        bytes of files per sandbox
  --max-code=1M                 bytes of source code per run

Server (mcp, serve):
  --concurrency=N               runs at once (default: number of cores); up to 4×N more wait in a queue
  --max-sandboxes=64            sandboxes open at once, all clients together
  --max-sandboxes-per-client=N  sandboxes one client may have open (default: serve a quarter of
                                --max-sandboxes; mcp, whose one client is the only one, all of them)
  --max-named-sandboxes=100     named sandboxes one client may keep in the data dir, open or not
  --max-runs-per-client=N       runs one client may have running or queued (default: serve a
                                quarter of concurrency + queue; mcp all of them)
  --max-response=8M             largest tool response sent; past it images and displays are left
                                out (the answer says how to fetch them). The SDK's stdio client
                                drops the connection past 10 MiB; Claude's apps refuse over 1 MB
  --inline-output=32K           output bytes per stream a result holds; a longer stream keeps its
                                head and tail, and the whole of it is kept as a file (.polybox/output/
                                in the sandbox; a one-shot run's for --job-retention) linked from
                                the answer as an MCP resource
  --idle-timeout=30m            close sandboxes unused this long (0 = never)
  --max-lifetime=DURATION       close sandboxes open this long, busy or not (default: no limit)
  --data-dir=DIR                named sandboxes and snapshots (default: the per-user state dir,
                                e.g. ~/.local/state/polybox)
  --data-quota=10G              bytes the data dir may hold, named workspaces and snapshots together
  --max-snapshots=32            snapshots one sandbox may have
  --snapshot-quota=4G           bytes one sandbox's snapshots may add up to
  --rate-limit=N cpu-s/min      run time per client per minute (default: unlimited), e.g. 10cpu-s/min
  --job-retention=10m           how long finished async jobs (and MCP tasks) keep their results, and
                                one-shot runs their long output
  --tools=LIST                  only these tools, e.g. --tools=execute_python,read_file
  --pool=LANG=N[,LANG=N]        warm engine processes per language, e.g. python=2,javascript=4,bash=2

HTTP (serve):
  --port=8765                   port (0 = any free port; the URL is printed on stderr)
  --host=127.0.0.1              address to listen on
  --allow-host=NAME[,NAME]      more Host names to answer (a DNS name; NAME:PORT for a proxy's on
                                another port); the bind address (on loopback, localhost) always
  --token=SECRET[,SECRET]       require "Authorization: Bearer SECRET" (default: env POLYBOX_TOKEN);
                                each token is one client, owning its sandboxes and jobs. Without
                                tokens each session is a client and its sandboxes close with it

Cluster (serve joins as a node; router fronts the nodes):
  --cluster=redis://HOST:PORT[/DB]  the Redis that holds the node registry and the run queues
  --cluster-secret=S            shared by nodes and routers (default: env POLYBOX_CLUSTER_SECRET);
                                signs their records and calls, never sent. Required with --cluster
  --node-id=ID                  this node's id (default: HOSTNAME-PID)
  --advertise=URL               where routers reach this node (default: its listening address)
  --cluster-ttl=10s             a node silent this long is dropped; its sandboxes are lost
  --drain-grace=30s             on SIGTERM a node takes no new work and finishes within this

Run:
  --lang=L, -l L                ${LANGUAGES.join(", ")} (or an alias below)
  --eval=CODE, -e CODE          code to run instead of a FILE
  --file=HOST[:PATH]            put a host file or directory in the workspace (at PATH, default
                                its own name); repeatable; it must lie under an --allow-read path

Languages (name and aliases, extensions, engine):
${languageLines()}

Values: sizes like 512M, 1G, 64k; durations like 30s, 5m, 1500ms, 2h.
`;

/**
 * `polybox CMD --help`: the usage lines of CMD and the flags that apply to it, taken from HELP
 * (each flag line with the lines that continue it), so that the two never disagree.
 */
export function commandHelp(
  command: string,
  appliesTo: (flag: string) => readonly string[],
): string {
  const lines = HELP.split("\n");
  const usage = lines.filter(
    (l) => l.startsWith(`  polybox ${command} `) || l === `  polybox ${command}`,
  );
  const flags: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const names = [
      ...(
        lines[i]!.match(/^ {2}(--[a-z][a-z-]*[^ ]*(?:, --[a-z][a-z-]*[^ ]*)*)/)?.[1] ?? ""
      ).matchAll(/--([a-z][a-z-]*)/g),
    ].map((m) => m[1]!);
    if (names.length === 0 || !names.some((n) => appliesTo(n).includes(command))) continue;
    flags.push(lines[i]!);
    // Continuation lines are indented past the flag column.
    while (i + 1 < lines.length && /^ {6,}\S/.test(lines[i + 1]!) && !/^ {2}--/.test(lines[i + 1]!))
      flags.push(lines[++i]!);
  }
  return [
    `polybox ${command}`,
    "",
    "Usage:",
    ...usage,
    ...(flags.length > 0 ? ["", "Flags:", ...flags] : []),
    "",
    "polybox --help lists every command and flag.",
    "",
  ].join("\n");
}

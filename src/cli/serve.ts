// CLI: `polybox mcp` (stdio) and `polybox serve` (Streamable HTTP). Both build one Runtime (the
// engine host) and one SandboxService from the flags, serve until the client leaves or a signal
// arrives, then close every sandbox and the engine host before exiting.

import { loadCluster } from "../cluster/dependencies.js";
import { checkInlineOutput } from "../core/server/kept-output.js";
import { SandboxService } from "../core/server/service.js";
import { serveHttp } from "../mcp/http.js";
import { checkResponseLimit, checkToolNames, createMcpServer } from "../mcp/server.js";
import { serveStdio } from "../mcp/stdio.js";
import { Runtime } from "../runtime.js";
import type { Flags } from "./args.js";
import { runtimeOptions, serviceOptions } from "./options.js";
import { version } from "./version.js";

export const DEFAULT_PORT = 8765;
export const DEFAULT_HOST = "127.0.0.1";

const log = (text: string) => process.stderr.write(`polybox: ${text}\n`);

/** How long closing sandboxes, jobs and engine processes may take once a stop is asked for. */
const SHUTDOWN_MS = 15_000;
/** How long a draining cluster node may take to finish its runs and see its sandboxes closed. */
const DRAIN_GRACE_MS = 30_000;

export async function serveCommand(command: "mcp" | "serve", flags: Flags): Promise<number> {
  if (flags.tools) checkToolNames(flags.tools);
  if (flags.maxResponseBytes !== undefined) checkResponseLimit(flags.maxResponseBytes);
  if (flags.inlineOutputBytes !== undefined) checkInlineOutput(flags.inlineOutputBytes);
  // A bug in one request must not take down every client's sandboxes with it.
  process.on("unhandledRejection", (reason) =>
    log(
      `unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
    ),
  );
  // A cluster node: its sandboxes are recorded in Redis as they open (see src/cluster/node.ts).
  const node =
    command === "serve" && flags.cluster !== undefined
      ? // Loaded only for a cluster node: BullMQ and ioredis cost a plain server ~0.5 s of start.
        new (await loadCluster(() => import("../cluster/node.js"))).ClusterNode({
          url: flags.cluster,
          secret: flags.clusterSecret ?? "",
          ...(flags.nodeId !== undefined ? { nodeId: flags.nodeId } : {}),
          ...(flags.clusterTtlMs !== undefined ? { ttlMs: flags.clusterTtlMs } : {}),
        })
      : null;
  // The server answers at once; a first start builds its boot caches in the background.
  const runtime = await Runtime.create({ ...runtimeOptions(flags), waitForBootCaches: false });
  const service = new SandboxService({
    runtime,
    ...serviceOptions(flags, command),
    ...(node ? { onSandbox: node.sandboxEvents } : {}),
  });
  // The data directory is read before the first request, so a call with the id of a sandbox
  // the previous process had is told that it was lost.
  await service.ready;
  const signalled = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  const common = {
    service,
    version: version(),
    ...(flags.tools ? { tools: flags.tools } : {}),
    ...(flags.maxResponseBytes !== undefined ? { maxResponseBytes: flags.maxResponseBytes } : {}),
  };
  // --token=A,B: each token is one client (see src/mcp/http.ts).
  const tokens = (flags.token ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  try {
    if (command === "mcp") {
      log(`MCP server on stdio (polybox ${version()})`);
      await Promise.race([serveStdio(common), signalled]);
    } else {
      const host = flags.host ?? DEFAULT_HOST;
      if (tokens.length === 0 && !["127.0.0.1", "localhost", "::1"].includes(host)) {
        log(
          `warning: listening on ${host} without a token; anyone who can reach it can run code. Set --token or POLYBOX_TOKEN`,
        );
      }
      const http = await serveHttp({
        ...common,
        host,
        port: flags.port ?? DEFAULT_PORT,
        ...(flags.allowHosts ? { allowedHosts: flags.allowHosts } : {}),
        ...(tokens.length > 0 ? { tokens } : {}),
        ...(node ? { internal: node.endpoint } : {}),
      });
      log(`MCP server on ${http.url}${tokens.length > 0 ? " (bearer token required)" : ""}`);
      if (node) {
        await node.start(
          service,
          (caller) => createMcpServer({ ...common, caller }),
          flags.advertise ?? http.url,
          version(),
        );
        log(`cluster node ${node.id} joined ${flags.cluster}`);
      }
      const signal = await signalled;
      log(`stopping on ${signal}`);
      if (node && signal === "SIGTERM") {
        const grace = flags.drainGraceMs ?? DRAIN_GRACE_MS;
        log(`draining: no new work; finishing what is running (at most ${grace / 1000} s)`);
        await node.drain(grace);
      }
      await node?.close();
      await http.close();
    }
  } finally {
    // Stopping is bounded: a server asked to stop is gone within SHUTDOWN_MS whatever hangs.
    setTimeout(() => {
      log(`stopping took longer than ${SHUTDOWN_MS / 1000} s; exiting now`);
      process.exit(1);
    }, SHUTDOWN_MS).unref();
    await node?.close();
    await service.close();
    await runtime.close();
  }
  // Everything is closed: whatever handle a library left referenced may not keep us running.
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

// CLI: `polybox router --cluster=redis://…`, the stateless MCP front for a cluster of nodes
// (src/cluster/router.ts). It holds no sandbox and runs no code: it serves until a signal.

import { serveRouter } from "../cluster/router.js";
import { stderrLog } from "../core/log.js";
import type { Flags } from "./args.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "./serve.js";
import { version } from "./version.js";

const log = (text: string) => process.stderr.write(`polybox: ${text}\n`);

export async function routerCommand(flags: Flags): Promise<number> {
  const tokens = (flags.token ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const host = flags.host ?? DEFAULT_HOST;
  if (tokens.length === 0 && !["127.0.0.1", "localhost", "::1"].includes(host)) {
    log(
      `warning: listening on ${host} without a token; anyone who can reach it can run code. Set --token or POLYBOX_TOKEN`,
    );
  }
  const router = await serveRouter({
    url: flags.cluster ?? "",
    secret: flags.clusterSecret ?? "",
    host,
    port: flags.port ?? DEFAULT_PORT,
    version: version(),
    ...(tokens.length > 0 ? { tokens } : {}),
    ...(flags.allowHosts ? { allowedHosts: flags.allowHosts } : {}),
    log: stderrLog,
  });
  log(
    `router on ${router.url}${tokens.length > 0 ? " (bearer token required)" : ""} for ${flags.cluster}`,
  );
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  log(`stopping on ${signal}`);
  setTimeout(() => process.exit(1), 10_000).unref();
  await router.close();
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

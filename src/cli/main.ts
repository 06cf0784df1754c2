#!/usr/bin/env node
// CLI entry point (the package's `polybox` bin): parses the command line and dispatches. In
// `mcp` mode stdout belongs to the protocol, so everything else this process says goes to
// stderr. A usage mistake exits 2; a failure to start exits 1; `run` exits with the run's code.

import { loadCluster } from "../cluster/dependencies.js";
import { isPolyboxError } from "../core/errors.js";
import { flagHint } from "../mcp/hints.js";
import { flagCommands, type ParsedArgs, parseArgs, UsageError } from "./args.js";
import { commandHelp, HELP } from "./help.js";
import { version } from "./version.js";

async function main(argv: string[]): Promise<number> {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(argv, process.env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`polybox: ${e.message}\nRun polybox --help for usage.\n`);
    return 2;
  }
  const { command, flags } = parsed;
  switch (command) {
    case "help":
      process.stdout.write(parsed.topic ? commandHelp(parsed.topic, flagCommands) : HELP);
      return 0;
    case "version":
      process.stdout.write(`polybox ${version()}\n`);
      return 0;
    // Each command loads what it needs: `mcp` answers a client sooner without the cluster's
    // BullMQ and ioredis, or the router's HTTP stack.
    case "doctor": {
      const { doctorReport, formatDoctor, healthy } = await import("./doctor.js");
      const report = await doctorReport();
      process.stdout.write(
        flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatDoctor(report)}\n`,
      );
      return healthy(report) ? 0 : 1;
    }
    case "warmup":
      return (await import("./warmup.js")).warmupCommand(flags);
    case "run":
      return (await import("./run.js")).runCommand(flags);
    case "router":
      return (await loadCluster(() => import("./router.js"))).routerCommand(flags);
    case "mcp":
    case "serve":
      return (await import("./serve.js")).serveCommand(command, flags);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const hint = isPolyboxError(error) ? flagHint(error) : undefined;
    const message =
      error instanceof UsageError
        ? error.message
        : isPolyboxError(error)
          ? `${error.message}${hint ? ` (${hint})` : ""}`
          : error instanceof Error
            ? (error.stack ?? error.message)
            : String(error);
    process.stderr.write(`polybox: ${message}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);

// Trusted side: where polybox's own diagnostics go. The library never writes to stdout or stderr
// by itself (stdout may be an MCP stdio channel): a runtime takes a logger, and the default one
// writes to stderr. Text that came from the untrusted side is passed apart from polybox's own
// words, so that a logger can never be made to print a line that looks like polybox's.

export type LogLevel = "info" | "warn" | "error";

/**
 * One diagnostic. `untrusted` is text the engine host, a worker or a guest produced (a crash
 * message, stray stderr): a logger must show it as data, never as a line of its own.
 */
export type LogFn = (level: LogLevel, message: string, untrusted?: string) => void;

/** Longest untrusted text a default log line carries. */
const MAX_UNTRUSTED_CHARS = 2000;

/** The default logger: one line per call on stderr, untrusted text quoted as a JSON string. */
export const stderrLog: LogFn = (level, message, untrusted) => {
  const tail =
    untrusted === undefined
      ? ""
      : ` [untrusted] ${JSON.stringify(untrusted.slice(0, MAX_UNTRUSTED_CHARS))}`;
  process.stderr.write(`polybox ${level}: ${message}${tail}\n`);
};

/** A logger that drops everything (for embedders that want silence). */
export const silentLog: LogFn = () => undefined;

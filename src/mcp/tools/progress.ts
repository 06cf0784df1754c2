// MCP adapter: progress notifications for a run, sent only when the client asked for them with a
// progress token. Once a second: elapsed time and the last line of output, so a long run shows
// signs of life (and clients that reset their timeout on progress keep waiting).

import type { OutputStream } from "../../index.js";
import type { Extra } from "../tool.js";

const EVERY_MS = 1000;

export function progressReporter(extra: Extra): {
  onOutput?: (stream: OutputStream, text: string) => void;
  stop: () => void;
} {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { stop: () => {} };
  const started = Date.now();
  let lastLine = "";
  const timer = setInterval(() => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    extra
      .sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: elapsed,
          message: `${elapsed} s${lastLine ? ` · ${lastLine}` : ""}`,
        },
      })
      .catch(() => {}); // The client went away; the run's own result path reports that.
  }, EVERY_MS);
  timer.unref();
  return {
    onOutput: (_stream, text) => {
      const line = text.trimEnd().split("\n").pop();
      if (line) lastLine = line.length > 200 ? `${line.slice(0, 200)}…` : line;
    },
    stop: () => clearInterval(timer),
  };
}

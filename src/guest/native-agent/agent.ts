// Untrusted side, native mode: the first program in a sandbox's jail, run by the machine's own
// Node as the jail's unprivileged user. It keeps the sandbox's private workspace copy (a tmpfs
// at /workspace the size of the quota) in step with the trusted side, starts one long-lived
// interpreter per language (drivers.ts), runs requests one at a time, and enforces each run's
// timeout and output cap by killing that interpreter. When a run ends, every process it left
// behind is killed: a run's processes end with the run. This file reads the trusted side's lines
// and answers them; the work is done in workspace.ts (the copy), interpreters.ts (the processes),
// runs.ts (one run), trust.ts (TLS) and proxy.ts (the network).
//
// Everything the agent sends is checked by the trusted side like any engine host's message.

import type { EngineLanguage, EngineResult, RunRequest } from "../../protocol/messages.js";
import { decode, readLines, type ToAgent } from "../../protocol/native-wire.js";
import { BASE_ENV, interpreterFor, interpreters, KIND, paths } from "./interpreters.js";
import { GuestProxy } from "./proxy.js";
import { runNow, running } from "./runs.js";
import { trust } from "./trust.js";
import { send } from "./wire.js";

/** The run in progress, whose network requests the proxy relays. */
let currentRun: number | null = null;
/** The HTTP proxy on the jail's loopback, when the runtime grants guests network. */
let proxy: GuestProxy | null = null;

async function run(
  id: number,
  language: EngineLanguage,
  request: RunRequest,
): Promise<EngineResult> {
  currentRun = id;
  try {
    return await runNow(id, language, request);
  } finally {
    currentRun = null;
    proxy?.endRun(id);
  }
}

// ---- the channel -------------------------------------------------------------------------------

let queue = Promise.resolve();
readLines(process.stdin, (line) => {
  // From the trusted side: JSON of the ToAgent shape (undefined only if a line was cut).
  const message = decode(line) as ToAgent | undefined;
  if (message === undefined) return;
  if (message.type === "cancel") {
    running.get(message.id)?.();
    return;
  }
  if (message.type === "net-reply") {
    proxy?.reply(message.id, message.req, message.reply);
    return;
  }
  if (message.type === "tunnel") {
    proxy?.tunnelReply(message.id, message.tun, message.reply);
    return;
  }
  if (message.type === "trust") {
    trust(message.ca);
    return;
  }
  if (message.type === "warm") {
    const kind = KIND[message.language as keyof typeof KIND];
    queue = queue.then(() => {
      if (kind) interpreterFor(kind, message.memoryMb);
    });
    return;
  }
  if (message.type !== "run") return;
  queue = queue.then(async () => {
    try {
      const result = await run(message.id, message.language, message.request);
      send({ type: "result", id: message.id, result });
    } catch (error) {
      send({ type: "log", message: `run ${message.id} failed: ${String(error)}` });
      send({
        type: "result",
        id: message.id,
        result: {
          status: "error",
          stdout: "",
          stderr: `polybox: the native engine could not run this code: ${String(error)}\n`,
          exitCode: 1,
          value: null,
          truncated: false,
          changes: { files: [], dirs: [], removed: [] },
          displays: [],
        },
      });
    }
  });
});
process.stdin.on("end", () => {
  for (const i of interpreters.values()) i.kill();
  process.exit(0);
});
// The proxy listens before any interpreter starts, so that every one of them has its address.
if (paths.proxy) {
  proxy = new GuestProxy(
    () => currentRun,
    (id, req, request) => send({ type: "net", id, req, request }),
    (id, tun, frame) => send({ type: "tunnel", id, tun, frame }),
    process.stdout,
  );
  const url = `http://127.0.0.1:${await proxy.listen()}`;
  // curl reads only the lower-case http_proxy; most tools read either.
  for (const name of ["http_proxy", "https_proxy", "all_proxy"]) {
    BASE_ENV[name] = url;
    BASE_ENV[name.toUpperCase()] = url;
  }
  // Node 24's own fetch and http honour the variables only when asked (older Nodes ignore this).
  BASE_ENV.NODE_USE_ENV_PROXY = "1";
}
send({ type: "ready" });

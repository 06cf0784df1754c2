// MCP adapter: polybox's resource URIs. Two templates name everything a client can read:
//   polybox://sandbox/{sandbox_id}/{+path}   a file in one of the caller's sandboxes
//   polybox://output/{run_id}/{stream}       the whole stdout/stderr of a one-shot run whose
//                                            answer held only its head and tail (kept for
//                                            --job-retention)
// A URI is read as sent, never normalized: `..` reaches the workspace's own check, which refuses
// it, instead of being folded away as URL parsers do.

import { type FullOutput, type OutputStream, PolyboxError } from "../index.js";

export const SANDBOX_FILE_TEMPLATE = "polybox://sandbox/{sandbox_id}/{+path}";
export const RUN_OUTPUT_TEMPLATE = "polybox://output/{run_id}/{stream}";
const SANDBOX_PREFIX = "polybox://sandbox/";
const OUTPUT_PREFIX = "polybox://output/";

export type ResourceRef =
  | {
      kind: "file";
      sandboxId: string /** Decoded; the service keeps it inside the workspace. */;
      path: string;
    }
  | { kind: "output"; runId: string; stream: OutputStream };

/** The URI of a workspace file: each path segment percent-encoded, the slashes kept. */
export function sandboxFileUri(sandboxId: string, path: string): string {
  return `${SANDBOX_PREFIX}${encodeURIComponent(sandboxId)}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** Where a stream a result held only the head and tail of can be read whole. */
export function fullOutputUri(stream: OutputStream, kept: FullOutput): string {
  return kept.sandboxId !== null && kept.path !== null
    ? sandboxFileUri(kept.sandboxId, kept.path)
    : `${OUTPUT_PREFIX}${encodeURIComponent(kept.runId)}/${stream}`;
}

/** What a URI names, or INVALID_ARGUMENT saying what polybox's URIs look like. */
export function parseResourceUri(uri: string): ResourceRef {
  const bad = (why: string) =>
    new PolyboxError(
      "INVALID_ARGUMENT",
      `${JSON.stringify(uri.slice(0, 200))} is not a polybox resource URI: ${why}; workspace files are ${SANDBOX_FILE_TEMPLATE}, kept run output ${RUN_OUTPUT_TEMPLATE}`,
    );
  const prefix = [SANDBOX_PREFIX, OUTPUT_PREFIX].find((p) => uri.startsWith(p));
  if (prefix === undefined)
    throw bad(`it starts with neither ${SANDBOX_PREFIX} nor ${OUTPUT_PREFIX}`);
  const rest = uri.slice(prefix.length);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) throw bad("it names no sandbox or run, or no file");
  let id: string;
  let tail: string;
  try {
    id = decodeURIComponent(rest.slice(0, slash));
    tail = decodeURIComponent(rest.slice(slash + 1));
  } catch {
    throw bad("it has a malformed %-escape");
  }
  if (prefix === SANDBOX_PREFIX) return { kind: "file", sandboxId: id, path: tail };
  if (tail !== "stdout" && tail !== "stderr") throw bad("a run's output is its stdout or stderr");
  return { kind: "output", runId: id, stream: tail };
}

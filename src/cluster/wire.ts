// Cluster: what a router sends a node and how the node knows it came from the cluster. A router
// calls a node's internal endpoint (POST /cluster) with, in the body, the caller it authenticated
// and the MCP request to run as that caller, and in headers a signature over the request (auth.ts:
// node, method, path, time, nonce, the body's SHA-256). The node checks the signature, the time and
// the nonce before it reads the body, then the body's digest and shape; the secret never travels.

import { z } from "zod";

export const NODE_PATH = "/cluster";
/** Largest body a node reads from a router: a tool call's arguments (code, base64 files). */
export const MAX_FORWARD_BYTES = 64 * 1024 * 1024;

export const forwardSchema = z.object({
  owner: z.string().min(1).max(512),
  scope: z.string().min(1).max(512).optional(),
  method: z.enum(["tools/call", "resources/read"]),
  params: z.record(z.string(), z.unknown()),
});
export type Forward = z.infer<typeof forwardSchema>;

/** What a node answers: the MCP result, or a JSON-RPC error. */
export type ForwardAnswer =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string } };

/** The message of a failed run on a node that died: the node and when it was last heard of. */
export function lostReason(nodeId: string, lastSeen: number | null): string {
  const when = lastSeen === null ? "at an unknown time" : `at ${new Date(lastSeen).toISOString()}`;
  return `node ${nodeId} stopped heartbeating (last heartbeat ${when})`;
}

/** What a queued run carries: the tool call, and who made it. */
export interface RunJobData {
  tool: string;
  arguments: Record<string, unknown>;
  owner: string;
  scope?: string;
  /** Run as an async job (status, logs and cancel from any router) rather than awaited. */
  async: boolean;
  language: string;
  /** The node that started running it: if the job comes back, that node died mid-run. */
  startedBy?: string;
  /** The router's signature over the job's id, queue and every field above but `startedBy`. */
  sig?: string;
}

/** What a queued run's signature covers: nodes run a job only as the router that queued it made it. */
export function runJobFields(jobId: string, queue: string, d: RunJobData): unknown[] {
  return [jobId, queue, d.tool, d.arguments, d.owner, d.scope ?? null, d.async, d.language];
}

/** The prefix of a failed job's reason when its node was lost; the router answers SANDBOX_LOST. */
export const LOST_PREFIX = "SANDBOX_LOST: ";
export const CANCELLED_REASON = "cancelled";

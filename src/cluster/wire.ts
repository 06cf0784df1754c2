// Cluster: what a router sends a node and how the node knows it came from the cluster. A router
// calls a node's internal endpoint (POST /cluster) with the cluster secret in a header and, in the
// body, the caller it authenticated and the MCP request to run as that caller. The node checks the
// secret (constant time) and the body's shape before anything else; a wrong secret is refused.

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { z } from "zod";

export const NODE_PATH = "/cluster";
export const SECRET_HEADER = "x-polybox-cluster-secret";
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

export function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Whether the request presents the cluster secret; compared as digests, in constant time. */
export function presentsSecret(req: IncomingMessage, secret: Buffer): boolean {
  const presented = req.headers[SECRET_HEADER];
  if (typeof presented !== "string" || presented === "") return false;
  return timingSafeEqual(digest(presented), secret);
}

export async function readLimited(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

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
}

/** The prefix of a failed job's reason when its node was lost; the router answers SANDBOX_LOST. */
export const LOST_PREFIX = "SANDBOX_LOST: ";
export const CANCELLED_REASON = "cancelled";

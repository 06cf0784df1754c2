// Cluster: an embedder's process joins a cluster as a node (`joinCluster`, re-exported by
// `polybox/cluster`, index.ts).

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Caller, type Runtime, SandboxService, type ServiceOptions } from "../index.js";
import { createMcpServer } from "../mcp/server.js";
import { ClusterNode, type ClusterOptions } from "./node.js";

export type { ClusterOptions };

export interface JoinOptions {
  runtime: Runtime;
  cluster: ClusterOptions;
  /** Base URL routers reach this process at; its HTTP server must hand `endpoint` its path. */
  address: string;
  /** The service's options, as for `new SandboxService` (without runtime). */
  service?: Omit<ServiceOptions, "runtime" | "onSandbox">;
  /** Reported to clients as the server version. */
  version?: string;
}

export interface ClusterMember {
  /** The node's id in the registry. */
  id: string;
  /** The sandboxes and runs of this node; the embedder's own front may serve them too. */
  service: SandboxService;
  /** Mount on the HTTP server at `address`: requests for `path` go to `handle`. */
  endpoint: { path: string; handle(req: IncomingMessage, res: ServerResponse): Promise<void> };
  /** Takes no new work; finishes runs and waits for open sandboxes, at most `graceMs`. */
  drain(graceMs: number): Promise<void>;
  /** Leaves the cluster and closes the service (not the runtime, which is the caller's). */
  close(): Promise<void>;
}

/**
 * Joins a cluster as a node: registers with a heartbeat, records its sandboxes, takes runs from
 * the queues, and answers routed calls at `endpoint` (only those a router signed with a key
 * derived from the cluster secret; the secret itself never travels).
 */
export async function joinCluster(options: JoinOptions): Promise<ClusterMember> {
  const node = new ClusterNode(options.cluster);
  const service = new SandboxService({
    ...options.service,
    runtime: options.runtime,
    onSandbox: node.sandboxEvents,
  });
  await service.ready;
  const version = options.version ?? "embedded";
  try {
    await node.start(
      service,
      (caller: Caller) => createMcpServer({ service, caller, version }),
      options.address,
      version,
    );
  } catch (error) {
    await node.close();
    await service.close();
    throw error;
  }
  return {
    id: node.id,
    service,
    endpoint: node.endpoint,
    drain: (graceMs) => node.drain(graceMs),
    close: async () => {
      await node.close();
      await service.close();
    },
  };
}

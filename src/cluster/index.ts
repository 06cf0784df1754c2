// The cluster's library entry point (`polybox/cluster`): an embedder that runs its own front
// joins a cluster as a node with `joinCluster`, and may run a router in-process with
// `serveRouter`. A new export here is new public API. It is a separate entry point because a node
// serves routed calls through the MCP adapter, which sits above the Runtime: `polybox` itself
// stays free of Redis, BullMQ and MCP.
//
// bullmq and ioredis are optional peer dependencies (dependencies.ts): this entry loads the
// modules that use them through `loadCluster`, so that without them importing it fails with
// DEPENDENCY_MISSING, saying what to install.

import { loadCluster } from "./dependencies.js";

export type { ClusterMember, ClusterOptions, JoinOptions } from "./join.js";
export type { RouterOptions, RouterServer } from "./router.js";

const join = await loadCluster(() => import("./join.js"));
const router = await loadCluster(() => import("./router.js"));

/** See `join.ts`. */
export const joinCluster: typeof join.joinCluster = join.joinCluster;
/** See `router.ts`. */
export const serveRouter: typeof router.serveRouter = router.serveRouter;

// The tree is the map of polybox's trust boundary (docs/architecture.md, "Layout"). These rules
// keep it so: `npm run lint:deps` fails on a cycle, or on an import that crosses a wall the
// wrong way.
//
//   src/guest/       runs or touches guest code (engine host, engines, native agent): untrusted
//   src/protocol/    every message format that crosses the boundary: the one place both sides meet
//   src/supervisor/  starts guest processes and judges what comes back: trusted
//   src/core/        the library's model (sandboxes, workspaces, limits, jobs), host-agnostic
//   src/runtime.ts   the composition root that wires core to the supervisors
//   src/mcp/, src/cli/  adapters over the library
//   src/cluster/     nodes and routers over Redis and BullMQ: an adapter over mcp/ and the library

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      severity: "error",
      comment: "A module cycle makes the layers meaningless and the load order fragile.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-folder-cycle",
      severity: "error",
      comment: "Folders form layers; two folders that import each other are one folder.",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "trusted-not-into-guest",
      severity: "error",
      comment:
        "Trusted code meets guest-side code only through src/protocol/: it spawns guest code by path, never imports it.",
      from: { path: "^src/(?!guest/)" },
      to: { path: "^src/guest/" },
    },
    {
      name: "guest-not-into-trusted",
      severity: "error",
      comment:
        "Guest-side code runs next to guest code: it may use the protocol and itself, never the trusted side.",
      from: { path: "^src/guest/" },
      to: { path: "^src/(?!guest/|protocol/|types/)" },
    },
    {
      name: "protocol-is-a-leaf",
      severity: "error",
      comment: "Message formats depend on nothing of ours, so both sides can share them.",
      from: { path: "^src/protocol/" },
      to: { path: "^src/(?!protocol/)" },
    },
    {
      name: "core-is-host-agnostic",
      severity: "error",
      comment:
        "Core owns the contracts it runs through (RunHost) and knows no implementation, adapter or wiring.",
      from: { path: "^src/core/" },
      to: { path: "^src/(supervisor|mcp|cli)/|^src/runtime\\.ts$|^src/index\\.ts$" },
    },
    {
      name: "core-leaf-below-rooms",
      severity: "error",
      comment:
        "Core's leaf files (errors, limits, types, config...) are what every room of core builds on: they import none of the rooms.",
      from: { path: "^src/core/[^/]+$" },
      to: { path: "^src/core/(packages|sandbox|server)/" },
    },
    {
      name: "packages-below-sandbox",
      severity: "error",
      comment:
        "Package sources, caches and downloads know no sandbox and no server: a sandbox asks them for wheels.",
      from: { path: "^src/core/packages/" },
      to: { path: "^src/core/(sandbox|server)/" },
    },
    {
      name: "sandbox-below-server",
      severity: "error",
      comment:
        "A sandbox knows nothing of the clients, jobs and registry that serve it; the server builds on sandboxes.",
      from: { path: "^src/core/sandbox/" },
      to: { path: "^src/core/server/" },
    },
    {
      name: "network-in-packages-only",
      severity: "error",
      comment:
        "Within core, only packages/ opens connections (indexes, registries, CDNs), through its one download policy; the rest of core does no network I/O. net-addresses.ts takes node:net for BlockList and isIP, which classify addresses and connect to nothing.",
      from: { path: "^src/core/", pathNot: "^src/core/(packages/|net-addresses\\.ts$)" },
      to: { path: "^(node:)?(http|https|http2|net|tls|dgram|dns)$|node_modules/undici/" },
    },
    {
      name: "supervisor-below-adapters",
      severity: "error",
      from: { path: "^src/supervisor/" },
      to: { path: "^src/(mcp|cli)/|^src/runtime\\.ts$|^src/index\\.ts$" },
    },
    {
      name: "cluster-is-an-adapter",
      severity: "error",
      comment:
        "The cluster sits on top of the MCP adapter and the library; nothing below it knows it (the CLI wires it in).",
      from: { path: "^src/(core|supervisor|protocol|mcp)/|^src/runtime\\.ts$|^src/index\\.ts$" },
      to: { path: "^src/cluster/" },
    },
    {
      name: "declared-dependencies-only",
      severity: "error",
      comment:
        "Every package src/ imports is declared in package.json dependencies (the cluster's optional peers are the next rule's).",
      from: { path: "^src/" },
      to: {
        dependencyTypes: ["npm-no-pkg", "npm-unknown", "npm-dev", "unknown"],
        pathNot: "node_modules/(bullmq|ioredis)/",
      },
    },
    {
      name: "cluster-packages-in-cluster-only",
      severity: "error",
      comment:
        "bullmq and ioredis are optional peer dependencies: only src/cluster/ imports them, and its modules are loaded through loadCluster (src/cluster/dependencies.ts).",
      from: { pathNot: "^src/cluster/" },
      to: { path: "node_modules/(bullmq|ioredis)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json", ".d.ts"],
    },
  },
};

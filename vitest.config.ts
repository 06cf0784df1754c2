import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

// Tests run against the built package in dist/ (what users run), so `npm test` builds first.
// Engines boot real WASM; keep files serial-per-worker and give them room on a 2-core machine.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Memory tests measure what is retained, after a full collection.
    execArgv: ["--expose-gc"],
    maxWorkers: 2,
    // Servers the tests start keep state in a data dir: never the user's own.
    env: { XDG_STATE_HOME: path.join(os.tmpdir(), "polybox-test-state") },
    reporters: ["default", "json"],
    outputFile: { json: "test-results.json" },
  },
});

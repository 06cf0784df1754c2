// The programs the native agent starts, one long-lived process per language and sandbox, inside
// the sandbox's jail: driver.py (after engines/python/common.py), driver.sh and driver.cjs,
// beside this module. `npm run lint` checks them and the build copies them next to the compiled
// module in dist/ (wasm/guest-sources.mjs), which the jail binds in; they are read once, when
// the agent starts. Each reads one request at a time on fd 3, runs it in its own global state,
// writes a marker (the request's nonce) to stdout and stderr so the agent knows both streams are
// complete, and answers on fd 4. The guest's code runs in the same process: these programs are
// conveniences inside the jail, not a boundary.

import { readFileSync } from "node:fs";

const read = (name: string) => readFileSync(new URL(name, import.meta.url), "utf8");

/** argv[1]: the address-space limit in bytes (0: none). Requests: JSON lines. */
export const PYTHON_DRIVER = [read("../engines/python/common.py"), read("driver.py")].join("\n");

/**
 * $1: the virtual-memory limit in KiB (0: none). Requests: three NUL-terminated fields (nonce,
 * the run's `export` lines, the code).
 */
export const BASH_DRIVER = read("driver.sh");

/** Node, with the guest's script run in the main realm. Requests: JSON lines. */
export const NODE_DRIVER = read("driver.cjs");

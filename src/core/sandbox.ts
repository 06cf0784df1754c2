// The Sandbox and its one-shot runs, as the rest of the library imports them. The code lives in
// sandbox/, one file per concern (docs/architecture.md, "Layout").

export * from "./sandbox/sandbox.js";

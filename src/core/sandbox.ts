// The Sandbox and its one-shot runs, as the rest of the library imports them. The code lives in
// sandbox/, one file per concern (docs/architecture.md, "Layout").

export { SandboxFiles } from "./sandbox/files.js";
export { DEFAULT_PRINCIPAL, type OneShotOptions, run } from "./sandbox/one-shot.js";
export type { NamedSandboxInfo } from "./sandbox/persistence.js";
export { checkLanguage } from "./sandbox/run-request.js";
export * from "./sandbox/sandbox.js";

// The Sandbox and its one-shot runs, as the rest of the library imports them. The code lives in
// sandbox/, one file per concern (docs/architecture.md, "Layout").

export { SandboxFiles } from "./files.js";
export { DEFAULT_PRINCIPAL, type OneShotOptions, run } from "./one-shot.js";
export type { NamedSandboxInfo } from "./persistence.js";
export { checkCode, checkLanguage } from "./run-request.js";
export * from "./sandbox.js";

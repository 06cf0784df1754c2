// Module loader hook registered inside each engine worker once its engine has booted. From then
// on imports fail, so code that reaches the worker realm from inside an engine (Pyodide's
// `run_js`, say) cannot `import("node:net")`. The one exception is an engine that loads its own
// files lazily (just-bash loads each command on first use): imports made *by modules inside* a
// granted package directory still resolve. Guest code cannot place a module there (the engine
// host has no write access) and no engine with such a grant evaluates guest JavaScript.
// This is layer L1: a wall inside the process, which L2 and L3 back up.

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => unknown;

let allowedParents: string[] = [];

export function initialize(data: { allowedParents?: string[] } | undefined): void {
  allowedParents = data?.allowedParents ?? [];
}

export function resolve(specifier: string, context: ResolveContext, next: NextResolve): unknown {
  const parent = context.parentURL ?? "";
  if (allowedParents.some((dir) => parent.startsWith(dir))) return next(specifier, context);
  const error = new Error(
    `module loading is disabled in the sandbox (tried to import "${specifier}")`,
  );
  Object.assign(error, { code: "ERR_ACCESS_DENIED" });
  throw error;
}

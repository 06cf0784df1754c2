// The module loader hook installed inside each engine worker once its engine has booted. From then
// on imports fail, so code that reaches the worker realm from inside an engine (Pyodide's
// `run_js`, say) cannot `import("node:net")`. The one exception is an engine that loads its own
// files lazily (just-bash loads each command on first use): imports made *by modules inside* a
// granted package directory still resolve. Guest code cannot place a module there (the engine
// host has no write access) and no engine with such a grant evaluates guest JavaScript.
// This is layer L1: a wall inside the process, which L2 and L3 back up.
//
// Where Node has `module.registerHooks` (22.15+, 23.5+), the hook runs in the worker's own thread
// (harden.ts installs `denyingResolve`); elsewhere this file is the hooks module `register` loads
// on a loader thread, with `initialize` and `resolve` below.

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => unknown;
type Resolve = (specifier: string, context: ResolveContext, next: NextResolve) => unknown;

/** A resolve hook that refuses every import but those made by modules under `allowedParents`. */
export function denyingResolve(allowedParents: readonly string[]): Resolve {
  const parents = [...allowedParents];
  return (specifier, context, next) => {
    const parent = context.parentURL ?? "";
    if (parents.some((dir) => parent.startsWith(dir))) return next(specifier, context);
    const error = new Error(
      `module loading is disabled in the sandbox (tried to import "${specifier}")`,
    );
    Object.assign(error, { code: "ERR_ACCESS_DENIED" });
    throw error;
  };
}

let hook: Resolve = denyingResolve([]);

export function initialize(data: { allowedParents?: string[] } | undefined): void {
  hook = denyingResolve(data?.allowedParents ?? []);
}

export function resolve(specifier: string, context: ResolveContext, next: NextResolve): unknown {
  return hook(specifier, context, next);
}

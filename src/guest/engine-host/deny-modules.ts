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

// Where the hook runs in the worker's thread, code that reached the realm could have replaced an
// intrinsic it calls (`Array.prototype.some` returning true would open every import), so it calls
// none: these are the originals, taken when the worker started, before any guest code.
const { apply } = Reflect;
const { hasOwn, assign, freeze } = Object;
const { startsWith } = String.prototype;
const RealmError = Error;

/** A resolve hook that refuses every import but those made by modules under `allowedParents`. */
export function denyingResolve(allowedParents: readonly string[]): Resolve {
  const parents: readonly string[] = freeze(allowedParents.slice());
  const count = parents.length;
  return (specifier, context, next) => {
    const parent: unknown = hasOwn(context, "parentURL") ? context.parentURL : undefined;
    if (typeof parent === "string")
      for (let i = 0; i < count; i++)
        if (apply(startsWith, parent, [parents[i]])) return next(specifier, context);
    const error = new RealmError(
      `module loading is disabled in the sandbox (tried to import "${specifier}")`,
    );
    assign(error, { code: "ERR_ACCESS_DENIED" });
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

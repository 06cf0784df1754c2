// Worker side: TypeScript for the JavaScript engine. Types are stripped by amaro (Node's own
// type stripper: swc compiled to WebAssembly), which replaces them with whitespace so that line
// and column numbers in errors are the user's own. Constructs that need code generation (enum,
// namespace, parameter properties) fall back to amaro's transform mode. Types are not checked.

export type StripResult = { code: string } | { error: string };

/** swc reports errors as a code frame; keep it, under a SyntaxError heading like QuickJS's own. */
function describe(error: unknown): string {
  const text =
    typeof error === "string" ? error : error instanceof Error ? error.message : String(error);
  const frame = text.replace(/\n+Caused by:[\s\S]*$/, "").trimEnd();
  return `SyntaxError (TypeScript): ${frame.replace(/^\s*x\s*/, "")}`;
}

let loaded: Promise<(code: string) => StripResult> | null = null;

/**
 * Loaded once per worker: a recycled worker makes a new interpreter per run, after its realm
 * has closed module loading (amaro holds no state between transforms).
 */
export function loadTypeStripper(): Promise<(code: string) => StripResult> {
  loaded ??= load();
  return loaded;
}

async function load(): Promise<(code: string) => StripResult> {
  const { transformSync } = await import("amaro");
  return (code) => {
    try {
      return { code: transformSync(code, { mode: "strip-only" }).code };
    } catch (error) {
      if (!/not supported in strip-only mode/.test(String(error)))
        return { error: describe(error) };
      try {
        return { code: transformSync(code, { mode: "transform" }).code };
      } catch (again) {
        return { error: describe(again) };
      }
    }
  };
}

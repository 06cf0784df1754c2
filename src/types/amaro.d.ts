// amaro ships no type declarations; this is the one function polybox calls.
declare module "amaro" {
  export function transformSync(
    code: string,
    options: { mode: "strip-only" | "transform" },
  ): { code: string };
}

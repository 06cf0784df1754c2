// Worker side: `uname`, which just-bash lacks.

import { defineCommand } from "just-bash";
import { fail, ok } from "./shared/context.js";
import { HOST_NAME } from "./shared/identity.js";

/** `uname [-asnrvm]`: the sandbox's own answer, the same everywhere polybox runs. */
const UNAME = { s: "Linux", n: HOST_NAME, r: "6.1.0-polybox", v: "#1 SMP polybox", m: "wasm32" };
export const uname = defineCommand("uname", async (args) => {
  const flags = args.join("").replace(/-/g, "").split("");
  if (flags.includes("a"))
    return ok(`${[UNAME.s, UNAME.n, UNAME.r, UNAME.v, UNAME.m, "GNU/Linux"].join(" ")}\n`);
  const keys = flags.length ? flags : ["s"];
  const out: string[] = [];
  for (const k of keys) {
    if (k === "o") out.push("GNU/Linux");
    else if (k in UNAME) out.push(UNAME[k as keyof typeof UNAME]);
    else return fail("uname", `invalid option -- '${k}'`);
  }
  return ok(`${out.join(" ")}\n`);
});

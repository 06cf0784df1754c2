// Worker side: `id`, which just-bash lacks: the sandbox's one user (shared/identity.ts).

import { defineCommand } from "just-bash";
import { ok } from "./shared/context.js";
import { USER } from "./shared/identity.js";

/** `id [-u|-g|-n]`: the sandbox's one user (also in /etc/passwd: see shared/identity.ts). */
export const id = defineCommand("id", async (args) => {
  const name = args.includes("-n");
  if (args.includes("-u")) return ok(`${name ? USER.name : USER.uid}\n`);
  if (args.includes("-g")) return ok(`${name ? USER.name : USER.gid}\n`);
  if (args.includes("-G")) return ok(`${name ? USER.name : USER.gid}\n`);
  return ok(
    `uid=${USER.uid}(${USER.name}) gid=${USER.gid}(${USER.name}) groups=${USER.gid}(${USER.name})\n`,
  );
});

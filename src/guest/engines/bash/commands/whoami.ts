// Worker side: `whoami`, replacing just-bash's with the sandbox's one user (shared/identity.ts),
// the same as `id` and /etc/passwd name.

import { defineCommand } from "just-bash";
import { ok } from "./shared/context.js";
import { USER } from "./shared/identity.js";

export const whoami = defineCommand("whoami", async () => ok(`${USER.name}\n`));

// Worker side: who and where the sandbox says it is: the host name, the one user, and the /etc
// files that agree with them (written by the engine each run; read by `id`, `whoami`, `uname`,
// `tar` and scripts).

import { MACHINE } from "../../../common/machine.js";

/** The sandbox's host name: just-bash's `$HOSTNAME` and `hostname` say it too. */
export const HOST_NAME = MACHINE.host;

/** The sandbox's one user: `id`, `whoami`, `tar` and /etc/passwd name it. */
export const USER = { uid: MACHINE.uid, gid: MACHINE.gid, name: MACHINE.user };

/**
 * /etc/passwd, /etc/group and /etc/hostname, as a Debian-like system has them, naming the same
 * user as `id` and `whoami` and the same host as `hostname`: scripts read them (`cut -d:
 * -f1 /etc/passwd`, `getent`-less lookups of a home directory). Written afresh each run.
 */
export const ETC_FILES: Readonly<Record<string, string>> = {
  "/etc/passwd": `root:x:0:0:root:/root:/bin/bash\n${USER.name}:x:${USER.uid}:${USER.gid}:${USER.name}:${MACHINE.home}:/bin/bash\n`,
  "/etc/group": `root:x:0:\n${USER.name}:x:${USER.gid}:\n`,
  "/etc/hostname": `${HOST_NAME}\n`,
};

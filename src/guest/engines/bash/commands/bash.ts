// Worker side: `bash` and `sh` with option flags before a script, in front of just-bash's.
// Like every wrapper here, it handles only the forms just-bash gets wrong or refuses and hands
// every other call to just-bash's command unchanged (`original`), so the rest stays just-bash's.

import { type Command, defineCommand, latin1FromBytes } from "just-bash";
import { fail, original, readText } from "./shared/context.js";

/**
 * `bash -e script`, `bash -eu -o pipefail script`, `sh -x script`: just-bash takes only `-c` and
 * a script path; shell options before the script become a `set` line in front of it.
 */
function shell(name: "bash" | "sh"): Command {
  return defineCommand(name, async (args, ctx) => {
    const options: string[] = [];
    let k = 0;
    for (; k < args.length; k++) {
      const a = args[k]!;
      if (a === "-o" || a === "+o") {
        options.push(a, args[++k] ?? "");
      } else if (/^[-+][euxvfnC]+$/.test(a)) options.push(a);
      else break;
    }
    if (options.length === 0) return original(ctx, name, args);
    const rest = args.slice(k);
    if (rest[0] === "-c") {
      const [, script = "", ...positional] = rest;
      return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`, ...positional]);
    }
    if (rest.length === 0) {
      const script = latin1FromBytes(ctx.stdin);
      return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`]);
    }
    const [file, ...positional] = rest as [string, ...string[]];
    let script: string;
    try {
      script = Buffer.from(await readText(ctx, file), "latin1").toString("utf8");
    } catch {
      return fail(name, `${file}: No such file or directory`, 127);
    }
    return original(ctx, name, ["-c", `set ${options.join(" ")}\n${script}`, file, ...positional]);
  });
}

/** `bash`, with option flags before a script. */
export const bash = shell("bash");
/** `sh`, the same command under its other name. */
export const sh = shell("sh");

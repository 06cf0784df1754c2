// Worker side: `yes`, which just-bash lacks. Its endless output is a window of an endless stream
// (devices.ts), which head, tail and dd recognise.

import { bytesOutput, type Command, defineCommand, unsafeBytesFromLatin1 } from "just-bash";
import type { Devices } from "../devices.js";

/**
 * `yes [STRING]`: its line over and over. Its output is a window of the endless stream, which
 * `head`, `tail` and `dd` recognise (`yes | head -n 3000000` gives every line); any other command
 * gets the window's 1 MiB, as it gets from a device read whole.
 */
export function yes(devices: Devices): Command {
  return defineCommand("yes", async (args) => {
    const unit = Buffer.from(`${args.length ? args.join(" ") : "y"}\n`).toString("latin1");
    return {
      ...bytesOutput(unsafeBytesFromLatin1(devices.window({ kind: "repeat", unit }))),
      stderr: "",
      exitCode: 0,
    };
  });
}

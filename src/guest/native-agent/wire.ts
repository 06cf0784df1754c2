// Untrusted side, native mode: the agent's way to the trusted side, one JSON line per message
// on its stdout (framed by src/protocol/native-wire.ts). The trusted side checks each one.

import { encode, type FromAgent } from "../../protocol/native-wire.js";

export function send(message: FromAgent): void {
  process.stdout.write(encode(message));
}

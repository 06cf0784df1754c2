// Untrusted side: the entry point of each worker thread @wasmer/sdk starts for itself (its thread
// pool runs guest processes and threads). The sdk would start its own script, in a realm nobody
// hardened; the wasix engine points the sdk here instead, and this script loads the sdk's worker
// code and then hardens the realm (L1) exactly as an engine worker's is, before the first message
// (the sdk's init) is handled. Module loading stays open only to the sdk's own files, which
// import each other at init.

import { lockDownRealm } from "./harden.js";

const sdkEntry = import.meta.resolve("@wasmer/sdk/node");
const sdkDir = new URL("../", sdkEntry).href;
// The runtime's glue, which the init message imports: loaded now, so init needs no new file.
await import(new URL("../pkg/wasmer_sdk_js.js", sdkEntry).href);
await import(new URL("./node-worker.js", sdkEntry).href);
lockDownRealm(new URL("./deny-modules.js", import.meta.url), [sdkDir]);

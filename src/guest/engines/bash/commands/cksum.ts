// Worker side: `cksum`, which just-bash lacks: the POSIX checksum, as GNU coreutils prints it.

import { defineCommand } from "just-bash";
import { readInput } from "./shared/context.js";

/** POSIX cksum: CRC-32 (polynomial 0x04C11DB7, MSB first) over the data and then its length. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function posixCksum(data: Uint8Array): number {
  let crc = 0;
  const step = (byte: number) => {
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  };
  // An indexed loop with the step inlined: 64 MiB in well under a second, not six.
  for (let i = 0; i < data.length; i++)
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ data[i]!) & 0xff]!) >>> 0;
  for (let n = data.length; n > 0; n >>>= 8) step(n & 0xff);
  return ~crc >>> 0;
}

/** `cksum [FILE...]`: POSIX checksum and size. */
export const cksum = defineCommand("cksum", async (args, ctx) => {
  const files = args.length > 0 ? args : [undefined];
  let stdout = "";
  let stderr = "";
  for (const file of files) {
    try {
      const data = await readInput(ctx, file);
      stdout += `${posixCksum(data)} ${data.length}${file && file !== "-" ? ` ${file}` : ""}\n`;
    } catch {
      stderr += `cksum: ${file}: No such file or directory\n`;
    }
  }
  return { stdout, stderr, exitCode: stderr ? 1 : 0 };
});

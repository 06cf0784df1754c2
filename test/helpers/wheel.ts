// Builds a real, minimal pure-Python wheel (a zip with the module, METADATA, WHEEL and RECORD)
// so package tests need no network and no Python tooling.
import { createHash } from "node:crypto";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A stored (uncompressed) zip archive. */
export function zip(files: Record<string, string | Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const nameBuf = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

export interface BuiltWheel {
  fileName: string;
  data: Buffer;
  sha256: string;
}

/** A wheel for distribution `name` with one module `module` whose source is `source`. */
export function buildWheel(
  name: string,
  version: string,
  module: string,
  source: string,
): BuiltWheel {
  const dist = `${name.replace(/-/g, "_")}-${version}`;
  const files: Record<string, string> = {
    [`${module}.py`]: source,
    [`${dist}.dist-info/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
    [`${dist}.dist-info/WHEEL`]:
      "Wheel-Version: 1.0\nGenerator: polybox-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
  };
  const record = Object.entries(files).map(([path, content]) => {
    const digest = createHash("sha256").update(content).digest("base64url");
    return `${path},sha256=${digest},${Buffer.byteLength(content)}`;
  });
  files[`${dist}.dist-info/RECORD`] = `${[...record, `${dist}.dist-info/RECORD,,`].join("\n")}\n`;
  const data = zip(files);
  return {
    fileName: `${dist}-py3-none-any.whl`,
    data,
    sha256: createHash("sha256").update(data).digest("hex"),
  };
}

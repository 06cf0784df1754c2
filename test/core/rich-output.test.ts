// Rich outputs: images a run writes or displays come back as bytes; other display() values as
// a readable text plus their rich form; an oversize image is dropped with a note.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Pure-Python PNG encoder (zlib + struct), as a user without Pillow would write it. */
const PYTHON_PNG = `
import struct, zlib
def png(width, height, rgb):
    raw = b"".join(b"\\x00" + bytes(rgb) * width for _ in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
`;

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

describe("rich outputs", () => {
  it("returns PNG files a Python run writes and images it displays", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "python",
      `${PYTHON_PNG}\nopen("red.png", "wb").write(png(4, 3, (255, 0, 0)))\ndisplay(png(2, 2, (0, 0, 255)))`,
    );
    expect(r.status).toBe("ok");
    expect(r.images.map((i) => [i.mimeType, i.path])).toEqual([
      ["image/png", null],
      ["image/png", "red.png"],
    ]);
    for (const image of r.images) expect([...image.data.slice(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(Buffer.from(r.images[1]!.data).equals(Buffer.from(await sb.files.read("red.png")))).toBe(
      true,
    );
  });

  it("returns images from JavaScript's display() and written files", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "javascript",
      "const sig = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);\ndisplay(sig);\nrequire('fs').writeFileSync('dot.svg', '<svg xmlns=\"http://www.w3.org/2000/svg\"/>')",
    );
    expect(r.images.map((i) => [i.mimeType, i.path, i.data.length])).toEqual([
      ["image/png", null, 11],
      ["image/svg+xml", "dot.svg", 41],
    ]);
  });

  it("renders HTML, JSON and DataFrame-like objects as text plus the rich form", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "python",
      "class Table:\n    def _repr_html_(self):\n        return '<table><tr><td>1</td></tr></table>'\n    def __repr__(self):\n        return 'Table(1 row)'\ndisplay(Table(), {'a': [1, 2]})",
    );
    expect(r.displays).toEqual([
      { mimeType: "text/html", text: "Table(1 row)", data: "<table><tr><td>1</td></tr></table>" },
      {
        mimeType: "application/json",
        text: '{\n  "a": [\n    1,\n    2\n  ]\n}',
        data: '{\n  "a": [\n    1,\n    2\n  ]\n}',
      },
    ]);
  });

  it("drops an oversize image with a note instead of sending it", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "python",
      "open('huge.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(6 * 1024 * 1024))",
    );
    expect(r.status).toBe("ok");
    expect(r.images).toEqual([]);
    expect(r.notes?.[0]).toMatch(
      /image huge\.png \(6 MiB\) was not returned: images are limited to 5 MiB/,
    );
  });
});

// End to end over stdio with the SDK's real Client: the workflows users bring from the
// predecessor servers (statistics, a CSV column, primes, word counts), one-shot runs, and how a
// run's outcome — guest error, timeout, truncated output, an image — reads in the result.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;

beforeAll(async () => {
  server = await stdioServer();
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

const CSV = "name,age,city\nAnn,30,Paris\nBob,25,Oslo\nCid,41,Paris\nDee,35,Rome\n";

describe("seed workflows", () => {
  it("mean, median and mode in Python with statistics", async () => {
    const r = await call(server.client, "execute_python", {
      code: "import statistics\ndata = [2, 4, 4, 4, 5, 5, 7, 9]\nprint(statistics.mean(data), statistics.median(data), statistics.mode(data))",
    });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      status: "ok",
      exit_code: 0,
      stdout: "5 4.5 4\n",
      sandbox_id: null,
    });
    expect(text(r)).toMatch(/^status: ok · exit code 0 · \d/);
    expect(text(r)).toContain("5 4.5 4");
  });

  it("unique values of a CSV's third column, in Python and in Bash", async () => {
    const py = await call(server.client, "execute_python", {
      code: "import csv\nrows = list(csv.reader(open('data.csv')))[1:]\nprint(sorted({r[2] for r in rows}))",
      files: { "data.csv": CSV },
    });
    expect(py.structuredContent?.stdout).toBe("['Oslo', 'Paris', 'Rome']\n");
    const sh = await call(server.client, "execute_bash", {
      code: "tail -n +2 data.csv | cut -d, -f3 | sort -u",
      files: { "data.csv": CSV },
    });
    expect(sh.structuredContent?.stdout).toBe("Oslo\nParis\nRome\n");
  });

  it("primes up to 1000 in JavaScript", async () => {
    const r = await call(server.client, "execute_javascript", {
      code: "const p = []; for (let n = 2; n <= 1000; n++) if (p.every((q) => n % q)) p.push(n); console.log(p.length, p.at(-1));",
    });
    expect(r.structuredContent?.stdout).toBe("168 997\n");
  });

  it("word frequencies with tr, sort and uniq -c", async () => {
    const r = await call(server.client, "execute_bash", {
      code: "tr -s ' ' '\\n' < words.txt | tr 'A-Z' 'a-z' | sort | uniq -c | sort -rn | head -2",
      files: { "words.txt": "the cat and The dog and THE bird" },
    });
    expect(
      r.structuredContent?.stdout
        .trim()
        .split("\n")
        .map((l: string) => l.trim()),
    ).toEqual(["3 the", "2 and"]);
  });

  it("create_run_close runs any language once, TypeScript included", async () => {
    const r = await call(server.client, "create_run_close", {
      language: "typescript",
      code: "const n: number = 6 * 7; console.log(n)",
    });
    expect(r.structuredContent).toMatchObject({ status: "ok", stdout: "42\n", sandbox_id: null });
  });
});

describe("how outcomes read", () => {
  it("a guest exception is a result with status error, not a tool error", async () => {
    const r = await call(server.client, "execute_python", { code: "raise ValueError('boom')" });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: "error", exit_code: 1 });
    expect(text(r)).toMatch(
      /status: error · exit code 1[\s\S]*--- stderr ---[\s\S]*ValueError: boom/,
    );
  });

  it("a timeout names the limit", async () => {
    const r = await call(server.client, "execute_python", {
      code: "while True: pass",
      timeout_seconds: 1,
    });
    expect(r.structuredContent?.status).toBe("timeout");
    expect(text(r)).toMatch(/timeoutMs=1000/);
  });

  it("truncated output stays readable and says so", async () => {
    const sb = await call(server.client, "create_sandbox", { max_output_bytes: 64 });
    const sandbox_id = sb.structuredContent?.sandbox_id;
    const r = await call(server.client, "execute_bash", {
      sandbox_id,
      code: "for i in $(seq 1 100); do echo line $i; done",
    });
    expect(r.structuredContent?.truncated).toBe(true);
    const lines = text(r).split("\n");
    expect(lines[0]).toMatch(/OUTPUT TRUNCATED/);
    expect(lines).toContain("line 1");
    expect(lines.some((l) => /^--- \[output truncated/.test(l))).toBe(true);
    await call(server.client, "close_sandbox", { sandbox_id });
  });

  it("a PNG the code writes comes back as image content", async () => {
    const png = [
      "import struct, zlib",
      "def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))",
      "raw = b''.join(b'\\x00' + b'\\xff\\x00\\x00' * 4 for _ in range(4))",
      "data = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 4, 4, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')",
      "open('red.png', 'wb').write(data)",
    ].join("\n");
    const r = await call(server.client, "execute_python", { code: png });
    expect(r.structuredContent?.images).toEqual([
      { mime_type: "image/png", path: "red.png", size: expect.any(Number) },
    ]);
    const image = r.content.find((c) => c.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(
      Buffer.from((image as { data: string }).data, "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
  });
});

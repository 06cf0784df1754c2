// Wasmer pins belong to the registry that made them (docs/security.md, "Wasmer package bytes"): a
// server once pointed at registry A pins `name@version` to A's bytes; a later server of the same
// user on registry B must not run them, with `cachedOnly` (not cached) or without (B is asked).
// Two loopback registry stand-ins answer the same GraphQL query as the public registry, each with
// different bytes under the same name and version. The resolver hands bytes over unread, so the
// bytes need not be a real WEBC file here (test/core/wasmer-packages.test.ts runs real ones).
// Both are on loopback, so each resolver opts in with allowPrivateIndex.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmerPackageResolver } from "../../dist/core/packages/wasmer-packages.js";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-wasmer-pins-"));
const SPEC = { name: "polybox/tool", version: "1.0.16" };

/** A registry stand-in serving `SPEC` as `bytes`; `seen` lists what it was asked. */
function registry(bytes: Uint8Array) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === "POST" && req.url === "/graphql") {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        const { variables } = JSON.parse(body) as { variables: { name: string; version: string } };
        seen.push(`query ${variables.name}@${variables.version}`);
        const known = variables.name === SPEC.name && variables.version === SPEC.version;
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            data: {
              getPackageVersion: known
                ? {
                    version: SPEC.version,
                    v3: null,
                    v2: {
                      piritaDownloadUrl: `http://127.0.0.1:${port()}/webc/${sha(bytes)}.webc`,
                      piritaSha256Hash: sha(bytes),
                    },
                  }
                : null,
            },
          }),
        );
      });
      return;
    }
    seen.push(`GET ${req.url}`);
    if (req.url === `/webc/${sha(bytes)}.webc`) res.end(bytes);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  const port = () => (server.address() as AddressInfo).port;
  return {
    server,
    seen,
    bytes,
    get url() {
      return `http://127.0.0.1:${port()}/graphql`;
    },
  };
}

const A = registry(new TextEncoder().encode("bytes registry A serves as polybox/tool@1.0.16"));
const B = registry(new TextEncoder().encode("bytes registry B serves as polybox/tool@1.0.16"));

beforeAll(async () => {
  await Promise.all(
    [A, B].map((r) => new Promise<void>((done) => r.server.listen(0, "127.0.0.1", done))),
  );
});
afterAll(async () => {
  await Promise.all([A, B].map((r) => new Promise<void>((done) => r.server.close(() => done()))));
  rmSync(tmp, { recursive: true, force: true });
});

describe("a pin made against one registry", () => {
  it("is not used for another: cachedOnly refuses, naming the package, and asks nobody", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    const fromA = await new WasmerPackageResolver({
      registry: A.url,
      cacheDir,
      allowPrivateIndex: true,
    }).fetch(SPEC);
    expect(fromA.sha256).toBe(sha(A.bytes));
    A.seen.length = 0;
    B.seen.length = 0;
    const error = await new WasmerPackageResolver({
      registry: B.url,
      cacheDir,
      cachedOnly: true,
      allowPrivateIndex: true,
    })
      .fetch(SPEC)
      .then(
        (p) => p,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({
      code: "PACKAGE_NOT_CACHED",
      details: { limit: "cachedOnly", package: "polybox/tool@1.0.16" },
    });
    expect(A.seen).toEqual([]);
    expect(B.seen).toEqual([]);
    // A's pin still serves A, from the cache.
    const again = await new WasmerPackageResolver({
      registry: A.url,
      allowPrivateIndex: true,
      cacheDir,
      cachedOnly: true,
    }).fetch(SPEC);
    expect(sha(again.data)).toBe(sha(A.bytes));
  });

  it("is not used for another: without cachedOnly, the other registry is asked and pinned apart", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    await new WasmerPackageResolver({ registry: A.url, cacheDir, allowPrivateIndex: true }).fetch(
      SPEC,
    );
    B.seen.length = 0;
    const fromB = await new WasmerPackageResolver({
      registry: B.url,
      cacheDir,
      allowPrivateIndex: true,
    }).fetch(SPEC);
    expect(fromB.sha256).toBe(sha(B.bytes));
    expect(sha(fromB.data)).toBe(sha(B.bytes));
    expect(B.seen).toEqual([`query polybox/tool@1.0.16`, `GET /webc/${sha(B.bytes)}.webc`]);
    // Each registry's pin now answers for that registry alone, with no request.
    A.seen.length = 0;
    B.seen.length = 0;
    for (const r of [A, B]) {
      const cached = await new WasmerPackageResolver({
        registry: r.url,
        allowPrivateIndex: true,
        cacheDir,
        cachedOnly: true,
      }).fetch(SPEC);
      expect(sha(cached.data)).toBe(sha(r.bytes));
    }
    expect([...A.seen, ...B.seen]).toEqual([]);
  });

  it("a spelling of the same registry URL that the URL parser makes equal shares the pin", async () => {
    const cacheDir = mkdtempSync(path.join(tmp, "cache-"));
    await new WasmerPackageResolver({ registry: A.url, cacheDir, allowPrivateIndex: true }).fetch(
      SPEC,
    );
    const cached = await new WasmerPackageResolver({
      registry: A.url.replace("http://127.0.0.1", "HTTP://0x7F.0.0.1"),
      cacheDir,
      cachedOnly: true,
    }).fetch(SPEC);
    expect(sha(cached.data)).toBe(sha(A.bytes));
  });
});

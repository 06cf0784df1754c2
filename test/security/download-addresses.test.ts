// T33: the trusted side's own downloads as a request forger. The server fetches Python package
// index pages and files, Pyodide's lock-file packages and Wasmer packages on a guest's behalf (the
// guest names the package), from URLs a package index or registry hands it. A hostile index or
// registry must not turn those downloads into requests into the server's own network: every hop
// (each link and each redirect) is checked against the address policy guest egress uses
// (docs/security.md, "Package downloads: where the trusted side connects"), at connect time.
//
// The assets are loopback listeners that record every connection: a test passes only if the
// recorder saw none. The indexes and registries are loopback stand-ins too, so they are asked
// only with `allowPrivateIndex` (the opt-in for a mirror on a private network), which trusts the
// configured host and port and nothing else on a private network; without it they are refused
// before any request. "Same host" is the same host name (as the URL parser writes it) and the
// same port: another port of the same loopback address is another service.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PackageResolver } from "../../dist/core/packages/packages.js";
import { parseRequirement } from "../../dist/core/packages/requirements.js";
import { WasmerPackageResolver } from "../../dist/core/packages/wasmer-packages.js";
import { buildWheel } from "../helpers/wheel.js";

const PYODIDE = path.dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-download-addresses-"));
const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const WHEEL = buildWheel("victim", "1.0", "victim", "X = 1\n");
const WEBC = new TextEncoder().encode("bytes the registry's download URL serves");

/** A loopback listener that records every connection and request and serves real bytes. */
function recorder() {
  const hits: string[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.end(req.url?.endsWith(".webc") ? WEBC : WHEEL.data);
  });
  server.on("connection", (_socket: Socket) => {
    connections++;
  });
  return {
    server,
    hits,
    get connections() {
      return connections;
    },
    get port() {
      return (server.address() as AddressInfo).port;
    },
  };
}

// The service the hostile index points at: on every loopback address, IPv4 and IPv6 alike, where
// the machine has IPv6 (a dual-stack listener), else on 127.0.0.1.
const victim = recorder();
// The hostile PEP 503 index, on its own port of 127.0.0.1.
const index = recorder();
index.server.removeAllListeners("request");
let hostile: (url: string) => { status: number; location?: string; body?: string } | null = () =>
  null;
index.server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
  index.hits.push(`${req.method} ${req.url}`);
  const answer = hostile(req.url ?? "");
  if (answer) {
    res.statusCode = answer.status;
    if (answer.location) res.setHeader("location", answer.location);
    res.end(answer.body ?? "");
  } else if (req.url === `/files/${WHEEL.fileName}`) res.end(WHEEL.data);
  else {
    res.statusCode = 404;
    res.end();
  }
});

const listen = (server: http.Server, host: string) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });

beforeAll(async () => {
  await listen(victim.server, "::").catch(() => listen(victim.server, "127.0.0.1"));
  await listen(index.server, "127.0.0.1");
});
afterAll(async () => {
  for (const s of [victim.server, index.server]) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  rmSync(tmp, { recursive: true, force: true });
});

const indexUrl = () => `http://127.0.0.1:${index.port}/simple/`;
/** A PEP 503 page for "victim" whose one link is `href`. */
const page = (href: string) => `<a href="${href}">${WHEEL.fileName}</a>`;

const resolver = (sources: string[], allowPrivateIndex: boolean) =>
  new PackageResolver({
    sources,
    cacheDir: mkdtempSync(path.join(tmp, "cache-")),
    pyodideDir: PYODIDE,
    allowPrivateIndex,
  });

/** What resolving "victim" from `sources` threw (null if it did not). */
const failure = (sources: string[], allowPrivateIndex = true) =>
  resolver(sources, allowPrivateIndex)
    .resolve([parseRequirement("victim")])
    .then(
      () => null,
      (e: unknown) => e,
    );

/** Hosts the hostile index may name for the victim: loopback in every spelling. */
const SPELLINGS = [
  ["127.0.0.1, another port", "127.0.0.1"],
  ["localhost", "localhost"],
  ["a decimal number (2130706433)", "2130706433"],
  ["hex and short form (0x7f.1)", "0x7f.1"],
  ["[::1]", "[::1]"],
  ["IPv4-mapped IPv6 ([::ffff:127.0.0.1])", "[::ffff:127.0.0.1]"],
  ["IPv4-mapped IPv6 in hex ([::ffff:7f00:1])", "[::ffff:7f00:1]"],
  ["another loopback address (127.1.2.3)", "127.1.2.3"],
] as const;
/** The victim's origin, its host spelled `host`. */
const victimAt = (host: string) => `http://${host}:${victim.port}`;

const refused = (error: unknown, code = "PERMISSION_DENIED") => {
  expect(error).toMatchObject({ code });
  expect(victim.connections).toBe(0);
  expect(victim.hits).toEqual([]);
};

describe("T33 a private package index only with the opt-in", () => {
  it("T33 an index on loopback without allowPrivateIndex is refused before any request, naming the opt-in", async () => {
    index.hits.length = 0;
    for (const base of [
      indexUrl(),
      `http://localhost:${index.port}/simple/`,
      `http://2130706433:${index.port}/simple/`,
    ]) {
      const error = await failure([base], false);
      expect(error).toMatchObject({
        code: "PERMISSION_DENIED",
        details: { limit: "allowPrivateIndex", package: "victim" },
      });
      expect(String((error as Error).message)).toMatch(/allowPrivateIndex/);
    }
    expect(index.hits).toEqual([]);
  });

  it("T33 a Pyodide CDN on loopback without allowPrivateIndex is refused before any request", async () => {
    index.hits.length = 0;
    const error = await new PackageResolver({
      sources: [],
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
      pyodideDir: PYODIDE,
      pyodideCdn: `http://127.0.0.1:${index.port}/full/`,
    })
      .resolve([parseRequirement("micropip")])
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({
      code: "PERMISSION_DENIED",
      details: { limit: "allowPrivateIndex" },
    });
    expect(index.hits).toEqual([]);
  });
});

describe("T33 links from an opted-in index", () => {
  it("T33 are fetched from the index's own host and port, and from no other port of loopback", async () => {
    // The stand-in works: a link on its own origin is fetched and checked.
    hostile = (url) =>
      url === "/simple/victim/"
        ? { status: 200, body: page(`/files/${WHEEL.fileName}#sha256=${WHEEL.sha256}`) }
        : null;
    const wheels = await resolver([indexUrl()], true).resolve([parseRequirement("victim")]);
    expect(wheels.map((w) => sha(w.data))).toEqual([WHEEL.sha256]);
    // A link to the victim's port is not.
    hostile = (url) =>
      url === "/simple/victim/"
        ? {
            status: 200,
            body: page(`http://127.0.0.1:${victim.port}/${WHEEL.fileName}#sha256=${WHEEL.sha256}`),
          }
        : null;
    const error = await failure([indexUrl()]);
    refused(error);
    expect(String((error as Error).message)).toContain(`127.0.0.1:${victim.port}`);
  });

  it.each(SPELLINGS)("T33 to %s are refused without a connection", async (_label, host) => {
    hostile = (url) =>
      url === "/simple/victim/"
        ? {
            status: 200,
            body: page(`${victimAt(host)}/${WHEEL.fileName}#sha256=${WHEEL.sha256}`),
          }
        : null;
    refused(await failure([indexUrl()]));
  });

  it("T33 to cloud metadata (169.254.169.254) are refused without a connection", async () => {
    hostile = (url) =>
      url === "/simple/victim/"
        ? { status: 200, body: page(`http://169.254.169.254/latest/${WHEEL.fileName}`) }
        : null;
    const error = await failure([indexUrl()]);
    refused(error);
    expect(String((error as Error).message)).toContain("169.254.169.254");
  }, 20_000);
});

describe("T33 redirects from an opted-in index", () => {
  const METADATA = "http://169.254.169.254/latest/meta-data/";
  /** Where a redirect sends the fetch: the victim in each spelling, or cloud metadata. */
  const TARGETS = [...SPELLINGS, ["cloud metadata (169.254.169.254)", METADATA] as const];
  const target = (host: string) =>
    host === METADATA ? METADATA : `${victimAt(host)}/${WHEEL.fileName}`;

  it.each(TARGETS)(
    "T33 of the index page to %s are refused without a connection",
    async (_label, host) => {
      hostile = (url) =>
        url === "/simple/victim/" ? { status: 302, location: target(host) } : null;
      refused(await failure([indexUrl()]));
    },
    20_000,
  );

  it.each(TARGETS)(
    "T33 of a file on the index's origin to %s are refused without a connection",
    async (_label, host) => {
      hostile = (url) =>
        url === "/simple/victim/"
          ? { status: 200, body: page(`/files/${WHEEL.fileName}`) }
          : url === `/files/${WHEEL.fileName}`
            ? { status: 307, location: target(host) }
            : null;
      refused(await failure([indexUrl()]));
    },
    20_000,
  );

  it("T33 a redirect on the index's own host and port is followed", async () => {
    hostile = (url) =>
      url === "/simple/victim/"
        ? { status: 301, location: `http://127.0.0.1:${index.port}/moved/victim/` }
        : url === "/moved/victim/"
          ? { status: 200, body: page(`/files/${WHEEL.fileName}#sha256=${WHEEL.sha256}`) }
          : null;
    const wheels = await resolver([indexUrl()], true).resolve([parseRequirement("victim")]);
    expect(wheels.map((w) => w.fileName)).toEqual([WHEEL.fileName]);
    // And one to the victim's port from there is not.
    hostile = (url) =>
      url === "/simple/victim/"
        ? { status: 301, location: `http://127.0.0.1:${index.port}/moved/victim/` }
        : url === "/moved/victim/"
          ? { status: 302, location: `http://[::1]:${victim.port}/simple/victim/` }
          : null;
    refused(await failure([indexUrl()]));
  });
});

describe("T33 Wasmer registries and their download URLs", () => {
  /** A registry stand-in on `index`'s port whose answer gives `download` as the file's URL. */
  const registryAnswering = (download: string) => {
    hostile = (url) =>
      url === "/graphql"
        ? {
            status: 200,
            body: JSON.stringify({
              data: {
                getPackageVersion: {
                  version: "1.0.0",
                  v3: null,
                  v2: { piritaDownloadUrl: download, piritaSha256Hash: sha(WEBC) },
                },
              },
            }),
          }
        : null;
  };
  const fetchFrom = (
    registry: string,
    options: { allowPrivateIndex?: boolean; downloadHosts?: string[] } = {},
  ) =>
    new WasmerPackageResolver({
      registry,
      cacheDir: mkdtempSync(path.join(tmp, "cache-")),
      allowPrivateIndex: options.allowPrivateIndex ?? true,
      ...(options.downloadHosts ? { downloadHosts: options.downloadHosts } : {}),
    })
      .fetch({ name: "polybox/victim", version: "1.0.0" })
      .then(
        () => null,
        (e: unknown) => e,
      );
  const registryUrl = () => `http://127.0.0.1:${index.port}/graphql`;

  it("T33 a registry on loopback without allowPrivateIndex is refused before any request", async () => {
    registryAnswering(`http://127.0.0.1:${index.port}/x.webc`);
    index.hits.length = 0;
    for (const registry of [registryUrl(), `http://localhost:${index.port}/graphql`]) {
      const error = await fetchFrom(registry, { allowPrivateIndex: false });
      expect(error).toMatchObject({
        code: "PERMISSION_DENIED",
        details: { limit: "allowPrivateIndex", package: "polybox/victim@1.0.0" },
      });
    }
    expect(index.hits).toEqual([]);
  });

  it("T33 a download URL on another port of the registry's loopback address is refused", async () => {
    registryAnswering(`http://127.0.0.1:${victim.port}/x.webc`);
    refused(await fetchFrom(registryUrl()));
    registryAnswering(`http://2130706433:${victim.port}/x.webc`);
    refused(await fetchFrom(registryUrl()));
  });

  it("T33 a granted download host that resolves to loopback is refused on a port it was not granted with", async () => {
    registryAnswering(`http://localhost:${victim.port}/x.webc`);
    refused(await fetchFrom(registryUrl(), { downloadHosts: ["localhost"] }));
  });
});

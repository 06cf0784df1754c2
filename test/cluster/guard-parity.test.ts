// `serve` and the router refuse the same bad requests with the same answers: they share one HTTP
// guard (src/mcp/http-guard.ts). Both run as the built CLI on loopback ports with the same token,
// and each case is sent to both with node:http.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, redisMissing, startCluster } from "../helpers/cluster.js";
import {
  type HttpHandle,
  httpServer,
  INITIALIZE as INIT,
  type RawAnswer,
  rawPost,
} from "../helpers/mcp-client.js";

const missing = redisMissing();
const TOKEN = "parity-token-93c4";
const MAX_BODY = 64 * 1024 * 1024;
const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

interface Case {
  name: string;
  headers: Record<string, string>;
  send: { body: string } | { streamBytes: number };
  status: number;
}

const bearer = { authorization: `Bearer ${TOKEN}` };
const CASES: Case[] = [
  // Host first: with no token at all the answer is 403, not 401.
  { name: "foreign Host", headers: { host: "evil.example" }, send: { body: INIT }, status: 403 },
  {
    name: "foreign Origin with the token",
    headers: { origin: "http://evil.example", ...bearer },
    send: { body: INIT },
    status: 403,
  },
  { name: "no token", headers: {}, send: { body: INIT }, status: 401 },
  {
    name: "wrong token",
    headers: { authorization: "Bearer wrong" },
    send: { body: INIT },
    status: 401,
  },
  {
    name: "the token and one more character",
    headers: { authorization: `Bearer ${TOKEN}x` },
    send: { body: INIT },
    status: 401,
  },
  { name: "a body that is not JSON", headers: bearer, send: { body: "{oops" }, status: 400 },
  {
    // Only the start of the body is sent: refused at once, a client still writing could see its
    // next write fail before it reads the answer.
    name: "a Content-Length over the limit",
    headers: { ...bearer, "content-length": String(MAX_BODY + 1) },
    send: { body: " ".repeat(1024) },
    status: 413,
  },
  {
    name: "a streamed body over the limit",
    headers: bearer,
    send: { streamBytes: MAX_BODY + 8 * 1024 * 1024 },
    status: 413,
  },
];

/** What a client sees of a refusal: everything but the date. */
function seen(r: RawAnswer) {
  return {
    status: r.status,
    body: r.body,
    contentType: r.headers["content-type"],
    challenge: r.headers["www-authenticate"],
    connection: r.status === 413 ? r.headers.connection : undefined,
  };
}

describe.skipIf(missing !== null)(`serve and router (${missing ?? "redis-server found"})`, () => {
  let cluster: Cluster;
  let serve: HttpHandle;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 0, routers: 1, token: TOKEN });
    serve = await httpServer([], { POLYBOX_TOKEN: TOKEN });
  });

  afterAll(async () => {
    await serve?.close();
    await cluster?.stop();
  });

  it.each(CASES)("$name: the same answer ($status)", async (c) => {
    const router = cluster.routers[0]!.url;
    const fromServe = await rawPost(serve.url, { ...JSON_HEADERS, ...c.headers }, c.send);
    const fromRouter = await rawPost(router, { ...JSON_HEADERS, ...c.headers }, c.send);
    expect(fromServe.status).toBe(c.status);
    expect(seen(fromRouter)).toEqual(seen(fromServe));
    if (c.status === 401) expect(fromServe.headers["www-authenticate"]).toMatch(/^Bearer /);
    if (c.status === 413) expect(fromServe.headers.connection).toBe("close");
  });

  it("both let the token through", async () => {
    const headers = { ...JSON_HEADERS, ...bearer };
    expect((await rawPost(serve.url, headers, { body: INIT })).status).toBe(200);
    expect((await rawPost(cluster.routers[0]!.url, headers, { body: INIT })).status).toBe(200);
  });
});

// The network policy on its own (docs/security.md, "Egress"): how grants parse, which addresses
// count as internal (also in their IPv4-mapped and NAT64 forms), that a name's grant never covers
// an internal address, that a deny wins, and that a sandbox's grant must lie within the runtime's.
// And the broker's first check: a request the untrusted side forged in a bad shape is refused
// before anything is resolved or connected.
import { describe, expect, it } from "vitest";
import { DEFAULT_NET_LIMITS } from "../../dist/core/limits.js";
import { NetBroker } from "../../dist/supervisor/net/broker.js";
import {
  isInternalAddress,
  NetPolicy,
  parseGrant,
  parseGrants,
} from "../../dist/supervisor/net/policy.js";

describe("grants", () => {
  it("parse host, host:port, [v6]:port, a bare v6 and *", () => {
    expect(parseGrant("API.Example.com")).toEqual({ host: "api.example.com", port: null });
    expect(parseGrant("example.com:8443")).toEqual({ host: "example.com", port: 8443 });
    expect(parseGrant("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(parseGrant("fe80::1")).toEqual({ host: "fe80::1", port: null });
    expect(parseGrant("*")).toEqual({ host: "*", port: null });
  });

  it("refuse URLs, bad ports and junk with the forms that work", () => {
    for (const bad of ["https://example.com", "example.com:0", "example.com:70000", "a b", ""])
      expect(() => parseGrant(bad)).toThrow(/write HOST, HOST:PORT/);
  });
});

describe("internal addresses", () => {
  it.each([
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "127.0.0.1",
    "127.8.9.10",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe",
  ])("%s is internal", (a) => expect(isInternalAddress(a)).toBe(true));

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111"])("%s is public", (a) =>
    expect(isInternalAddress(a)).toBe(false),
  );
});

describe("NetPolicy", () => {
  const policy = new NetPolicy(
    parseGrants(["*", "127.0.0.1:8080", "db.internal"]),
    parseGrants(["evil.example", "10.0.0.0", "127.0.0.1:9999"]),
  );

  it("grants every public host under *, and refuses what a deny names", () => {
    expect(policy.checkHost("example.com", 443)).toEqual({ ok: true });
    expect(policy.checkHost("evil.example", 443).ok).toBe(false);
    expect(policy.checkHost("127.0.0.1", 9999)).toMatchObject({ ok: false, why: /--deny-net/ });
  });

  it("lets an internal address through only where it is granted literally, port included", () => {
    expect(policy.checkAddress("127.0.0.1", "127.0.0.1", 8080)).toEqual({ ok: true });
    expect(policy.checkAddress("127.0.0.1", "127.0.0.1", 8081).ok).toBe(false);
    // A granted name that resolves inside the network is still refused.
    expect(policy.checkAddress("db.internal", "10.0.0.5", 5432)).toMatchObject({
      ok: false,
      why: /db\.internal resolves to 10\.0\.0\.5/,
    });
    expect(policy.checkAddress("x.example", "::ffff:169.254.169.254", 80).ok).toBe(false);
    expect(policy.checkAddress("x.example", "93.184.216.34", 80)).toEqual({ ok: true });
  });

  it("a deny naming an address refuses a name that resolves to it", () => {
    const p = new NetPolicy(parseGrants(["*"]), parseGrants(["93.184.216.34"]));
    expect(p.checkAddress("x.example", "93.184.216.34", 80).ok).toBe(false);
  });

  it("narrows to a sandbox's grant within its own, and refuses a wider one", () => {
    const server = new NetPolicy(parseGrants(["api.example.com", "127.0.0.1:8080"]), []);
    const narrow = server.narrow(["api.example.com:443"]);
    expect(narrow.checkHost("api.example.com", 443)).toEqual({ ok: true });
    expect(narrow.checkHost("api.example.com", 80).ok).toBe(false);
    expect(() => server.narrow(["*"])).toThrow(/must lie within the runtime's/);
    expect(() => server.narrow(["127.0.0.1"])).toThrow(/127\.0\.0\.1 is not within it/);
    expect(() => new NetPolicy([], []).narrow(["a.example"])).toThrow(/granted: nothing/);
  });
});

describe("NetBroker", () => {
  const broker = new NetBroker({ limits: DEFAULT_NET_LIMITS });
  const session = () => broker.session(new NetPolicy(parseGrants(["*"]), []), Date.now() + 5_000);

  it.each([
    ["a forged method", { method: "GET /x HTTP/1.1\r\n", url: "http://a.example/", headers: [] }],
    [
      "a header with a line break",
      { method: "GET", url: "http://a.example/", headers: [["X", "a\r\nB: c"]] },
    ],
    [
      "too many headers",
      { method: "GET", url: "http://a.example/", headers: Array(101).fill(["a", "b"]) },
    ],
    [
      "a body that is not bytes",
      { method: "POST", url: "http://a.example/", headers: [], body: "x" },
    ],
    ["not an object", "GET http://a.example/"],
  ])("refuses %s before anything else", async (_name, raw) => {
    expect(await session().request(raw)).toEqual({
      ok: false,
      kind: "failed",
      message: "polybox: malformed network request",
    });
  });

  it("refuses schemes other than http and https", async () => {
    const reply = await session().request({
      method: "GET",
      url: "file:///etc/passwd",
      headers: [],
    });
    expect(reply).toMatchObject({ ok: false, kind: "denied", message: /only http and https/ });
  });
});

// One host, many spellings (docs/security.md, "Egress"): a resolver treats `Example.COM`,
// `example.com.`, `bücher.de` and `xn--bcher-kva.de` as the name it would look up for the plain
// lower-case ASCII form, so grants, `--deny-net` entries and the hosts of requests and redirects
// are all brought to that one form before they are compared. A deny written one way refuses
// every other spelling of the name; a grant written one way allows them.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_NET_LIMITS } from "../../dist/core/limits.js";
import { NetBroker } from "../../dist/supervisor/net/broker.js";
import { NetPolicy, parseGrant, parseGrants } from "../../dist/supervisor/net/policy.js";

/** Spellings of one name, each of which a resolver looks up as the first. */
const SPELLINGS: Record<string, string[]> = {
  "internal.example.com": [
    "internal.example.com",
    "internal.example.com.",
    "INTERNAL.EXAMPLE.COM",
    "Internal.Example.Com.",
    "internal.example。com",
    "ｉｎｔｅｒｎａｌ.example.com",
    "internal.ex%61mple.com",
  ],
  "xn--bcher-kva.example": [
    "xn--bcher-kva.example",
    "XN--BCHER-KVA.example.",
    "bücher.example",
    "BÜCHER.example",
    "Bücher.Example.",
  ],
};
const ALL = Object.entries(SPELLINGS).flatMap(([name, forms]) =>
  forms.map((form) => [name, form] as const),
);

describe("grants and denials are kept in one form", () => {
  it.each(ALL)("%s written %s", (name, form) => {
    expect(parseGrant(form)).toEqual({ host: name, port: null });
    expect(parseGrant(`${form}:8443`)).toEqual({ host: name, port: 8443 });
  });

  it("more than one trailing dot, an empty label or a partial wildcard is not a host", () => {
    for (const bad of ["example.com..", "a..example.com", ".example.com", "*.example.com"])
      expect(() => parseGrant(bad)).toThrow(/not a host name|only \* alone/);
  });
});

describe("a deny refuses every spelling of its name", () => {
  it.each(ALL)("under *, deny %s refuses %s", (name, form) => {
    for (const deny of SPELLINGS[name]!) {
      const policy = new NetPolicy(parseGrants(["*"]), parseGrants([deny]));
      expect(policy.checkHost(form, 80)).toMatchObject({ ok: false, why: /--deny-net/ });
      expect(policy.checkHost(form, 443)).toMatchObject({ ok: false, why: /--deny-net/ });
    }
  });

  it("a deny with a port refuses every spelling on that port only", () => {
    const policy = new NetPolicy(parseGrants(["*"]), parseGrants(["Evil.Example.:8080"]));
    expect(policy.checkHost("evil.example.", 8080)).toMatchObject({ ok: false });
    expect(policy.checkHost("EVIL.example", 8080)).toMatchObject({ ok: false });
    expect(policy.checkHost("evil.example.", 80)).toEqual({ ok: true });
  });

  it("the report's repro: * with a deny of evil.example refuses evil.example.", () => {
    const policy = new NetPolicy(parseGrants(["*"]), parseGrants(["evil.example"]));
    expect(policy.checkHost("evil.example.", 80)).toMatchObject({ ok: false, why: /--deny-net/ });
    // Under the everything-grant, other names are still granted in any spelling.
    expect(policy.checkHost("a.example.com.", 80)).toEqual({ ok: true });
    expect(policy.checkHost("A.Example.COM", 80)).toEqual({ ok: true });
  });

  it("a name with more than one trailing dot, or an empty label, is refused, not looked up", () => {
    const policy = new NetPolicy(parseGrants(["*"]), parseGrants(["evil.example"]));
    for (const form of ["evil.example..", "evil..example", ".evil.example", "evil.example..."])
      expect(policy.checkHost(form, 80)).toMatchObject({ ok: false, why: /not a host name/ });
  });
});

describe("a grant allows every spelling of its name", () => {
  it.each(ALL)("grant of %s allows %s", (name, form) => {
    for (const grant of SPELLINGS[name]!) {
      const policy = new NetPolicy(parseGrants([grant]), []);
      expect(policy.checkHost(form, 443)).toEqual({ ok: true });
      expect(policy.checkHost(`other.${form}`, 443).ok).toBe(false);
    }
  });

  it("a sandbox's narrower grant may spell the runtime's name another way", () => {
    const server = new NetPolicy(parseGrants(["api.example.com"]), []);
    expect(server.narrow(["API.Example.com.:443"]).checkHost("api.example.com", 443)).toEqual({
      ok: true,
    });
  });
});

describe("the broker compares the URL's host in the same form, on every hop", () => {
  const seen: string[] = [];
  const web = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    const to = /^\/redirect\?to=(.*)$/.exec(req.url ?? "")?.[1];
    if (to) {
      res.writeHead(302, { location: decodeURIComponent(to) });
      res.end();
    } else res.end("ok");
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    port = (web.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => web.close(() => r())));

  const session = (deny: string[]) =>
    new NetBroker({ limits: DEFAULT_NET_LIMITS }).session(
      new NetPolicy(parseGrants(["*", `127.0.0.1:${port}`]), parseGrants(deny)),
      Date.now() + 10_000,
    );
  const get = (deny: string[], url: string) =>
    session(deny).request({ method: "GET", url, headers: [] });

  it.each([
    "http://evil.example./",
    "http://EVIL.example./",
    "http://evil.example.:8080/x",
    "https://Evil.Example./",
  ])("refuses %s as denied, before any lookup", async (url) => {
    expect(await get(["evil.example"], url)).toMatchObject({
      ok: false,
      kind: "denied",
      message: /evil\.example:\d+ is denied by the server \(--deny-net\)/,
    });
  });

  it("refuses a Unicode name denied by its punycode form, and the reverse", async () => {
    expect(await get(["xn--bcher-kva.example"], "http://bücher.example./")).toMatchObject({
      kind: "denied",
      message: /--deny-net/,
    });
    expect(await get(["bücher.example"], "http://xn--bcher-kva.example/")).toMatchObject({
      kind: "denied",
      message: /--deny-net/,
    });
  });

  it("refuses a host with more than one trailing dot as not a host name", async () => {
    expect(await get([], "http://evil.example../")).toMatchObject({
      kind: "denied",
      message: /not a host name/,
    });
  });

  it("refuses a redirect to a denied name spelled with a trailing dot or in upper case", async () => {
    for (const to of ["http://evil.example./", "http://EVIL.EXAMPLE./x", "http://évil.example./"]) {
      seen.length = 0;
      const reply = await get(
        ["evil.example", "xn--vil-9la.example"],
        `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(to)}`,
      );
      expect(reply).toMatchObject({
        ok: false,
        kind: "denied",
        message: /^redirect from 127\.0\.0\.1:\d+ to .* refused: .*--deny-net/,
      });
      expect(seen).toEqual([`/redirect?to=${encodeURIComponent(to)}`]);
    }
  });

  it("still answers a granted host", async () => {
    expect(await get(["evil.example"], `http://127.0.0.1:${port}/`)).toMatchObject({
      ok: true,
      status: 200,
    });
  });
});

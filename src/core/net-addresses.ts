// Trusted side: which addresses nobody outside the machine's operator may send the server to. One
// classifier for every connection the trusted side makes on a guest's behalf: the guest's own
// requests (supervisor/net/policy.ts) and the downloads of the packages it names
// (download-policy.ts). Pure: no resolution here, only what an address or a host name is.
//
// An address in a private, loopback, link-local, CGNAT, metadata, multicast or reserved range is
// "internal", in every spelling that reaches it (IPv4-mapped IPv6 and NAT64 forms are judged by
// the IPv4 address they carry). Host names are compared in one form (`canonicalHost`): the one
// the URL parser makes of them, which is also how a resolver looks them up.

import { BlockList, isIP, type LookupFunction } from "node:net";
import { domainToASCII } from "node:url";

/** The internal ranges: what a name's answer may never point into unless the operator says so. */
const INTERNAL = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  // NAT64 and IPv4-mapped forms reach IPv4 addresses: judged by the IPv4 address they carry.
  ["64:ff9b::", 96],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv6");

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`), else the address. */
export function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const a = Number.parseInt(hex[1]!, 16);
    const b = Number.parseInt(hex[2]!, 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return lower;
}

/** True for an address a guest may reach only when it is granted literally. */
export function isInternalAddress(address: string): boolean {
  const a = normalizeAddress(address);
  const family = isIP(a);
  if (family === 0) return true;
  return INTERNAL.check(a, family === 4 ? "ipv4" : "ipv6");
}

/**
 * The one form a host is compared in, or null for text that is not a host name. An IP literal
 * (IPv6 with or without brackets) is `normalizeAddress`'s form. A name is what the WHATWG URL
 * host parser makes of it (`domainToASCII`: percent-decoding, UTS #46 mapping, so ASCII and
 * full-width letters in lower case and Unicode labels as punycode A-labels, and IPv4 in its
 * shorthand forms as dotted decimal), without one final dot. More than one final dot, or an empty
 * label anywhere, is not a name: a resolver would not look it up as the name without them.
 */
export function canonicalHost(host: string): string | null {
  const bare = /^\[(.*)\]$/.exec(host)?.[1] ?? host;
  if (isIP(bare) === 6) return normalizeAddress(bare);
  if (bare === "" || /[\s/\\?#@[\]]/.test(bare)) return null;
  const ascii = domainToASCII(bare);
  if (ascii === "") return null;
  const name = ascii.endsWith(".") ? ascii.slice(0, -1) : ascii;
  if (name.length === 0 || name.length > 253) return null;
  if (isIP(name) === 4) return name;
  if (!/^[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/.test(name)) return null;
  return name;
}

/** `host:port` as a grant would name it (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * A `lookup` for http(s).request that answers `address` whatever the name: the socket connects
 * to the address a policy checked, not to what the name resolves to by then (DNS rebinding).
 */
export function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_name: string, options: { all?: boolean }, callback: unknown) => {
    const cb = callback as (...args: unknown[]) => void;
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

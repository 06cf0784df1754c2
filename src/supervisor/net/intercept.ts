// Trusted side: native mode's https:// to a host that gets `--net-header` headers or
// `--net-secret` secrets. Inside a CONNECT tunnel the trusted side sees only TLS, so to such a
// host the tunnel ends here instead of at the host: this side answers the guest's TLS as that
// host, with a certificate of the runtime's own authority (made at first need; its key never
// leaves this process; the jail's programs trust it through the bundle the agent writes), reads
// each HTTP/1.1 request inside, and makes it as one of the run's requests (NetSession.request):
// checked like any other, with the headers and secrets put in, over a TLS connection of the
// broker's own that verifies the real host's certificate. The guest's client follows redirects
// itself (each new host a new CONNECT). Any other host's tunnel stays end to end (tunnel.ts).
//
// Certificates are laid out with node-forge (Node can parse X.509 but not make it, and
// hand-written DER is the kind of code a maintained library should carry) and signed by Node's
// own crypto; keys are made once per runtime, on libuv's pool.

import {
  sign as cryptoSign,
  generateKeyPair as generateKeyPairCb,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import http from "node:http";
import { isIP } from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import { promisify } from "node:util";
import forge from "node-forge";
import type { NetReply, NetRequest } from "../../protocol/net.js";

/** Hosts whose certificates are kept (a run reaches a few; a hostile one cannot grow this). */
const MAX_CONTEXTS = 256;
/** Bytes of one request's head inside the tunnel, as the broker allows guests' headers. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Headers about the hop, not the message: the answer gets its own framing. */
const HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
  "proxy-authenticate",
]);

const generateKeyPair = promisify(generateKeyPairCb);

async function newRsaKey(): Promise<{ key: KeyObject; publicPem: string; privatePem: string }> {
  // Made on libuv's pool: RSA key generation takes a few hundred milliseconds of CPU.
  const { privateKey, publicKey } = await generateKeyPair("rsa", { modulusLength: 2048 });
  return {
    key: privateKey,
    publicPem: publicKey.export({ type: "spki", format: "pem" }) as string,
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
  };
}

/** A positive serial number of 16 random bytes, as hex. */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString("hex");
}

/** Signs `cert` with `key` (RSA, SHA-256) natively: node-forge's own signing is slow JavaScript. */
function sign(cert: forge.pki.Certificate, key: KeyObject): void {
  const oid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = oid;
  cert.signatureOid = oid;
  // getTBSCertificate is node-forge's, missing from its type definitions.
  const pki = forge.pki as typeof forge.pki & {
    getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
  };
  cert.tbsCertificate = pki.getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), "binary");
  cert.signature = cryptoSign("sha256", tbs, key).toString("binary");
}

function validFor(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 86_400_000);
  cert.validity.notAfter = new Date(now + days * 86_400_000);
}

/** The runtime's own certificate authority for intercepted tunnels, and its leaf certificates. */
export class InterceptAuthority {
  private readonly contexts = new Map<string, tls.SecureContext>();

  private constructor(
    /** The authority's certificate (public): what the jail's programs are given to trust. */
    readonly certPem: string,
    private readonly cert: forge.pki.Certificate,
    private readonly key: KeyObject,
    /** One key for every leaf: a leaf is only ever presented to this runtime's own guests. */
    private readonly leaf: { publicKey: forge.pki.PublicKey; privatePem: string },
  ) {}

  static async create(): Promise<InterceptAuthority> {
    const [ca, leaf] = await Promise.all([newRsaKey(), newRsaKey()]);
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(ca.publicPem);
    cert.serialNumber = serial();
    validFor(cert, 3650);
    const name = [
      { name: "commonName", value: `polybox egress ${randomBytes(4).toString("hex")}` },
      { name: "organizationName", value: "polybox" },
    ];
    cert.setSubject(name);
    cert.setIssuer(name);
    cert.setExtensions([
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ]);
    sign(cert, ca.key);
    return new InterceptAuthority(forge.pki.certificateToPem(cert), cert, ca.key, {
      publicKey: forge.pki.publicKeyFromPem(leaf.publicPem),
      privatePem: leaf.privatePem,
    });
  }

  /** A TLS context that presents `host` (a name or an address), signed by this authority. */
  contextFor(host: string): tls.SecureContext {
    const known = this.contexts.get(host);
    if (known) return known;
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.leaf.publicKey;
    cert.serialNumber = serial();
    validFor(cert, 365);
    cert.setSubject([{ name: "commonName", value: host.slice(0, 64) }]);
    cert.setIssuer(this.cert.subject.attributes);
    cert.setExtensions([
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [isIP(host) ? { type: 7, ip: host } : { type: 2, value: host }],
      },
      { name: "subjectKeyIdentifier" },
      {
        name: "authorityKeyIdentifier",
        keyIdentifier: this.cert.generateSubjectKeyIdentifier().getBytes(),
      },
    ]);
    sign(cert, this.key);
    const context = tls.createSecureContext({
      key: this.leaf.privatePem,
      cert: forge.pki.certificateToPem(cert),
    });
    if (this.contexts.size >= MAX_CONTEXTS)
      this.contexts.delete(this.contexts.keys().next().value!);
    this.contexts.set(host, context);
    return context;
  }
}

/**
 * Two connected streams: what is written to one is read from the other (stream.duplexPair,
 * which only newer Nodes have).
 */
function duplexPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const end = (other: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        other().push(chunk);
        done();
      },
      final(done) {
        other().push(null);
        done();
      },
    });
  ends.push(
    end(() => ends[1]!),
    end(() => ends[0]!),
  );
  return [ends[0]!, ends[1]!];
}

export interface TerminateOptions {
  context: tls.SecureContext;
  /** `host:port` as a URL names it (`[v6]:port` for an address of IPv6). */
  origin: string;
  /** Bytes one request may send (the run's maxBytesOut). */
  maxBodyBytes: number;
  /** Makes a request of the run, as the broker does every request. */
  forward(request: NetRequest): Promise<NetReply>;
}

/**
 * The trusted side's end of an intercepted tunnel: a stream that takes the guest's TLS bytes
 * (written to it) and gives back the TLS bytes of the answers (read from it), as a socket to the
 * host would.
 */
export function terminateTls(options: TerminateOptions): Duplex {
  const [outer, inner] = duplexPair();
  const secure = new tls.TLSSocket(inner as unknown as import("node:net").Socket, {
    isServer: true,
    secureContext: options.context,
    ALPNProtocols: ["http/1.1"],
  });
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    void answer(req, res, options);
  });
  // A client that breaks TLS or HTTP ends its own tunnel, nothing more.
  secure.on("error", () => outer.destroy());
  server.on("clientError", (_error, socket) => socket.destroy());
  outer.on("close", () => secure.destroy());
  server.emit("connection", secure);
  return outer;
}

async function answer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: TerminateOptions,
): Promise<void> {
  // The host is the tunnel's, checked when it opened: a request names only a path on it (an
  // absolute-form target could otherwise name another host inside this one's tunnel).
  const target = req.url ?? "";
  if (!target.startsWith("/")) {
    refuse(res, 400, "a request inside a tunnel names a path on the tunnel's host");
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        refuse(
          res,
          413,
          `the request body is larger than ${options.maxBodyBytes} bytes (maxBytesOut)`,
        );
        return;
      }
      chunks.push(chunk);
    }
  } catch {
    res.destroy();
    return;
  }
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  const body = Buffer.concat(chunks);
  const reply = await options.forward({
    method: (req.method ?? "GET").toUpperCase(),
    url: `https://${options.origin}${target}`,
    headers,
    ...(size > 0 ? { body: new Uint8Array(body.buffer, body.byteOffset, body.length) } : {}),
    redirect: "manual",
  });
  if (!reply.ok) {
    refuse(res, reply.kind === "denied" ? 403 : 502, reply.message);
    return;
  }
  const out = new Map<string, string[]>();
  for (const [k, v] of reply.headers) {
    if (HOP.has(k)) continue;
    out.set(k, [...(out.get(k) ?? []), v]);
  }
  for (const [k, v] of out) res.setHeader(k, v.length === 1 ? v[0]! : v);
  res.setHeader("content-length", String(reply.body.length));
  res.writeHead(reply.status, reply.statusText);
  res.end(req.method === "HEAD" ? undefined : Buffer.from(reply.body));
}

/** An answer from the boundary itself, shaped as the proxy's refusals are. */
function refuse(res: http.ServerResponse, status: number, message: string): void {
  const text = `polybox: ${message}\n`;
  res.writeHead(status, {
    "content-type": "text/plain",
    "x-polybox-net": "refused",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

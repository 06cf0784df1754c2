// Untrusted side, native mode: the HTTP proxy on the jail's own loopback. The jail has no
// interface but loopback, so the guest's programs (curl, pip, Python's urllib and requests,
// anything that honours HTTP_PROXY) reach this listener and nothing else; each request is sent
// to the trusted side over the agent's channel as a NetRequest for the run in progress, and the
// answer comes back the same way. Nothing here decides what may be reached: the trusted side
// checks every request as it checks the WASM engines' (it may be forged anyway).
//
// Plain http:// requests only. A CONNECT tunnel (https:// through a proxy) is refused with a
// clear answer: the trusted side would see only TLS bytes, so it could not add `--net-header`
// headers or check a redirect, and relaying raw tunnels is not built yet.

import http from "node:http";
import type { NetReply, NetRequest } from "../../protocol/net.js";

/** Bytes of one request body the agent holds (the trusted side's maxBytesOut decides the rest). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Header lines passed on (the trusted side allows 100). */
const MAX_HEADERS = 100;
/** Requests in flight at once (the trusted side refuses past 4 per run). */
const MAX_PENDING = 16;
/** Headers about this hop, not the request: the trusted side sets its own. */
const HOP = new Set([
  "connection",
  "proxy-connection",
  "proxy-authorization",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "te",
  "trailer",
  "upgrade",
  "host",
]);

export class GuestProxy {
  private readonly server: http.Server;
  private readonly pending = new Map<number, { id: number; answer: (r: NetReply) => void }>();
  private nextReq = 1;

  constructor(
    private readonly currentRun: () => number | null,
    private readonly send: (id: number, req: number, request: NetRequest) => void,
  ) {
    this.server = http.createServer((req, res) => void this.relay(req, res));
    this.server.on("connect", (_req, socket) => {
      socket.on("error", () => undefined);
      socket.end(
        "HTTP/1.1 501 Not Implemented\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n" +
          "polybox: https:// through the proxy (CONNECT) is not relayed in native mode yet; http:// URLs are\n",
      );
    });
    this.server.on("clientError", (_error, socket) => socket.destroy());
  }

  /** Listens on the jail's loopback; resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => {
        const address = this.server.address();
        resolve(typeof address === "object" && address ? address.port : 0);
      });
    });
  }

  /** The trusted side's answer to request `req` of run `id`. */
  reply(id: number, req: number, reply: NetReply): void {
    const waiting = this.pending.get(req);
    if (!waiting || waiting.id !== id) return;
    this.pending.delete(req);
    waiting.answer(reply);
  }

  /** Run `id` ended: what it still waits for gets no answer from the trusted side. */
  endRun(id: number): void {
    for (const [req, waiting] of this.pending) {
      if (waiting.id !== id) continue;
      this.pending.delete(req);
      waiting.answer({ ok: false, kind: "failed", message: "the run has ended" });
    }
  }

  private async relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on("error", () => undefined);
    const fail = (status: number, message: string) => {
      res.writeHead(status, { "content-type": "text/plain", "x-polybox-net": "refused" });
      res.end(`polybox: ${message}\n`);
    };
    const id = this.currentRun();
    if (id === null) return fail(503, "no run is in progress");
    if (!/^https?:\/\//i.test(req.url ?? ""))
      return fail(400, "send requests with absolute http:// URLs, through HTTP_PROXY");
    if (this.pending.size >= MAX_PENDING) return fail(503, "too many requests in flight");
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES)
        return fail(413, `request bodies are limited to ${MAX_BODY_BYTES} bytes here`);
      chunks.push(chunk);
    }
    const headers: [string, string][] = [];
    for (let i = 0; i + 1 < req.rawHeaders.length && headers.length < MAX_HEADERS; i += 2) {
      const name = req.rawHeaders[i]!;
      if (!HOP.has(name.toLowerCase())) headers.push([name, req.rawHeaders[i + 1]!]);
    }
    const body = Buffer.concat(chunks);
    const req_ = this.nextReq++;
    const reply = await new Promise<NetReply>((answer) => {
      this.pending.set(req_, { id, answer });
      this.send(id, req_, {
        method: (req.method ?? "GET").toUpperCase(),
        url: req.url!,
        headers,
        ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
        // A client behind a proxy follows redirects itself, each through the proxy again.
        redirect: "manual",
      });
    });
    if (!reply.ok) return fail(reply.kind === "denied" ? 403 : 502, reply.message);
    const out = reply.headers.filter(([name]) => !HOP.has(name));
    res.writeHead(reply.status, reply.statusText, out.flat());
    res.end(Buffer.from(reply.body));
  }
}

// Untrusted side, native mode: the HTTP proxy on the jail's own loopback. The jail has no
// interface but loopback, so the guest's programs (curl, pip, Python's urllib and requests,
// anything that honours HTTP_PROXY) reach this listener and nothing else; each request is sent
// to the trusted side over the agent's channel as a NetRequest for the run in progress, and the
// answer comes back the same way. Nothing here decides what may be reached: the trusted side
// checks every request as it checks the WASM engines' (it may be forged anyway).
//
// Plain http:// requests become NetRequests. A CONNECT (https:// through the proxy) becomes a
// tunnel relayed by the trusted side: the agent asks for `host:port` for the run in progress,
// and only once the trusted side has checked it and connected does the client get its
// `200 Connection established`; then its bytes go out as framed chunks on the wire and the
// server's come back the same way. A refusal becomes a 403 (denied) or 502 with the reason.

import http from "node:http";
import type { Socket } from "node:net";
import {
  MAX_TUNNEL_CHUNK,
  type NetReply,
  type NetRequest,
  type TunnelFrame,
  type TunnelReply,
} from "../../protocol/net.js";

/** Bytes of one request body the agent holds (the trusted side's maxBytesOut decides the rest). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Header lines passed on (the trusted side allows 100). */
const MAX_HEADERS = 100;
/** Requests in flight at once (the trusted side refuses past 4 per run). */
const MAX_PENDING = 16;
/** Tunnels open at once (the trusted side refuses past 8 per run). */
const MAX_TUNNELS = 16;
/** Wire bytes queued on the agent's output past which a tunnel stops reading its client. */
const WIRE_HIGH_WATER = 4 * 1024 * 1024;

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
  private readonly tunnels = new Map<
    number,
    { id: number; socket: Socket; head: Buffer; opened: boolean }
  >();
  private nextTun = 1;

  constructor(
    private readonly currentRun: () => number | null,
    private readonly send: (id: number, req: number, request: NetRequest) => void,
    private readonly sendTunnel: (id: number, tun: number, frame: TunnelFrame) => void = () =>
      undefined,
    /** The agent's output: a tunnel pauses its client while this holds too much. */
    private readonly wire?: NodeJS.WritableStream & { writableLength: number },
  ) {
    this.server = http.createServer((req, res) => void this.relay(req, res));
    this.server.on("connect", (req: http.IncomingMessage, socket: Socket, head: Buffer) =>
      this.connect(req, socket, head),
    );
    this.server.on("clientError", (_error, socket) => socket.destroy());
  }

  /** A CONNECT: asks the trusted side for the tunnel; the client waits for its verdict. */
  private connect(req: http.IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on("error", () => undefined);
    const refuse = (status: string, message: string) => {
      socket.end(
        `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nx-polybox-net: refused\r\nconnection: close\r\n\r\npolybox: ${message}\n`,
      );
    };
    const id = this.currentRun();
    if (id === null) {
      refuse("503 Service Unavailable", "no run is in progress");
      return;
    }
    if (this.tunnels.size >= MAX_TUNNELS) {
      refuse("503 Service Unavailable", "too many tunnels open");
      return;
    }
    const target = req.url ?? "";
    const tun = this.nextTun++;
    // Nothing is read from the client until the tunnel is open.
    socket.pause();
    this.tunnels.set(tun, { id, socket, head, opened: false });
    socket.on("close", () => {
      if (this.tunnels.get(tun)?.socket !== socket) return;
      this.tunnels.delete(tun);
      this.sendTunnel(id, tun, { op: "end" });
    });
    this.sendTunnel(id, tun, { op: "open", target: target.slice(0, 300) });
  }

  /** A frame of tunnel `tun` of run `id` from the trusted side. */
  tunnelReply(id: number, tun: number, reply: TunnelReply): void {
    const t = this.tunnels.get(tun);
    if (!t || t.id !== id) return;
    const { socket } = t;
    switch (reply.op) {
      case "refused": {
        this.tunnels.delete(tun);
        const status = reply.kind === "denied" ? "403 Forbidden" : "502 Bad Gateway";
        socket.end(
          `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nx-polybox-net: refused\r\nconnection: close\r\n\r\npolybox: ${reply.message.replace(/[\r\n]/g, " ")}\n`,
        );
        return;
      }
      case "opened": {
        if (t.opened) return;
        t.opened = true;
        socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
        const forward = (chunk: Buffer) => {
          for (let at = 0; at < chunk.length; at += MAX_TUNNEL_CHUNK) {
            const part = chunk.subarray(at, at + MAX_TUNNEL_CHUNK);
            this.sendTunnel(id, tun, { op: "data", data: new Uint8Array(part) });
          }
          // The wire is shared with output and results: a fast client waits for it to drain.
          if (this.wire && this.wire.writableLength > WIRE_HIGH_WATER) {
            socket.pause();
            this.wire.once("drain", () => socket.resume());
          }
        };
        if (t.head.length > 0) forward(t.head);
        socket.on("data", forward);
        // The client's half-close goes to the server; its answer may still come back.
        socket.on("end", () => {
          if (this.tunnels.get(tun)?.socket === socket) this.sendTunnel(id, tun, { op: "end" });
        });
        socket.resume();
        return;
      }
      case "data":
        if (t.opened) socket.write(reply.data);
        return;
      case "end":
        this.tunnels.delete(tun);
        socket.end();
        return;
    }
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
    for (const [tun, t] of this.tunnels) {
      if (t.id !== id) continue;
      this.tunnels.delete(tun);
      t.socket.destroy();
    }
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

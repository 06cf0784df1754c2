// Trusted side: CONNECT tunnels for native mode's proxy (https:// through HTTPS_PROXY). The agent
// in the jail asks for `host:port` for the run in progress; the target is checked exactly as a
// request's host (deny list, allow list with port, internal ranges only when named literally),
// resolved here, every address checked, and the socket connected to the checked address, so no
// second resolution can rebind the name. Then bytes are relayed both ways as framed chunks on the
// agent's wire. What flows is TLS: nothing inside it can be checked or changed here, and
// redirects are the client's own business (each new host is a new CONNECT, checked again). The
// exception is a host with `--net-header` headers or `--net-secret` secrets: its tunnel ends on
// this side (intercept.ts), which makes each request inside it and adds them.
//
// Bounds: each tunnel counts as a request (maxRequests); bytes both ways count against the run's
// maxBytesOut / maxBytesIn, a tunnel's bytes in against maxResponseBytes too; a tunnel lives at
// most requestTimeoutMs and never past the run's deadline; at most MAX_TUNNELS are open per run;
// all of a run's tunnels close when it ends or is cancelled.

import net from "node:net";
import type { Duplex } from "node:stream";
import type { NetLimits } from "../../core/limits.js";
import {
  MAX_TUNNEL_CHUNK,
  type NetErrorKind,
  type NetRecordEntry,
  type TunnelFrame,
  type TunnelReply,
} from "../../protocol/net.js";
import { hostPort, type NetPolicy, normalizeAddress } from "./policy.js";

/** CONNECT tunnels open at once per run; more are refused, not queued. */
export const MAX_TUNNELS = 8;

/** What a tunnel needs from its run's session: the policy, the limits, the shared counters. */
export interface TunnelSession {
  readonly policy: NetPolicy;
  readonly limits: NetLimits;
  readonly deadline: number;
  readonly closed: boolean;
  /** Counts one request against maxRequests and records it; an error message past the limit. */
  admit(entry: NetRecordEntry): string | null;
  /** Counts bytes against maxBytesOut; an error message past it. */
  spendOut(n: number, entry: NetRecordEntry): string | null;
  /** Counts bytes against maxBytesIn (and `entry`'s against maxResponseBytes). */
  spendIn(n: number, entry: NetRecordEntry): string | null;
  /** What the boundary adds to this host's requests (`--net-header`, `--net-secret`), or null. */
  addsTo(host: string, port: number): string | null;
  /**
   * This side's end of the guest's TLS to such a host (intercept.ts), whose requests are made
   * and counted as the run's; null where the runtime has no authority to end tunnels with.
   */
  terminate(host: string, port: number): Promise<Duplex> | null;
  /** The checked address to connect to, or throws `{ kind, message }`. */
  resolve(host: string, port: number, signal: AbortSignal): Promise<string>;
}

export class TunnelRefusal extends Error {
  constructor(
    readonly kind: NetErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** `host:port` or `[v6]:port` as a CONNECT names it, or null. */
export function parseTarget(target: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(target);
  if (!m) return null;
  const port = Number(m[3]);
  if (!(port >= 1 && port <= 65535)) return null;
  const raw = (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, "");
  if (m[1] !== undefined && net.isIP(raw) !== 6) return null;
  if (raw === "" || raw.length > 253) return null;
  return { host: normalizeAddress(raw), port };
}

class Tunnel {
  private socket: Duplex | null = null;
  /**
   * Whether the tunnel's bytes count against the run's limits: not for one this side ends, whose
   * requests are counted as requests are.
   */
  private counted = true;
  /** Guest bytes that came before the connection was up (an honest agent sends none). */
  private early: Uint8Array[] = [];
  private open = false;
  private done = false;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly session: TunnelSession,
    readonly entry: NetRecordEntry,
    private readonly send: (reply: TunnelReply) => void,
    private readonly forget: () => void,
  ) {}

  async start(target: string): Promise<void> {
    const s = this.session;
    const where = parseTarget(target);
    if (!where)
      throw new TunnelRefusal("failed", `CONNECT needs host:port, not ${target.slice(0, 100)}`);
    const { host, port } = where;
    this.entry.host = hostPort(host, port);
    const hostVerdict = s.policy.checkHost(host, port);
    if (!hostVerdict.ok) throw new TunnelRefusal("denied", hostVerdict.why);
    const adds = s.addsTo(host, port);
    const ending = adds ? s.terminate(host, port) : null;
    // Awaited below; a failure before that point must not go unhandled.
    ending?.catch(() => undefined);
    if (adds && !ending)
      throw new TunnelRefusal(
        "denied",
        `CONNECT to ${hostPort(host, port)} refused: the server adds ${adds} to this host's requests, which it cannot do inside an encrypted tunnel; use http:// through the proxy where the host serves it, or the WebAssembly engine`,
      );
    const budget = Math.min(s.limits.requestTimeoutMs, s.deadline - Date.now());
    if (budget <= 0)
      throw new TunnelRefusal("limit", "the run's time is up: no time is left for a tunnel");
    this.timer = setTimeout(
      () =>
        this.stop(
          "limit",
          budget < s.limits.requestTimeoutMs
            ? "the tunnel passed the run's deadline (timeoutMs)"
            : `the tunnel was open longer than ${s.limits.requestTimeoutMs} ms (requestTimeoutMs)`,
        ),
      budget,
    );
    if (ending) {
      // The guest's TLS ends here, as that host (its requests are checked, given what the
      // boundary adds, and made over a connection of this side's own).
      const end = await ending;
      if (this.done) {
        end.destroy();
        return;
      }
      this.counted = false;
      this.attach(end);
      queueMicrotask(() => this.opened());
      return;
    }
    const address = await s.resolve(host, port, this.abort.signal);
    if (this.done) return;
    const socket = net.connect({ host: address, port });
    this.attach(socket);
    socket.on("connect", () => this.opened());
  }

  private opened(): void {
    if (this.done || !this.socket) return;
    this.open = true;
    this.entry.status = 200;
    this.send({ op: "opened" });
    for (const chunk of this.early) this.socket.write(chunk);
    this.early = [];
  }

  private attach(socket: Duplex): void {
    const s = this.session;
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      if (this.done) return;
      const over = this.counted ? s.spendIn(chunk.length, this.entry) : null;
      if (over) return this.stop("limit", over);
      for (let at = 0; at < chunk.length; at += MAX_TUNNEL_CHUNK) {
        const part = chunk.subarray(at, at + MAX_TUNNEL_CHUNK);
        this.send({ op: "data", data: new Uint8Array(part.buffer, part.byteOffset, part.length) });
      }
    });
    // The server ended its side: the guest's side ends too (TLS has no half-close worth keeping).
    socket.on("end", () => this.finish());
    socket.on("close", () => this.finish());
    socket.on("error", (error: NodeJS.ErrnoException) => {
      const why = `cannot reach ${this.entry.host}: ${error.code ?? error.message}`;
      if (this.open) this.stop("failed", why);
      else this.refuse(new TunnelRefusal("failed", why));
    });
  }

  /** The guest's bytes for the server. */
  write(data: Uint8Array): void {
    if (this.done) return;
    const over = this.counted ? this.session.spendOut(data.length, this.entry) : null;
    if (over) {
      this.stop("limit", over);
      return;
    }
    if (this.open && this.socket) this.socket.write(data);
    else this.early.push(data);
  }

  /** The guest closed its side. */
  end(): void {
    if (this.done) return;
    if (this.open && this.socket) this.socket.end();
    else this.finish();
  }

  /** Refused before it opened: the guest's proxy answers its client with the reason. */
  refuse(refusal: TunnelRefusal): void {
    if (this.done) return;
    this.entry.denied = refusal.message;
    this.close();
    this.send({ op: "refused", kind: refusal.kind, message: refusal.message });
  }

  /** Ended by a limit or an error: before it opened a refusal, after it an end with the reason. */
  stop(kind: NetErrorKind, message: string): void {
    if (this.done) return;
    if (!this.open) {
      this.refuse(new TunnelRefusal(kind, message));
      return;
    }
    this.entry.denied = message;
    this.close();
    this.send({ op: "end", message });
  }

  /**
   * The run ended: a tunnel still opening is refused; an open one just closes, since clients keep
   * idle connections (keep-alive) and that is no failure worth a `denied` in the record.
   */
  shutdown(): void {
    if (this.done) return;
    if (!this.open) {
      this.refuse(new TunnelRefusal("failed", "the run has ended"));
      return;
    }
    this.close();
    this.send({ op: "end" });
  }

  private finish(): void {
    if (this.done) return;
    if (!this.open) {
      this.refuse(new TunnelRefusal("failed", "the connection closed"));
      return;
    }
    this.close();
    this.send({ op: "end" });
  }

  private close(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.abort.abort();
    this.socket?.destroy();
    this.early = [];
    this.forget();
  }
}

/** One run's tunnels. */
export class Tunnels {
  private readonly open = new Map<number, Tunnel>();

  constructor(private readonly session: TunnelSession) {}

  /**
   * A frame from the guest's side, its shape already checked. Never throws. False for data or an
   * end for no open tunnel (the honest race after a close, or a forgery the caller budgets).
   */
  frame(tun: number, frame: TunnelFrame, send: (reply: TunnelReply) => void): boolean {
    if (frame.op !== "open") {
      const tunnel = this.open.get(tun);
      if (!tunnel) return false;
      if (frame.op === "data") tunnel.write(frame.data);
      else tunnel.end();
      return true;
    }
    this.opening(tun, frame.target, send);
    return true;
  }

  private opening(tun: number, target: string, send: (reply: TunnelReply) => void): void {
    const entry: NetRecordEntry = {
      method: "CONNECT",
      // Set from the target once it parses: the guest's text is not recorded as a host.
      host: "?",
      status: null,
      bytesOut: 0,
      bytesIn: 0,
    };
    const refuse = (kind: NetErrorKind, message: string) => {
      entry.denied = message;
      send({ op: "refused", kind, message });
    };
    if (this.open.has(tun)) {
      send({ op: "refused", kind: "failed", message: "tunnel in use" });
      return;
    }
    const over = this.session.admit(entry);
    if (over) {
      refuse("limit", over);
      return;
    }
    if (this.session.closed) {
      refuse("failed", "the run has ended");
      return;
    }
    if (this.open.size >= MAX_TUNNELS) {
      refuse("limit", `at most ${MAX_TUNNELS} tunnels may be open at once per run`);
      return;
    }
    const tunnel = new Tunnel(this.session, entry, send, () => {
      if (this.open.get(tun) === tunnel) this.open.delete(tun);
    });
    this.open.set(tun, tunnel);
    tunnel.start(target).catch((error: unknown) => {
      tunnel.refuse(
        error instanceof TunnelRefusal
          ? error
          : new TunnelRefusal("failed", `tunnel failed: ${(error as Error)?.message ?? error}`),
      );
    });
  }

  /** The run is over: every tunnel closes. */
  closeAll(): void {
    for (const tunnel of [...this.open.values()]) tunnel.shutdown();
  }
}

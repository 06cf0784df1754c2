// MCP over HTTP: what the SSE streams sent, kept for a while so that a client whose connection
// dropped during a long run can reconnect with Last-Event-ID and still get the answer (the
// spec's resumability; without it the result of a run is lost with the connection). One log for
// the server, bounded in bytes and in age so a flood of big answers cannot grow it; each session
// sees and replays only its own events, whatever event id it presents.

import { randomBytes } from "node:crypto";
import type {
  EventId,
  EventStore,
  StreamId,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

interface Stored {
  session: string;
  stream: StreamId;
  message: JSONRPCMessage;
  /** Order of storing: replay sends what came after, in order. */
  seq: number;
  bytes: number;
  at: number;
}

export interface EventLogOptions {
  /** Bytes of messages kept, all sessions together; the oldest go first. */
  maxBytes: number;
  /** Events older than this are dropped: a reconnecting client comes back within seconds. */
  maxAgeMs: number;
  now?: () => number;
}

export class EventLog {
  /** By event id, in the order stored (a Map keeps insertion order), so the oldest is first. */
  private readonly events = new Map<EventId, Stored>();
  private bytes = 0;
  private seq = 0;
  private readonly now: () => number;

  constructor(private readonly options: EventLogOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Bytes held now (for tests and for the bound). */
  get size(): number {
    return this.bytes;
  }

  /** The EventStore one session's transport uses. */
  forSession(session: string): EventStore {
    return {
      storeEvent: async (stream, message) => this.store(session, stream, message),
      getStreamIdForEventId: async (id) => this.own(session, id)?.stream,
      replayEventsAfter: async (lastEventId, { send }) => {
        const last = this.own(session, lastEventId);
        // The SDK asked getStreamIdForEventId first and refused an id it did not know; an id
        // that aged out in between replays nothing.
        if (!last) throw new Error("unknown or expired event id");
        const after = [...this.events].filter(
          ([, e]) => e.session === session && e.stream === last.stream && e.seq > last.seq,
        );
        for (const [id, e] of after) await send(id, e.message);
        return last.stream;
      },
    };
  }

  /** Drops a session's events: nobody can resume its streams once it is gone. */
  forget(session: string): void {
    for (const [id, e] of this.events) if (e.session === session) this.drop(id, e);
  }

  private store(session: string, stream: StreamId, message: JSONRPCMessage): EventId {
    // Random, not a counter: ids go to clients, and a counter would tell each how busy the
    // server is.
    const id = randomBytes(12).toString("base64url");
    const bytes = JSON.stringify(message).length;
    this.events.set(id, { session, stream, message, seq: this.seq++, bytes, at: this.now() });
    this.bytes += bytes;
    this.evict();
    return id;
  }

  private own(session: string, id: EventId): Stored | undefined {
    this.evict();
    const e = this.events.get(id);
    return e?.session === session ? e : undefined;
  }

  private evict(): void {
    const oldest = this.now() - this.options.maxAgeMs;
    for (const [id, e] of this.events) {
      if (this.bytes <= this.options.maxBytes && e.at >= oldest) break;
      this.drop(id, e);
    }
  }

  private drop(id: EventId, e: Stored): void {
    this.events.delete(id);
    this.bytes -= e.bytes;
  }
}

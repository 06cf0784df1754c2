// Unit tier: the HTTP server's log of sent SSE events (resumability) stays within its bytes and
// its age, and a session replays only its own stream's events.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { EventLog } from "../../dist/mcp/event-log.js";

const note = (text: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { data: text },
});

async function replay(log: EventLog, session: string, after: string): Promise<unknown[]> {
  const sent: unknown[] = [];
  await log.forSession(session).replayEventsAfter(after, {
    send: async (_id, message) => {
      sent.push(message);
    },
  });
  return sent;
}

describe("EventLog", () => {
  it("replays what came after an id, on that stream only, in order", async () => {
    const log = new EventLog({ maxBytes: 1 << 20, maxAgeMs: 60_000 });
    const a = log.forSession("a");
    const first = await a.storeEvent("s1", note("one"));
    await a.storeEvent("s2", note("other stream"));
    await a.storeEvent("s1", note("two"));
    await a.storeEvent("s1", note("three"));
    expect(await a.getStreamIdForEventId!(first)).toBe("s1");
    expect(await replay(log, "a", first)).toEqual([note("two"), note("three")]);
  });

  it("knows no other session's ids", async () => {
    const log = new EventLog({ maxBytes: 1 << 20, maxAgeMs: 60_000 });
    const id = await log.forSession("a").storeEvent("s1", note("secret"));
    expect(await log.forSession("b").getStreamIdForEventId!(id)).toBeUndefined();
    await expect(replay(log, "b", id)).rejects.toThrow(/unknown or expired/);
  });

  it("drops the oldest events past its bytes, and events past their age", async () => {
    let now = 0;
    const log = new EventLog({ maxBytes: 300, maxAgeMs: 1_000, now: () => now });
    const s = log.forSession("a");
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await s.storeEvent("s1", note(`event ${i}`)));
    expect(log.size).toBeLessThanOrEqual(300);
    expect(await s.getStreamIdForEventId!(ids[0]!)).toBeUndefined();
    expect(await s.getStreamIdForEventId!(ids[9]!)).toBe("s1");
    now = 1_001;
    expect(await s.getStreamIdForEventId!(ids[9]!)).toBeUndefined();
    expect(log.size).toBe(0);
  });

  it("forgets a session's events when it ends", async () => {
    const log = new EventLog({ maxBytes: 1 << 20, maxAgeMs: 60_000 });
    await log.forSession("a").storeEvent("s1", note("x"));
    const kept = await log.forSession("b").storeEvent("s1", note("y"));
    log.forget("a");
    expect(await log.forSession("b").getStreamIdForEventId!(kept)).toBe("s1");
    expect(log.size).toBe(JSON.stringify(note("y")).length);
  });
});

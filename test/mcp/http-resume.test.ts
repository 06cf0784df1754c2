// Streamable HTTP resumability against `polybox serve`: a client whose SSE stream drops while its
// run goes on reconnects with Last-Event-ID and still gets the result; another session that
// presents the same event id gets nothing. Raw HTTP, so the test holds every byte.

import { afterAll, beforeAll, expect, it } from "vitest";
import { type HttpHandle, httpServer } from "../helpers/mcp-client.js";

let server: HttpHandle;

beforeAll(async () => {
  server = await httpServer();
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
});

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

const VERSION = "2025-11-25";

/** Reads SSE events off a response body, one at a time; close() hangs up. */
function events(body: ReadableStream<Uint8Array>): {
  next: () => Promise<SseEvent | null>;
  close: () => Promise<void>;
} {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<SseEvent | null> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: "" };
        for (const line of block.split("\n")) {
          const [field, ...rest] = line.split(":");
          const value = rest.join(":").replace(/^ /, "");
          if (field === "id") event.id = value;
          if (field === "retry") event.retry = Number(value);
          if (field === "data") event.data += value;
        }
        if (event.id !== undefined || event.data !== "") return event;
        continue; // a keep-alive comment
      }
      const { value, done } = await reader.read();
      if (done) return null;
      buffer += value;
    }
  };
  return { next, close: () => reader.cancel() };
}

/** A session of its own: initialize, then the initialized notification. */
async function session(): Promise<Record<string, string>> {
  const init = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: VERSION,
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    }),
  });
  await init.text();
  const headers = {
    "mcp-session-id": init.headers.get("mcp-session-id")!,
    "mcp-protocol-version": VERSION,
  };
  const ack = await fetch(server.url, {
    method: "POST",
    headers: {
      ...headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(ack.status).toBe(202);
  return headers;
}

it("resumes a dropped stream: the run's result arrives after reconnecting with Last-Event-ID", async () => {
  const headers = await session();
  const dropped = new AbortController();
  const call = await fetch(server.url, {
    method: "POST",
    signal: dropped.signal,
    headers: {
      ...headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "execute_python",
        arguments: { code: "import time\ntime.sleep(2)\nprint('done after the drop')" },
      },
    }),
  });
  expect(call.headers.get("content-type")).toMatch(/text\/event-stream/);
  // The priming event: an id to resume from and how long to wait before reconnecting.
  const priming = await events(call.body!).next();
  expect(priming).toMatchObject({ data: "", retry: 1000 });
  expect(priming?.id).toMatch(/\S/);
  dropped.abort();

  // Another session cannot resume this one's stream, whatever id it presents.
  const stranger = await fetch(server.url, {
    headers: { ...(await session()), accept: "text/event-stream", "last-event-id": priming!.id! },
  });
  expect(stranger.status).toBe(400);
  await stranger.body?.cancel();

  const resumed = await fetch(server.url, {
    headers: { ...headers, accept: "text/event-stream", "last-event-id": priming!.id! },
  });
  expect(resumed.status).toBe(200);
  const stream = events(resumed.body!);
  let answer: { id?: number; result?: { structuredContent?: { stdout?: string } } } = {};
  for (let e = await stream.next(); e !== null; e = await stream.next()) {
    answer = JSON.parse(e.data);
    if (answer.id === 7) break;
  }
  await stream.close();
  expect(answer.id).toBe(7);
  expect(answer.result?.structuredContent?.stdout).toBe("done after the drop\n");
});

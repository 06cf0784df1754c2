// Worker side: the synchronous network bridge. A guest's request leaves the worker as a `net`
// message to the engine host, which passes it to the trusted side; the worker blocks on a shared
// signal (Atomics.wait) until the engine host has put the answer on the worker's own net port and
// set the signal, then takes it with `receiveMessageOnPort`. Blocking makes every client work the
// same way, synchronous ones included (Python's urllib, which cannot await). Nothing here checks
// policy: the guest can forge these messages, so the trusted side decides everything.

import { type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import { NET_WAIT_GRACE_MS } from "../../../protocol/deadlines.js";
import type { FromWorker, NetDelivery } from "../../../protocol/messages.js";
import type { NetReply, NetRequest } from "../../../protocol/net.js";

/**
 * Taken when this module loads: just-bash's defense-in-depth replaces the realm's Atomics with
 * throwers while a script runs, and curl's requests come through here during a script.
 */
const atomicStore = Atomics.store.bind(Atomics);
const atomicWait = Atomics.wait.bind(Atomics);

/** Sends one request for the run in progress and waits for its answer. */
export type NetCall = (request: NetRequest) => NetReply;

export function createNetBridge(
  net: { signal: SharedArrayBuffer; port: MessagePort },
  post: (message: FromWorker) => void,
): (runId: number, deadline: number) => NetCall {
  const signal = new Int32Array(net.signal);
  const port = net.port;
  let nextReq = 1;
  return (runId, deadline) => (request) => {
    const req = nextReq++;
    atomicStore(signal, 0, 0);
    // A late answer to an earlier request (one that timed out here) is dropped first.
    while (receiveMessageOnPort(port) !== undefined);
    post({ type: "net", id: runId, req, request });
    for (;;) {
      const wait = deadline + NET_WAIT_GRACE_MS - Date.now();
      if (wait <= 0 || atomicWait(signal, 0, 0, wait) === "timed-out")
        return {
          ok: false,
          kind: "limit",
          message: "no answer to the network request before the run's deadline",
        };
      atomicStore(signal, 0, 0);
      for (;;) {
        const received = receiveMessageOnPort(port) as { message: NetDelivery } | undefined;
        if (!received) break;
        if (received.message.req === req) return received.message.reply;
      }
    }
  };
}

/** Bytes of a body as sent: strings UTF-8, views copied out. */
export function bodyBytes(body: unknown): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body))
    return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  return new TextEncoder().encode(String(body));
}

/** The message a failed request raises in the guest. */
export function netFailure(reply: Extract<NetReply, { ok: false }>): string {
  return reply.message;
}

/**
 * A WHATWG `fetch` for the worker's realm, over the bridge (Node's own Request and Response
 * classes shape the request and the answer; none of them touches the network). Pyodide's
 * `pyodide.http.pyfetch` uses it, and so does guest code that reaches the realm: either way the
 * request is the trusted side's to judge.
 */
export function realmFetch(call: () => NetCall | null): typeof fetch {
  const NodeRequest = Request;
  const NodeResponse = Response;
  return async function fetch(
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> {
    const net = call();
    if (!net) throw new TypeError("fetch failed: no run is in progress");
    const request = new NodeRequest(input, init);
    const body =
      request.method === "GET" || request.method === "HEAD"
        ? undefined
        : new Uint8Array(await request.arrayBuffer());
    const headers: [string, string][] = [];
    request.headers.forEach((value, name) => {
      headers.push([name, value]);
    });
    const reply = net({
      method: request.method.toUpperCase(),
      url: request.url,
      headers,
      ...(body && body.length > 0 ? { body } : {}),
      redirect: request.redirect === "manual" ? "manual" : "follow",
    });
    if (!reply.ok) throw new TypeError(`fetch failed: ${netFailure(reply)}`);
    const nullBody = [101, 204, 205, 304].includes(reply.status);
    const response = new NodeResponse(nullBody ? null : reply.body, {
      status: reply.status < 200 || reply.status > 599 ? 200 : reply.status,
      statusText: reply.statusText,
      headers: reply.headers,
    });
    Object.defineProperty(response, "url", { value: reply.url });
    Object.defineProperty(response, "redirected", { value: reply.redirected });
    if (reply.status < 200 || reply.status > 599)
      Object.defineProperty(response, "status", { value: reply.status });
    return response;
  };
}

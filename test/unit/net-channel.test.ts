// T19 for the network: what a hostile engine host can do with `net` messages. A request is
// answered only for a run in flight, at most MAX_NET_IN_FLIGHT at once per run (the rest are
// refused at once, never queued), a request for no run counts toward the malformed budget that
// kills the peer, and a run's end aborts its requests still in flight. Real channel, real broker,
// a loopback server that holds its answers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_NET_LIMITS } from "../../dist/core/limits.js";
import type { RunRequest } from "../../dist/protocol/messages.js";
import { GuestChannel, MAX_MALFORMED, MAX_NET_IN_FLIGHT } from "../../dist/supervisor/channel.js";
import { NetBroker } from "../../dist/supervisor/net/broker.js";
import { NetPolicy, parseGrants } from "../../dist/supervisor/net/policy.js";

const held: http.ServerResponse[] = [];
let arrived = 0;
const server = http.createServer((req, res) => {
  arrived++;
  if (req.url === "/hold") held.push(res);
  else res.end("ok");
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const res of held) res.end();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function setup() {
  const replies: { id: number; req: number; reply: { ok: boolean; message?: string } }[] = [];
  let killed = 0;
  const channel = new GuestChannel({
    peer: "a test peer",
    kill: () => {
      killed++;
    },
    cancel: () => undefined,
    runGraceMs: 1_000,
    backstopMs: 1_000,
    replyNet: (id, req, reply) => replies.push({ id, req, reply }),
  });
  const broker = new NetBroker({ limits: DEFAULT_NET_LIMITS });
  const session = broker.session(
    new NetPolicy(parseGrants([`127.0.0.1:${port}`]), []),
    Date.now() + 10_000,
  );
  let runId = -1;
  const limits = { timeoutMs: 10_000, memoryMb: 64, maxOutputBytes: 1024, workspaceQuotaBytes: 0 };
  const done = channel.run(
    {
      session: null,
      language: "python",
      request: { code: "", limits } as RunRequest,
      output: () => undefined,
      net: session,
    },
    (id) => {
      runId = id;
    },
  );
  const get = (path: string) => ({
    method: "GET",
    url: `http://127.0.0.1:${port}${path}`,
    headers: [],
  });
  return { channel, replies, session, done, get, id: () => runId, killed: () => killed };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe("T19 net messages from a hostile engine host", () => {
  it("answers a run's request, and refuses one for a run not in flight", async () => {
    const t = setup();
    t.channel.receive({ type: "net", id: t.id(), req: 1, request: t.get("/a") });
    t.channel.receive({ type: "net", id: t.id() + 99, req: 2, request: t.get("/b") });
    await until(() => t.replies.length === 2);
    expect(t.replies.find((r) => r.req === 2)?.reply).toEqual({
      ok: false,
      kind: "failed",
      message: "no run is in flight for this request",
    });
    expect(t.replies.find((r) => r.req === 1)?.reply).toMatchObject({ ok: true, status: 200 });
    t.channel.fail("done");
    await t.done;
  });

  it(`refuses past ${MAX_NET_IN_FLIGHT} in flight at once, and a run's end aborts those held`, async () => {
    const t = setup();
    const before = arrived;
    for (let req = 1; req <= MAX_NET_IN_FLIGHT + 3; req++)
      t.channel.receive({ type: "net", id: t.id(), req, request: t.get("/hold") });
    await until(() => t.replies.length === 3 && arrived - before === MAX_NET_IN_FLIGHT);
    expect(t.replies.map((r) => r.reply.message)).toEqual(
      Array(3).fill(`at most ${MAX_NET_IN_FLIGHT} network requests may be in flight at once`),
    );
    expect(arrived - before).toBe(MAX_NET_IN_FLIGHT);
    // The run ends (its result, or its host's death): what it had in flight is aborted, and no
    // late answer reaches the peer.
    t.channel.fail("the run ended");
    await t.done;
    await new Promise((r) => setTimeout(r, 100));
    expect(t.replies).toHaveLength(3);
    await until(() => t.session.record.every((e) => e.denied !== undefined));
    expect(t.session.record.map((e) => e.denied)).toEqual(
      Array(MAX_NET_IN_FLIGHT).fill("the run ended before the answer came"),
    );
  });

  it("requests for no run are malformed messages: past the budget the peer is killed", async () => {
    const t = setup();
    for (let i = 0; i <= MAX_MALFORMED; i++)
      t.channel.receive({ type: "net", id: 123_456, req: i, request: t.get("/x") });
    expect(t.killed()).toBe(1);
    t.channel.fail("killed");
    await t.done;
  });
});

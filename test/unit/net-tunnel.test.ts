// T20 for CONNECT tunnels (docs/security.md, "Egress"): what a hostile native agent can do with
// `tunnel` frames. Frames are checked against their schema (a forged shape is malformed), an
// `open` is attributed to a run in flight (else malformed), the target is judged by the policy
// before any connection, at most MAX_TUNNELS are open per run, the run's byte limits end a
// tunnel, data for a tunnel that does not exist does nothing, and a run's end closes every
// tunnel it had. Real channel, real broker, a loopback TCP server that counts connections.
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_NET_LIMITS } from "../../dist/core/limits.js";
import type { RunRequest } from "../../dist/protocol/messages.js";
import { validateAgentEvent } from "../../dist/protocol/validate.js";
import {
  GuestChannel,
  MAX_MALFORMED,
  MAX_UNATTRIBUTED_CHARS,
} from "../../dist/supervisor/channel.js";
import { NetBroker } from "../../dist/supervisor/net/broker.js";
import { NetPolicy, parseGrants } from "../../dist/supervisor/net/policy.js";
import { MAX_TUNNELS } from "../../dist/supervisor/net/tunnel.js";

let accepted = 0;
let closed = 0;
const received: Buffer[] = [];
const server = net.createServer((socket) => {
  accepted++;
  socket.on("data", (d) => received.push(d));
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed++;
  });
  socket.write("hello from the server");
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

type Reply = {
  id: number;
  tun: number;
  reply: { op: string; message?: string; data?: Uint8Array };
};

function setup(limits = DEFAULT_NET_LIMITS) {
  const replies: Reply[] = [];
  let killed = 0;
  const channel = new GuestChannel({
    peer: "a test agent",
    kill: () => {
      killed++;
    },
    cancel: () => undefined,
    runGraceMs: 1_000,
    backstopMs: 1_000,
    replyNet: () => undefined,
    replyTunnel: (id, tun, reply) => replies.push({ id, tun, reply }),
  });
  const broker = new NetBroker({ limits });
  const session = broker.session(
    new NetPolicy(parseGrants([`127.0.0.1:${port}`]), []),
    Date.now() + 10_000,
  );
  let runId = -1;
  const done = channel.run(
    {
      session: null,
      language: "python",
      request: {
        code: "",
        limits: { timeoutMs: 10_000, memoryMb: 64, maxOutputBytes: 1024, workspaceQuotaBytes: 0 },
      } as RunRequest,
      output: () => undefined,
      net: session,
    },
    (id) => {
      runId = id;
    },
  );
  const frame = (tun: number, f: unknown, id = runId) => {
    const event = validateAgentEvent({ type: "tunnel", id, tun, frame: f });
    // As native-host.ts does: a frame that fails its schema is malformed; the rest is received.
    if (!event || event.type === "ready") channel.malformed();
    else channel.receive(event);
  };
  const of = (tun: number) => replies.filter((r) => r.tun === tun).map((r) => r.reply);
  return { channel, replies, session, done, frame, of, killed: () => killed };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe("T20 tunnel frames from a hostile native agent", () => {
  it("relays both ways for a granted target; the record has the tunnel's bytes", async () => {
    const t = setup();
    t.frame(1, { op: "open", target: `127.0.0.1:${port}` });
    await until(() => t.of(1).some((r) => r.op === "data"));
    expect(t.of(1)[0]).toEqual({ op: "opened" });
    t.frame(1, { op: "data", data: new Uint8Array(Buffer.from("ping")) });
    await until(() => received.some((b) => b.toString() === "ping"));
    // The agent's end half-closes toward the server, whose own end closes the tunnel cleanly.
    t.frame(1, { op: "end" });
    await until(() => t.of(1).some((r) => r.op === "end"));
    expect(t.of(1).at(-1)).toEqual({ op: "end" });
    t.channel.fail("done");
    await t.done;
    expect(t.session.record).toEqual([
      { method: "CONNECT", host: `127.0.0.1:${port}`, status: 200, bytesOut: 4, bytesIn: 21 },
    ]);
  });

  it("refuses a target the policy does not grant, or that is not host:port, without connecting", async () => {
    const t = setup();
    const before = accepted;
    t.frame(1, { op: "open", target: `127.0.0.1:${port + 1}` });
    t.frame(2, { op: "open", target: "169.254.169.254:80" });
    t.frame(3, { op: "open", target: "no-port-here" });
    t.frame(4, { op: "open", target: "a b:80" });
    await until(() => t.replies.length === 4);
    expect(t.of(1)[0]).toMatchObject({ op: "refused", kind: "denied" });
    expect(t.of(2)[0]?.message).toContain("169.254.169.254:80 is not granted");
    expect(t.of(3)[0]).toMatchObject({ op: "refused", kind: "failed" });
    expect(t.of(4)[0]).toMatchObject({ op: "refused", kind: "failed" });
    expect(accepted).toBe(before);
    t.channel.fail("done");
    await t.done;
  });

  it("forged shapes are malformed; an open for no run in flight is too; past the budget the agent is killed", async () => {
    const t = setup();
    t.frame(1, { op: "data", data: new Uint8Array(70_000) }); // over a frame's 64 KiB
    t.frame(1, { op: "open", target: "x".repeat(301) });
    t.frame(1, { op: "dance" });
    // Three so far; one more than the budget in all.
    for (let i = 0; i < MAX_MALFORMED - 2; i++) t.frame(9, { op: "open", target: "a:1" }, 123_456);
    expect(t.killed()).toBe(1);
    t.channel.fail("killed");
    await t.done;
  });

  it("data for no open tunnel is dropped, and a flood of it kills the agent", async () => {
    const t = setup();
    // A little is the honest race after a close.
    t.frame(77, { op: "data", data: new Uint8Array(3) });
    expect(t.killed()).toBe(0);
    const chunk = new Uint8Array(64 * 1024);
    let sent = 3;
    for (let i = 0; t.killed() === 0 && i < 1000; i++) {
      t.frame(77, { op: "data", data: chunk });
      sent += chunk.length;
    }
    expect(t.killed()).toBe(1);
    // Killed as soon as the budget was passed, not before.
    expect(sent).toBeGreaterThan(MAX_UNATTRIBUTED_CHARS);
    expect(sent - chunk.length).toBeLessThanOrEqual(MAX_UNATTRIBUTED_CHARS);
    expect(t.replies).toEqual([]);
    t.channel.fail("killed");
    await t.done;
  });

  it(`at most ${MAX_TUNNELS} open per run; a run's end closes them all`, async () => {
    const t = setup();
    const before = closed;
    for (let tun = 1; tun <= MAX_TUNNELS + 2; tun++)
      t.frame(tun, { op: "open", target: `127.0.0.1:${port}` });
    await until(() => t.replies.filter((r) => r.reply.op === "opened").length === MAX_TUNNELS);
    const refused = t.replies.filter((r) => r.reply.op === "refused");
    expect(refused.map((r) => r.reply.message)).toEqual(
      Array(2).fill(`at most ${MAX_TUNNELS} tunnels may be open at once per run`),
    );
    t.channel.fail("the run ended");
    await t.done;
    await until(() => closed - before === MAX_TUNNELS);
    expect(closed - before).toBe(MAX_TUNNELS);
    // Open tunnels closed by the run's end are no refusal: clients keep idle connections.
    expect(t.session.record.filter((e) => e.status === 200 && !e.denied)).toHaveLength(MAX_TUNNELS);
  });

  it("maxBytesOut ends a tunnel with a message naming the limit", async () => {
    const t = setup({ ...DEFAULT_NET_LIMITS, maxBytesOut: 10 });
    t.frame(1, { op: "open", target: `127.0.0.1:${port}` });
    await until(() => t.of(1).some((r) => r.op === "opened"));
    t.frame(1, { op: "data", data: new Uint8Array(11) });
    await until(() => t.of(1).some((r) => r.op === "end"));
    expect(t.of(1).at(-1)).toEqual({
      op: "end",
      message: "network bytes out limit reached: at most 10 bytes per run (maxBytesOut)",
    });
    t.channel.fail("done");
    await t.done;
  });
});

// Trusted side: the one RPC channel to a process that runs guest code (a WASM engine host over
// IPC, or a native jail's agent over JSON lines). Both hosts use it for what crosses back: the
// transport and the process's life are theirs, the bookkeeping of requests is here.
//
// Every request gets its deadline before it is sent, settles exactly once, and removes every
// listener it added. What the far side streams back is attributed to a request in flight and
// held only up to that request's budget: live output up to the run's cap (a host past it by more
// than SLACK_CHARS is killed), results validated against the run's limits, answers to `ask`
// validated by their schema and bounded in time. Messages for nothing in flight, malformed
// messages and log lines each have a budget too. Past a budget the peer is killed, and the
// requests it had end with a typed result or error: the trusted side never holds more than the
// budgets, whatever the far side sends.

import { PolyboxError } from "../core/errors.js";
import type { LogFn } from "../core/log.js";
import type { GuestNet, HostRun, OutputFn } from "../core/sandbox/run-host.js";
import { runDeadline } from "../protocol/deadlines.js";
import { RUN_EXIT_CODES } from "../protocol/endings.js";
import { limitMessage } from "../protocol/limit-messages.js";
import type { EngineResult, RunLimits, RunRequest } from "../protocol/messages.js";
import type { NetReply, TunnelFrame, TunnelReply } from "../protocol/net.js";
import { failedResult, validateResult } from "../protocol/validate.js";

/** Output past a run's cap tolerated before the peer is killed (an honest peer sends none). */
export const SLACK_CHARS = 64 * 1024;
/** Output for runs not in flight tolerated (late output after a cancel is the honest case). */
export const MAX_UNATTRIBUTED_CHARS = 4 * 1024 * 1024;
/** Messages failing validation tolerated before the peer is killed. */
export const MAX_MALFORMED = 64;
/** Log lines from one peer that reach the server's log. */
export const MAX_LOG_LINES = 100;
const MAX_LOG_CHARS = 2_000;
/**
 * A run's network requests in flight at once (an honest engine blocks on each, so has one):
 * more are answered at once with an error, never queued.
 */
export const MAX_NET_IN_FLIGHT = 4;

/** What the far side may send about a request, once its shape has been checked. */
export type ChannelEvent =
  | { type: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "result"; id: number; result: unknown }
  | { type: "failed"; id: number; message: string }
  | { type: "answer"; id: number; payload: unknown }
  | { type: "net"; id: number; req: number; request: unknown }
  | { type: "tunnel"; id: number; tun: number; frame: TunnelFrame }
  | { type: "log"; message: string };

export interface ChannelOptions {
  /** Who is on the far side, for log lines: "the engine host", "a native jail's agent". */
  peer: string;
  /** Ends the peer process; its exit must then call `fail`. */
  kill: () => void;
  /** Tells the peer to stop a run (it answers with that run's result). */
  cancel: (id: number) => void;
  log?: LogFn;
  /** Past a run's timeoutMs, how long starting it may take before the run ends here. */
  runGraceMs: number;
  /** After a run ended here as overdue, how long the peer has to stop it before it is killed. */
  backstopMs: number;
  /** Called whenever a request settles (hosts let an idle process stop holding the program). */
  onSettled?: () => void;
  /** Sends the answer to a guest's network request (hosts without network leave it out). */
  replyNet?: (id: number, req: number, reply: NetReply) => void;
  /** Sends a frame of a CONNECT tunnel (hosts without a proxy leave it out). */
  replyTunnel?: (id: number, tun: number, reply: TunnelReply) => void;
}

interface Run {
  kind: "run";
  resolve: (result: EngineResult) => void;
  output: OutputFn;
  limits: RunLimits;
  /** Live output accepted so far, per stream, up to the cap: kept if the run ends otherwise. */
  seen: { stdout: string; stderr: string };
  /** Characters sent past the cap. */
  overflow: number;
  timer: NodeJS.Timeout;
  detach: () => void;
  /** The run's network session (the trusted side's broker), if the host relays requests. */
  net: GuestNet | undefined;
  netInFlight: number;
}

interface Ask {
  kind: "ask";
  /** Checks the answer and settles the caller's promise with it (or with a typed error). */
  answer: (raw: unknown) => void;
  reject: (error: PolyboxError) => void;
  timer: NodeJS.Timeout;
}

export class GuestChannel {
  private readonly pending = new Map<number, Run | Ask>();
  /**
   * Runs that ended here while the peer still had them: id → the timer that kills the peer (or,
   * once it has been told to die, the timer that stops waiting for its death).
   */
  private readonly stopping = new Map<number, NodeJS.Timeout>();
  /** Callers of `settled` waiting for `stopping` to empty. */
  private calm: (() => void)[] = [];
  private nextId = 1;
  private unattributed = 0;
  private malformedCount = 0;
  private logged = 0;

  constructor(private readonly options: ChannelOptions) {}

  /** Requests in flight (runs and asks). */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Starts a run: `send(id, request)` puts the request on the wire, with its deadline set
   * (`deadlineAt`, timeoutMs from now) and this side's timer armed. Resolves with the validated
   * result, or with a result saying why there is none; never rejects.
   */
  run(run: HostRun, send: (id: number, request: RunRequest) => void): Promise<EngineResult> {
    const { output, signal, net } = run;
    const limits = run.request.limits;
    // A deadline the caller set already (an earlier one) stands.
    const deadlineAt = runDeadline(run.request);
    const request: RunRequest = { ...run.request, deadlineAt };
    const id = this.nextId++;
    return new Promise<EngineResult>((resolve) => {
      const cancel = () => this.options.cancel(id);
      this.pending.set(id, {
        kind: "run",
        resolve,
        output,
        limits,
        seen: { stdout: "", stderr: "" },
        overflow: 0,
        // Armed before the request leaves: a peer that never answers still ends the run.
        timer: setTimeout(
          () => this.overdue(id),
          Math.max(0, deadlineAt - Date.now()) + this.options.runGraceMs,
        ),
        detach: () => signal?.removeEventListener("abort", cancel),
        net,
        netInFlight: 0,
      });
      send(id, request);
      // An abort may already have happened during the caller's own awaits; it still counts.
      if (signal?.aborted) cancel();
      else signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  /**
   * A request that is not a run (stats): `send(id)` puts it on the wire; the answer is checked by
   * `validate` (null: invalid). Rejects with a typed error on no answer within `timeoutMs`.
   */
  ask<T>(
    send: (id: number) => void,
    validate: (raw: unknown) => T | null,
    timeoutMs: number,
  ): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        kind: "ask",
        answer: (raw) => {
          const payload = validate(raw);
          if (payload === null)
            reject(
              new PolyboxError("PROTOCOL_ERROR", `${this.options.peer} sent an invalid answer`),
            );
          else resolve(payload);
        },
        reject,
        timer: setTimeout(
          () =>
            this.settleAsk(
              id,
              new PolyboxError("TIMEOUT", `${this.options.peer} did not answer in ${timeoutMs} ms`),
            ),
          timeoutMs,
        ),
      });
      send(id);
    });
  }

  /** One message from the far side, already checked against its schema. */
  receive(event: ChannelEvent): void {
    switch (event.type) {
      case "output":
        this.onOutput(event.id, event.stream, event.text);
        return;
      case "result": {
        this.stopped(event.id);
        const run = this.runOf(event.id);
        if (run) this.settleRun(event.id, validateResult(event.result, run.limits));
        return;
      }
      case "failed":
        if (this.runOf(event.id))
          this.settleRun(
            event.id,
            failedResult(`the engine could not run this code: ${event.message}`),
          );
        return;
      case "net":
        this.onNet(event.id, event.req, event.request);
        return;
      case "tunnel":
        this.onTunnel(event.id, event.tun, event.frame);
        return;
      case "answer": {
        const ask = this.pending.get(event.id);
        if (ask?.kind !== "ask") return;
        this.forget(event.id, ask);
        ask.answer(event.payload);
        return;
      }
      case "log":
        // Diagnostics, not data: a few per peer reach the log, quoted; a flood does not.
        if (this.logged++ < MAX_LOG_LINES)
          this.options.log?.(
            "warn",
            `${this.options.peer} (untrusted)`,
            event.message.slice(0, MAX_LOG_CHARS),
          );
        return;
    }
  }

  /** A message that failed validation: a few are tolerated, then the peer is killed. */
  malformed(): void {
    if (++this.malformedCount > MAX_MALFORMED) this.misbehaved("sent malformed messages");
  }

  /** The peer broke the protocol as no honest peer does: it is killed. */
  misbehaved(why: string): void {
    this.options.log?.("warn", `${this.options.peer} ${why}; it was killed`);
    this.options.kill();
  }

  /**
   * The peer is gone: every request it had ends now, runs with a failed result that keeps what
   * they printed, asks with a typed error. The channel can serve a new peer afterwards.
   */
  fail(message: string): void {
    for (const timer of this.stopping.values()) clearTimeout(timer);
    this.stopping.clear();
    this.calmed();
    this.unattributed = 0;
    this.malformedCount = 0;
    this.logged = 0;
    for (const [id, request] of [...this.pending]) {
      if (request.kind === "run") this.settleRun(id, { ...failedResult(message), ...request.seen });
      else this.settleAsk(id, new PolyboxError("ENGINE_FAILED", message));
    }
  }

  private runOf(id: number): Run | undefined {
    const request = this.pending.get(id);
    return request?.kind === "run" ? request : undefined;
  }

  /**
   * A guest's network request: made by the run's session (which validates and bounds it) and
   * answered over the same channel. A request for no run in flight counts as malformed.
   */
  private onNet(id: number, req: number, request: unknown): void {
    const reply = this.options.replyNet;
    const run = this.runOf(id);
    if (!reply) {
      this.malformed();
      return;
    }
    if (!run?.net) {
      this.malformed();
      reply(id, req, {
        ok: false,
        kind: "failed",
        message: "no run is in flight for this request",
      });
      return;
    }
    if (run.netInFlight >= MAX_NET_IN_FLIGHT) {
      reply(id, req, {
        ok: false,
        kind: "limit",
        message: `at most ${MAX_NET_IN_FLIGHT} network requests may be in flight at once`,
      });
      return;
    }
    run.netInFlight++;
    void run.net.request(request).then((answer) => {
      run.netInFlight--;
      if (this.runOf(id) === run) reply(id, req, answer);
    });
  }

  /**
   * A frame of a CONNECT tunnel: passed to the run's session, which checks the target, counts
   * the bytes and closes its tunnels when the run ends. An `open` for no run in flight counts as
   * malformed. Data for no open tunnel (the honest race just after a close) is dropped, and
   * counts toward the same budget as output for no run in flight: a flood of it kills the peer.
   */
  private onTunnel(id: number, tun: number, frame: TunnelFrame): void {
    const reply = this.options.replyTunnel;
    const run = this.runOf(id);
    const taken = reply
      ? run?.net?.tunnel(tun, frame, (answer) => {
          if (this.runOf(id) === run) reply(id, tun, answer);
        })
      : false;
    if (taken) return;
    if (frame.op === "open") {
      this.malformed();
      reply?.(id, tun, { op: "refused", kind: "failed", message: "no run is in flight" });
      return;
    }
    this.unattributed += frame.op === "data" ? frame.data.byteLength : 1;
    if (this.unattributed > MAX_UNATTRIBUTED_CHARS)
      this.misbehaved("sent tunnel data for no open tunnel");
  }

  private onOutput(id: number, stream: "stdout" | "stderr", text: string): void {
    // Output of a run in flight, never beyond what that run may print.
    const run = this.runOf(id);
    if (!run) {
      this.unattributed += text.length;
      if (this.unattributed > MAX_UNATTRIBUTED_CHARS)
        this.misbehaved("sent output for runs that are not in flight");
      return;
    }
    const room = run.limits.maxOutputBytes - run.seen[stream].length;
    if (text.length > room) {
      run.overflow += text.length - Math.max(0, room);
      if (run.overflow > SLACK_CHARS) {
        this.settleRun(id, {
          ...failedResult(limitMessage("output_limit", run.limits)!),
          status: "output_limit",
          truncated: true,
          ...run.seen,
        });
        this.misbehaved("sent output past a run's cap");
        return;
      }
      if (room <= 0) return;
    }
    const kept = text.length > room ? text.slice(0, room) : text;
    run.seen[stream] += kept;
    run.output(stream, kept);
  }

  /**
   * A run passed its deadline (and the grace for starting it) and the peer did not end it: it
   * ends here as `timeout`, the peer is told to stop it, and a peer that has not stopped it
   * `backstopMs` later is killed.
   */
  private overdue(id: number): void {
    const run = this.runOf(id);
    if (!run) return;
    this.settleRun(id, {
      ...failedResult(
        limitMessage(
          "timeout",
          run.limits,
          "the engine did not stop in time; the interpreter was killed",
        )!,
      ),
      status: "timeout",
      exitCode: RUN_EXIT_CODES.timeout,
      ...run.seen,
    });
    this.options.cancel(id);
    this.stopping.set(
      id,
      setTimeout(() => {
        this.options.log?.("warn", `${this.options.peer} did not stop an overdue run; killing it`);
        this.options.kill();
        // Its death (`fail`) ends the wait; a peer that does not even die is waited for no more
        // than another backstop.
        this.stopping.set(
          id,
          setTimeout(() => {
            this.stopping.delete(id);
            this.calmed();
          }, this.options.backstopMs),
        );
      }, this.options.backstopMs),
    );
  }

  /**
   * Resolves once no run that ended here is still running in the peer: it stopped each one, or
   * it was killed and has died. A run sent before then could land in a peer that is about to be
   * killed (and die with it), or find its interpreter still busy; sent after, it gets the peer's
   * replacement or a free interpreter.
   */
  settled(): Promise<void> {
    if (this.stopping.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.calm.push(resolve));
  }

  private calmed(): void {
    if (this.stopping.size > 0) return;
    const waiting = this.calm;
    this.calm = [];
    for (const resolve of waiting) resolve();
  }

  /** The peer answered a run that already ended here: it did stop it. */
  private stopped(id: number): void {
    const timer = this.stopping.get(id);
    if (!timer) return;
    clearTimeout(timer);
    this.stopping.delete(id);
    this.calmed();
  }

  private settleRun(id: number, result: EngineResult): void {
    const run = this.runOf(id);
    if (!run) return;
    this.pending.delete(id);
    clearTimeout(run.timer);
    run.detach();
    run.net?.close();
    this.options.onSettled?.();
    run.resolve(result);
  }

  private settleAsk(id: number, error: PolyboxError): void {
    const ask = this.pending.get(id);
    if (ask?.kind !== "ask") return;
    this.forget(id, ask);
    ask.reject(error);
  }

  private forget(id: number, ask: Ask): void {
    this.pending.delete(id);
    clearTimeout(ask.timer);
    this.options.onSettled?.();
  }
}

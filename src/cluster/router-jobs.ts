// Cluster: check_job_status, get_job_logs and cancel_job for runs that went through BullMQ, so they
// work from any router. The job's state is BullMQ's; a finished async job's answer is the one its
// node's check_job_status gave (signed by it); output so far is what the node copies to Redis
// while it runs (signed too).
// Only the client that started a job sees it: any other gets the answer an unknown id gets.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Job, Queue } from "bullmq";
import { PolyboxError } from "../index.js";
import { iso, noOutput } from "../mcp/render.js";
import type { JobRef, Registry } from "./registry.js";
import { CANCEL_CHANNEL } from "./registry.js";
import { CANCELLED_REASON, LOST_PREFIX, lostReason, type RunJobData } from "./wire.js";

type Status = "queued" | "running" | "completed" | "failed" | "timeout" | "cancelled";

interface View {
  status: Status;
  structured: Record<string, unknown>;
  /** The node's own final answer, for a finished job. */
  final?: CallToolResult;
}

/** How long cancel_job waits for a running job to stop before it answers. */
const CANCEL_WAIT_MS = 5000;

export class RouterJobs {
  constructor(
    private readonly registry: Registry,
    private readonly queueOf: (name: string) => Queue,
  ) {}

  /** A failed job's reason as the error a waiting caller gets. */
  failure(reason: string): PolyboxError {
    if (reason.startsWith(LOST_PREFIX))
      return new PolyboxError(
        "SANDBOX_LOST",
        `the run was lost: ${reason.slice(LOST_PREFIX.length)}`,
      );
    if (reason === CANCELLED_REASON)
      return new PolyboxError("ENGINE_FAILED", "the run was cancelled");
    return new PolyboxError("ENGINE_FAILED", `the run failed on its node: ${reason}`);
  }

  /** Takes a job no node has started off the queue; one already running is asked to stop. */
  async cancelQueued(id: string, queue: string): Promise<boolean> {
    const job = await this.queueOf(queue).getJob(id);
    if (!job) return false;
    const state = await job.getState();
    if (state === "waiting" || state === "delayed" || state === "prioritized") {
      await job.remove().catch(() => {});
      return true;
    }
    if (state === "active") await this.registry.redis.publish(CANCEL_CHANNEL, id);
    return false;
  }

  async answer(
    caller: { owner: string },
    tool: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const id = typeof args.job_id === "string" ? args.job_id : "";
    const ref = await this.registry.job(id);
    if (ref === null || ref.owner !== caller.owner) {
      throw new PolyboxError("JOB_NOT_FOUND", `no job with id ${JSON.stringify(id)}`, {
        details: { jobId: id },
      });
    }
    if (tool === "get_job_logs") return this.logs(id, ref);
    if (tool === "cancel_job") return this.cancel(id, ref);
    const view = await this.view(id, ref);
    return view.final ?? render(view);
  }

  private async logs(id: string, ref: JobRef): Promise<CallToolResult> {
    const view = await this.view(id, ref);
    const result = view.structured.result as { stdout?: string; stderr?: string } | undefined;
    const saved = result ? null : await this.registry.logs(id);
    const stdout = result?.stdout ?? saved?.stdout ?? "";
    const stderr = result?.stderr ?? saved?.stderr ?? "";
    const text = [`job ${id}: ${view.status}`];
    if (stdout) text.push("--- stdout ---", stdout.replace(/\n$/, ""));
    if (stderr) text.push("--- stderr ---", stderr.replace(/\n$/, ""));
    if (!stdout && !stderr) text.push(noOutput(view.status));
    return {
      content: [{ type: "text", text: text.join("\n") }],
      structuredContent: { job_id: id, status: view.status, stdout, stderr },
    };
  }

  private async cancel(id: string, ref: JobRef): Promise<CallToolResult> {
    const before = await this.view(id, ref);
    const open = before.status === "queued" || before.status === "running";
    if (open) {
      const removed = await this.cancelQueued(id, ref.queue);
      if (removed) {
        await this.registry.recordJob(id, { ...ref, cancelledAt: Date.now() }, 3600_000);
        ref = { ...ref, cancelledAt: Date.now() };
      } else {
        const until = Date.now() + CANCEL_WAIT_MS;
        while (Date.now() < until) {
          const now = await this.view(id, ref);
          if (now.status !== "queued" && now.status !== "running") break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    const after = await this.view(id, ref);
    const base = after.final ?? render(after);
    const note = open
      ? after.status === "cancelled"
        ? "cancelled"
        : `cancellation requested; the job is ${after.status}`
      : `not cancelled: the job had already finished (${after.status})`;
    const first = base.content[0];
    return {
      ...base,
      content: [
        { type: "text", text: `${note}\n${first?.type === "text" ? first.text : ""}` },
        ...base.content.slice(1),
      ],
      structuredContent: { ...(base.structuredContent ?? after.structured), cancelled: open },
    };
  }

  private async view(id: string, ref: JobRef): Promise<View> {
    const queue = this.queueOf(ref.queue);
    // The state first: a job read before it finished lacks the answer a later state would show
    // (a run that ended between the two reads looked completed with no signed answer).
    const state = await queue.getJobState(id);
    const job = (await queue.getJob(id)) as Job<RunJobData> | undefined;
    const common = {
      job_id: id,
      language: ref.language,
      sandbox_id: ref.sandboxId,
      created_at: iso(ref.createdAt),
    };
    if (!job) {
      // Gone from the queue: taken off by cancel_job, or past the retention time.
      const status: Status = ref.cancelledAt !== undefined ? "cancelled" : "failed";
      return {
        status,
        structured: {
          ...common,
          status,
          started_at: null,
          finished_at: iso(ref.cancelledAt ?? null),
          queued_ms: (ref.cancelledAt ?? Date.now()) - ref.createdAt,
          duration_ms: null,
          ...(status === "failed"
            ? { error: { code: "JOB_NOT_FOUND", message: "the job's record has expired" } }
            : {}),
        },
      };
    }
    const started = job.processedOn ?? null;
    const finished = job.finishedOn ?? null;
    const timing = {
      started_at: iso(started),
      finished_at: iso(finished),
      queued_ms: (started ?? Date.now()) - job.timestamp,
      duration_ms: started === null ? null : (finished ?? Date.now()) - started,
    };
    const ended = (status: Status, error: { code: string; message: string }): View => ({
      status,
      structured: { ...common, status, ...timing, error },
    });
    if (state === "completed") {
      // What a node answered, signed by it; an answer no node signed is not shown as the run's.
      const opened = this.registry.openAnswer(id, job.returnvalue);
      if (opened === null) {
        return ended("failed", {
          code: "PROTOCOL_ERROR",
          message:
            "the job's answer in the cluster's Redis was not written by a node of this cluster; it is not shown",
        });
      }
      const final = opened.value as CallToolResult;
      const structured = (final.structuredContent ?? {}) as Record<string, unknown>;
      return { status: (structured.status as Status) ?? "completed", structured, final };
    }
    if (state === "failed") {
      const reason = job.failedReason ?? "unknown";
      const status: Status = reason === CANCELLED_REASON ? "cancelled" : "failed";
      const error = this.failure(reason);
      return ended(status, { code: error.code, message: error.message });
    }
    // A queued run in its node's own queue whose node died will never run: say so now.
    if (state !== "active" && ref.queue !== "polybox-runs") {
      const nodeId = ref.queue.replace(/^polybox-runs-node-/, "");
      if ((await this.registry.node(nodeId)).state !== "live") {
        const message = `the run was lost: ${lostReason(nodeId, await this.registry.lastSeen(nodeId))}`;
        return ended("failed", { code: "SANDBOX_LOST", message });
      }
    }
    const status: Status = state === "active" && job.data.startedBy ? "running" : "queued";
    return { status, structured: { ...common, status, ...timing } };
  }
}

function render(view: View): CallToolResult {
  const s = view.structured;
  const lines = [`job ${String(s.job_id)}: ${view.status}`];
  const error = s.error as { code: string; message: string } | undefined;
  if (error) lines.push(`error: ${error.code}: ${error.message}`);
  if (view.status === "queued" || view.status === "running") {
    lines.push(
      "not finished: poll check_job_status again, read output so far with get_job_logs, stop it with cancel_job",
    );
  }
  return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: s };
}

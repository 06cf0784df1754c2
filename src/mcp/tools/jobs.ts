// MCP adapter: the async-job tools. A job comes from execute_* / execute_code with async: true;
// these tools read its status and output (also while it runs) and cancel it.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { JobInfo, RunImage } from "../../index.js";
import type { Answer, StructuredOf } from "../answer.js";
import { fitRun } from "../budget.js";
import { inlineImages, jobStructured, jobText, noOutput, runContent } from "../render.js";
import { JOB_STATUSES, jobShape } from "../schemas.js";
import { READS, REPLACES, type ToolContext, type ToolDef, tool } from "../tool.js";

const jobId = z.string().describe("The job_id returned by a call with async: true");

export function jobTools({ service, caller, maxResponseBytes }: ToolContext): ToolDef[] {
  const jobResult = (job: JobInfo) => jobAnswer(job, maxResponseBytes);
  return [
    tool({
      name: "check_job_status",
      title: "Check an async job",
      description:
        "Status of an async job: queued, running, completed, failed, timeout or cancelled, with timings; once finished, the full result (stdout, stderr, exit code). Finished jobs are kept for a while, then forgotten.",
      input: { job_id: jobId },
      output: jobShape,
      annotations: READS,
      run: async ({ job_id }) => {
        const job = service.jobStatus(caller, job_id);
        return { ...jobResult(job) };
      },
    }),
    tool({
      name: "get_job_logs",
      title: "Read an async job's output",
      description: "stdout and stderr of an async job so far; works while it is still running.",
      input: { job_id: jobId },
      output: {
        job_id: z.string(),
        status: z.enum(JOB_STATUSES),
        stdout: z.string(),
        stderr: z.string(),
      },
      annotations: READS,
      run: async ({ job_id }) => {
        const logs = service.jobLogs(caller, job_id);
        const text = [`job ${job_id}: ${logs.status}`];
        if (logs.stdout) text.push("--- stdout ---", logs.stdout.replace(/\n$/, ""));
        if (logs.stderr) text.push("--- stderr ---", logs.stderr.replace(/\n$/, ""));
        if (!logs.stdout && !logs.stderr) text.push(noOutput(logs.status));
        return {
          content: [{ type: "text", text: text.join("\n") }],
          // Exactly the declared fields: clients validate against the output schema, and an
          // undeclared one (the job's internal id) makes them reject the whole answer.
          structuredContent: {
            job_id,
            status: logs.status,
            stdout: logs.stdout,
            stderr: logs.stderr,
          },
        };
      },
    }),
    tool({
      name: "cancel_job",
      title: "Cancel an async job",
      description:
        "Stop a queued or running async job; its status becomes cancelled. A job that already finished is left as it is (the answer says so).",
      input: { job_id: jobId },
      output: { ...jobShape, cancelled: z.boolean().describe("True if this call stopped the job") },
      // A cancelled run's remaining work and output are lost; cancelling again changes nothing.
      annotations: REPLACES,
      run: async ({ job_id }) => {
        const before = service.jobStatus(caller, job_id);
        const job = await service.cancelJob(caller, job_id);
        const cancelled = before.finishedAt === null;
        const note = cancelled
          ? job.status === "cancelled"
            ? "cancelled"
            : `cancellation requested; the job is still ${job.status}`
          : `not cancelled: the job had already finished (${job.status})`;
        const r = jobResult(job);
        return {
          ...r,
          content: [{ type: "text", text: `${note}\n${text(r)}` }, ...r.content.slice(1)],
          structuredContent: { ...r.structuredContent, cancelled },
        };
      },
    }),
  ];
}

/**
 * A finished job's images are attached as they would be for a run that was waited for, within
 * the same response budget.
 */
function jobAnswer(job: JobInfo, maxBytes: number): Answer<StructuredOf<typeof jobShape>> {
  const build = (j: JobInfo, attached: readonly RunImage[]) => ({
    content: [
      { type: "text" as const, text: jobText(j, attached) },
      ...(j.result ? runContent({ ...j.result, sandboxId: j.sandboxId }, attached) : []),
    ],
    structuredContent: jobStructured(j),
  });
  if (!job.result) return build(job, []);
  const run = { ...job.result, sandboxId: job.sandboxId };
  return fitRun(run, inlineImages(run.images), maxBytes, (view, attached) =>
    build({ ...job, result: view }, attached),
  );
}

function text(answer: CallToolResult): string {
  const first = answer.content[0];
  return first?.type === "text" ? first.text : "";
}

// MCP adapter: what a task-capable tool's createTask hands the task store (tasks.ts), through
// the SDK's CreateTaskOptions.context: both ways of running the call, for the store to choose
// from once it has seen whether the request asked for a task.

import type { CreateTaskOptions } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type JobInfo, PolyboxError } from "../index.js";

const PLAN = "polybox.task-plan";

export interface TaskPlan {
  /** Starts the call's work as a job (the call asked for a task). */
  job: () => JobInfo;
  /** Runs the call and answers it (the call asked for no task). */
  answer: () => Promise<CallToolResult>;
}

/** Plans made here; the context is only ever read back by the store of the same process. */
const plans = new WeakSet<TaskPlan>();

/** Task options that carry a plan to the store's createTask. */
export function planOptions(plan: TaskPlan): CreateTaskOptions {
  plans.add(plan);
  return { context: { [PLAN]: plan } };
}

/** The plan the options carry; anything else did not come from a run tool. */
export function planOf(options: CreateTaskOptions): TaskPlan {
  const plan = options.context?.[PLAN];
  if (typeof plan === "object" && plan !== null && plans.has(plan as TaskPlan))
    return plan as TaskPlan;
  throw new PolyboxError("INVALID_ARGUMENT", "a polybox task is created by a run tool's call");
}

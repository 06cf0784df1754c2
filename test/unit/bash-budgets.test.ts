// Unit tier: how just-bash's budgets follow polybox's limits and how its verdicts are reported.
import { describe, expect, it } from "vitest";
import {
  executionLimits,
  limitVerdict,
  withoutTuningHint,
} from "../../dist/guest/engines/bash/budgets.js";

const limits = {
  timeoutMs: 30_000,
  memoryMb: 512,
  maxOutputBytes: 1024 * 1024,
  workspaceQuotaBytes: 100 * 1024 * 1024,
};

describe("just-bash budgets", () => {
  it("leaves counts of work to timeoutMs and sizes to memoryMb and the quota", () => {
    const budgets = executionLimits(limits)!;
    for (const count of ["maxCommandCount", "maxLoopIterations", "maxOutputSize"] as const)
      expect(budgets[count]).toBeGreaterThan(1e12);
    expect(budgets.maxStringLength).toBe(128 * 1024 * 1024);
    expect(budgets.maxFileSystemBytes).toBe(limits.workspaceQuotaBytes + 1);
  });

  it("maps each family of just-bash messages to a polybox status", () => {
    const cases: [string, string | undefined][] = [
      ["bash: word expansion: string length limit exceeded (16777216 bytes)", "memory_limit"],
      ["bash: seq: iteration limit exceeded (33554432)", "memory_limit"],
      ["bash: cat: live byte limit exceeded", "memory_limit"],
      ["bash: write: filesystem size limit exceeded", "workspace_limit"],
      ["bash: execution deadline exceeded", "timeout"],
      ["bash: f: maximum recursion depth (100) exceeded", "error"],
      ["bash: ./x: Permission denied", undefined],
    ];
    for (const [line, status] of cases)
      expect(limitVerdict(`some output\n${line}\n`)?.status, line).toBe(status);
    expect(limitVerdict("bash: f: maximum recursion depth (100) exceeded")?.message).toContain(
      "not one of polybox's limits",
    );
  });

  it("drops just-bash's advice to raise a setting polybox users do not have", () => {
    expect(
      withoutTuningHint(
        "bash: f: maximum recursion depth (100) exceeded, increase executionLimits.maxCallDepth\n",
      ),
    ).toBe("bash: f: maximum recursion depth (100) exceeded\n");
  });
});

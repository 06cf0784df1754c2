// Untrusted side, native mode: one run, from the workspace sync in to the result out. It sends
// the request to its language's interpreter, streams the output under the cap, enforces the
// timeout and the memory limit (over every process of the run) by killing that interpreter,
// kills whatever the run left behind, and says how the run ended.

import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { runDeadline } from "../../protocol/deadlines.js";
import { exitCodeOf } from "../../protocol/endings.js";
import { limitMessage } from "../../protocol/limit-messages.js";
import type { EngineLanguage, EngineResult, RunRequest } from "../../protocol/messages.js";
import { OutputSink } from "../engines/common/output.js";
import {
  type Answer,
  type Interpreter,
  interpreterFor,
  interpreters,
  KIND,
  killStrays,
  lost,
} from "./interpreters.js";
import { send } from "./wire.js";
import { mirror } from "./workspace.js";

const MIB = 1024 * 1024;

let stripTypes: ((code: string) => { code: string } | { error: string }) | null = null;

/** The runs in progress, each with what cancels it (the agent's `cancel` line). */
export const running = new Map<number, () => void>();

export async function runNow(
  id: number,
  language: EngineLanguage,
  request: RunRequest,
): Promise<EngineResult> {
  const kind = KIND[language as keyof typeof KIND];
  if (!kind) throw new Error(`native mode has no interpreter for ${language}`);
  const { limits } = request;
  await mirror.apply(request.sync, request.fullSync);
  const stateLost = lost.delete(kind);

  let code = request.code;
  if (language === "typescript") {
    stripTypes ??= await (await import("../engines/javascript/typescript.js")).loadTypeStripper();
    const stripped = stripTypes(code);
    if ("error" in stripped) {
      return finish(
        request,
        { exitCode: 1, value: null, status: "error", displays: [] },
        {
          stdout: "",
          stderr: `${stripped.error}\n`,
          truncated: false,
          stateLost,
        },
      );
    }
    code = stripped.code;
  }

  const deadline = runDeadline(request);
  const interp = interpreterFor(kind, limits.memoryMb);
  interp.used = true;
  let stoppedBy: EngineResult["status"] | null = null;
  const stop = (why: EngineResult["status"]) => {
    stoppedBy ??= why;
    interp.kill();
  };
  const sink = new OutputSink(
    limits.maxOutputBytes,
    (stream, text) => send({ type: "output", id, stream, text }),
    () => stop("output_limit"),
  );
  const nonce = `\u001fpolybox-${randomBytes(12).toString("hex")}\u001f`;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => stop("timeout"), Math.max(0, deadline - Date.now()));
    // memoryMb holds for the interpreter and everything it starts, together: per-process limits
    // (address space, V8's heap) miss Buffers and children.
    const watch = setInterval(() => {
      if (residentBytes(interp) > limits.memoryMb * MIB) stop("memory_limit");
    }, MEMORY_CHECK_MS);
    const done = () => {
      clearTimeout(timer);
      clearInterval(watch);
      resolve();
    };
    interp.pending = { nonce, sink, seen: { stdout: false, stderr: false }, answer: null, done };
    running.set(id, () => stop("cancelled"));
    if (interp.exited) done();
    else {
      interp.thaw();
      interp.send(request, nonce, code, language === "typescript" ? "main.ts" : "main.js");
    }
  });
  running.delete(id);
  sink.flush();
  const answer = interp.pending?.answer ?? null;
  interp.pending = null;
  killStrays();
  // Nothing of a run may go on after it: threads, timers and tasks the guest left in its
  // interpreter stop with it (SIGSTOP cannot be caught) until that interpreter's next run.
  for (const i of interpreters.values()) i.freeze();

  let outcome: Answer;
  if (answer && !interp.exited && !stoppedBy) {
    // Bash survives a failed allocation and only returns an error status: name it.
    const bashOom =
      kind === "bash" && answer.exitCode !== 0 && OUT_OF_MEMORY.test(sink.text.stderr);
    outcome = bashOom ? { ...answer, status: "memory_limit" } : answer;
  } else {
    // The interpreter ended (the guest exited, crashed, or was stopped): its state is gone.
    interp.kill();
    lost.add(kind);
    const exit = interp.exited;
    const exitCode = exit?.code ?? (exit?.signal ? 128 + signalNumber(exit.signal) : 1);
    outcome = {
      exitCode: stoppedBy ? exitCodeOf(stoppedBy, exitCode) : exitCode,
      value: null,
      status: stoppedBy ?? (outOfMemory(interp) ? "memory_limit" : null),
      displays: [],
    };
  }
  return finish(request, outcome, {
    stdout: sink.text.stdout,
    stderr: sink.text.stderr,
    truncated: sink.truncated,
    stateLost,
    overflowed: sink.overflowed !== null,
  });
}

const MEMORY_CHECK_MS = 100;

/**
 * Resident memory of a run: its interpreter and every process in the jail that is neither this
 * agent, the jail's init, nor another (idle, frozen) interpreter.
 */
function residentBytes(running: Interpreter): number {
  const others = new Set([process.pid, 1]);
  for (const i of interpreters.values()) if (i !== running && i.proc.pid) others.add(i.proc.pid);
  let total = 0;
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || others.has(pid)) continue;
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // Exited while we looked.
    }
  }
  return total;
}

/** How each interpreter says it ran out of memory (V8's heap limit, MemoryError, bash's xmalloc). */
const OUT_OF_MEMORY =
  /heap out of memory|MemoryError|xmalloc|xrealloc|[Cc]annot allocate|out of memory/;

function outOfMemory(interp: Interpreter): boolean {
  return OUT_OF_MEMORY.test(interp.stderrTail) || interp.exited?.signal === "SIGKILL";
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGKILL: 9,
    SIGABRT: 6,
    SIGSEGV: 11,
    SIGTERM: 15,
    SIGTRAP: 5,
    SIGBUS: 7,
  };
  return numbers[signal] ?? 1;
}

async function finish(
  request: RunRequest,
  outcome: Answer,
  out: {
    stdout: string;
    stderr: string;
    truncated: boolean;
    stateLost: boolean;
    overflowed?: boolean;
  },
): Promise<EngineResult> {
  const changes = await mirror.collect();
  let status = outcome.status ?? (outcome.exitCode === 0 ? "ok" : "error");
  if (out.overflowed && status !== "timeout") status = "output_limit";
  const message = limitMessage(status, request.limits);
  return {
    status,
    stdout: out.stdout,
    stderr: out.stderr,
    exitCode: status === "ok" || status === "error" ? outcome.exitCode : outcome.exitCode || 1,
    value: status === "ok" ? outcome.value : null,
    truncated: out.truncated || status === "output_limit",
    ...(message ? { message } : {}),
    ...(out.stateLost ? { stateLost: true } : {}),
    changes,
    displays: outcome.displays ?? [],
  };
}

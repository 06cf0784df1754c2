// End to end with the SDK's real client over stdio and Streamable HTTP: a client that cancels a
// tools/call (the SDK sends notifications/cancelled when the request's AbortSignal fires) stops
// the run and frees what it held. The server runs one run at a time (--concurrency=1), so a
// cancelled run that kept its slot or its interpreter would make the next call wait for the run's
// whole timeout (300 s); the bound below is far under that and far over what a loaded machine
// needs to kill an interpreter and boot another.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  call,
  httpServer,
  type McpHandle,
  stdioServer,
  type ToolResult,
  text,
} from "../helpers/mcp-client.js";

const RUN_TIMEOUT_S = 300;
/** What "answers at once" means on a loaded 2-core machine: a fresh Python boots in ~1 s there. */
const NEXT_CALL_BOUND_MS = 60_000;
const SPIN = "print('spinning', flush=True)\nwhile True: pass";

let server: McpHandle | null = null;

afterEach(async () => {
  if (server) expect(await server.close()).toEqual({ code: 0, signal: null });
  server = null;
});

/**
 * Starts a call, waits until the guest really runs (its first line arrives as progress), then
 * cancels it through the SDK; resolves with how the call ended on the client's side.
 */
async function startThenCancel(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<unknown> {
  const controller = new AbortController();
  let running!: () => void;
  const spinning = new Promise<void>((resolve) => {
    running = resolve;
  });
  const ended = client
    .callTool({ name, arguments: args }, undefined, {
      signal: controller.signal,
      timeout: RUN_TIMEOUT_S * 1000,
      onprogress: (p) => {
        if (p.message?.includes("spinning")) running();
      },
    })
    .then(
      () => "answered",
      (error: unknown) => error,
    );
  await Promise.race([spinning, ended]);
  controller.abort("the user changed their mind");
  return ended;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

const transports = [
  ["stdio", () => stdioServer(["--concurrency=1"])],
  ["Streamable HTTP", () => httpServer(["--concurrency=1"])],
] as const;

describe.each(transports)("cancelling a tools/call over %s", (_name, start) => {
  it("stops a runaway loop in a sandbox; the next call answers at once and says the state was lost", async () => {
    server = await start();
    const { client } = server;
    const sandbox_id = (await call(client, "create_sandbox", { language: "python" }))
      .structuredContent?.sandbox_id;
    await call(client, "execute_code", { sandbox_id, code: "x = 41" });

    const ended = await startThenCancel(client, "execute_code", {
      sandbox_id,
      code: SPIN,
      timeout_seconds: RUN_TIMEOUT_S,
    });
    expect(ended).toBeInstanceOf(Error);

    const next = await timed(() =>
      call(client, "execute_code", { sandbox_id, code: "print('after', 'x' in globals())" }),
    );
    expect(next.ms).toBeLessThan(NEXT_CALL_BOUND_MS);
    const r: ToolResult = next.value;
    expect(r.structuredContent).toMatchObject({ status: "ok", stdout: "after False\n" });
    // The interpreter that spun was replaced, and the caller never saw the cancelled answer.
    expect(r.structuredContent?.state_lost).toBe(true);
    expect(text(r)).toMatch(/interpreter was restarted/);

    // The new interpreter keeps state as usual, and the loss is told once.
    await call(client, "execute_code", { sandbox_id, code: "y = 2" });
    const again = await call(client, "execute_code", { sandbox_id, code: "print(y)" });
    expect(again.structuredContent).toMatchObject({ status: "ok", stdout: "2\n" });
    expect(again.structuredContent?.state_lost).toBeUndefined();
  });

  it("stops a one-shot run and frees its slot for the next one", async () => {
    server = await start();
    const { client } = server;
    const ended = await startThenCancel(client, "execute_python", {
      code: SPIN,
      timeout_seconds: RUN_TIMEOUT_S,
    });
    expect(ended).toBeInstanceOf(Error);
    const next = await timed(() =>
      call(client, "execute_javascript", { code: "console.log(6 * 7)" }),
    );
    expect(next.ms).toBeLessThan(NEXT_CALL_BOUND_MS);
    expect(next.value.structuredContent).toMatchObject({ status: "ok", stdout: "42\n" });
  });
});

// Every kind of answer the tools give, checked the way real clients check them, over stdio and
// over Streamable HTTP. The SDK's Client, once it has listed the tools, validates each result's
// structuredContent against that tool's outputSchema (which says additionalProperties: false) and
// throws McpError -32602 "Structured content does not match the tool's output schema" when it does
// not match: nothing here catches that, so one answer a client would reject fails the suite. The
// suite drives each run status, each job state through each job tool, images and displays, native
// sandboxes, every file tool on text and binary files, and the error paths a client can reach; at
// the end, every tool the server lists must have answered, and refused something, so a new tool
// without a case here fails.
//
// Two servers per transport: a roomy one (the default limits, a host directory to upload from, a
// wheel directory to install from), and a tight one whose small limits make runs hit them (one
// run at a time, so that a second job waits in the queue).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  httpServer,
  type McpHandle,
  stdioServer,
  type ToolResult,
  text,
} from "../helpers/mcp-client.js";
import { dataString, wasiProgram } from "../helpers/wat.js";
import { buildWheel } from "../helpers/wheel.js";
import { usable as nativeUsable } from "../native/helpers.js";

const host = mkdtempSync(path.join(os.tmpdir(), "polybox-every-answer-"));
const uploads = path.join(host, "uploads");
const wheels = path.join(host, "wheels");

/** The bytes 0..255: every byte value, so a binary round trip that mangles any of them shows. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** A real PNG (signature, IHDR, IDAT, IEND with their CRCs) of one colour. */
function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (kind: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(kind, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array(width).fill(rgb).flat())]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(Array(height).fill(row)))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const RED = png(4, 3, [255, 0, 0]);
const BLUE = png(2, 2, [0, 0, 255]);
const GREEN = png(1, 1, [0, 255, 0]);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

const HELLO_WASM = wasiProgram(
  `(call $print (i32.const 2048) (i32.const 16))`,
  dataString(2048, "hello from wasm\n"),
);

const ROOMY = [`--allow-read=${uploads}`, `--python-packages=${wheels}`];
const TIGHT = [
  "--concurrency=1",
  "--memory=128M",
  "--max-output=4K",
  "--workspace-quota=1M",
  "--max-code=8K",
  "--max-response=16K",
  "--max-sandboxes=2",
  // Sandboxes never expire, so their expires_at is null.
  "--idle-timeout=0",
  // Over HTTP a client's share defaults to a quarter of these; the suite is the only client.
  "--max-sandboxes-per-client=2",
  "--max-runs-per-client=5",
];

const TRANSPORTS: [string, (args: string[]) => Promise<McpHandle>][] = [
  ["stdio", (args) => stdioServer(args)],
  ["Streamable HTTP", (args) => httpServer(args)],
];

beforeAll(() => {
  mkdirSync(uploads);
  mkdirSync(wheels);
  writeFileSync(path.join(uploads, "data.csv"), "a,b\n1,2\n");
  writeFileSync(path.join(uploads, "all.bin"), ALL_BYTES);
  // Outside the --allow-read grant: upload_file must refuse it.
  writeFileSync(path.join(host, "secret.txt"), "secret");
  const wheel = buildWheel(
    "polybox-every-answer",
    "1.0.0",
    "polybox_every_answer",
    "def greet(who):\n    return f'hello {who}'\n",
  );
  writeFileSync(path.join(wheels, wheel.fileName), wheel.data);
});

afterAll(() => {
  rmSync(host, { recursive: true, force: true });
});

describe.each(TRANSPORTS)(
  "every answer validates against its output schema over %s",
  (_, start) => {
    let roomy: McpHandle;
    let tight: McpHandle;
    /** Tools that gave a successful answer, with structured content the client validated. */
    const answered = new Set<string>();
    /** Tools that refused a call with an isError result. */
    const refused = new Set<string>();

    beforeAll(async () => {
      [roomy, tight] = await Promise.all([start(ROOMY), start(TIGHT)]);
    });

    afterAll(async () => {
      const exits = await Promise.all([roomy?.close(), tight?.close()]);
      for (const exit of exits) expect(exit).toEqual({ code: 0, signal: null });
    });

    /**
     * One tool call, as a client makes it. A structuredContent that breaks the output schema makes
     * the SDK throw, failing the test; the server's own check of its answers (with zod) reports a
     * failure as an isError result instead, which must never happen either.
     */
    async function ask(
      server: McpHandle,
      tool: string,
      args: Record<string, unknown> = {},
    ): Promise<ToolResult> {
      const r = await call(server.client, tool, args);
      expect(text(r), `${tool}: the server broke its own output schema`).not.toMatch(
        /Output validation error/,
      );
      if (r.isError) {
        refused.add(tool);
      } else {
        expect(r.structuredContent, `${tool} answered without structured content`).toBeDefined();
        answered.add(tool);
      }
      return r;
    }

    /** A successful answer; its structured content. */
    async function ok(
      server: McpHandle,
      tool: string,
      args: Record<string, unknown> = {},
      // biome-ignore lint/suspicious/noExplicitAny: the output schema already checked the shape
    ): Promise<Record<string, any>> {
      const r = await ask(server, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args).slice(0, 200)} → ${text(r)}`).toBeFalsy();
      return r.structuredContent!;
    }

    /** A tool error: isError with text content whose text matches `pattern`. */
    async function fails(
      server: McpHandle,
      tool: string,
      args: Record<string, unknown>,
      pattern: RegExp,
    ): Promise<ToolResult> {
      const r = await ask(server, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args).slice(0, 200)} → ${text(r)}`).toBe(true);
      expect(r.content[0]?.type).toBe("text");
      expect(text(r)).toMatch(pattern);
      return r;
    }

    /**
     * Arguments the input schema refuses. The SDK's server checks them before the tool runs and
     * answers with its -32602 "Input validation error" (SDK 1.32 wraps it in an isError result; a
     * JSON-RPC error with that code would be the same refusal): an input error, never an output one.
     */
    async function invalidInput(
      server: McpHandle,
      tool: string,
      args: Record<string, unknown>,
      pattern: RegExp,
    ): Promise<void> {
      let message: string;
      try {
        const r = await ask(server, tool, args);
        expect(r.isError, `${tool} accepted ${JSON.stringify(args)}`).toBe(true);
        message = text(r);
      } catch (error) {
        if (!(error instanceof McpError) || error.code !== -32602) throw error;
        message = error.message;
      }
      expect(message).toMatch(
        new RegExp(
          `^MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: `,
        ),
      );
      expect(message).toMatch(pattern);
      expect(message).not.toMatch(/output schema/i);
    }

    /** Polls check_job_status (each answer validated) until the job is no longer queued or running. */
    // biome-ignore lint/suspicious/noExplicitAny: the output schema already checked the shape
    async function finished(server: McpHandle, jobId: string): Promise<Record<string, any>> {
      for (let i = 0; i < 600; i++) {
        const job = await ok(server, "check_job_status", { job_id: jobId });
        if (job.status !== "queued" && job.status !== "running") return job;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`job ${jobId} did not finish`);
    }

    /** Polls get_job_logs until the job's stdout contains `marker`: the guest really runs. */
    async function printed(server: McpHandle, jobId: string, marker: string): Promise<void> {
      for (let i = 0; i < 600; i++) {
        const logs = await ok(server, "get_job_logs", { job_id: jobId });
        if (logs.stdout.includes(marker)) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`job ${jobId} never printed ${marker}`);
    }

    it("lists every tool with an output schema, the same on both servers", async () => {
      const { tools } = await roomy.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) {
        // Without one, the client checks nothing, and this suite would prove nothing for the tool.
        expect(tool.outputSchema, tool.name).toMatchObject({ type: "object" });
      }
      const tightTools = (await tight.client.listTools()).tools.map((t) => t.name);
      expect(tightTools.sort()).toEqual(tools.map((t) => t.name).sort());
    });

    describe("run statuses", () => {
      it("ok and error, from each tool that runs code", async () => {
        expect(await ok(roomy, "execute_python", { code: "print('py')\n6 * 7" })).toEqual({
          status: "ok",
          exit_code: 0,
          stdout: "py\n",
          stderr: "",
          value: "42",
          duration_ms: expect.any(Number),
          truncated: false,
          files_changed: [],
          images: [],
          displays: [],
          sandbox_id: null,
        });
        const js = await ok(roomy, "execute_javascript", {
          code: "console.log('before'); throw new Error('boom')",
        });
        expect(js).toMatchObject({ status: "error", exit_code: 1, stdout: "before\n" });
        expect(js.stderr).toMatch(/boom/);
        expect(
          await ok(roomy, "execute_bash", { code: "echo out; echo err >&2; exit 3" }),
        ).toMatchObject({ status: "error", exit_code: 3, stdout: "out\n", stderr: "err\n" });
        expect(
          await ok(roomy, "create_run_close", {
            language: "typescript",
            code: "const n: number = 21;\nn * 2",
          }),
        ).toMatchObject({ status: "ok", value: "42", sandbox_id: null });
        // A binary file in `files`, and `args`, which only create_run_close and execute_code take.
        expect(
          await ok(roomy, "create_run_close", {
            language: "wasm",
            code: "hello.wasm",
            args: ["ignored"],
            files: { "hello.wasm": { base64: b64(HELLO_WASM) } },
          }),
        ).toMatchObject({ status: "ok", exit_code: 0, stdout: "hello from wasm\n" });
        const sandbox_id = (await ok(roomy, "create_sandbox", { language: "javascript" }))
          .sandbox_id;
        expect(
          await ok(roomy, "execute_code", { sandbox_id, code: "globalThis.kept = 6; kept * 7" }),
        ).toMatchObject({ status: "ok", value: "42", sandbox_id });
        expect(
          await ok(roomy, "execute_code", {
            sandbox_id,
            language: "bash",
            code: "echo changed > out.txt; exit 1",
          }),
        ).toMatchObject({ status: "error", exit_code: 1, files_changed: ["out.txt"], sandbox_id });
        await ok(roomy, "close_sandbox", { sandbox_id });
      });

      it("timeout, with a small timeout_seconds", async () => {
        const r = await ok(roomy, "execute_javascript", {
          code: "while (true) {}",
          timeout_seconds: 0.5,
        });
        expect(r).toMatchObject({ status: "timeout", exit_code: 124, sandbox_id: null });
        expect(r.message).toMatch(/timeoutMs=500/);
      });

      it("memory_limit, output_limit and workspace_limit under the tight server's limits", async () => {
        const memory = await ok(tight, "create_run_close", {
          language: "javascript",
          code: "const keep = [];\nwhile (true) keep.push(new Array(1e6).fill(Math.random()))",
        });
        expect(memory).toMatchObject({ status: "memory_limit", exit_code: 137, state_lost: true });
        expect(memory.message).toMatch(/memoryMb=128/);

        const output = await ok(tight, "execute_javascript", {
          code: "while (true) console.log('flood'.repeat(20))",
        });
        expect(output).toMatchObject({ status: "output_limit", exit_code: 141, truncated: true });
        expect(Buffer.byteLength(output.stdout)).toBeLessThanOrEqual(4096);
        expect(output.message).toMatch(/maxOutputBytes=4096/);

        const sandbox_id = (await ok(tight, "create_sandbox", {})).sandbox_id;
        const disk = await ok(tight, "execute_code", {
          sandbox_id,
          language: "python",
          code: "open('big.bin', 'wb').write(bytes(2_000_000))",
        });
        expect(disk).toMatchObject({ status: "workspace_limit", files_changed: [], sandbox_id });
        expect(disk.message).toMatch(/workspaceQuotaBytes=1048576/);
        // The run's changes were discarded: nothing of the big file is left.
        expect((await ok(tight, "list_files", { sandbox_id })).files).toEqual([]);
        await ok(tight, "close_sandbox", { sandbox_id });
      });
    });

    describe("jobs", () => {
      it("every job state through check_job_status, get_job_logs and cancel_job", async () => {
        // One run at a time: the blocker runs and what follows waits behind it.
        const blocker = await ok(tight, "execute_javascript", {
          code: "console.log('started'); while (true) {}",
          async: true,
        });
        expect(blocker).toEqual({ job_id: expect.any(String), status: "queued", sandbox_id: null });
        await printed(tight, blocker.job_id, "started");
        expect(await ok(tight, "check_job_status", { job_id: blocker.job_id })).toMatchObject({
          status: "running",
          language: "javascript",
          started_at: expect.any(String),
          finished_at: null,
          duration_ms: expect.any(Number),
        });

        const queued = await ok(tight, "execute_bash", { code: "echo never", async: true });
        const queuedStatus = await ok(tight, "check_job_status", { job_id: queued.job_id });
        expect(queuedStatus).toMatchObject({
          status: "queued",
          language: "bash",
          started_at: null,
          finished_at: null,
          duration_ms: null,
        });
        expect(queuedStatus.result).toBeUndefined();
        expect(await ok(tight, "get_job_logs", { job_id: queued.job_id })).toEqual({
          job_id: queued.job_id,
          status: "queued",
          stdout: "",
          stderr: "",
        });

        // A job bound to a sandbox that is closed before its turn fails with an error and no
        // result: the one shape of a job answer with `error`.
        const sandbox_id = (await ok(tight, "create_sandbox", { language: "bash" })).sandbox_id;
        const orphan = await ok(tight, "execute_code", {
          sandbox_id,
          code: "echo too late",
          async: true,
        });
        expect(orphan).toMatchObject({ status: "queued", sandbox_id });
        const completes = await ok(tight, "execute_python", {
          code: "print('done')",
          async: true,
        });
        const fails_ = await ok(tight, "execute_bash", {
          code: "echo oops >&2; exit 3",
          async: true,
        });
        // 1 running and 4 waiting is all --concurrency=1 (and --max-runs-per-client=5) allow.
        await fails(tight, "execute_bash", { code: "echo 6", async: true }, /^SERVER_BUSY: /);
        await ok(tight, "close_sandbox", { sandbox_id });

        const cancelQueued = await ok(tight, "cancel_job", { job_id: queued.job_id });
        expect(cancelQueued).toMatchObject({
          status: "cancelled",
          cancelled: true,
          started_at: null,
        });
        expect(cancelQueued.result).toBeUndefined();

        // cancel_job waits up to 5 s for the run to stop; on a loaded machine it may answer
        // while the job is still running, and the poll below sees it end.
        const cancelRunning = await ok(tight, "cancel_job", { job_id: blocker.job_id });
        expect(cancelRunning.cancelled).toBe(true);
        if (cancelRunning.status === "cancelled") {
          expect(cancelRunning.result).toMatchObject({ status: "cancelled", exit_code: 130 });
        } else {
          expect(cancelRunning.status).toBe("running");
        }

        const timesOut = await ok(tight, "execute_javascript", {
          code: "while (true) {}",
          timeout_seconds: 1,
          async: true,
        });

        const expected = [
          [queued.job_id, "cancelled", undefined],
          [blocker.job_id, "cancelled", "cancelled"],
          [orphan.job_id, "failed", undefined],
          [completes.job_id, "completed", "ok"],
          [fails_.job_id, "failed", "error"],
          [timesOut.job_id, "timeout", "timeout"],
        ] as const;
        for (const [job_id, status, runStatus] of expected) {
          const job = await finished(tight, job_id);
          expect(job, job_id).toMatchObject({ job_id, status, finished_at: expect.any(String) });
          expect(job.result?.status, job_id).toBe(runStatus);
          const logs = await ok(tight, "get_job_logs", { job_id });
          expect(logs.status).toBe(status);
          // A finished job is left as it is, and the answer says so.
          const again = await ask(tight, "cancel_job", { job_id });
          expect(again.structuredContent).toMatchObject({ job_id, status, cancelled: false });
          expect(text(again)).toMatch(/already finished/);
        }
        expect((await ok(tight, "check_job_status", { job_id: orphan.job_id })).error).toEqual({
          code: "SANDBOX_CLOSED",
          message: expect.stringContaining(sandbox_id),
        });
        expect(
          (await ok(tight, "check_job_status", { job_id: blocker.job_id })).result,
        ).toMatchObject({ exit_code: 130, stdout: "started\n" });
        expect(
          (await ok(tight, "check_job_status", { job_id: completes.job_id })).result.stdout,
        ).toBe("done\n");
        expect(await ok(tight, "get_job_logs", { job_id: fails_.job_id })).toMatchObject({
          stdout: "",
          stderr: "oops\n",
        });
      }, 180_000);

      it("answers unknown jobs with JOB_NOT_FOUND from each job tool", async () => {
        for (const tool of ["check_job_status", "get_job_logs", "cancel_job"]) {
          await fails(roomy, tool, { job_id: "no-such-job" }, /^JOB_NOT_FOUND: no job with id/);
        }
      });
    });

    describe("images and displays", () => {
      it("returns written and displayed images, HTML and JSON displays, from a run and from a job", async () => {
        const sandbox_id = (await ok(roomy, "create_sandbox", { language: "python" })).sandbox_id;
        const code = [
          "import base64",
          `open('plot.png', 'wb').write(base64.b64decode('${b64(RED)}'))`,
          `open('shape.svg', 'w').write('<svg xmlns="http://www.w3.org/2000/svg"/>')`,
          `display(base64.b64decode('${b64(BLUE)}'))`,
          "class Table:",
          "    def _repr_html_(self):",
          "        return '<table><tr><td>1</td></tr></table>'",
          "    def __repr__(self):",
          "        return 'Table(1 row)'",
          "display(Table(), {'a': [1, 2]})",
        ].join("\n");
        const r = await ask(roomy, "execute_code", { sandbox_id, code });
        expect(r.isError, text(r)).toBeFalsy();
        const run = r.structuredContent!;
        expect(run.status).toBe("ok");
        expect(run.files_changed.sort()).toEqual(["plot.png", "shape.svg"]);
        expect(run.images).toHaveLength(3);
        expect(run.images).toEqual(
          expect.arrayContaining([
            { mime_type: "image/png", path: null, size: BLUE.length },
            { mime_type: "image/png", path: "plot.png", size: RED.length },
            { mime_type: "image/svg+xml", path: "shape.svg", size: 41 },
          ]),
        );
        expect(run.displays).toEqual([
          {
            mime_type: "text/html",
            text: "Table(1 row)",
            data: "<table><tr><td>1</td></tr></table>",
          },
          {
            mime_type: "application/json",
            text: '{\n  "a": [\n    1,\n    2\n  ]\n}',
            data: '{\n  "a": [\n    1,\n    2\n  ]\n}',
          },
        ]);
        // PNGs are attached as image content, byte for byte; SVG stays a file to read.
        const attached = r.content.filter((c) => c.type === "image");
        expect(attached.map((c) => c.mimeType)).toEqual(["image/png", "image/png"]);
        expect(attached.map((c) => c.data).sort()).toEqual([b64(RED), b64(BLUE)].sort());

        const job = await ok(roomy, "execute_code", {
          sandbox_id,
          code: `display(base64.b64decode('${b64(GREEN)}'))`,
          async: true,
        });
        await finished(roomy, job.job_id);
        const done = await ask(roomy, "check_job_status", { job_id: job.job_id });
        expect(done.structuredContent).toMatchObject({
          status: "completed",
          result: { images: [{ mime_type: "image/png", path: null, size: GREEN.length }] },
        });
        expect(done.content.filter((c) => c.type === "image").map((c) => c.data)).toEqual([
          b64(GREEN),
        ]);

        const image = await ask(roomy, "read_file", { sandbox_id, path: "plot.png" });
        expect(image.structuredContent).toEqual({
          path: "plot.png",
          size: RED.length,
          mime_type: "image/png",
          encoding: "base64",
          content: b64(RED),
        });
        expect(image.content.filter((c) => c.type === "image").map((c) => c.data)).toEqual([
          b64(RED),
        ]);
        expect(await ok(roomy, "read_file", { sandbox_id, path: "shape.svg" })).toMatchObject({
          mime_type: "image/svg+xml",
          content: '<svg xmlns="http://www.w3.org/2000/svg"/>',
        });

        // The same sandbox's Python takes a package from the server's wheel directory.
        expect(
          await ok(roomy, "install_package", { sandbox_id, package_name: "polybox-every-answer" }),
        ).toEqual({ sandbox_id, installed: ["polybox-every-answer"] });
        expect(
          await ok(roomy, "execute_python", {
            sandbox_id,
            code: "import polybox_every_answer\npolybox_every_answer.greet('mcp')",
          }),
        ).toMatchObject({ status: "ok", value: "'hello mcp'" });
        await fails(
          roomy,
          "install_package",
          { sandbox_id, packages: ["no-such-dist-xyz"] },
          /^PACKAGE_NOT_FOUND: .*no-such-dist-xyz/,
        );
        await ok(roomy, "close_sandbox", { sandbox_id });
      }, 120_000);

      it("leaves out what passes --max-response, with notes that say so", async () => {
        const big = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
        const r = await ask(tight, "execute_javascript", {
          code: `display({ a: "x".repeat(30000) });\nrequire("fs").writeFileSync("big.png", new Uint8Array([${big}, ...new Array(30000).fill(1)]))`,
        });
        expect(r.isError, text(r)).toBeFalsy();
        expect(r.structuredContent).toMatchObject({
          status: "ok",
          images: [{ mime_type: "image/png", path: "big.png", size: 30008 }],
          displays: [],
        });
        expect(r.structuredContent?.notes).toEqual([
          expect.stringMatching(/^image big\.png .* was not attached: .*--max-response/),
          expect.stringMatching(/^display 1 \(application\/json, .*\) was left out/),
        ]);
        expect(r.content.filter((c) => c.type === "image")).toEqual([]);
      });
    });

    describe.runIf(nativeUsable)("native sandboxes", () => {
      it("runs each native language, and refuses one it lacks", async () => {
        const created = await ok(roomy, "create_sandbox", { engine: "native", language: "python" });
        const sandbox_id = created.sandbox_id;
        expect(created.sandbox).toMatchObject({ engine: "native", default_language: "python" });
        expect(
          await ok(roomy, "execute_code", { sandbox_id, code: "import sys\nsys.version_info[0]" }),
        ).toMatchObject({ status: "ok", value: "3", sandbox_id });
        expect(
          await ok(roomy, "execute_javascript", {
            sandbox_id,
            code: "console.log(typeof process.versions.node); 6 * 7",
          }),
        ).toMatchObject({ status: "ok", stdout: "string\n", value: "42" });
        expect(
          await ok(roomy, "execute_code", {
            sandbox_id,
            language: "typescript",
            code: "const n: number = 42;\nconsole.log(n)",
          }),
        ).toMatchObject({ status: "ok", stdout: "42\n" });
        expect(
          await ok(roomy, "execute_bash", { sandbox_id, code: "echo $BASH_VERSION; exit 2" }),
        ).toMatchObject({
          status: "error",
          exit_code: 2,
          stdout: expect.stringMatching(/^\d+\.\d+/),
        });
        await fails(
          roomy,
          "execute_code",
          { sandbox_id, language: "ruby", code: "puts 1" },
          /^UNSUPPORTED_LANGUAGE: ruby runs only in the WebAssembly engines/,
        );
        const status = await ok(roomy, "get_sandbox_status", { sandbox_id });
        expect(status.sandboxes).toEqual([
          expect.objectContaining({
            sandbox_id,
            engine: "native",
            languages: expect.arrayContaining(["python", "javascript", "typescript", "bash"]),
          }),
        ]);
        await ok(roomy, "close_sandbox", { sandbox_id });
      });
    });

    describe("files", () => {
      it("writes, lists, reads and uploads text and binary files", async () => {
        const sandbox_id = (await ok(roomy, "create_sandbox", {})).sandbox_id;
        expect(
          await ok(roomy, "write_file", {
            sandbox_id,
            path: "dir/sub/note.txt",
            content: "héllo\n",
          }),
        ).toEqual({ path: "dir/sub/note.txt", size: 7 });
        expect(
          await ok(roomy, "write_file", {
            sandbox_id,
            path: "bin/all.bin",
            content: b64(ALL_BYTES),
            encoding: "base64",
          }),
        ).toEqual({ path: "bin/all.bin", size: 256 });
        expect(
          await ok(roomy, "upload_file", { sandbox_id, local_path: path.join(uploads, "all.bin") }),
        ).toEqual({ path: "all.bin", size: 256 });
        expect(
          await ok(roomy, "upload_file", {
            sandbox_id,
            local_path: path.join(uploads, "data.csv"),
            path: "in/data.csv",
          }),
        ).toEqual({ path: "in/data.csv", size: 8 });

        const all = (await ok(roomy, "list_files", { sandbox_id })).files;
        expect(all.map((f: { path: string; type: string }) => [f.path, f.type])).toEqual(
          expect.arrayContaining([
            ["all.bin", "file"],
            ["bin", "directory"],
            ["bin/all.bin", "file"],
            ["dir", "directory"],
            ["dir/sub", "directory"],
            ["dir/sub/note.txt", "file"],
            ["in", "directory"],
            ["in/data.csv", "file"],
          ]),
        );
        expect(all).toHaveLength(8);
        expect((await ok(roomy, "list_files", { sandbox_id, path: "dir" })).files).toEqual([
          expect.objectContaining({ path: "dir/sub", type: "directory" }),
          expect.objectContaining({ path: "dir/sub/note.txt", type: "file", size: 7 }),
        ]);

        expect(await ok(roomy, "read_file", { sandbox_id, path: "dir/sub/note.txt" })).toEqual({
          path: "dir/sub/note.txt",
          size: 7,
          mime_type: "text/plain",
          encoding: "utf8",
          content: "héllo\n",
        });
        for (const p of ["bin/all.bin", "all.bin"]) {
          const r = await ok(roomy, "read_file", { sandbox_id, path: p });
          expect(r).toMatchObject({ path: p, size: 256, encoding: "base64" });
          expect(Buffer.from(r.content, "base64").equals(ALL_BYTES)).toBe(true);
        }
        expect(await ok(roomy, "read_file", { sandbox_id, path: "in/data.csv" })).toMatchObject({
          encoding: "utf8",
          content: "a,b\n1,2\n",
        });
        // The guest sees the same bytes the tools wrote.
        expect(
          await ok(roomy, "execute_bash", {
            sandbox_id,
            code: "cmp bin/all.bin all.bin && echo same",
          }),
        ).toMatchObject({ status: "ok", stdout: "same\n" });
        await ok(roomy, "close_sandbox", { sandbox_id });
      });
    });

    describe("snapshots", () => {
      it("snapshots, restores, forks, lists and deletes, and refuses unknown snapshots", async () => {
        const sandbox_id = (await ok(roomy, "create_sandbox", {})).sandbox_id;
        await ok(roomy, "write_file", { sandbox_id, path: "a.txt", content: "one\n" });
        const taken = await ok(roomy, "snapshot_sandbox", { sandbox_id, label: "first" });
        expect(taken.snapshot).toMatchObject({ label: "first", sandbox_id, files: 1, bytes: 4 });
        const snapshot_id = taken.snapshot_id;

        await ok(roomy, "write_file", { sandbox_id, path: "a.txt", content: "two\n" });
        expect(await ok(roomy, "restore_sandbox", { sandbox_id, snapshot_id })).toMatchObject({
          sandbox_id,
          snapshot: { snapshot_id },
        });
        expect(await ok(roomy, "read_file", { sandbox_id, path: "a.txt" })).toMatchObject({
          content: "one\n",
        });

        const fork = await ok(roomy, "fork_sandbox", { snapshot_id });
        expect(fork.sandbox_id).not.toBe(sandbox_id);
        expect(
          await ok(roomy, "read_file", { sandbox_id: fork.sandbox_id, path: "a.txt" }),
        ).toMatchObject({
          content: "one\n",
        });
        const listed = await ok(roomy, "list_snapshots", { sandbox_id });
        expect(listed.snapshots.map((s: { snapshot_id: string }) => s.snapshot_id)).toEqual([
          snapshot_id,
        ]);
        expect(await ok(roomy, "delete_snapshot", { snapshot_id })).toEqual({
          snapshot_id,
          deleted: true,
        });

        const gone = /^SNAPSHOT_NOT_FOUND: /;
        await fails(roomy, "restore_sandbox", { sandbox_id, snapshot_id }, gone);
        await fails(roomy, "fork_sandbox", { snapshot_id }, gone);
        await fails(roomy, "delete_snapshot", { snapshot_id }, gone);
        await fails(
          roomy,
          "snapshot_sandbox",
          { sandbox_id: "sb_missing" },
          /^SANDBOX_NOT_FOUND: /,
        );
        await fails(roomy, "list_snapshots", { sandbox_id: "sb_missing" }, /^SANDBOX_NOT_FOUND: /);
        await ok(roomy, "close_sandbox", { sandbox_id: fork.sandbox_id });
        await ok(roomy, "close_sandbox", { sandbox_id });
      });
    });

    describe("error paths", () => {
      it("refuses arguments outside each tool's input schema as input errors", async () => {
        const { tools } = await roomy.client.listTools();
        for (const tool of tools) {
          await invalidInput(
            roomy,
            tool.name,
            { no_such_argument: 1 },
            /unknown argument "no_such_argument"/,
          );
        }
        await invalidInput(roomy, "execute_python", { code: 42 }, /expected string.*at code/);
        await invalidInput(roomy, "execute_python", {}, /at code/);
        await invalidInput(roomy, "execute_bash", { code: "ls", async: "yes" }, /expected boolean/);
        await invalidInput(
          roomy,
          "execute_python",
          { code: "1", timeout_seconds: 100_000 },
          /timeout_seconds/,
        );
        await invalidInput(roomy, "create_sandbox", { memory_mb: 1_000_000 }, /memory_mb/);
        await invalidInput(roomy, "create_sandbox", { engine: "docker" }, /engine/);
        await invalidInput(
          roomy,
          "create_run_close",
          { language: "cobol", code: "x" },
          /expected one of/,
        );
        await invalidInput(
          roomy,
          "write_file",
          { sandbox_id: "x", path: "a", content: "x", encoding: "hex" },
          /encoding/,
        );
        // Not a tool at all: a protocol error with the same code, naming the tool.
        await expect(call(roomy.client, "execute_cobol", { code: "x" })).rejects.toMatchObject({
          code: -32602,
          message: expect.stringMatching(/unknown tool "execute_cobol"/),
        });
      });

      it("answers an unknown, and a closed, sandbox from every tool that takes one", async () => {
        const closed = (await ok(roomy, "create_sandbox", {})).sandbox_id;
        await ok(roomy, "close_sandbox", { sandbox_id: closed });
        const uses: [string, Record<string, unknown>][] = [
          ["execute_python", { code: "1" }],
          ["execute_javascript", { code: "1" }],
          ["execute_bash", { code: "true" }],
          ["execute_code", { language: "bash", code: "true" }],
          ["execute_code", { language: "bash", code: "true", async: true }],
          ["close_sandbox", {}],
          ["get_sandbox_status", {}],
          ["install_package", { package_name: "polybox-every-answer" }],
          ["list_files", {}],
          ["read_file", { path: "a.txt" }],
          ["write_file", { path: "a.txt", content: "x" }],
          ["upload_file", { local_path: path.join(uploads, "data.csv") }],
        ];
        for (const [tool, args] of uses) {
          await fails(
            roomy,
            tool,
            { ...args, sandbox_id: "00000000-0000-0000-0000-000000000000" },
            /^SANDBOX_NOT_FOUND: no sandbox with id "00000000-0000-0000-0000-000000000000"/,
          );
          await fails(
            roomy,
            tool,
            { ...args, sandbox_id: closed },
            /^SANDBOX_NOT_FOUND: sandbox .* no longer exists: it was closed/,
          );
        }
      });

      it("refuses paths outside the workspace, missing files, and hosts files outside the grant", async () => {
        const sandbox_id = (await ok(roomy, "create_sandbox", {})).sandbox_id;
        const outside = /^PATH_OUTSIDE_WORKSPACE: /;
        await fails(roomy, "read_file", { sandbox_id, path: "../../etc/passwd" }, outside);
        await fails(roomy, "write_file", { sandbox_id, path: "/etc/evil", content: "x" }, outside);
        await fails(roomy, "list_files", { sandbox_id, path: "../" }, outside);
        await fails(
          roomy,
          "upload_file",
          { sandbox_id, local_path: path.join(uploads, "data.csv"), path: "../x.csv" },
          outside,
        );
        await fails(roomy, "execute_python", { code: "1", files: { "../x.txt": "x" } }, outside);
        await fails(roomy, "read_file", { sandbox_id, path: "missing.txt" }, /^FILE_NOT_FOUND: /);
        await fails(roomy, "list_files", { sandbox_id, path: "missing" }, /^FILE_NOT_FOUND: /);
        await ok(roomy, "write_file", { sandbox_id, path: "d/f.txt", content: "x" });
        await fails(roomy, "read_file", { sandbox_id, path: "d" }, /^NOT_A_FILE: /);
        await fails(
          roomy,
          "upload_file",
          { sandbox_id, local_path: path.join(host, "secret.txt") },
          /^PERMISSION_DENIED: .*--allow-read/,
        );
        await fails(
          roomy,
          "upload_file",
          { sandbox_id, local_path: path.join(uploads, "missing.csv") },
          /^FILE_NOT_FOUND: /,
        );
        await fails(
          roomy,
          "write_file",
          { sandbox_id, path: "x.bin", content: "not base64!", encoding: "base64" },
          /^INVALID_ARGUMENT: .*not valid base64/,
        );
        await fails(
          roomy,
          "create_run_close",
          { language: "bash", code: "echo ran", files: { "x.bin": { base64: "???" } } },
          /^INVALID_ARGUMENT: files\["x\.bin"\]\.base64 is not valid base64/,
        );
        await fails(
          roomy,
          "install_package",
          { sandbox_id },
          /^INVALID_ARGUMENT: give exactly one of package_name/,
        );
        await fails(
          roomy,
          "execute_code",
          { sandbox_id, code: "1" },
          /^INVALID_ARGUMENT: sandbox .* has no default language/,
        );
        await ok(roomy, "close_sandbox", { sandbox_id });
      });

      it("refuses what passes the tight server's limits: quota, code size, response size, sandbox count", async () => {
        const created = await ok(tight, "create_sandbox", {});
        expect(created.sandbox.expires_at).toBeNull();
        const a = created.sandbox_id;
        await fails(
          tight,
          "write_file",
          { sandbox_id: a, path: "big.txt", content: "x".repeat(2 * 1024 * 1024) },
          /^QUOTA_EXCEEDED: .*workspaceQuotaBytes=1048576/,
        );
        await fails(
          tight,
          "execute_code",
          { sandbox_id: a, language: "bash", code: "true", files: { "big.txt": "x".repeat(2e6) } },
          /^QUOTA_EXCEEDED: /,
        );
        await fails(
          tight,
          "execute_javascript",
          { code: `// ${"x".repeat(9000)}` },
          /^CODE_TOO_LARGE: .*maxCodeBytes=8192/,
        );
        // A text file that fits the workspace but not one answer.
        await ok(tight, "write_file", {
          sandbox_id: a,
          path: "mid.txt",
          content: "y".repeat(20_000),
        });
        await fails(
          tight,
          "read_file",
          { sandbox_id: a, path: "mid.txt" },
          /^INVALID_ARGUMENT: .*over the response limit .*--max-response/,
        );
        // An answer over --max-response is cut, text first, and its structured content still
        // validates; one that cannot be cut enough is a RESPONSE_TOO_LARGE refusal.
        const both = await ask(tight, "execute_code", {
          sandbox_id: a,
          language: "javascript",
          code: "console.log('o'.repeat(3900)); console.error('e'.repeat(3900))",
        });
        expect(both.structuredContent).toMatchObject({
          status: "ok",
          stdout: `${"o".repeat(3900)}\n`,
          stderr: `${"e".repeat(3900)}\n`,
        });
        expect(text(both)).toMatch(/\[cut: this answer was over the 16 KiB response limit/);
        await ok(tight, "execute_code", {
          sandbox_id: a,
          language: "bash",
          code: "mkdir many && for i in $(seq 250); do : > many/file-number-$i.txt; done",
        });
        await fails(tight, "list_files", { sandbox_id: a }, /^RESPONSE_TOO_LARGE: /);
        // Limits a sandbox asks for stay within the server's.
        await invalidInput(tight, "create_sandbox", { memory_mb: 256 }, /memory_mb/);
        await invalidInput(
          tight,
          "create_sandbox",
          { workspace_quota_mb: 2 },
          /workspace_quota_mb/,
        );

        const b = await ok(tight, "create_sandbox", {
          language: "javascript",
          timeout_seconds: 5,
          memory_mb: 64,
          max_output_bytes: 100,
          workspace_quota_mb: 0.5,
        });
        expect(b.sandbox.limits).toEqual({
          timeout_ms: 5000,
          memory_mb: 64,
          max_output_bytes: 100,
          workspace_quota_bytes: 512 * 1024,
        });
        await fails(tight, "create_sandbox", {}, /^TOO_MANY_SANDBOXES: .*close_sandbox/);
        const listed = await ok(tight, "get_sandbox_status", {});
        expect(listed).toMatchObject({ max_sandboxes: 2, concurrency: 1 });
        expect(listed.sandboxes.map((s: { sandbox_id: string }) => s.sandbox_id).sort()).toEqual(
          [a, b.sandbox_id].sort(),
        );
        await ok(tight, "close_sandbox", { sandbox_id: a });
        await ok(tight, "close_sandbox", { sandbox_id: b.sandbox_id });
      });
    });

    it("heard a successful answer, and a refusal, from every tool the server lists", async () => {
      // Runs last: a tool added to the server without a case in this suite fails here.
      const { tools } = await roomy.client.listTools();
      const names = tools.map((t) => t.name).sort();
      expect(names.filter((n) => !answered.has(n))).toEqual([]);
      expect(names.filter((n) => !refused.has(n))).toEqual([]);
    });
  },
);

// End to end over stdio: every kind of bad input gets `isError: true` with a message that says
// what was wrong and what is allowed — and the server answers the next call as if nothing
// happened. Also upload_file's --allow-read grant, including a symlink that points outside it.
// (A tool the server does not have is a protocol error instead: see tool-metadata.test.ts.)

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";

let server: McpHandle;
let sandbox: string;
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-mcp-"));
const allowed = path.join(tmp, "allowed");

beforeAll(async () => {
  mkdirSync(allowed);
  mkdirSync(path.join(tmp, "outside"));
  writeFileSync(path.join(allowed, "ok.csv"), "a,b\n1,2\n");
  writeFileSync(path.join(tmp, "outside", "secret.txt"), "secret");
  symlinkSync(path.join(tmp, "outside", "secret.txt"), path.join(allowed, "sneaky.txt"));
  server = await stdioServer(["--max-code=1K", `--allow-read=${allowed}`]);
  sandbox = (await call(server.client, "create_sandbox", {})).structuredContent?.sandbox_id;
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
  rmSync(tmp, { recursive: true, force: true });
});

/** The call is refused with a message matching `pattern`, and the server still works after it. */
async function refused(
  tool: string,
  args: Record<string, unknown>,
  pattern: RegExp,
): Promise<void> {
  const r = await call(server.client, tool, args);
  expect(r.isError, `${tool} ${JSON.stringify(args)} → ${text(r)}`).toBe(true);
  expect(text(r)).toMatch(pattern);
  const next = await call(server.client, "execute_javascript", {
    code: "console.log('still here')",
  });
  expect(next.structuredContent?.stdout).toBe("still here\n");
}

describe("bad input is an isError result, and the server carries on", () => {
  it("unknown argument: refused, listing the accepted ones", () =>
    refused(
      "execute_python",
      { code: "1", timeout: 5 },
      /unknown argument "timeout"; this tool accepts: code, sandbox_id, timeout_seconds, files, async/,
    ));

  it("wrong types", async () => {
    await refused("execute_python", { code: 42 }, /expected string, received number at code/);
    await refused("execute_bash", { code: "ls", async: "yes" }, /expected boolean/);
    await refused(
      "write_file",
      { sandbox_id: sandbox, path: "a", content: { text: "x" } },
      /expected string/,
    );
    await refused("execute_python", {}, /expected string, received undefined at code/);
  });

  it("out-of-range and malformed values", async () => {
    await refused("execute_python", { code: "1", timeout_seconds: 100_000 }, /timeout_seconds/);
    await refused(
      "write_file",
      { sandbox_id: sandbox, path: "x.bin", content: "not base64!", encoding: "base64" },
      /not valid base64/,
    );
    await refused(
      "install_package",
      { sandbox_id: sandbox },
      /exactly one of package_name .* or packages/,
    );
  });

  it("unknown sandbox", () =>
    refused(
      "list_files",
      { sandbox_id: "00000000-0000-0000-0000-000000000000" },
      /^SANDBOX_NOT_FOUND: no sandbox with id/,
    ));

  it("unknown job", () => refused("get_job_logs", { job_id: "nope" }, /^JOB_NOT_FOUND/));

  it("paths that leave the workspace", async () => {
    await refused(
      "read_file",
      { sandbox_id: sandbox, path: "../../etc/passwd" },
      /^PATH_OUTSIDE_WORKSPACE: .*climbs out of the workspace/,
    );
    await refused(
      "write_file",
      { sandbox_id: sandbox, path: "/etc/evil", content: "x" },
      /^PATH_OUTSIDE_WORKSPACE: .*under \/workspace\//,
    );
    await refused(
      "execute_python",
      { code: "1", files: { "../x.txt": "x" } },
      /^PATH_OUTSIDE_WORKSPACE/,
    );
    await refused("read_file", { sandbox_id: sandbox, path: "missing.txt" }, /^FILE_NOT_FOUND/);
  });

  it("code over --max-code", () =>
    refused(
      "execute_python",
      { code: `# ${"x".repeat(2000)}` },
      /^CODE_TOO_LARGE: code is 2002 bytes, over the limit maxCodeBytes=1024/,
    ));

  it("unsupported language", () =>
    refused(
      "create_run_close",
      { code: "print 1", language: "perl" },
      /expected one of .*"python".*"bash".*"ruby"/,
    ));

  it("a package no source has", () =>
    refused(
      "install_package",
      { sandbox_id: sandbox, package_name: "surely-not-a-package-xyz" },
      /^PACKAGE_NOT_FOUND: .*surely-not-a-package-xyz/,
    ));
});

describe("upload_file under --allow-read", () => {
  it("copies a file from a granted directory", async () => {
    const r = await call(server.client, "upload_file", {
      sandbox_id: sandbox,
      local_path: path.join(allowed, "ok.csv"),
      path: "in/data.csv",
    });
    expect(r.structuredContent).toEqual({ path: "in/data.csv", size: 8 });
    const read = await call(server.client, "execute_bash", {
      sandbox_id: sandbox,
      code: "cat in/data.csv",
    });
    expect(read.structuredContent?.stdout).toBe("a,b\n1,2\n");
  });

  it("refuses a path outside the grant, naming the flag", () =>
    refused(
      "upload_file",
      { sandbox_id: sandbox, local_path: path.join(tmp, "outside", "secret.txt") },
      /^PERMISSION_DENIED: .*only files under the granted read paths \(permissions.read\).*--allow-read/,
    ));

  it("refuses a symlink inside the grant that points outside it", () =>
    refused(
      "upload_file",
      { sandbox_id: sandbox, local_path: path.join(allowed, "sneaky.txt") },
      /^PERMISSION_DENIED: .*resolves to .*outside every granted path/,
    ));

  it("refuses climbing out with ..", () =>
    refused(
      "upload_file",
      { sandbox_id: sandbox, local_path: `${allowed}/../outside/secret.txt` },
      /^PERMISSION_DENIED/,
    ));
});

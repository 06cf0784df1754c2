// What a client learns about each tool before calling it: a title, all four behaviour hints
// (readOnly, destructive, idempotent, openWorld), and a fixed order. Listed through the SDK's
// Client over stdio, and checked against README's tool table, which shows the same hints. Also:
// a call naming a tool the server does not have is a protocol error, as the spec asks.

import { readFileSync } from "node:fs";
import path from "node:path";
import { ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_NAMES, TOOLS } from "../../dist/mcp/tool-names.js";
import { type McpHandle, stdioServer } from "../helpers/mcp-client.js";

/** The documented order: running code, a sandbox's lifecycle, its files, snapshots, async jobs. */
const ORDER = [
  "execute_python",
  "execute_javascript",
  "execute_bash",
  "execute_code",
  "create_run_close",
  "create_sandbox",
  "get_sandbox_status",
  "install_package",
  "close_sandbox",
  "list_files",
  "read_file",
  "write_file",
  "upload_file",
  "snapshot_sandbox",
  "restore_sandbox",
  "fork_sandbox",
  "list_snapshots",
  "delete_snapshot",
  "check_job_status",
  "get_job_logs",
  "cancel_job",
];

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

// `plain` refuses package downloads (--cached-only); `packaged` is the default, where the
// server downloads Python packages; `networked` also grants guests a host (--allow-net).
// Nothing here installs a package or makes a request.
let plain: McpHandle;
let packaged: McpHandle;
let networked: McpHandle;
let tools: Tool[];
let packagedTools: Tool[];
let networkedTools: Tool[];

beforeAll(async () => {
  [plain, packaged, networked] = await Promise.all([
    stdioServer(["--cached-only"]),
    stdioServer(),
    stdioServer(["--allow-net=example.com"]),
  ]);
  tools = (await plain.client.listTools()).tools;
  packagedTools = (await packaged.client.listTools()).tools;
  networkedTools = (await networked.client.listTools()).tools;
});

afterAll(async () => {
  expect(await plain.close()).toEqual({ code: 0, signal: null });
  expect(await packaged.close()).toEqual({ code: 0, signal: null });
  expect(await networked.close()).toEqual({ code: 0, signal: null });
});

const byName = (list: Tool[], name: string): Tool => {
  const found = list.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe("tools/list", () => {
  it("gives every tool in the documented order", () => {
    expect(tools.map((t) => t.name)).toEqual(ORDER);
    expect(networkedTools.map((t) => t.name)).toEqual(ORDER);
    // The table --tools is checked against and the cluster's router routes by.
    expect(TOOL_NAMES).toEqual(ORDER);
  });

  it("has the router's run tools be exactly the tools that may run as tasks", () => {
    const tasks = tools.filter((t) => t.execution?.taskSupport === "optional").map((t) => t.name);
    expect(tasks).toEqual(TOOLS.run);
    expect(TOOLS.job).toEqual(["check_job_status", "get_job_logs", "cancel_job"]);
  });

  it("gives every tool a title, also in its annotations, and sets all four hints", () => {
    for (const t of [...tools, ...networkedTools]) {
      expect(t.title, t.name).toMatch(/\S/);
      expect(t.annotations?.title, t.name).toBe(t.title);
      for (const hint of HINTS)
        expect(typeof t.annotations?.[hint], `${t.name} ${hint}`).toBe("boolean");
    }
  });

  it("marks exactly the status, list, read and log tools read-only", () => {
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual([
      "get_sandbox_status",
      "list_files",
      "read_file",
      "list_snapshots",
      "check_job_status",
      "get_job_logs",
    ]);
  });

  it("marks the tools that can destroy data destructive, and only them", () => {
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
    expect(destructive).toEqual([
      // With a sandbox_id, the code may delete or overwrite the sandbox's files.
      "execute_python",
      "execute_javascript",
      "execute_bash",
      "execute_code",
      "close_sandbox",
      "write_file",
      "upload_file",
      // Puts the files back as the snapshot has them: what was written since is gone.
      "restore_sandbox",
      "delete_snapshot",
      "cancel_job",
    ]);
    expect(byName(tools, "create_run_close").annotations?.destructiveHint).toBe(false);
    expect(byName(tools, "install_package").annotations?.destructiveHint).toBe(false);
  });

  it("spot checks: idempotent where a repeat changes nothing more", () => {
    const idempotent = (name: string) => byName(tools, name).annotations?.idempotentHint;
    expect(idempotent("create_sandbox")).toBe(false);
    expect(idempotent("execute_code")).toBe(false);
    expect(idempotent("close_sandbox")).toBe(true);
    expect(idempotent("write_file")).toBe(true);
    expect(idempotent("install_package")).toBe(true);
    expect(idempotent("cancel_job")).toBe(true);
  });

  it("is open world only where packages or guest code may reach the network", () => {
    expect(tools.filter((t) => t.annotations?.openWorldHint)).toEqual([]);
    // By default the server downloads Python packages: a Python run installs what its imports
    // name, as install_package does.
    expect(packagedTools.filter((t) => t.annotations?.openWorldHint).map((t) => t.name)).toEqual([
      "execute_python",
      "execute_code",
      "create_run_close",
      "install_package",
    ]);
    const open = networkedTools.filter((t) => t.annotations?.openWorldHint).map((t) => t.name);
    // With a grant, guest code in every language reaches the granted hosts.
    expect(open).toEqual([
      "execute_python",
      "execute_javascript",
      "execute_bash",
      "execute_code",
      "create_run_close",
      "install_package",
    ]);
  });
});

describe("README's tool table", () => {
  const readme = readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Tools"), readme.indexOf("### Python packages"));
  const rows = section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split(" | ");
      return { names: [...cells[0]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!), hints: cells.at(-1)! };
    });

  it("lists the tools in the order tools/list gives them", () => {
    expect(rows.flatMap((r) => r.names)).toEqual(ORDER);
  });

  it("shows each tool's hints as the server sets them", () => {
    for (const { names, hints } of rows) {
      // "open world unless `--cached-only` (`execute_python`)": by default, only the tools named
      // (all of the row's when none are); "and with `--allow-net`": all of them given a grant.
      const unless = /open world unless `--cached-only`(?: \(([^)]*)\))?/.exec(hints);
      const unlessNames = unless?.[1]
        ? [...unless[1].matchAll(/`(\w+)`/g)].map((m) => m[1])
        : unless
          ? names
          : [];
      const withGrant = /with `--allow-net`/.test(hints);
      for (const name of names) {
        const readOnly = /read-only/.test(hints);
        const expected = {
          readOnlyHint: readOnly,
          destructiveHint: /destructive/.test(hints),
          // Read-only implies idempotent.
          idempotentHint: readOnly || /idempotent/.test(hints),
          openWorldHint: false,
        };
        expect(byName(tools, name).annotations, name).toMatchObject(expected);
        expect(byName(packagedTools, name).annotations, name).toMatchObject({
          ...expected,
          openWorldHint: unlessNames.includes(name),
        });
        expect(byName(networkedTools, name).annotations, name).toMatchObject({
          ...expected,
          openWorldHint: unlessNames.includes(name) || withGrant,
        });
      }
    }
  });
});

describe("a tool the server does not have", () => {
  it("is a JSON-RPC error -32602 naming the tools there are, and the server carries on", async () => {
    const error = await plain.client
      .callTool({ name: "execute_cobol", arguments: { code: "x" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toMatch(/unknown tool "execute_cobol".*execute_python/);
    expect((error as McpError).message).not.toMatch(/MCP error.*MCP error/);
    const next = await plain.client.callTool({
      name: "execute_javascript",
      arguments: { code: "console.log('still here')" },
    });
    expect(next.structuredContent).toMatchObject({ stdout: "still here\n" });
  });

  it("is one left out with --tools, too", async () => {
    const only = await stdioServer(["--tools=execute_javascript"]);
    try {
      expect((await only.client.listTools()).tools.map((t) => t.name)).toEqual([
        "execute_javascript",
      ]);
      const error = await only.client
        .callTool({ name: "execute_python", arguments: { code: "1" } })
        .catch((e: unknown) => e);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    } finally {
      expect(await only.close()).toEqual({ code: 0, signal: null });
    }
  });
});

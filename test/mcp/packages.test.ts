// End to end over stdio: install_package from a local wheel directory granted with
// --python-packages, then the package imported in that sandbox; and the errors for a missing
// package, one not cached under --cached-only, a pin no source meets and a requirement that does
// not parse.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type McpHandle, stdioServer, text } from "../helpers/mcp-client.js";
import { buildWheel } from "../helpers/wheel.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-wheels-"));
let server: McpHandle;

beforeAll(async () => {
  const wheel = buildWheel(
    "polybox-mcp-demo",
    "1.0.0",
    "polybox_mcp_demo",
    "def greet(who):\n    return f'hello {who}'\n",
  );
  writeFileSync(path.join(dir, wheel.fileName), wheel.data);
  server = await stdioServer([`--python-packages=${dir}`]);
});

afterAll(async () => {
  expect(await server.close()).toEqual({ code: 0, signal: null });
  rmSync(dir, { recursive: true, force: true });
});

describe("install_package", () => {
  it("installs a wheel into one sandbox, where it imports", async () => {
    const sandbox_id = (await call(server.client, "create_sandbox", { language: "python" }))
      .structuredContent?.sandbox_id;
    const r = await call(server.client, "install_package", {
      sandbox_id,
      package_name: "polybox-mcp-demo",
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({ sandbox_id, installed: ["polybox-mcp-demo"] });
    const use = await call(server.client, "execute_code", {
      sandbox_id,
      code: "import polybox_mcp_demo\npolybox_mcp_demo.greet('mcp')",
    });
    expect(use.structuredContent?.value).toBe("'hello mcp'");
  });

  it("says which package was not found and where it looked", async () => {
    const sandbox_id = (await call(server.client, "create_sandbox", {})).structuredContent
      ?.sandbox_id;
    const r = await call(server.client, "install_package", {
      sandbox_id,
      packages: ["no-such-dist-abc"],
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^PACKAGE_NOT_FOUND: .*no-such-dist-abc.*polybox-wheels-/);
  });

  it("with --cached-only, names the package and how the operator fills the cache", async () => {
    const offline = await stdioServer(["--cached-only", "--pool=python=0"]);
    try {
      const sandbox_id = (await call(offline.client, "create_sandbox", {})).structuredContent
        ?.sandbox_id;
      const r = await call(offline.client, "install_package", {
        sandbox_id,
        package_name: "micropip",
      });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(
        /^PACKAGE_NOT_CACHED: Python package "micropip" is not in the package cache/,
      );
      expect(text(r)).toContain("polybox warmup --python-packages=micropip");
    } finally {
      expect(await offline.close()).toEqual({ code: 0, signal: null });
    }
  });

  it("refuses a pin no source meets and a requirement that does not parse", async () => {
    const sandbox_id = (await call(server.client, "create_sandbox", {})).structuredContent
      ?.sandbox_id;
    const pinned = await call(server.client, "install_package", {
      sandbox_id,
      package_name: "polybox-mcp-demo==2.0",
    });
    expect(pinned.isError).toBe(true);
    expect(text(pinned)).toMatch(/^PACKAGE_NOT_FOUND: .*polybox-mcp-demo.*==2\.0.*found 1\.0\.0/);
    const invalid = await call(server.client, "install_package", {
      sandbox_id,
      package_name: "not a valid ;; spec",
    });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(
      /^INVALID_ARGUMENT: "not a valid ;; spec" is not a valid requirement/,
    );
  });
});

// Unit tier: every path from outside goes through resolveWorkspacePath; engines' paths through
// isSafeRelativePath. Both must keep paths inside the workspace.
import { describe, expect, it } from "vitest";
import { resolveWorkspacePath } from "../../dist/core/sandbox/names.js";
import { isSafeRelativePath } from "../../dist/protocol/validate.js";

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return "no error";
};

describe("resolveWorkspacePath", () => {
  it("accepts relative paths and guest-absolute /workspace paths", () => {
    expect(resolveWorkspacePath("a/b.txt")).toBe("a/b.txt");
    expect(resolveWorkspacePath("./a//b/../c.txt")).toBe("a/c.txt");
    expect(resolveWorkspacePath("/workspace/data.csv")).toBe("data.csv");
    expect(resolveWorkspacePath("", { allowRoot: true })).toBe("");
  });

  it("rejects escapes with a stable code", () => {
    expect(code(() => resolveWorkspacePath("../etc/passwd"))).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(code(() => resolveWorkspacePath("a/../../x"))).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(code(() => resolveWorkspacePath("/etc/passwd"))).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(code(() => resolveWorkspacePath("/workspacex/a"))).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(code(() => resolveWorkspacePath("..\\..\\windows"))).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(code(() => resolveWorkspacePath("a\0b"))).toBe("INVALID_ARGUMENT");
    expect(code(() => resolveWorkspacePath(42))).toBe("INVALID_ARGUMENT");
    expect(code(() => resolveWorkspacePath("."))).toBe("INVALID_ARGUMENT");
  });

  it("isSafeRelativePath refuses anything an engine could use to climb out", () => {
    expect(isSafeRelativePath("a/b")).toBe(true);
    for (const bad of ["", "/a", "../a", "a/../b", "a//b", "a/./b", "a\\b", "a\0b", 7]) {
      expect(isSafeRelativePath(bad)).toBe(false);
    }
  });
});

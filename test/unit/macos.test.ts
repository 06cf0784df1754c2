// Unit tier: the macOS sandbox-exec profile (it cannot run here, so its text is what we check).
import { describe, expect, it } from "vitest";
import { engineHostProfile, sandboxExecWrapper } from "../../dist/supervisor/jail/macos.js";

describe("engine host sandbox-exec profile", () => {
  const profile = engineHostProfile("/private/tmp/polybox-host-abc", "/usr/local/bin/node");

  it("denies the network and all writes except the host's temp dir", () => {
    expect(profile).toMatch(/^\(version 1\)/);
    expect(profile).toContain("(deny network*)");
    expect(profile).toContain("(deny file-write*)");
    expect(profile).toContain('(allow file-write* (subpath "/private/tmp/polybox-host-abc"))');
    // Allows must come after the denies they narrow (later rules win in SBPL).
    expect(profile.indexOf("(deny file-write*)")).toBeLessThan(
      profile.indexOf("(allow file-write* (subpath"),
    );
  });

  it("lets sandbox-exec start node and nothing else", () => {
    expect(profile).toContain("(deny process-exec)");
    expect(profile).toContain('(allow process-exec (literal "/usr/local/bin/node"))');
    expect(profile).toContain("(deny process-fork)");
  });

  it("quotes paths so they cannot inject rules", () => {
    const evil = engineHostProfile('/tmp/x") (allow network*) ("', "/n");
    expect(evil).not.toMatch(/^\(allow network\*\)/m);
    expect(evil).toContain('(subpath "/tmp/x\\") (allow network*) (\\"")');
    expect(() => engineHostProfile("/tmp/a\nb", "/n")).toThrow();
  });

  it("wraps the host's command line", () => {
    const [cmd, args] = sandboxExecWrapper("/usr/bin/node", ["--permission", "main.js"], "/tmp/h");
    expect(cmd).toBe("/usr/bin/sandbox-exec");
    expect(args[0]).toBe("-p");
    expect(args.slice(2)).toEqual(["/usr/bin/node", "--permission", "main.js"]);
  });
});

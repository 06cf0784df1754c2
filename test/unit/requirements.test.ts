// Unit tier: reading Python requirements (PEP 508), choosing versions (PEP 440) and finding a
// PEP 723 block, without an engine. The end-to-end behaviour is in test/core/packages.test.ts.
import { describe, expect, it } from "vitest";
import { parseWheelName } from "../../dist/core/packages/packages.js";
import {
  importedModules,
  inlineDependencies,
  scriptMetadata,
} from "../../dist/core/packages/python-deps.js";
import { bestVersion, parseRequirement } from "../../dist/core/packages/requirements.js";

describe("parseRequirement", () => {
  it.each([
    ["numpy", { name: "numpy", specifier: "", extras: [] }],
    ["Six == 1.16.0", { name: "six", specifier: "==1.16.0", extras: [] }],
    ["  attrs>=23, <25 ", { name: "attrs", specifier: ">=23,<25", extras: [] }],
    ["Foo_Bar.baz (~=1.4)", { name: "foo-bar-baz", specifier: "~=1.4", extras: [] }],
    ["pkg[Extra_One, two]==1.*", { name: "pkg", specifier: "==1.*", extras: ["extra-one", "two"] }],
    ["pkg[]", { name: "pkg", specifier: "", extras: [] }],
    ["pkg===weird-1", { name: "pkg", specifier: "===weird-1", extras: [] }],
  ])("reads %j", (text, expected) => {
    expect(parseRequirement(text)).toMatchObject(expected);
  });

  it.each([
    ["not a valid ;; spec", /"a valid" is not a PEP 440 version specifier/],
    ["pkg==", /is not a PEP 440 version specifier/],
    ["pkg=>1", /is not a PEP 440 version specifier/],
    ["pkg==1.0 a1", /is not a PEP 440 version specifier/],
    ["pkg~=1", /is not a PEP 440 version specifier/],
    ["pkg[x", /not closed/],
    ["pkg[-x]", /extras/],
    ["pkg @ https://example.com/pkg.whl", /direct references/],
    ["pkg; os_name == 'posix'", /environment markers/],
    ["-pkg", /does not start with a package name/],
    ["pkg-", /does not start with a package name/],
    ["", /does not start with a package name/],
    ["a".repeat(1001), /longer than 1000 characters/],
  ])("refuses %j with INVALID_ARGUMENT", (text, why) => {
    expect(() => parseRequirement(text)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringMatching(why) }),
    );
  });
});

describe("bestVersion", () => {
  const versions = ["1.9", "1.10", "1.10.post1", "2.0rc1", "not-a-version"];
  it.each([
    ["", "1.10.post1"],
    ["<1.10", "1.9"],
    ["==1.10", "1.10"],
    ["~=1.9", "1.10.post1"],
    [">=2.0rc1", "2.0rc1"],
    [">1.10.post1", "2.0rc1"], // only a pre-release satisfies: it is taken, as pip does
    ["==3", null],
  ])("%j → %s", (specifier, expected) => {
    expect(bestVersion(versions, specifier)).toBe(expected);
  });
});

describe("parseWheelName", () => {
  it("reads name, version and whether the wheel is pure Python", () => {
    expect(parseWheelName("Foo_Bar-1.10-py3-none-any.whl")).toEqual({
      name: "foo-bar",
      version: "1.10",
      pure: true,
    });
    expect(parseWheelName("numpy-2.0.2-1-cp312-cp312-pyodide_2024_0_wasm32.whl")).toMatchObject({
      version: "2.0.2",
      pure: false,
    });
    expect(parseWheelName("pkg-1.0.tar.gz")).toBeNull();
    expect(parseWheelName("pkg-1.0-py3.whl")).toBeNull();
  });
});

describe("PEP 723 blocks", () => {
  it("follows the PEP's reference rules", () => {
    expect(scriptMetadata("print(1)")).toBeNull();
    expect(scriptMetadata("# /// script\n# a = 1\n#\n# b = 2\n# ///\nprint(1)")).toBe(
      "a = 1\n\nb = 2",
    );
    // The block ends at the last `# ///` of its run of comment lines.
    expect(scriptMetadata("# /// script\n# a = '''\n# ///\n# '''\n# ///\n")).toBe(
      "a = '''\n///\n'''",
    );
    // CRLF line ends; other block types are skipped; an unclosed block is no block.
    expect(
      scriptMetadata("# /// pyproject\r\n# x\r\n# ///\r\n\r\n# /// script\r\n# a = 1\r\n# ///"),
    ).toBe("a = 1");
    expect(scriptMetadata("# /// script\n# a = 1\nprint(1)")).toBeNull();
    expect(() => scriptMetadata("# /// script\n# ///\n\n# /// script\n# ///")).toThrow(
      /more than one/,
    );
  });

  it("keeps pins and reads TOML, comments and quoting included", () => {
    const code = [
      "# /// script",
      '# requires-python = ">=3.11"',
      "# dependencies = [",
      "#   'six==1.16.0',  # ] in a comment",
      '#   "attrs (>=23)",',
      "# ]",
      "# [tool.x]",
      '# dependencies = "not these"',
      "# ///",
    ].join("\n");
    expect(inlineDependencies(code)).toMatchObject([
      { name: "six", specifier: "==1.16.0" },
      { name: "attrs", specifier: ">=23" },
    ]);
    expect(() => inlineDependencies("# /// script\n# dependencies = [1]\n# ///")).toThrow(
      /list of strings/,
    );
    expect(() => inlineDependencies("# /// script\n# dependencies = [\n# ///")).toThrow(
      /not valid TOML/,
    );
  });
});

describe("importedModules", () => {
  it("finds the top-level modules of import statements that start a line", () => {
    const code = [
      "import a.b as c, d",
      "  from e.f import g",
      "from . import h",
      "from .i import j",
      "import k  # l, m",
      "importlib = 1",
      "fromage = 2",
      "\tfrom\tn\timport o",
    ].join("\n");
    expect([...importedModules(code)].sort()).toEqual(["a", "d", "e", "k", "n"]);
  });
});

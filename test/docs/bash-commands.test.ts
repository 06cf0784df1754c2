// The Bash commands polybox adds to just-bash or puts in place of its own are named in one table
// (src/guest/engines/bash/commands/registry.ts); docs/architecture.md lists that table. This
// checks that the list and the table agree, row for row, and that the table tells the truth
// about which of its commands just-bash has.
import { readFileSync } from "node:fs";
import { getCommandNames } from "just-bash";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../dist/guest/engines/bash/commands/registry.js";

const HEADING = "**Bash's commands: whose is which.**";

/** The rows of the first table after the heading: name, just-bash's, why. */
function documentedRows(): string[][] {
  const doc = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
  const start = doc.indexOf(HEADING);
  expect(start, "the section's heading").toBeGreaterThanOrEqual(0);
  const lines = doc.slice(start).split("\n");
  const first = lines.findIndex((line) => line.startsWith("| command |"));
  expect(first, "the section's table").toBeGreaterThan(0);
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe("the Bash commands list", () => {
  it("docs/architecture.md lists the registry's commands, with the same reasons", () => {
    const table = COMMANDS.map((c) => [`\`${c.name}\``, c.justBash, c.reason]);
    expect(documentedRows()).toEqual(table);
  });

  it("names each command once, in order", () => {
    const names = COMMANDS.map((c) => c.name);
    expect(names).toEqual([...new Set(names)].sort());
  });

  it("says which of its commands just-bash has", () => {
    const justBash = new Set(getCommandNames());
    for (const { name, justBash: status } of COMMANDS)
      expect(status === "none", `${name}: ${status}`).toBe(!justBash.has(name));
  });
});

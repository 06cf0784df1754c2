// Unit tier: the macOS Seatbelt profile (src/supervisor/jail/macos.ts), read the way sandbox-exec
// reads it. sandbox-exec cannot run here, so the profile is parsed as the SBPL subset Apple's
// profile language documents (S-expressions: `(version 1)`, `(allow|deny OPERATION... FILTER...)`
// with filters such as `literal`, `subpath`, `regex`, `require-any`, `require-all`), every
// operation is checked against the language's known names (an unknown one makes sandbox-exec
// refuse the whole profile, so no engine host would start), and the rules are evaluated as
// Seatbelt does (the last matching rule wins) against paths in both spellings of a symlinked
// prefix, as macOS's /var → /private/var.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { engineHostProfile } from "../../dist/supervisor/jail/macos.js";

type Sexp = string | { str: string } | Sexp[];

/** Reads SBPL text into forms: lists, symbols, and strings (with `\\` and `\"` escapes). */
function parse(text: string): Sexp[] {
  let i = 0;
  const skip = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
      if (text[i] !== ";") return;
      while (i < text.length && text[i] !== "\n") i++;
    }
  };
  const form = (): Sexp => {
    skip();
    const c = text[i];
    if (c === undefined) throw new Error("unexpected end of profile");
    if (c === "(") {
      i++;
      const list: Sexp[] = [];
      for (;;) {
        skip();
        if (text[i] === ")") {
          i++;
          return list;
        }
        if (i >= text.length) throw new Error("unclosed list");
        list.push(form());
      }
    }
    if (c === ")") throw new Error(`unexpected ")" at ${i}`);
    if (c === '"' || (c === "#" && text[i + 1] === '"')) {
      i += c === "#" ? 2 : 1;
      let str = "";
      for (;;) {
        const ch = text[i++];
        if (ch === undefined) throw new Error("unclosed string");
        if (ch === '"') return { str };
        if (ch === "\n") throw new Error("newline in a string");
        if (ch === "\\") {
          const next = text[i++];
          if (next !== "\\" && next !== '"') throw new Error(`unknown escape \\${next}`);
          str += next;
        } else str += ch;
      }
    }
    const start = i;
    while (i < text.length && !/[\s()";]/.test(text[i]!)) i++;
    return text.slice(start, i);
  };
  const forms: Sexp[] = [];
  for (skip(); i < text.length; skip()) forms.push(form());
  return forms;
}

/**
 * Operation names of the profile language (Apple's sandbox profile documentation and the
 * profiles macOS ships in /System/Library/Sandbox/Profiles), the ones polybox could use.
 */
const OPERATIONS = new Set([
  "default",
  "file*",
  "file-chroot",
  "file-ioctl",
  "file-read*",
  "file-read-data",
  "file-read-metadata",
  "file-read-xattr",
  "file-revoke",
  "file-write*",
  "file-write-create",
  "file-write-data",
  "file-write-flags",
  "file-write-mode",
  "file-write-mount",
  "file-write-owner",
  "file-write-setugid",
  "file-write-times",
  "file-write-unlink",
  "file-write-unmount",
  "file-write-xattr",
  "ipc*",
  "ipc-posix*",
  "ipc-posix-sem",
  "ipc-posix-shm",
  "ipc-sysv*",
  "mach*",
  "mach-lookup",
  "mach-register",
  "network*",
  "network-bind",
  "network-inbound",
  "network-outbound",
  "process*",
  "process-exec",
  "process-fork",
  "process-info*",
  "signal",
  "sysctl*",
  "sysctl-read",
  "sysctl-write",
  "system*",
  "system-socket",
  "iokit-open",
  "job-creation",
]);
const PATH_FILTERS = new Set(["literal", "subpath", "regex", "prefix"]);
const COMBINATORS = new Set(["require-any", "require-all", "require-not"]);

interface Filter {
  kind: string;
  args: (Filter | string)[];
}
interface Rule {
  action: "allow" | "deny";
  operations: string[];
  filters: Filter[];
}

/** The profile's rules, after checking its shape: version first, then rules only. */
function rulesOf(profile: string): Rule[] {
  const forms = parse(profile);
  expect(forms[0], "(version 1) comes first").toEqual(["version", "1"]);
  const filter = (f: Sexp): Filter => {
    if (!Array.isArray(f) || typeof f[0] !== "string") throw new Error(`not a filter: ${f}`);
    const [kind, ...rest] = f;
    if (PATH_FILTERS.has(kind)) {
      expect(rest, `${kind} takes one string`).toHaveLength(1);
      const arg = rest[0];
      if (typeof arg !== "object" || Array.isArray(arg)) throw new Error(`${kind} needs a string`);
      if (kind !== "regex") {
        expect(path.isAbsolute(arg.str), `${arg.str} is absolute`).toBe(true);
        expect(path.normalize(arg.str), `${arg.str} is normal`).toBe(arg.str);
      }
      return { kind, args: [arg.str] };
    }
    if (COMBINATORS.has(kind)) return { kind, args: rest.map(filter) };
    throw new Error(`unknown filter ${kind}`);
  };
  return forms.slice(1).map((f) => {
    if (!Array.isArray(f)) throw new Error(`a top-level atom: ${JSON.stringify(f)}`);
    const [action, ...rest] = f;
    if (action !== "allow" && action !== "deny") throw new Error(`unknown form ${action}`);
    const operations = rest.filter((x): x is string => typeof x === "string");
    const filters = rest.filter((x) => typeof x !== "string").map(filter);
    expect(operations.length, "a rule names an operation").toBeGreaterThan(0);
    for (const op of operations) expect(OPERATIONS, `operation ${op}`).toContain(op);
    // Operations before filters, as the language has them.
    expect(rest.slice(0, operations.length)).toEqual(operations);
    return { action, operations, filters };
  });
}

/** Whether an operation name covers another (`file-write*` covers `file-write-data`). */
const covers = (rule: string, op: string) =>
  rule === op || rule === "default" || (rule.endsWith("*") && op.startsWith(rule.slice(0, -1)));

function matches(f: Filter, target: string): boolean {
  const arg = f.args[0];
  switch (f.kind) {
    case "literal":
      return target === arg;
    case "subpath":
      return target === arg || target.startsWith(`${arg}/`);
    case "prefix":
      return target.startsWith(arg as string);
    case "regex":
      return new RegExp(arg as string).test(target);
    case "require-any":
      return f.args.some((g) => matches(g as Filter, target));
    case "require-all":
      return f.args.every((g) => matches(g as Filter, target));
    case "require-not":
      return !matches(f.args[0] as Filter, target);
    default:
      return false;
  }
}

/** Seatbelt's decision: the last rule whose operation covers `op` and whose filters match. */
function decide(rules: Rule[], op: string, target = ""): "allow" | "deny" {
  let verdict: "allow" | "deny" | null = null;
  for (const r of rules) {
    if (!r.operations.some((o) => covers(o, op))) continue;
    // Several filters in one rule: any of them (the language's own reading of a list).
    if (r.filters.length > 0 && !r.filters.some((f) => matches(f, target))) continue;
    verdict = r.action;
  }
  if (verdict === null) throw new Error("no default rule");
  return verdict;
}

const pathsIn = (f: Filter): string[] =>
  PATH_FILTERS.has(f.kind) ? [f.args[0] as string] : f.args.flatMap((g) => pathsIn(g as Filter));

// macOS's layout, made here: private/var is real, var is a link to it.
const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "polybox-sbpl-")));
const real = path.join(root, "private", "var");
const link = path.join(root, "var");
mkdirSync(path.join(real, "folders", "T"), { recursive: true });
mkdirSync(path.join(real, "bin"), { recursive: true });
writeFileSync(path.join(real, "bin", "node"), "");
symlinkSync("private/var", link);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cases: [string, string, string][] = [
  [
    "a temp dir and node under a symlinked prefix",
    "var/folders/T/polybox-host-1-abcdef",
    "var/bin/node",
  ],
  [
    "the same, spelled through /private",
    "private/var/folders/T/polybox-host-1-abcdef",
    "private/var/bin/node",
  ],
  ["a temp dir not made yet", "var/folders/T/not-yet/polybox-host-2", "var/bin/node"],
  ["paths with spaces and quotes", 'var/folders/T/a "b" c', "var/bin/node"],
  ["no link anywhere", "private/var/folders/T", "private/var/bin/node"],
];

describe.each(cases)("the engine host's profile: %s", (_, tmpRel, nodeRel) => {
  const tmp = path.join(root, tmpRel);
  const node = path.join(root, nodeRel);
  const profile = engineHostProfile(tmp, node);
  const rules = rulesOf(profile);
  const inReal = (p: string) => p.replace(`${link}/`, `${real}/`);
  // Seatbelt compares the path the kernel resolved (the real spelling); the spelling given is
  // kept too, so that a rule still reads as what the caller asked for.
  const spellings = (p: string) => [...new Set([inReal(p), p])];

  it("is well formed, uses only known operations, and its default comes first", () => {
    expect(rules[0]).toMatchObject({ operations: ["default"], filters: [] });
    expect(rules.slice(1).every((r) => !r.operations.includes("default"))).toBe(true);
  });

  it("restricts files by allow-lists only: each class is denied whole, then opened", () => {
    for (const [i, r] of rules.entries()) {
      const fileOps = r.operations.filter((o) => o.startsWith("file"));
      if (fileOps.length === 0) continue;
      if (r.action === "deny") expect(r.filters, "a file deny names no path").toEqual([]);
      else
        for (const op of fileOps)
          expect(
            rules
              .slice(0, i)
              .some(
                (d) =>
                  d.action === "deny" &&
                  d.filters.length === 0 &&
                  d.operations.some((o) => covers(o, op)),
              ),
            `${op} is denied whole before it is opened`,
          ).toBe(true);
    }
  });

  it("names every path under the symlinked prefix in both spellings", () => {
    const named = rules.flatMap((r) => r.filters.flatMap(pathsIn));
    for (const p of [tmp, node]) for (const s of spellings(p)) expect(named).toContain(s);
    for (const p of named.filter((x) => x.startsWith(root))) expect(named).toContain(inReal(p));
  });

  it("lets the host write in its temp dir, in the spelling the kernel reports, and nowhere else", () => {
    for (const dir of spellings(tmp)) {
      expect(decide(rules, "file-write-create", path.join(dir, "f"))).toBe("allow");
      expect(decide(rules, "file-write-data", path.join(dir, "sub", "f"))).toBe("allow");
      expect(decide(rules, "file-write-unlink", `${dir}-sibling/f`)).toBe("deny");
    }
    expect(decide(rules, "file-write-data", "/dev/null")).toBe("allow");
    expect(decide(rules, "file-write-data", path.join(real, "folders", "other"))).toBe("deny");
    expect(decide(rules, "file-write-xattr", "/Users/someone/.ssh/authorized_keys")).toBe("deny");
    // Reads are L2's (the permission model's) to limit.
    expect(decide(rules, "file-read-data", "/etc/hosts")).toBe("allow");
  });

  it("runs node, as the kernel spells it, and nothing else; no network, no fork", () => {
    for (const p of spellings(node)) expect(decide(rules, "process-exec", p)).toBe("allow");
    expect(decide(rules, "process-exec", "/bin/sh")).toBe("deny");
    expect(decide(rules, "process-fork")).toBe("deny");
    for (const op of ["network-outbound", "network-inbound", "network-bind"])
      expect(decide(rules, op, "*:443")).toBe("deny");
  });
});

describe("the SBPL reader itself", () => {
  it("refuses what sandbox-exec would refuse", () => {
    expect(() => rulesOf("(version 1)\n(allow default")).toThrow(/unclosed/);
    expect(() => rulesOf('(version 1)\n(allow file-write* (subpath "/a))')).toThrow(
      /unclosed string/,
    );
    expect(() => rulesOf("(version 1)\n(allow file-wrte*)")).toThrow(/file-wrte/);
    expect(() => rulesOf('(version 1)\n(allow file-write* (subpaht "/a"))')).toThrow(/subpaht/);
  });
});

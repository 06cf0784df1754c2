// Bash scripts as users bring them: Windows line endings, a scratch /tmp, and commands just-bash
// lists but cannot run inside polybox's hardened worker, which must say so and name an
// alternative instead of failing with an internal "require is disabled" error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

describe("Bash compatibility", () => {
  it("runs a script with CRLF line endings", async () => {
    await using sb = await Sandbox.create({ runtime });
    const script = 'x=3\r\nif [ "$x" -gt 2 ]; then\r\n  echo big\r\nelse\r\n  echo small\r\nfi\r\n';
    const r = await sb.run("bash", script);
    expect(r.stderr).toBe("");
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("big\n");
  });

  it("has a writable /tmp in every run, even after a script removed it", async () => {
    await using sb = await Sandbox.create({ runtime });
    const first = await sb.run("bash", "echo scratch > /tmp/f && cat /tmp/f && rm -r /tmp");
    expect(first.stdout).toBe("scratch\n");
    expect(first.status).toBe("ok");
    const second = await sb.run("bash", "test -d /tmp && echo again > /tmp/g && cat /tmp/g");
    expect(second.status).toBe("ok");
    expect(second.stdout).toBe("again\n");
    // /tmp is scratch space, not part of the workspace.
    expect(second.filesChanged).toEqual([]);
  });

  it("has mktemp and realpath", async () => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run(
      "bash",
      'f=$(mktemp); g=$(mktemp); d=$(mktemp -d); test -f "$f" && test -d "$d" && [ "$f" != "$g" ] && echo "$f $d"; mkdir -p sub; cd sub; realpath ../sub/./.. missing',
    );
    expect(r.stdout).toMatch(/^\/tmp\/tmp\.\w{10} \/tmp\/tmp\.\w{10}\n\/workspace\n$/);
    expect(r.stderr).toBe("realpath: missing: No such file or directory\n");
    expect(r.exitCode).toBe(1);
  });

  it.each([
    ["yq", "yq .a data.yaml", "jq"],
    ["sqlite3", "sqlite3 :memory: 'select 1'", "sqlite3 module"],
    ["html-to-markdown", "echo '<b>x</b>' | html-to-markdown", "html.parser"],
  ])("answers %s as unavailable, naming an alternative", async (name, command, alternative) => {
    await using sb = await Sandbox.create({ runtime });
    await sb.files.write("data.yaml", "a: 1\n");
    const r = await sb.run("bash", command);
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toContain(`${name}: command not available in polybox's WASM bash`);
    expect(r.stderr).toContain(alternative);
    expect(r.stderr).not.toContain("require");
    // The interpreter is intact afterwards (a failed load used to crash the next run).
    const next = await sb.run("bash", "echo still here");
    expect(next.status).toBe("ok");
    expect(next.stdout).toBe("still here\n");
  });

  it("env and printenv list only exported variables, and export survives into the next run", async () => {
    await using sb = await Sandbox.create({ runtime });
    const first = await sb.run(
      "bash",
      "env | cut -d= -f1 | sort | tr '\\n' ' '; echo; X=1; export Y=2; printenv Y; printenv X; echo rc=$?",
    );
    // bash's own variables ($?, IFS, OPTIND, BASHOPTS…) are the shell's, not the environment's.
    expect(first.stdout).toBe("HOME OLDPWD PATH PWD \n2\nrc=1\n");
    const second = await sb.run(
      "bash",
      "declare -p X Y; env | grep -c '^[XY]='; env Z=3 printenv Z; echo \"[$IFS]\" | od -c | head -1",
    );
    expect(second.stdout).toBe(
      'declare -- X="1"\ndeclare -x Y="2"\n1\n3\n0000000   [      \\t  \\n   ]  \\n\n',
    );
    // A variable the script changed and did not export comes back unexported, quoting intact.
    await sb.run("bash", 'Q="it\'s  spaced"; IFS=:');
    const third = await sb.run("bash", 'printf "%s|" "$Q" "$IFS"; env | grep -c ^Q=');
    expect(third.stdout).toBe("it's  spaced|:|0\n");
  });
});

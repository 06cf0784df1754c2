// Differential: the Unix commands polybox adds to WASM Bash (src/guest/engines/bash/
// commands/) against the machine's GNU tools. Each script runs in a polybox sandbox and in
// the real bash in an empty directory; stdout and exit status must be equal.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bashSandbox } from "../helpers/differential.js";

const has = (tool: string) => spawnSync("/bin/bash", ["-c", `command -v ${tool}`]).status === 0;

const CASES: [string, string][] = [
  ["cmp: equal files", "printf 'abc' > a; printf 'abc' > b; cmp a b; echo $?"],
  ["cmp: first difference", "printf 'ab\\ncd' > a; printf 'ab\\nce' > b; cmp a b; echo $?"],
  ["cmp -s", "printf 'x' > a; printf 'y' > b; cmp -s a b; echo $?"],
  ["cmp: stdin against a file", "printf 'q' > a; printf 'q' | cmp a -; echo $?"],
  ["xxd: text", "printf 'hello, world\\n' | xxd"],
  [
    "xxd: several lines, control bytes",
    "printf 'abcdefghijklmnopqrstuvwxyz\\x00\\x01\\x7f 0123' | xxd",
  ],
  ["xxd -p", "printf 'hello, world, this is a longer line of text\\n' | xxd -p"],
  ["xxd -c 8", "printf 'abcdefghijkl' | xxd -c 8"],
  ["cksum: stdin", "printf 'hello\\n' | cksum"],
  ["cksum: empty input", "printf '' | cksum"],
  ["cksum: files", "printf 'one' > a; seq 1 1000 > b; cksum a b"],
  ["shuf: a permutation", "seq 1 50 | shuf | sort -n | tr '\\n' ' '"],
  ["shuf -n", "seq 1 50 | shuf -n 5 | wc -l"],
  ["shuf -i", "shuf -i 3-9 | sort -n | tr '\\n' ' '"],
  ["shuf -e", "shuf -e a b c | sort | tr '\\n' ' '"],
  ["yes | head", "yes | head -n 3; yes ok go | head -n 2"],
  ["/dev/urandom", "head -c 32 /dev/urandom | wc -c"],
  [
    "/dev/zero",
    "head -c 5 /dev/zero > z; wc -c < z; head -c 3 /dev/zero | cmp - <(printf '\\0\\0\\0') && echo zeros",
  ],
  // Forms just-bash's own commands refuse or get wrong (src/guest/engines/bash/commands/).
  ["trap EXIT", "trap 'echo bye' EXIT; echo hi"],
  ["trap EXIT under set -e", "set -e; trap 'echo cleanup' EXIT; false; echo no"],
  ["trap EXIT, then exit N", "trap 'echo bye' EXIT; exit 3"],
  ["trap reset", "trap 'echo no' EXIT; trap - EXIT; echo done"],
  ["trap of other signals", "trap 'echo int' INT TERM; echo ok; trap -p EXIT"],
  ["xargs -n", "seq 7 | xargs -n 3"],
  ["xargs -n with a command", "printf '1\\n2\\n3\\n' | xargs -n1 echo x"],
  ["xargs -I", "printf 'a\\nb c\\n' | xargs -I{} echo [{}]"],
  ["xargs -L", "printf 'a b\\nc\\n' | xargs -L1 echo -"],
  ["xargs -0", "printf 'a b\\0c\\0' | xargs -0 -n1 echo"],
  ["xargs quotes", "echo \"'a b' c\" | xargs -n1 echo"],
  ["xargs exit status", "printf '1\\n2\\n' | xargs -n1 sh -c 'exit $0'; echo $?"],
  ["head -n -N", "printf '1\\n2\\n3\\n4\\n' | head -n -2"],
  ["head -c -N", "printf 'abcdef' | head -c -2; echo"],
  ["wc -L", "printf 'ab\\nabcd\\n' | wc -L; printf 'x\\ty\\n' > t; wc -L t"],
  ["paste -sd,", "printf '1\\n2\\n3\\n' | paste -sd,"],
  ["paste -s -d", "printf '1\\n2\\n' > f; paste -s -d: f"],
  ["sed -i.bak", "echo one > f; sed -i.bak 's/one/ONE/' f; cat f f.bak"],
  ["bash -e script", "printf 'echo a\\nfalse\\necho b\\n' > s.sh; bash -e s.sh; echo rc=$?"],
  [
    "bash -eu -o pipefail script with arguments",
    "printf 'echo $1-$2\\nfalse | true\\necho c\\n' > s.sh; bash -eu -o pipefail s.sh x y; echo rc=$?",
  ],
];

const bash = bashSandbox();

function realBash(script: string): { stdout: string; exitCode: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-fidelity-"));
  try {
    const r = spawnSync("/bin/bash", ["-c", script], { cwd: dir, encoding: "utf8" });
    return { stdout: r.stdout, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(has("xxd") && has("cmp") && has("cksum") && has("shuf"))(
  "Unix commands match GNU's",
  () => {
    it.each(CASES)("%s", async (_label, script) => {
      const expected = realBash(script);
      // Each case starts from an empty directory, as the real one does.
      const r = await bash.sb.run("bash", `cd "$(mktemp -d)"\n${script}`);
      expect({ stdout: r.stdout, exitCode: r.exitCode }).toEqual(expected);
    });
  },
);

describe("the sandbox's identity", () => {
  it("uname, id and whoami answer like a Linux machine's, the same everywhere", async () => {
    const r = await bash.sb.run("bash", "uname; uname -m; id -u; whoami; id");
    expect(r.stdout).toBe(
      "Linux\nwasm32\n1000\nuser\nuid=1000(user) gid=1000(user) groups=1000(user)\n",
    );
    expect(execFileSync("/bin/bash", ["-c", "uname"], { encoding: "utf8" })).toBe("Linux\n");
  });
});

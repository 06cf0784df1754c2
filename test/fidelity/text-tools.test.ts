// Differential: the text tools a model's programs lean on (awk's printf, GNU sed's case
// conversion and s///N, sort -g and mixed keys, join, date -d arithmetic, jq, shuf with a random
// source), run in a polybox sandbox and in the machine's bash in an empty directory, in the C
// locale and UTC. stdout, stderr and the exit status must be byte-equal. The references are the
// machine's own tools: awk is whatever /usr/bin/awk is (mawk on Debian), jq whichever version
// is installed (the cases are written for 1.6's number printing); the jq cases are skipped when
// the machine has no jq. Cases that cannot match by design are listed in EXCLUDED with why.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { bashInTempDir, bashSandbox } from "../helpers/differential.js";

const has = (tool: string) => spawnSync("/bin/bash", ["-c", `command -v ${tool}`]).status === 0;
const version = (tool: string, flag = "--version") =>
  spawnSync(tool, [flag], { encoding: "utf8" }).stdout ?? "";

const AWK: [string, string][] = [
  [
    "awk %c: numbers and strings",
    `awk 'BEGIN{printf "%c|%c|%c|%c|%c\\n", 65, "hello", 97.9, "", "7"}'`,
  ],
  [
    "awk %e %E",
    `awk 'BEGIN{printf "%e|%E|%.2e|%12.3E|%-12.1e|%+e\\n", 12345.678, 0.000123, 1, -5, 9.99, 0}'`,
  ],
  [
    "awk %g %G",
    `awk 'BEGIN{printf "%g|%G|%g|%g|%.3g|%#g|%g|%G\\n", 100000, 1e-5, 1234567, 0.0001, 3.14159, 2, 1e100, 0.00001234}'`,
  ],
  [
    "awk %i %d with flags",
    `awk 'BEGIN{printf "%i|%d|%5i|%-5d|%05d|%+d|% d|%+5d|%-+5d|\\n", 42.9, -3.7, 7, 7, 7, 7, 7, 7, 7}'`,
  ],
  [
    "awk %o %x %X %u",
    `awk 'BEGIN{printf "%o|%x|%X|%u|%#o|%#x|%#X|%08x|%-6X|\\n", 8, 255, 255, 42, 8, 255, 255, 48879, 171}'`,
  ],
  ["awk %%", `awk 'BEGIN{printf "100%% %d%%|\\n", 5}'`],
  [
    "awk widths, precision and flags together",
    `awk 'BEGIN{printf "[%-10s][%10.3s][%.2f][%+.3e][%-+8.2f][% 08.2f][%#.0f][%.0e]\\n", "abc", "abcdef", 3.14159, 1234.5, 2.5, -2.5, 3, 12345}'`,
  ],
  [
    "awk * width and precision",
    `awk 'BEGIN{printf "[%*d][%-*s][%.*f][%*.*f][%-*d]\\n", 5, 42, 6, "ab", 2, 3.14159, 8, 3, 2.71828, 4, 9}'`,
  ],
  [
    "awk sprintf",
    `awk 'BEGIN{x = sprintf("%05.1f|%x|%c|%5.2s|%e", 3.14159, 3054, 66, "xyz", 1e-300); print x}'`,
  ],
  [
    "awk printf of fields",
    `echo '3.7 abc 255 1e3' | awk '{printf "%d %s %x %g %c\\n", $1, $2, $3, $4, $3-190}'`,
  ],
  [
    "awk %s of numbers, %d of a string, %.3d",
    `awk 'BEGIN{printf "%s %s %d %.3d %5.3d|\\n", 0.1+0.2, 1e6, "3abc", 7, 7}'`,
  ],
  [
    "awk flags on zero and negatives",
    `awk 'BEGIN{printf "%-8.3f|%08.3e|%+g|% g|%#x|%#o\\n", -1.5, 12.5, 3, 3, 0, 0}'`,
  ],
];

const SED: [string, string][] = [
  ["sed \\u", "echo 'hello world foo' | sed 's/\\w\\+/\\u&/g'"],
  ["sed \\L and \\U", "echo 'Hello World' | sed 's/.*/\\L&/; p; s/.*/\\U&/'"],
  ["sed \\U...\\E", "echo 'foo bar baz' | sed -E 's/(\\w+) (\\w+)/\\U\\1\\E \\2/'"],
  ["sed \\L\\u", "echo 'hELLO wORLD' | sed 's/\\w\\+/\\L\\u&/g'"],
  ["sed \\l and \\u on groups", "echo 'first LAST' | sed -E 's/(\\w+) (\\w+)/\\l\\2 \\u\\1/'"],
  [
    "sed \\U then \\L then \\E",
    "echo 'mixed Case here' | sed -E 's/(\\w+) (\\w+) (\\w+)/\\U\\1 \\L\\2\\E \\3/'",
  ],
  ["sed snake_case to camelCase", "echo 'snake_case_name' | sed -E 's/_(.)/\\u\\1/g'"],
  ["sed s///3g", "echo 'aaaaa' | sed 's/a/b/3g'"],
  ["sed s///2", "echo 'aaaaa' | sed 's/a/b/2'"],
  ["sed s///2g then s///1", "echo 'a-b-c-d-e' | sed 's/-/+/2g; s/b/B/1'"],
  ["sed -E s///3g", "echo 'one two three four five' | sed -E 's/[a-z]+/X/3g'"],
  ["sed s///2 on lines with fewer matches", "printf 'x y x y x\\nx\\n' | sed 's/x/Z/2'"],
  ["sed -n s///2p with \\U", "echo 'abcabc' | sed -n 's/b/\\U&/2p'"],
];

const SORT: [string, string][] = [
  [
    "sort -g",
    "printf '1e3\\n10\\n-inf\\ninf\\nnan\\n 2.5\\n1E-2\\n-5\\n+7\\nabc\\n0.5e1\\n\\n-1e-3\\n' | sort -g",
  ],
  ["sort -gr", "printf '1e3\\n10\\n-inf\\ninf\\n 2.5\\n1E-2\\n-5\\n+7\\n0.5e1\\n' | sort -gr"],
  ["sort -k2,2g", "printf 'a 1e2\\nb 50\\nc 1.5e1\\nd -2e0\\ne 3\\n' | sort -k2,2g"],
  ["sort -t, -k2,2g with nan", "printf 'x,2e3\\ny,150\\nz,1e-1\\nw,nan\\n' | sort -t, -k2,2g"],
  ["sort -k2,2n -k1,1", "printf 'b 2\\na 10\\nc 2\\na 2\\nd 1\\n' | sort -k2,2n -k1,1"],
  ["sort -k2,2nr -k1,1r", "printf 'b 2\\na 10\\nc 2\\na 2\\nd 1\\n' | sort -k2,2nr -k1,1r"],
  [
    "sort under a header: head; tail | sort",
    "printf 'name score\\nbob 3\\nann 10\\ncid 3\\n' > t; (head -n1 t; tail -n+2 t | sort -k2,2n -k1,1)",
  ],
  [
    "sort under a header: read; sort",
    "printf 'name score\\nbob 3\\nann 10\\ncid 3\\n' | (read -r h; echo \"$h\"; sort -k2,2nr)",
  ],
  [
    "sort under a header: { head; tail | sort -g; }",
    "printf 'name,v\\nb,1e1\\na,2\\nc,-3\\n' > t; { head -n 1 t; tail -n +2 t | sort -t, -k2,2g; }",
  ],
  [
    "sort under a header: awk pipes to sort",
    `printf 'name score\\nbob 3\\nann 10\\ncid 3\\n' | awk 'NR==1{print; next} {print | "sort -k2,2n"}'`,
  ],
];

const AB = "printf '1 a\\n2 b\\n4 d\\n' > a; printf '1 x\\n3 y\\n4 z\\n' > b";
const AB_CSV = "printf 'k1,a\\nk2,b\\nk4,d\\n' > a; printf 'k1,x\\nk3,y\\nk4,z\\n' > b";

const JOIN: [string, string][] = [
  ["join", `${AB}; join a b`],
  ["join -a 1", `${AB}; join -a 1 a b`],
  ["join -a 2", `${AB}; join -a 2 a b`],
  ["join -a1 -a2 -e NULL -o 0,1.2,2.2", `${AB}; join -a1 -a2 -e NULL -o 0,1.2,2.2 a b`],
  ["join -o 1.1,2.2", `${AB}; join -o 1.1,2.2 a b`],
  [
    "join -o auto -e X",
    "printf '1 a p\\n2 b\\n4 d q\\n' > a; printf '1 x\\n3 y r\\n4 z\\n' > b; join -a1 -a2 -e X -o auto a b",
  ],
  ["join -t ,", `${AB_CSV}; join -t , a b`],
  ["join -t, -a1 -e -o", `${AB_CSV}; join -t, -a1 -e '?' -o 1.1,1.2,2.2 a b`],
  ["join -v 1, -v 2", `${AB}; join -v 1 a b; echo --; join -v 2 a b`],
  [
    "join -1 2 -2 1",
    "printf 'a 1\\nb 2\\nc 4\\n' > a; printf '1 x\\n4 z\\n' > b; join -1 2 -2 1 a b",
  ],
  [
    "join: repeated keys on both sides, -a1 -a2",
    "printf '1 a\\n1 b\\n2 c\\n' > a; printf '1 x\\n1 y\\n3 z\\n' > b; join -a1 -a2 a b",
  ],
  [
    "join -a1 -a2 -o 0: unpaired lines of both files in merge order",
    "printf '1 a\\n2 b\\n4 d\\n5 e\\n' > a; printf '0 w\\n1 x\\n3 y\\n4 z\\n6 q\\n' > b; join -a1 -a2 -o 0,1.2,2.2 -e - a b",
  ],
  ["join -o 0 alone, -o 2.2,0", `${AB}; join -o 0 a b; join -o 2.2,0 -a2 a b`],
  ["join -v1 -v2", `${AB}; join -v1 -v2 a b`],
  [
    "join -t, -e with empty fields",
    "printf 'k,,c\\nm,d,\\n' > a; printf 'k,x\\nm,\\n' > b; join -t, -e E a b",
  ],
  [
    "join -t, -o auto",
    "printf 'k,,c\\nm,d,\\n' > a; printf 'k,x\\nm,\\n' > b; join -t, -e E -o auto a b",
  ],
  [
    "join: blank runs, a blank line",
    "printf '  1   a  b\\n\\n2 c\\n' > a; printf '1 x\\n2 y\\n' > b; join a b; echo $?",
  ],
  [
    "join: unsorted input",
    "printf '1 a\\n3 b\\n2 c\\n' > a; printf '1 x\\n2 y\\n3 z\\n' > b; join a b; echo $?; join --nocheck-order a b; echo $?",
  ],
  [
    "join --header",
    "printf 'id name\\n1 a\\n2 b\\n' > a; printf 'id val\\n1 x\\n3 y\\n' > b; join --header -a2 a b",
  ],
  ["join FILE -", `${AB}; cat b | join a -`],
];

const DATE: [string, string][] = [
  ["date -d +1 month from the 31st", 'date -u -d "2024-01-31 +1 month" +%F'],
  ["date -d +3 days", 'date -u -d "2024-02-28 +3 days" "+%F %A"'],
  ["date -d +1 year from Feb 29", 'date -u -d "2024-02-29 +1 year" +%F'],
  ["date -d -2 hours", 'date -u -d "2024-03-10 12:00 -2 hours" +%FT%T'],
  ["date -d +1 day over the year's end", "date -u -d \"2024-12-31 +1 day\" '+%Y-%m-%d %j'"],
  ["date -d @N", "date -u -d @1700000000"],
  ["date -d @N +FORMAT", "date -u -d @1700000000 '+%Y-%m-%d %H:%M:%S %j %a %b %u %V %s'"],
  ["TZ=UTC date -d @0 +%c", "TZ=UTC date -d @0 +%c"],
  [
    "date -d yesterday (minutes ago)",
    "now=$(date -u +%s); d=$(date -u -d yesterday +%s); echo $(( (now - d + 30) / 60 ))",
  ],
  [
    "date -d '2 weeks ago' (hours ago)",
    'now=$(date -u +%s); d=$(date -u -d "2 weeks ago" +%s); echo $(( (now - d + 30) / 3600 ))',
  ],
  [
    "date -d '+3 days' (hours ahead)",
    'now=$(date -u +%s); d=$(date -u -d "+3 days" +%s); echo $(( (d - now + 30) / 3600 ))',
  ],
  [
    "date -d 'next monday'",
    'date -u -d "next monday" +%A; d=$(date -u -d "next monday" +%s); now=$(date -u +%s); echo $(( d > now && d - now <= 7*86400 )); date -u -d "next monday" +%T',
  ],
  ["date -d 'DATE next monday'", 'date -u -d "2024-05-15 next monday" +%F'],
  ["date -d 'DATE yesterday'", 'date -u -d "2024-05-15 yesterday" +%F'],
  ["date -d 'DATE 2 weeks ago'", 'date -u -d "2024-05-15 2 weeks ago" +%F'],
];

const PEOPLE = `echo '[{"a":1,"b":2},{"a":2,"b":3},{"a":1,"b":4}]'`;

const JQ: [string, string][] = [
  ["jq group_by", `${PEOPLE} | jq -c 'group_by(.a)'`],
  ["jq unique_by", `${PEOPLE} | jq -c 'unique_by(.a)'`],
  [
    "jq unique_by and group_by of length",
    `echo '["abc","x","yz","q","abcd"]' | jq -c 'unique_by(length), group_by(length)'`,
  ],
  [
    "jq numbers: large, 1.0, overflow, exponents",
    "echo '[10000000000000000000, 1.0, 1e1000, 3.0e-5, 100, 1.5e300, -0, 0.1, 1e17, 123456789012, 1.23e5]' | jq -c .",
  ],
  ["jq numbers one per line", "echo '[1.0, 2.50, 1e2, 0.00001, 12345678901234567890]' | jq '.[]'"],
  ["jq -n numbers", "jq -n '1e1000, -1e1000, 3.0e-5, 1/3, 100000000000000000000, 2e-7'"],
  ["jq: unfinished JSON", `echo '{"a":' | jq .; echo $?`],
  ["jq: a missing separator", `echo '{"a" 1}' | jq -c .; echo $?`],
  [
    "jq -e with null, false and 1",
    "echo 'null' | jq -e .; echo $?; echo false | jq -e .; echo $?; echo 1 | jq -e .; echo $?",
  ],
  ["jq -e .a false", `echo '{"a":false}' | jq -e .a; echo $?`],
  ["jq -r", `echo '["a","b c"]' | jq -r '.[]'`],
  ["jq -c", `echo '{"a":[1,{"b":2}]}' | jq -c '.'`],
  ["jq --arg", "jq -n --arg x 5 '$x, ($x|tonumber+1)'"],
  ["jq --argjson", `jq -n --argjson x '{"a":[1,2]}' '$x.a[1]'`],
  ["jq: indexing an array with a string", "echo '[1]' | jq '.a'; echo $?"],
  [
    "jq: an error mid-stream keeps earlier outputs",
    `echo '[{"a":1}, 2, {"a":3}]' | jq '.[] | .a'; echo $?`,
  ],
  ["jq: error position without a final newline", "printf '[1]' | jq .a; echo $?"],
  [
    "jq -R and -s error positions",
    "printf 'a\\nb\\n' | jq -R .a; echo $?; printf '1\\n2\\n' | jq -s .a; echo $?",
  ],
  ["jq -n error(...)", `jq -n 'error("x"), 1'; echo $?; jq -n 'error({"a":1})'; echo $?`],
  ["jq: the exit status is the last input's", `echo '{"a":1} 2 {"a":3}' | jq .a; echo $?`],
  [
    "jq: parse errors after good values",
    "printf '1 2 [' | jq -c .; echo $?; printf '{\"a\":1}}' | jq -c .; echo $?; printf '1]' | jq .; echo $?",
  ],
  [
    "jq: bad literals, escapes and keys",
    "for s in nul 'tru x' '[1,]' '{1:2}' '\"a\\\\x\"' '{\"a\":1,}' '[1e5x]'; do printf '%s\\n' \"$s\" | jq -c .; echo $?; done",
  ],
  [
    "jq: NaN, infinity and loose numbers",
    "echo '[NaN, -Infinity, infinity, .5, 1., +1, 01]' | jq -c .",
  ],
  [
    "jq numbers at the 1e17 edge",
    "jq -nc '[1e15, 1e16, 123456789012345678, 0.0001, 1.5e-5, 1e23, 5e-324, -1.5e-7, 255/256]'",
  ],
  [
    "jq sort and group_by across types",
    `echo '[3,"b","a",null,true,false,[1],{"a":1},{"b":0},-1,"B",{"a":0,"b":1}]' | jq -c 'sort, sort_by(type), group_by(type)'`,
  ],
  [
    "jq sort_by and unique_by with several keys",
    `echo '[{"a":[2,1]},{"a":[1]},{"a":[1,0]}]' | jq -c 'sort_by(.a[]), group_by(.a[0]), unique_by(.a|length)'`,
  ],
  ["jq -e with no output", "echo '[1,2]' | jq -e '.[] | select(. > 5)'; echo $?"],
  ["jq: .[N] on a number or an object", "echo '1 [2] {} 3' | jq '.[0]'; echo $?"],
  ["jq: adding a string and a number", `jq -n '"a" + 1'; echo $?`],
  // Values of the wrong type stop jq with an error (status 5); none of them is null.
  ...[
    `"a" + 1`,
    `{} + 1`,
    `[1] - 1`,
    `"a" * "b"`,
    `[1,2] / 2`,
    `"a" % 1`,
    `null - 1`,
    `true + true`,
    `"abcdefghijklmnopqrstuvwxyz" + 1`,
    `{"a":[1,2,3],"bbbbbbbb":2} - 1`,
    `[1,"a"] | add`,
    `[1,2] | map(. + "a")`,
    `{"a":"x"} | .a += 1`,
    `"x" | .[0]`,
    `[] | .["a"]`,
    `5 | .[null]`,
    `true | .["a"]`,
    `1 as $x | $x[0]`,
    `5 | .[]`,
    `null | .[]`,
    `5 | map(.)`,
    `5 | .[0:1]`,
    `true | length`,
    `null | keys`,
    `"ab" | keys`,
    `5 | to_entries`,
    `{"a":1} | has(0)`,
    `[1] | has("a")`,
    `"a" | in([1])`,
    `1 | test("a")`,
    `1 | match("a")`,
  ].map((f): [string, string] => [`jq type error: ${f}`, `jq -nc '${f}'; echo $?`]),
  // ... and what mixes types on purpose still works.
  [
    "jq arithmetic across types that jq allows",
    `jq -nc '2 * "x", "ab" * 0.5, "x" * 0, {} * {"a":{"b":1}}, 5.5 % 2, -7 % 2, null + 1, [1,2] - [2], "a,b" / ",", ([[1],[2]] | add), ({"a":1,"b":2} | add), (null | add)'; jq -n '"s" | add'; echo $?`,
  ],
  [
    "jq update paths through null and missing keys",
    `jq -nc '{} | .a.b.c = 1, (null | .a = 1), (null | .[2] = 1), ({} | .a[1] = "x"), ({} | .a += 1), ({"n":"x"} | .tags += ["t"]), ({"a":1} | .b.c //= 3), ({"a":{"b":1}} | .a.b += 1)'`,
  ],
  [
    "jq walk, tostream and map over objects",
    `jq -nc '([1,[2]] | walk(if type == "number" then . + 1 else . end)), ([1,null,[null,2]] | walk(if . == null then empty else . end)), ({"a":[1,2]} | tostream), ({"a":[]} | [tostream]), (1 | [tostream]), ([{"a":[1,{"b":2}]}] | fromstream(tostream)), ({"a":1,"b":2} | map(. + 1))'`,
  ],
];

const RS = "seq 1 5000 > rs";

const SHUF: [string, string][] = [
  ["shuf -i --random-source", `${RS}; shuf --random-source=rs -i 1-10`],
  ["shuf -n from a pipe", `${RS}; seq 1 20 | shuf -n 3 --random-source=rs`],
  ["shuf -n FILE", `${RS}; seq 1 20 > in; shuf -n 5 --random-source=rs in`],
  ["shuf -e --random-source", `${RS}; shuf -e a b c d e --random-source=rs`],
  ["shuf: 300 lines", `${RS}; seq 1 300 | shuf --random-source=rs | cksum`],
  ["shuf -i -n", `${RS}; shuf -i 1-1000 -n 4 --random-source=rs`],
  [
    "shuf: a random source too short",
    "printf 'ab' > rs; shuf --random-source=rs -i 1-100; echo $?",
  ],
  ["shuf: stdin lines", `${RS}; printf 'x\\ny\\nz\\n' | shuf --random-source=rs`],
];

/** Cases that cannot match by design, with why. */
const DESIGN: Record<string, string> = {
  "sort under a header: awk pipes to sort":
    'just-bash\'s awk has no output pipes (`print | "cmd"`); not a sort or printf matter',
};

const EXCLUDED: Record<string, string> = DESIGN;

const bash = bashSandbox();

async function sandboxed(script: string) {
  // Each case starts from an empty directory, as the real one does.
  const r = await bash.sb.run("bash", `cd "$(mktemp -d)"\n${script}`);
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
}

function suite(name: string, cases: [string, string][], runIf: boolean, why = "") {
  describe.runIf(runIf)(name, () => {
    it.each(cases.filter(([label]) => !(label in EXCLUDED)))("%s", async (_label, script) => {
      expect(await sandboxed(script)).toEqual(bashInTempDir(script, { LC_ALL: "C" }));
    });
  });
  if (!runIf) describe.skip(`${name}: ${why}`, () => it("skipped", () => {}));
}

const gnu = (tool: string) => version(tool).includes("GNU");

suite("awk's printf matches the machine's awk", AWK, has("awk"), "no awk on this machine");
suite("GNU sed's extensions", SED, gnu("sed"), "the machine's sed is not GNU's");
suite("sort -g and mixed keys", SORT, gnu("sort"), "the machine's sort is not GNU's");
suite("join", JOIN, gnu("join"), "the machine's join is not GNU's");
suite("date -d arithmetic", DATE, gnu("date"), "the machine's date is not GNU's");
suite("jq", JQ, has("jq"), "the machine has no jq to compare with");
suite("shuf --random-source", SHUF, gnu("shuf"), "the machine's shuf is not GNU's");

describe("the excluded cases", () => {
  it("are all in the corpus", () => {
    const labels = new Set(
      [...AWK, ...SED, ...SORT, ...JOIN, ...DATE, ...JQ, ...SHUF].map(([l]) => l),
    );
    for (const label of Object.keys(EXCLUDED)) expect(labels.has(label), label).toBe(true);
  });
});

// Differential: polybox's sort, uniq and tr (src/guest/engines/bash/commands/) against the machine's
// GNU tools in the C locale (the sandbox sets no locale, so GNU's reference is LC_ALL=C). Each
// script runs in a polybox sandbox and in the real bash in an empty directory; stdout, stderr and
// exit status must be equal.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bashSandbox } from "../helpers/differential.js";

const gnu = (tool: string) =>
  spawnSync(tool, ["--version"], { encoding: "utf8" }).stdout?.includes("GNU coreutils") ?? false;

/** Lines to sort: mixed case, blanks, numbers, punctuation, UTF-8, an empty line. */
const MIXED =
  "printf 'banana\\nApple\\n  cherry\\napple\\n10\\n9\\n-3\\n_x\\n\\nBanana\\n2.5\\n-0\\n+4\\nzébre\\nété\\n1e3\\n 7\\n' > mixed";
/** Fields: name, team, score, date. */
const TABLE =
  "printf 'ann b 30 2024-03-01\\nbob a 7 2023-12-31\\ncid b 7 2024-01-15\\ndee a 100 2024-03-01\\neve c -5 2022-06-30\\nfay a 7 2023-12-31\\n' > table";
const CSV = "printf 'x,3,q\\ny,10,p\\nz,2,q\\nw,10,a\\nv,,b\\n' > csv";

const SORT: [string, string][] = [
  ["sort: byte order", `${MIXED}; sort mixed`],
  ["sort -r", `${MIXED}; sort -r mixed`],
  ["sort -f", `${MIXED}; sort -f mixed`],
  ["sort -f -r", `${MIXED}; sort -fr mixed`],
  ["sort -f -s", "printf 'b\\nA\\na\\nB\\nb\\nA\\n' | sort -fs"],
  ["sort -f -u", "printf 'b\\nA\\na\\nB\\nb\\nA\\n' | sort -fu"],
  ["sort -f -u -r", "printf 'b\\nA\\na\\nB\\nb\\nA\\n' | sort -fur"],
  ["sort -u", `${MIXED}; cat mixed mixed | sort -u`],
  ["sort -n", `${MIXED}; sort -n mixed`],
  ["sort -n -s", `${MIXED}; sort -n -s mixed`],
  ["sort -rn", `${MIXED}; sort -rn mixed`],
  ["sort -nu", "printf '1\\n01\\n1.0\\nx\\n\\n0\\n-0\\n2\\n' | sort -nu"],
  [
    "sort -n: long and fractional numbers",
    "printf '123456789012345678901234567890\\n123456789012345678901234567891\\n0.000001\\n.5\\n-.5\\n-1.25\\n-1.3\\n00012\\n12.\\n' | sort -n",
  ],
  ["sort -b", "printf '  b\\na\\n c\\n\\tb\\n' | sort -b"],
  ["sort -k2", `${TABLE}; sort -k2 table`],
  ["sort -k2,2", `${TABLE}; sort -k2,2 table`],
  ["sort -k2,2 -s", `${TABLE}; sort -s -k2,2 table`],
  ["sort -k3n", `${TABLE}; sort -k3n table`],
  ["sort -k3,3nr -k1,1", `${TABLE}; sort -k3,3nr -k1,1 table`],
  ["sort -k2,2 -k3,3n", `${TABLE}; sort -k2,2 -k3,3n table`],
  ["sort -r -k3,3n (a key with options keeps its own order)", `${TABLE}; sort -r -k3,3n table`],
  ["sort -n -k3 (a key without options takes the global ones)", `${TABLE}; sort -n -k3,3 table`],
  ["sort -k4.6,4.7 -k4.1,4.4", `${TABLE}; sort -k4.6,4.7 -k4.1,4.4 table`],
  ["sort -k1.2", `${TABLE}; sort -k1.2 table`],
  ["sort -k2b,2 on padded fields", "printf 'x   b\\ny a\\nz  c\\n' | sort -k2b,2"],
  ["sort -k2,2 without b keeps the blanks", "printf 'x   b\\ny a\\nz  c\\n' | sort -k2,2"],
  ["sort -t, -k2n", `${CSV}; sort -t, -k2n csv`],
  ["sort -t, -k2,2nr -k3,3", `${CSV}; sort -t, -k2,2nr -k3,3 csv`],
  ["sort -t , -k3 -u", `${CSV}; sort -t , -k3,3 -u csv`],
  ["sort --field-separator= --key=", `${CSV}; sort --field-separator=, --key=3,3 --key=1,1r csv`],
  ["sort -t: -k5 (past the last field)", "printf 'a:b\\nc\\nb:a:z\\n' | sort -t: -k5"],
  ["sort -z", "printf 'b\\0a\\0c\\nx\\0' | sort -z | tr '\\0' '|'"],
  [
    "sort: several files, one without a final newline",
    "printf 'b\\nd' > f1; printf 'c\\na\\n' > f2; sort f1 - f2 <<< 'e'",
  ],
  ["sort -o onto its input", `${MIXED}; sort -o mixed mixed; cat mixed`],
  ["sort -c: sorted", "printf 'a\\nb\\nb\\n' | sort -c; echo $?"],
  ["sort -c: disorder", "printf 'a\\nc\\nb\\n' | sort -c; echo $?"],
  ["sort -cu: equal lines", "printf 'a\\nb\\nb\\n' > f; sort -cu f; echo $?"],
  ["sort -C", "printf 'b\\na\\n' | sort -C; echo $?"],
  ["sort --check=quiet", "printf 'b\\na\\n' | sort --check=quiet; echo $?"],
  ["sort: long options abbreviated", `${MIXED}; sort --rev --numeric mixed`],
  ["sort: options after operands", `${MIXED}; sort mixed -r`],
  ["sort: empty input", "sort < /dev/null; printf '' | sort -n; echo $?"],
  ["sort: a missing file", "sort nope; echo $?"],
  ["sort: a directory", "mkdir d; sort d; echo $?"],
  ["sort: invalid option", "sort -Q < /dev/null; echo $?"],
  ["sort: unrecognized option", "sort --frobnicate < /dev/null; echo $?"],
  ["sort: ambiguous option", "sort --s < /dev/null; echo $?"],
  ["sort: option needs an argument", "sort -k; echo $?"],
  ["sort -k0", "sort -k0 < /dev/null; echo $?"],
  ["sort -k1.0", "sort -k1.0 < /dev/null; echo $?"],
  ["sort -k1,x", "sort -k1,x < /dev/null; echo $?"],
  ["sort -k1x", "sort -k1x < /dev/null; echo $?"],
  ["sort -t ab", "sort -t ab < /dev/null; echo $?"],
  ["sort -c -o", "sort -c -o x < /dev/null; echo $?"],
  ["sort -c with two files", "sort -c a b < /dev/null; echo $?"],
];

const UNIQ: [string, string][] = [
  ["uniq", "printf 'a\\na\\nb\\na\\n\\n\\nc' | uniq"],
  ["uniq -c", "printf 'a\\na\\nb\\na\\n\\n\\nc' | uniq -c"],
  ["uniq -d", "printf 'a\\na\\nb\\na\\nc\\nc\\nc\\n' | uniq -d"],
  ["uniq -u", "printf 'a\\na\\nb\\na\\nc\\nc\\nc\\n' | uniq -u"],
  ["uniq -cd", "printf 'a\\na\\nb\\na\\nc\\nc\\nc\\n' | uniq -cd"],
  ["uniq -du prints nothing", "printf 'a\\na\\nb\\n' | uniq -du; echo $?"],
  ["uniq -D", "printf 'a\\na\\nb\\nc\\nc\\nc\\n' | uniq -D"],
  ["uniq -i", "printf 'a\\nA\\nb\\nB\\nb\\né\\nÉ\\n' | uniq -i"],
  ["uniq -ci", "printf 'Apple\\napple\\nAPPLE\\nbanana\\n' | uniq -ci"],
  ["uniq -f1", "printf 'x a\\ny a\\nz  b\\nw b\\n' | uniq -f1 -c"],
  ["uniq -s2", "printf 'xxa\\nyya\\nzzb\\n' | uniq -s2"],
  ["uniq -w2", "printf 'abc\\nabd\\nacd\\n' | uniq -w2 -c"],
  ["uniq -f1 -s1 -w1", "printf 'k ab\\nj ac\\ni bc\\n' | uniq -f1 -s1 -w1"],
  ["uniq -2 (obsolete: skip fields)", "printf 'a x y\\nb x y\\nc z y\\n' | uniq -2"],
  ["uniq -z", "printf 'a\\0a\\0b\\0' | uniq -zc | tr '\\0' '|'"],
  ["uniq INPUT OUTPUT", "printf 'a\\na\\n' > in; uniq in out; cat out"],
  ["uniq --count --repeated", "printf 'a\\na\\nb\\n' | uniq --count --rep"],
  ["uniq: a missing file", "uniq nope; echo $?"],
  ["uniq: extra operand", "uniq a b c; echo $?"],
  ["uniq: invalid option", "uniq -Q; echo $?"],
  ["uniq -f x", "uniq -f x < /dev/null; echo $?"],
  ["uniq -w -1", "uniq -w -1 < /dev/null; echo $?"],
  ["uniq -cD", "uniq -cD < /dev/null; echo $?"],
  ["uniq --skip (ambiguous)", "uniq --skip 1 < /dev/null; echo $?"],
];

const TEXT = "printf 'Hello, World! 123 café naïve\\ttab\\n\\nSecond  line...\\n' > text";

const TR: [string, string][] = [
  ["tr a-z A-Z", `${TEXT}; tr a-z A-Z < text`],
  ["tr A-Z a-z", `${TEXT}; tr A-Z a-z < text`],
  ["tr [:lower:] [:upper:]", `${TEXT}; tr '[:lower:]' '[:upper:]' < text`],
  ["tr [:upper:] [:lower:]", `${TEXT}; tr '[:upper:]' '[:lower:]' < text`],
  ["tr [:upper:] a-z", `${TEXT}; tr '[:upper:]' 'a-z' < text`],
  ["tr -cs A-Za-z '\\n'", `${TEXT}; tr -cs 'A-Za-z' '\\n' < text`],
  ["tr -c A-Za-z '\\n' (each UTF-8 byte)", `${TEXT}; tr -c 'A-Za-z\\n' '_' < text`],
  ["tr -cs [:alpha:] '\\n'", `${TEXT}; tr -cs '[:alpha:]' '\\n' < text`],
  ["tr -C", `${TEXT}; tr -C '[:alnum:]\\n' '.' < text`],
  ["tr -d [:digit:]", `${TEXT}; tr -d '[:digit:]' < text`],
  ["tr -d [:space:]", `${TEXT}; tr -d '[:space:]' < text`],
  ["tr -d [:punct:]", `${TEXT}; tr -d '[:punct:]' < text`],
  ["tr -cd [:print:]", `${TEXT}; tr -cd '[:print:]' < text`],
  ["tr -d [:cntrl:][:blank:]", `${TEXT}; tr -d '[:cntrl:][:blank:]' < text`],
  [
    "tr -d [:xdigit:] [:graph:]",
    `${TEXT}; tr -d '[:xdigit:]' < text; tr -d '[:graph:]' < text | xxd -p`,
  ],
  ["tr -s ' '", `${TEXT}; tr -s ' ' < text`],
  ["tr -s with two sets", `${TEXT}; tr -s 'a-z' 'A-Z' < text`],
  ["tr -s [:space:]", `${TEXT}; tr -s '[:space:]' < text`],
  ["tr -ds", `${TEXT}; tr -ds 'lo' 'e ' < text`],
  ["tr -cds", "printf 'aa11bb22  cc\\n' | tr -cds '[:alpha:]\\n' 'a-z'"],
  ["tr: SET2 shorter than SET1 is padded", `${TEXT}; tr 'a-z' 'AB' < text`],
  ["tr -t truncates SET1", `${TEXT}; tr -t 'a-z' 'AB' < text`],
  ["tr: [c*] and [c*n] in SET2", `${TEXT}; tr 'a-z' '[x*3][y*]' < text; tr 'a-j' '[0*010]' < text`],
  [
    "tr: escapes and octal",
    "printf 'a\\tb\\\\c\\nd\\001e\\n' | tr '\\t\\\\\\001' 'TBX'; printf 'x\\n' | tr 'x' '\\101'",
  ],
  ["tr: repeated SET1 characters, the last wins", "echo aabbcc | tr 'aa' 'xy'"],
  ["tr: [=c=]", "echo banana | tr '[=a=]' 'o'"],
  ["tr: literal brackets", "echo '[a]b' | tr '[a]' 'xyz'"],
  [
    "tr: a dash at either end is literal",
    "echo 'a-b_c' | tr 'a-' 'x+'; echo 'a-b_c' | tr -- '-a' '+x'",
  ],
  ["tr: newlines to spaces", "printf 'one\\ntwo\\nthree\\n' | tr '\\n' ' '"],
  ["tr: bytes above 127 by octal", "printf 'café\\n' | tr '\\303\\251' 'Ee'"],
  ["tr: a missing operand", "tr a; echo $?; tr; echo $?; tr -ds a; echo $?"],
  ["tr: extra operand", "tr -d a b; echo $?; tr a b c; echo $?"],
  ["tr: options end at the first operand", "echo abc | tr a-c x -s; echo $?"],
  ["tr: invalid option", "tr -Q a b; echo $?"],
  ["tr: reversed range", "tr z-a x; echo $?"],
  ["tr: invalid class", "tr '[:foo:]' x; echo $?"],
  ["tr: misaligned case class", "echo ABC | tr 'A-Z' '[:lower:]'; echo $?"],
  ["tr: other classes in SET2", "echo abc | tr 'a-c' '[:digit:]'; echo $?"],
  ["tr: empty SET2", "echo abc | tr abc ''; echo $?"],
  ["tr: [c*] in SET1", "echo abc | tr '[a*]' x; echo $?"],
  ["tr -c with a class needs one target", "echo abc | tr -c '[:alpha:]' 'xy'; echo $?"],
  [
    "tr --complement --squeeze-repeats",
    `${TEXT}; tr --complement --squeeze '[:alpha:]' '\\n' < text`,
  ],
];

/**
 * A few thousand lines, so that the radix sort's passes (not only its insertion sort for small
 * ranges) and the merge sort's merges are exercised: repeated words in mixed case, numbers,
 * blanks, UTF-8, empty lines.
 */
const BULK =
  "w=(apple Apple APPLE banana Banana 'a b' '' 10 9 -2 été zèbre _x x_ 'apple pie' a ab abc); " +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Bash array subscripts, not a template
  'for i in $(seq 1 3000); do echo "${w[i*7%19]}${w[i*11%19]} $((i*7919%1000)) ${w[i%19]}"; done > bulk';

/** Over 4096 lines of numbers (the numeric radix sort's size): signs, fractions, ties, zeros. */
const NUMBERS =
  'for i in $(seq 1 5000); do echo "$(( (i*7919) % 2001 - 1000 )).$((i % 7)) k$((i % 5))"; done > nums; ' +
  "printf -- '-0\\n0\\n00\\n-0.0\\n.\\n-\\nx\\n1e5\\n12345678901234567890\\n12345678901234567891\\n1234567890123456789.5\\n-12345678901234567890\\n0.0000000000000000000000001\\n0.00000000000000000000000011\\n' >> nums";

const BULK_CASES: [string, string][] = [
  ["numbers: sort -n", `${NUMBERS}; sort -n nums | cksum`],
  ["numbers: sort -rn", `${NUMBERS}; sort -rn nums | cksum`],
  ["numbers: sort -n -s", `${NUMBERS}; sort -n -s nums | cksum`],
  ["numbers: sort -nu", `${NUMBERS}; sort -nu nums | cksum`],
  ["numbers: sort -k1,1n -k2,2r", `${NUMBERS}; sort -k1,1n -k2,2r nums | cksum`],
  ["numbers: sort -k2,2 -k1,1nr", `${NUMBERS}; sort -k2,2 -k1,1nr nums | cksum`],
  ["bulk: sort", `${BULK}; sort bulk | cksum`],
  ["bulk: sort -r", `${BULK}; sort -r bulk | cksum`],
  ["bulk: sort -f", `${BULK}; sort -f bulk | cksum`],
  ["bulk: sort -fr", `${BULK}; sort -fr bulk | cksum`],
  ["bulk: sort -fs", `${BULK}; sort -fs bulk | cksum`],
  ["bulk: sort -frs", `${BULK}; sort -frs bulk | cksum`],
  ["bulk: sort -u", `${BULK}; sort -u bulk | cksum`],
  ["bulk: sort -fu", `${BULK}; sort -fu bulk | cksum`],
  ["bulk: sort -n", `${BULK}; sort -n bulk | cksum`],
  ["bulk: sort -k2,2n", `${BULK}; sort -k2,2n bulk | cksum`],
  ["bulk: sort -k2,2nr -s", `${BULK}; sort -k2,2nr -s bulk | cksum`],
  ["bulk: sort -k3 -k2,2n", `${BULK}; sort -k3 -k2,2n bulk | cksum`],
  ["bulk: sort -k3,3f -u", `${BULK}; sort -k3,3f -u bulk | cksum`],
  ["bulk: sort -b -k2", `${BULK}; sort -b -k2 bulk | cksum`],
  ["bulk: sort | uniq -c | sort -rn", `${BULK}; sort bulk | uniq -c | sort -rn | cksum`],
  ["bulk: uniq -ci after sort -f", `${BULK}; sort -f bulk | uniq -ci | cksum`],
  ["bulk: uniq -f1 -d", `${BULK}; sort -k2 bulk | uniq -f1 -d | cksum`],
  [
    "bulk: tr -cs | sort | uniq -c",
    `${BULK}; tr -cs '[:alpha:]' '\\n' < bulk | sort | uniq -c | cksum`,
  ],
];

/** The word-frequency pipeline the commands exist for, on text with UTF-8 and punctuation. */
const PIPELINES: [string, string][] = [
  [
    "word frequencies",
    `${TEXT}; for i in 1 2 3; do cat text; done > t3; tr -cs 'A-Za-z' '\\n' < t3 | tr A-Z a-z | sort | uniq -c | sort -rn | head`,
  ],
  [
    "sort | uniq -c | sort -k1,1nr -k2",
    `${TABLE}; cut -d' ' -f2 table | sort | uniq -c | sort -k1,1nr -k2`,
  ],
];

const bash = bashSandbox();

function realBash(script: string): { stdout: string; stderr: string; exitCode: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-fidelity-"));
  try {
    const r = spawnSync("/bin/bash", ["--norc", "-c", script], {
      cwd: dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH, LC_ALL: "C" },
    });
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sandboxed(script: string) {
  // Each case starts from an empty directory, as the real one does.
  const r = await bash.sb.run("bash", `cd "$(mktemp -d)"\n${script}`);
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
}

describe.runIf(gnu("sort") && gnu("uniq") && gnu("tr"))("sort, uniq and tr match GNU's", () => {
  it.each([...SORT, ...UNIQ, ...TR, ...BULK_CASES, ...PIPELINES])("%s", async (_label, script) => {
    expect(await sandboxed(script)).toEqual(realBash(script));
  });
});

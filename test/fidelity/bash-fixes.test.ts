// Differential, one assertion per fix: the commands polybox adds or wraps for GNU fidelity
// (src/guest/engines/bash/commands/), each patch to just-bash
// (wasm/patches/just-bash+*.patch), and the engine's run-up-to-a-syntax-error. Each script runs in a
// polybox sandbox and in the real bash (as a script file) in an empty directory; stdout and exit status must be equal.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bashSandbox } from "../helpers/differential.js";

const has = (tool: string) => spawnSync("/bin/bash", ["-c", `command -v ${tool}`]).status === 0;

/** Each patch in wasm/patches/ and the behaviour it gives. */
const PATCHES: [string, string][] = [
  ["awk int() truncates toward zero", "awk 'BEGIN {print int(-3.7), int(3.7), int(-0.5)}'"],
  ["awk printf %d truncates toward zero", "awk 'BEGIN {printf \"%d %i %d\\n\", -3.9, 3.9, -0.5}'"],
  ["jq @csv quotes every string", `echo '[["a b",1,"c\\"d",null,true,"x"]]' | jq -r '.[] | @csv'`],
  [
    "set -e: a failing command in a function on the left of && does not exit",
    "set -e; f() { false; echo inside; }; f && echo ok; echo end",
  ],
  ["set -e: the last command of an && list still exits", "set -e; true && false; echo no"],
  ["set -e: || lists", "set -e; g() { false; echo in-g; }; g || echo rescued; echo end"],
  ["|& puts stdout first", "{ echo out; echo err >&2; } |& cat"],
  [
    "$(( )) expands substitutions as text, then evaluates the whole",
    "printf '6*7\\n' > e; x='2+3'; a=(1 2 3); echo $(( $(cat e) )) $(( ${x} * 2 )) $(( $(echo 2+3) * 2 )) $(( ${a[1]} + ${#a[@]} )) $(( `echo 4` * 2 )) $(( $(echo) + 3 ))",
  ],
  ["glob */ matches directories only", "mkdir -p gd hd; touch gf; echo */; echo g*/"],
  ["glob */ without directories stays literal", "touch only-a-file; echo */"],
  // Up to 2^53: just-bash's integers are JavaScript numbers (README: Bash limits).
  [
    "shifts are 64-bit",
    "echo $((1 << 40)) $((1 << 52)) $((2 ** 40 >> 38)) $((-16 >> 2)) $((1 << 64))",
  ],
  [
    "set -u: a default in double quotes",
    `set -u; echo "\${UNSET_VAR:-default}" "\${OTHER-x}" "\${UNSET_VAR:+alt}"; echo "$NOPE"; echo no`,
  ],
  [
    "grep -o skips empty matches and keeps going",
    "echo 'The quick brown' | grep -o '[a-z]*'; echo aaa | grep -o 'b*'; echo rc=$?",
  ],
  [
    "grep -P lookaround falls back to Perl-compatible matching",
    "echo 'a1 b22' | grep -oP '(?<=b)\\d+(?!x)'",
  ],
  [
    "declare -A keeps quoted values with spaces",
    `declare -A m=([k]='two words' [j]="x  y" [e]=''); echo "\${m[k]}|\${m[j]}|\${m[e]}|\${#m[@]}"`,
  ],
  [
    '"${a[*]}" joins with IFS in an assignment',
    `a=(x y z); IFS=:; s="\${a[*]}"; echo "$s"; cat <<<"\${a[*]}"`,
  ],
  [
    "trap ERR runs where set -e would exit, not in functions or subshells",
    "trap 'echo \"T$?\"' ERR; f() { false; echo in; }; f; (false); x=$(false); false || :; true && false; echo end",
  ],
  ["grep BRE \\+ and \\?", "echo 'colour 10.0.0.5' | grep -o 'colou\\?r\\|[0-9]\\+\\.[0-9]\\+'"],
  [
    "break and continue leave the loop with status 0",
    "for i in 1 2 3; do false; [ $i = 2 ] && break; done; echo $?; for ((i = 0; i < 2; i++)); do false; continue; done; echo $?; while :; do false; break; done; echo $?",
  ],
  [
    "$(…) and ${…} inside $(( )) run in the current shell",
    "f() { echo $(( $1 + 1 )); }; declare -A c; k=x; c[$k]=$(( ${c[$k]:-0} + 2 )); echo $(( $(f 4) * ${c[x]} ))",
  ],
  // A compound command whose stderr joins its stdout keeps the order the statements printed in
  // (it gave all of stdout, then all of stderr).
  ["a group's 2>&1", "{ echo a >&2; echo b; echo c >&2; } 2>&1"],
  ["a subshell's 2>&1 into a pipe", "( echo a >&2; echo b ) 2>&1 | cat -n"],
  ["a loop's 2>&1", "for i in 1 2; do echo o$i; echo e$i >&2; done 2>&1"],
  [
    "if and case with 2>&1",
    "if true; then echo a; echo b >&2; echo c; fi 2>&1; case x in x) echo 1 >&2; echo 2;; esac 2>&1",
  ],
  [
    "> file 2>&1 and &> file",
    "{ echo a >&2; echo b; } > f 2>&1; { echo c >&2; echo d; } &> g; cat f g",
  ],
  ["2>&1 >/dev/null keeps only stderr", "{ echo a >&2; echo b; } 2>&1 >/dev/null"],
  [
    "$(…) inside a merged group captures stdout only",
    '{ x=$(echo inner >&2; echo cap); echo "x=$x"; echo e >&2; } 2>&1',
  ],
  [
    "an inner 2>/dev/null inside a merged group",
    "{ { echo in1 >&2; echo in2; } 2>/dev/null; echo o; echo e >&2; } 2>&1",
  ],
  [
    "a merged group's stderr into a file beside",
    '{ echo a >&2; echo b; } 2>err; echo "[$(cat err)]"',
  ],
];

/** Commands and wrappers polybox adds, and the engine's syntax-error handling. */
const COMMANDS: [string, string][] = [
  ["grep -e several", "printf 'foo\\nbar\\nbaz\\n' | grep -e foo -e baz"],
  ["grep -F -e several", "printf 'a.b\\naxb\\nq\\n' | grep -F -e a.b -e q"],
  ["grep -E -e several", "printf 'a1\\nb22\\nc\\n' | grep -E -e '[0-9]{2}' -e '^a'"],
  ["grep -c -e", "printf 'x\\ny\\nz\\n' | grep -c -e x -e z"],
  ["awk -v OFS", "echo 'a b c' | awk -v OFS=- '{$1 = $1; print}'"],
  ["awk -v OFS tab with -F", "printf 'x,y\\n' | awk -F, -v OFS='\\t' '{print $1, $2}'"],
  ["awk -v plain and special", "echo 1 2 | awk -v n=5 -v OFS=: '{print $1 + n, $2}'"],
  ["date -d +1 month", "date -u -d '2024-01-31 +1 month' +%F"],
  ["date -d time then signed number", "date -u -d '2024-03-10 12:00:00 +3 days' '+%Y-%m-%d %H:%M'"],
  ["date -d -1 day", "date -u -d '2024-03-01 -1 day' +%F"],
  ["date -d ago", "date -u -d '2024-03-01 2 weeks ago' +%F"],
  ["date -d next weekday", "date -u -d 'next monday' +%A%H%M"],
  [
    "date -d yesterday vs 1 day ago",
    `[ "$(date -u -d yesterday +%F)" = "$(date -u -d '1 day ago' +%F)" ] && echo same`,
  ],
  [
    "date -d tomorrow vs +1 day",
    `[ "$(date -u -d tomorrow +%F)" = "$(date -u -d '+1 day' +%F)" ] && echo same`,
  ],
  ["od -c spacing", "printf 'ab\\tc\\n' | od -c"],
  ["od -t x1", "printf 'AB' | od -t x1"],
  [
    "diff normal format",
    "printf 'a\\nb\\nc\\nd\\n' > x; printf 'a\\nB\\nc\\ne\\nf\\n' > y; diff x y; echo rc=$?",
  ],
  [
    "diff additions and deletions",
    "printf '1\\n2\\n3\\n' > x; printf '0\\n1\\n3\\n4\\n' > y; diff x y; diff y x",
  ],
  ["diff same", "printf 'a\\n' > x; cp x y; diff x y && echo same"],
  ["diff missing newline", "printf 'a\\nb' > x; printf 'a\\nc\\n' > y; diff x y"],
  ["diff -q", "echo 1 > x; echo 2 > y; diff -q x y; echo rc=$?"],
  [
    "diff -u body",
    "printf 'a\\nb\\nc\\n' > x; printf 'a\\nc\\nd\\n' > y; diff -u x y | tail -n +3",
  ],
  [
    "diff -r",
    "mkdir -p d1/s d2/s; echo 1 > d1/f; echo 2 > d2/f; echo x > d1/only; echo y > d2/s/g; echo y > d1/s/g; diff -r d1 d2; echo rc=$?",
  ],
  ["diff missing file", "echo 1 > x; diff x nosuch; echo rc=$?"],
  ["bc integers", "echo '2+3*4; 2^64; 17 % 5; -7 / 2' | bc"],
  ["bc scale", "echo 'scale=3; 10/3; 1/3*3; 7 % 3' | bc"],
  ["bc -l functions", "echo 's(1); c(1); a(1); l(2); e(1); sqrt(2)' | bc -l"],
  ["bc -l scale", "echo 'scale=4; sqrt(2); 4*a(1)' | bc -l"],
  ["bc leading zeros and negatives", "echo '0.5; -0.25; 0.00; 1.50*1; .5+.5' | bc"],
  ["bc long numbers wrap", "echo '2^300' | bc"],
  [
    "bc ibase and obase",
    "echo 'obase=16; 255; 4096; ibase=16; FF' | bc; echo 'ibase=2; 1010' | bc; echo 'obase=2; 10' | bc",
  ],
  ["bc variables and comparisons", "echo 'x = 3; y = x * 2; y; x < y; x == 3; !0' | bc"],
  [
    "bc if while for",
    "echo 'i = 0; while (i < 3) { i; i = i + 1 }; for (j = 0; j < 6; j += 2) j; if (i == 3) 42 else 0' | bc",
  ],
  [
    "bc functions",
    "printf 'define f(n) {\\n  if (n <= 1) return (1)\\n  return (n * f(n - 1))\\n}\\nf(20)\\n' | bc",
  ],
  [
    "bc auto and arrays",
    "printf 'define s(n) { auto i, t; for (i = 1; i <= n; i++) t += i; return t }\\na[3] = 7; a[3] * 2; s(10)\\n' | bc",
  ],
  ["bc strings and print", `echo '"total: "; 1 + 1; print 3, " and ", 4, "\\n"' | bc`],
  ["bc length and scale()", "echo 'length(123.45); scale(1.230); length(0.001)' | bc"],
  ["bc from a file with quit", "printf '1+1\\nquit\\n2+2\\n' > calc.bc; bc -q calc.bc"],
  ["bc in command substitution", `total=$(echo "1.5 + 2.25" | bc); echo "total=$total"`],
  ["iconv latin1 to utf-8", "printf 'h\\xe9llo\\n' | iconv -f latin1 -t utf-8"],
  [
    "iconv utf-8 to latin1",
    "printf 'h\\xc3\\xa9llo\\n' | iconv -f utf-8 -t iso-8859-1 | od -An -tx1",
  ],
  ["iconv utf-16le", "printf 'ab' | iconv -f utf-8 -t utf-16le | od -An -tx1"],
  ["iconv unrepresentable", "printf 'a\\xe2\\x82\\xacb\\n' | iconv -f utf-8 -t ascii; echo rc=$?"],
  ["iconv //TRANSLIT", "printf 'caf\\xc3\\xa9\\n' | iconv -f utf-8 -t ascii//TRANSLIT"],
  [
    "zip and unzip -l",
    "printf '1\\n2\\n' > n.txt; echo x > l.txt; zip -q z.zip n.txt l.txt && unzip -l z.zip | tail -1 | awk '{print $1, $2}'",
  ],
  [
    "zip -r and unzip -d",
    "mkdir -p src/sub; echo a > src/a; echo b > src/sub/b; zip -qr z.zip src && unzip -q z.zip -d out && cat out/src/a out/src/sub/b",
  ],
  ["unzip -p", "echo hello > h.txt; zip -q z h.txt; unzip -p z.zip h.txt"],
  ["unzip missing archive", "unzip -q nosuch.zip; echo rc=$?"],
  [
    "tar cf, tf: directories recursively, with a trailing slash",
    "mkdir -p d/sub; echo a > d/a; echo b > d/sub/b; tar cf t.tar d; tar tf t.tar | sort",
  ],
  [
    "tar czf and xzf -C",
    "mkdir d out; echo hi > d/x; tar czf t.tgz d && tar xzf t.tgz -C out && cat out/d/x; tar tzf t.tgz | sort",
  ],
  [
    "tar -czf, -xzf, -tf (gzip found by its bytes)",
    "echo 1 > f; tar -czf a.tar.gz f; rm f; tar -xzf a.tar.gz && cat f; tar -tf a.tar.gz",
  ],
  [
    "tar -tvf: mode, size, date and name as GNU lays them out",
    "echo hello > f; chmod 640 f; mkdir d; seq 1 20000 > d/big; touch -d '2024-01-02 03:04:05' f d d/big; tar cf a.tar f d; tar tvf a.tar | sed 's,^\\([^ ]*\\) [^ ]*/[^ ]*,\\1 U/G,'",
  ],
  ["tar cf - | tar tf -", "mkdir d; echo x > d/y; tar cf - d | tar tf -"],
  [
    "tar cf - | tar xf - -C",
    "mkdir d out; echo x > d/y; tar cf - d | tar xf - -C out; cat out/d/y",
  ],
  ["tar cvf prints the names", "mkdir d; echo 1 > d/a; tar cvf a.tar d"],
  [
    "tar xvf prints the names and extracts",
    "mkdir d; echo 1 > d/a; tar cf a.tar d; rm -r d; tar xvf a.tar; cat d/a",
  ],
  [
    "tar --exclude",
    "mkdir -p d/.git; echo 1 > d/a; echo 2 > d/b.log; echo 3 > d/.git/c; tar cf a.tar --exclude='*.log' --exclude=.git d; tar tf a.tar | sort",
  ],
  [
    "tar xf keeps the modes",
    "echo '#!/bin/sh' > s; chmod 755 s; echo x > r; chmod 600 r; tar cf a.tar s r; mkdir o; tar xf a.tar -C o; stat -c '%a %n' o/s o/r",
  ],
  [
    "tar: absolute names lose their leading /",
    'echo x > x; tar cf a.tar "$PWD/x" 2>&1; tar tf a.tar | sed "s,^${PWD#/}/,,"',
  ],
  [
    "tar -P keeps them; extraction strips them again",
    'echo x > x; tar cPf a.tar "$PWD/x"; tar tf a.tar | sed "s,^$PWD/,,"; mkdir o; tar xf a.tar -C o 2>&1; ls o/tmp/*/x | wc -l',
  ],
  [
    "tar xf refuses a member with ..",
    "mkdir d o; echo x > x; cd d; tar cPf ../a.tar ../x; cd ..; tar xf a.tar -C o; echo rc=$?; ls o | wc -l",
  ],
  ["tar: a missing file", "echo x > x; tar cf a.tar nosuch x; echo rc=$?; tar tf a.tar"],
  ["tar: a missing archive", "tar xf nosuch.tar; echo rc=$?; tar tf nosuch.tar; echo rc=$?"],
  [
    "tar: not an archive, an empty file, zero blocks",
    "echo junk > j; tar tf j; echo rc=$?; : > e; tar tf e; echo rc=$?; head -c 700 /dev/zero > z; tar tf z; echo rc=$?",
  ],
  [
    "tar: a member not in the archive",
    "echo x > x; tar cf a.tar x; tar tf a.tar nope x; echo rc=$?",
  ],
  ["tar: nothing to archive", "tar cf a.tar; echo rc=$?"],
  [
    "tar xf with member names",
    "mkdir -p d/e; echo 1 > d/a; echo 2 > d/e/b; tar cf a.tar d; rm -r d; tar xf a.tar d/e; find d | sort",
  ],
  ["tar -O", "echo hello > h; tar czf a.tgz h; tar xOzf a.tgz"],
  [
    "tar: long names",
    "n=$(head -c 120 /dev/zero | tr '\\0' x); mkdir -p d/$n; echo 1 > d/$n/f; tar cf a.tar d; rm -r d; tar xf a.tar; tar tf a.tar | awk '{print length($0)}'; cat d/$n/f",
  ],
  [
    "tar: symbolic links stay links",
    "echo x > t; ln -s t l; tar cf a.tar t l; mkdir o; tar xf a.tar -C o; readlink o/l; cat o/l; tar tvf a.tar | awk '{print $1, $NF}'",
  ],
  [
    "file: text, its encodings and line terminators",
    "echo hello > a.txt; printf 'h\\xc3\\xa9llo\\n' > u.txt; echo 77u/Ym9tCg== | base64 -d > bom; printf 'a\\r\\nb\\r\\n' > crlf; printf 'a\\rb\\r' > cr; printf 'a\\r\\nb\\n' > mixed; printf 'no newline' > nonl; echo bGF0aW4g6Qo= | base64 -d > lat; echo YcOpgAo= | base64 -d > non-iso; printf 'a\\x1b[1mb\\n' > esc; head -c 400 /dev/zero | tr '\\0' x > long; echo >> long; printf 'h\\xc3\\xa9\\r\\n' > u-crlf; file *",
  ],
  [
    "file: empty, directory, symbolic links, data",
    ": > e; mkdir d; ln -s e l; ln -s nosuch b; printf '\\x00\\x01\\xff' > bin; file e d l b bin",
  ],
  [
    "file: scripts",
    "printf '#!/bin/bash\\necho\\n' > a; printf '#!/bin/sh\\n' > b; printf '#!/usr/bin/env bash\\n' > c; printf '#!/usr/bin/env python3\\n' > d; printf '#!/usr/bin/env node\\n' > e; printf '#!/usr/bin/perl\\n' > f; printf '#!/usr/bin/foo\\n' > g; printf '#!/bin/bash\\r\\nx\\r\\n' > h; printf '#!/bin/zsh\\n' > i; chmod +x a; file a b c d e f g h i",
  ],
  [
    "file: JSON, HTML, XML",
    `printf '{"a": [1, 2]}\\n' > j; printf '[1,\\n2]' > k; echo 1 > n; echo null > o; printf '{"a": ' > p; printf '<!DOCTYPE html>\\n<html></html>\\n' > h; printf '<?xml version="1.0"?>\\n<a/>\\n' > x; file j k n o p h x`,
  ],
  [
    "file: PNG, GIF and JPEG with their sizes",
    "echo iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAAAAAAA | base64 -d > rgb.png; echo iVBORw0KGgoAAAANSUhEUgAAAQAAAAAgCAYAAAEAAAAA | base64 -d > rgba.png; printf 'GIF89a\\x05\\0\\x07\\0\\0\\0\\0;' > i.gif; echo /9j/4AAQSkZJRgABAQAAAQABAAD/wAARCAAgAEADASIAAhEBAxEB | base64 -d > i.jpg; file rgb.png rgba.png i.gif i.jpg",
  ],
  [
    "file: PDF, Zip, tar and gzip",
    "echo JVBERi0xLjQKJeLjCg== | base64 -d > d.pdf; echo UEsDBAoAAAAAALmUd10gMDo2BgAAAAYAAAABABwAYVVUCQAD/YcEa/2HBGt1eAsAAQQAAAAABAAAAABoZWxsbwpQSwECHgMKAAAAAAC5lHddIDA6NgYAAAAGAAAAAQAYAAAAAAABAAAApIEAAAAAYVVUBQAD/YcEa3V4CwABBAAAAAAEAAAAAFBLBQYAAAAAAQABAEcAAABBAAAAAAA= | base64 -d > z.zip; echo x > x; tar cf t.tar x; tar czf t.tgz x; file d.pdf z.zip t.tar t.tgz",
  ],
  [
    "file -b, --mime-type, -i, --mime",
    "echo hi > a; printf 'h\\xc3\\xa9\\n' > u; echo bOkK | base64 -d > l; : > e; mkdir d; printf '\\x00\\x01' > bin; echo '{}' > j; printf '#!/bin/sh\\n' > s; file -b a; file --mime-type a u e d bin j s; file -i a u l e d bin j; file --mime s; file -bi u",
  ],
  [
    "file - reads stdin; a one-byte file",
    "printf 'hi\\n' | file -; printf '\\x00' | file -b -; printf a > a; file a; printf '\\x00' | file -bi -",
  ],
  ["file: a missing file, no operands", "echo x > a; file nosuch a; echo rc=$?; file; echo rc=$?"],
  [
    "tar -k keeps existing files",
    "echo old > f; tar cf a.tar f; echo new > f; tar xkf a.tar; echo rc=$?; cat f",
  ],
  ["file -L follows links", "echo x > t; ln -s t l; ln -s nosuch b; file -L l b; file l"],
  ["seq -f", "seq -f 'item%02g' 3; seq -f '%.2f' 0 0.25 1; seq -f '%e' 2 2; seq -s, -f '%g%%' 3"],
  [
    "cut --complement",
    "echo 'a,b,c,d' | cut -d, -f2,4 --complement; echo abcdef | cut -c2-3 --complement",
  ],
  ["paste - - -", "seq 7 | paste - - -; seq 4 | paste -d, - -"],
  [
    "sed one-line a\\ i\\ c\\",
    "printf 'one\\ntwo\\n' | sed -e '1i\\header' -e '$a\\  footer' -e '/two/c\\TWO'",
  ],
  ["ls several files", "touch b a c; ls c a b; ls a nosuch 2>/dev/null; echo rc=$?"],
  [
    "ls of a missing operand says so in GNU's words",
    `mkdir d; ls /nope 2>&1; echo rc=$?; ls -l nope/ 2>&1; ls "a b" 2>&1; ls "it's" 2>&1; touch f; ls f nope 2>&1 >/dev/null`,
  ],
  // GNU puts blank lines only between directory listings, never between files' long lines.
  [
    "ls -l several files",
    "touch b a; ls -l a b | wc -l; ls -l b a | awk '{print $NF}'; ls -la a b | wc -l",
  ],
  ["EXIT trap sees the exit status", "trap 'echo \"exiting with $?\"' EXIT; exit 4"],
  ["syntax error: the commands before it run", "echo before\nif then\necho after"],
  [
    "syntax error inside a compound command",
    "echo one\nfor i in 1 2; do\n  echo $i\n  if then\ndone\necho after",
  ],
  ["syntax error on the first line", "echo before; if then; echo after"],
  ["unterminated if at the end", "echo start\nif true; then\n  echo inside"],
];

const bash = bashSandbox();

/**
 * The script as a file outside the working directory: polybox runs code as bash runs a script
 * file, which differs from `bash -c` in places (an unbound variable exits 1, not 127).
 */
function scriptFile(script: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-script-"));
  const file = path.join(dir, "script.sh");
  writeFileSync(file, `${script}\n`);
  scripts.push(dir);
  return file;
}
const scripts: string[] = [];
afterAll(() => {
  for (const dir of scripts) rmSync(dir, { recursive: true, force: true });
});

function realBash(script: string): { stdout: string; exitCode: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "polybox-fidelity-"));
  try {
    const r = spawnSync("/bin/bash", [scriptFile(script)], {
      cwd: dir,
      encoding: "utf8",
      input: "",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", TZ: "UTC" },
    });
    return { stdout: r.stdout, exitCode: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function compare(script: string): Promise<void> {
  const expected = realBash(script);
  // Each case starts from an empty directory, as the real one does. The cd has its own run so
  // that the script's line numbers are its own.
  await bash.sb.run("bash", `cd "$(mktemp -d)"`);
  const r = await bash.sb.run("bash", script, { env: { TZ: "UTC", LANG: "C.UTF-8" } });
  expect({ stdout: r.stdout, exitCode: r.exitCode }).toEqual(expected);
}

describe("patches to just-bash give bash's behaviour", () => {
  it.each(PATCHES)("%s", async (_label, script) => compare(script));
});

describe.runIf(
  has("bc") && has("zip") && has("unzip") && has("iconv") && has("tar") && has("file"),
)("commands polybox adds match GNU's", () => {
  it.each(COMMANDS)("%s", async (_label, script) => compare(script));
});

describe("what cannot be real says so", () => {
  it("mkfifo fails with a reason instead of 'command not found'", async () => {
    const r = await bash.sb.run("bash", "mkfifo /tmp/p; echo rc=$?");
    expect(r.stdout).toBe("rc=1\n");
    expect(r.stderr).toMatch(/named pipes are not supported/);
  });

  it("a syntax error is reported with bash's status after the lines before it ran", async () => {
    const r = await bash.sb.run("bash", "echo ran\nfi\necho not");
    expect(r.stdout).toBe("ran\n");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^bash: line 2: .*syntax error/m);
  });
});

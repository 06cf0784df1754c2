import { describe, expect, it } from "vitest";
import { bashInTempDir, bashSandbox } from "../helpers/differential.js";
import { Sandbox } from "../helpers/runtime.js";

const CASES: [string, string][] = [
  [
    "paths with ., .., //, a trailing / and names that only begin with dots (a path already in normal form is taken as it is)",
    "mkdir -p pn/e/f; echo one > pn//e/./f/x; cat pn/e/f/x ./pn/e/../e/f//x; echo two > pn/e/f/..y; echo three > pn/e/f/.z; " +
      "echo four > 'pn/e/f/...'; ls -a pn/e/f/ | tr '\\n' ' '; echo; cat pn/e/f/../f/..y pn/e/f/./.z 'pn/e/f/...'; " +
      "rm pn/e/f/../f/x; ls -A pn/e/f | wc -l; [ -d pn/e/. ] && echo dot; [ -d pn/e/f/.. ] && echo dotdot; " +
      "cd pn/e/f/..; ls | tr '\\n' ' '; echo; cd ../../; ls pn/e/f/...; cat pn/../pn/e/f/.z",
  ],
  [
    "awk printf 50,000 times into a file (each printf measured the whole output so far)",
    `awk 'BEGIN{for(i=0;i<50000;i++) printf "[%d],", i; print ""}' > w.json; wc -c w.json; tail -c 20 w.json`,
  ],
  [
    "case: the same patterns matched again and again",
    "for p in a.txt b.sh c d.TXT e.bash a.txt; do case $p in *.txt) echo txt;; *.sh|*.bash) echo sh;; [cd]*) echo cd;; *) echo other;; esac; done",
  ],
  [
    "case: nocasematch is part of what is kept",
    "shopt -s nocasematch; case ABC in abc) echo match;; esac; shopt -u nocasematch; case ABC in abc) echo wrong;; *) echo nomatch;; esac",
  ],
  [
    "case and [[ ]]: more distinct patterns than the cache holds",
    "n=0; for i in $(seq 1 400); do case x$i in x$i) n=$((n + 1));; esac; [[ y$i == y$((i + 1)) ]] && n=0; done; echo $n",
  ],
  ["[[ == ]] with a glob", "[[ hello == h*o ]] && echo yes; [[ hello == h?o ]] || echo no"],
  [
    "a+=() after unset of the last element",
    `a=(x y z); unset 'a[2]'; a+=(w); echo "\${!a[@]} \${a[@]}"`,
  ],
  ["a+=() after a sparse assignment", `b=(); b[5]=q; b+=(r s); echo "\${!b[@]}"`],
  ["a+=() after emptying the array", `c=(1 2 3); c=(); c+=(k); echo "\${!c[@]} \${c[@]}"`],
  ["a+=() onto a scalar", `d=scalar; d+=(t); echo "\${!d[@]} \${d[@]}"`],
  [
    "a+=() on a copy and on the original",
    `e=(a b); f=("\${e[@]}"); f+=(c); e+=(d); echo "\${!e[@]} / \${!f[@]}"`,
  ],
  ["a+=() after unset of the whole array", `h=(1 2 3); unset h; h+=(z); echo "\${!h[@]} \${h[@]}"`],
  [
    "a+=() in a loop, with unsets in between",
    `a=(); for i in $(seq 1 50); do a+=("$i"); (( i % 7 == 0 )) && unset "a[$(( \${#a[@]} - 1 ))]"; done; echo "\${#a[@]} \${a[*]: -3}"`,
  ],
  ["associative +=()", `declare -A m=([k]=v); m+=([j]=u); echo "\${#m[@]}"`],
  [
    "a+=() onto an array of 200,000 (the old code spread every index into Math.max and overflowed the stack)",
    `a=($(seq 1 200000)); a+=(x); echo "\${#a[@]} \${a[200000]} \${a[199999]}"`,
  ],
  [
    "a+=() 20,000 times in a loop (each append copied the whole array first, so it was quadratic)",
    `a=(); for i in $(seq 1 20000); do a+=("$i"); done; echo "\${#a[@]} \${a[0]} \${a[19999]}"`,
  ],
  [
    "a+=() of several words onto a sparse array with holes keeps bash's indices and order",
    `a=(p q r); a[5]=x; a+=(y); unset 'a[1]'; a+=(s t "two words" ''); echo "\${!a[@]}"; printf '<%s>' "\${a[@]}"; echo`,
  ],
  [
    "a+=() with keyed elements, and an associative array beside it",
    `a=(p); a+=([4]=k l); a+=([0]+=z); echo "\${!a[@]} \${a[*]}"; declare -A m=([k]=v); m+=([j]=u); m+=([k]+=w); echo "\${#m[@]} \${m[k]} \${m[j]}"`,
  ],
  [
    "${#a[@]} and ${a[-1]} on every pass of a 20,000-append loop (each read sorted all the keys, and the length joined every value first, so the loop was quadratic)",
    `a=(); for i in $(seq 1 20000); do a+=("$i"); n=\${#a[@]}; l=\${a[-1]}; done; echo "$n $l \${a[-20000]} $(( a[-1] + a[-2] ))"`,
  ],
  [
    "${#a[@]} and negative indices after unsets, sparse and repeated assignments, copies and locals",
    `a=(p q r s); unset 'a[1]'; echo \${#a[@]} \${a[-1]}; a[1]=x; a[1]=y; echo \${#a[@]}; a[9]=z; echo \${#a[*]} \${a[-1]} \${a[-7]}x \${a[-10]}; unset 'a[9]'; echo \${#a[@]} \${a[-1]} $((a[-2])); b=("\${a[@]}"); b+=(t); echo \${#a[@]} \${#b[@]}; a=(); echo \${#a[@]}; unset a; echo \${#a[@]}; f() { local -a e=(1 2); e+=(3); echo \${#e[@]} \${e[-1]}; }; f; echo \${#e[@]}`,
  ],
  [
    "${#m[@]} of an associative array, and ${#x[@]} of a scalar",
    `declare -A m=([k]=v [j]=u); echo \${#m[@]}; unset 'm[k]'; echo \${#m[@]}; m[k]=w; m[k]=w2; echo \${#m[@]}; x=scalar; echo \${#x[@]} \${#x}; echo \${#FUNCNAME[@]}; g() { echo \${#FUNCNAME[@]}; }; g`,
  ],
  [
    "a negative index past the start is a bad subscript, and the script goes on",
    `a=(1 2 3); echo "[\${a[-4]}]" 2>&1; echo $(( a[-4] )) 2>&1; echo after`,
  ],
  [
    "plain words beside globs, braces, quotes, escapes, noglob, nullglob and IFS",
    `mkdir -p g && touch g/a1 g/b2 g/.h; (cd g; echo a* ?2 [ab]1 'a*' "b*" \\* a\\* .*; echo {x,y}z a{1..3} =x x= -- -n a=b@c; set -f; echo a* [ab]1; set +f; shopt -s nullglob; echo zz* end; shopt -u nullglob; echo zz*; printf '<%s>' "" '' x; echo; for w in one "two three" four*; do printf '[%s]' "$w"; done; echo; IFS=:; echo a:b c:d; x=p:q; echo $x)`,
  ],
  [
    "arithmetic on plain integers: operators, precedence, short-circuits, assignments and increments",
    `c=0; for i in $(seq 1 50); do c=$((c + i * 7 % 5)); done; echo $c; echo $((1 && 0)) $((0 || 7)) $((3 > 2 ? 10 : 20)) $((!0)) $((~5)) $((-7 / 2)) $((7 % -3)) $((2 ** 10)) $(( (1 << 40) >> 3 )) $((1, 2)); ((i = 5, j = i++ + ++i)); echo $i $j; k=4; ((k += 3)); k=$((k - 1)); k=$((k * 5 / 2)); echo $k; for ((n = 0; n < 5; n++)); do :; done; echo $n; for ((m = 10; m > 0; m -= 3)); do printf '%s ' $m; done; echo; ((0 && never_x++)); ((1 || never_y++)); echo "\${never_x-unset} \${never_y-unset}"`,
  ],
  [
    "arithmetic on values that are not plain integers: empty, unset, spaced, names of other variables, expressions, arrays",
    `x=; echo $((x + 1)) $((unset_v + 2)); z="  5"; echo $((z * 2)); w=abc; abc=4; echo $((w + 1)); q="1+2"; echo $((q * 3)); a=(7 8 9); echo $((a + a[2])); e=x; ((e += 2)); echo $e`,
  ],
  [
    "arithmetic errors keep their statuses",
    `x=0; (( 5 % x )) 2>/dev/null; echo "rc=$?"; (( 2 ** -1 )) 2>/dev/null; echo "rc=$?"; (( 0 )); echo "rc=$?"; (( 3 - 3 + 1 )); echo "rc=$?";`,
  ],
  [
    "commands reading the file system and the environment, in a loop",
    `mkdir d; for i in 1 2 3; do echo "line $i" > d/f$i; done; cat d/f2; ls d | wc -l; export V=val; env | grep '^V='; printenv V; W=1 env | grep '^W='`,
  ],
  [
    "a command's stdin from a pipe, a here-string and a redirection",
    `seq 1 5 | while read -r x; do echo "[$x]"; done | tr -d '\n'; echo; wc -c <<< "hello"; printf 'a\nb\n' > f; wc -l < f; cat < f | sort -r`,
  ],
  [
    "commands that run other commands (xargs, find -exec)",
    `mkdir -p t; touch t/a t/b; printf '%s\n' t/a t/b | xargs -n1 echo got; find t -type f -exec echo found {} ; | sort`,
  ],
  [
    "a failing command, then set -e stopping a loop",
    `cat /nonexistent 2>/dev/null; echo "rc=$?"; set -e; for i in 1 2 3; do echo $i; [ $i = 2 ] && cat /missing 2>/dev/null; done; echo never`,
  ],
  [
    "stdout and stderr order through redirections in a loop",
    `for i in 1 2 3; do echo out$i 2>&1; echo err$i 2>&1 >&2; printf 'p%s\\n' $i >&2; done 2>/dev/null | cat; for i in 1 2; do echo e$i >&2; done 2>&1 >/dev/null | cat; { echo a; printf 'b\\n'; echo c >&2; } 2>/dev/null`,
  ],
  [
    "subshells and command substitution around commands",
    `x=$(echo hi; printf '%s' there); (echo "$x"; seq 2 3) | tr '\n' ' '; echo; echo $(seq 1 3 | wc -l); (exit 4); echo $?`,
  ],
  [
    "commands loaded on first use, called again, and failing",
    `for i in 1 2 3; do rev <<< "ab$i"; seq 2>/dev/null; echo "rc=$?"; basename /x/y$i; done; tac <<< "$(seq 1 3)"; fold -w 2 <<< abcde; expr 2 + 3; expr 1 / 0 2>/dev/null; echo "rc=$?"`,
  ],
  [
    "echo run as a builtin: its options, xpg_echo, pipes, substitutions and redirections",
    `echo -n a; echo -e 'b\\tc'; echo -E 'd\\te'; echo -ne 'x\\n'; echo -- -n; shopt -s xpg_echo; echo 'p\\tq'; shopt -u xpg_echo; x=$(echo sub); echo "$x" | tr a-z A-Z; for i in 1 2 3; do echo "l$i"; done > f; cat f; echo gone >&2 2>/dev/null; echo "rc=$?"`,
  ],
  [
    "echo: a function of that name comes first, builtin and command echo do not call it",
    `echo() { builtin echo "fn:$*"; }; echo hi; command echo cmd; builtin echo plain; x=$(echo in); echo "$x"; unset -f echo; echo back`,
  ],
  [
    "command names and arguments from every kind of word (a plain one is its own value, with nothing awaited)",
    `'echo' a; \\echo b; "ec"ho c; pw_e=echo; $pw_e d; \${pw_e} e; echo '' "" x; echo "" | wc -c; echo *.none [x x] -; pw_c=printf; $pw_c '<%s>' p "q r" ''; echo; PW_X=1 printenv PW_X; pw_x=$(echo sub); echo $pw_x "$pw_x"`,
  ],
  [
    "double-quoted words with literals, arithmetic, variables and substitutions",
    `dq_i=7; dq_s=" sp  aced "; echo "w$((dq_i % 5)) lorem $dq_i ipsum \${dq_i}x $dq_s|$(echo c)|\\$dq_i|'q'|~"; echo "$dq_s" $dq_s; echo "" "\\$dq_i" "a"b'c'; dq_u=; echo "[\${dq_u}]" "[$dq_u]" "\${#dq_s}"`,
  ],
  [
    'the special words of expansion: arrays, "$@", indirection, prefixes and operations',
    `sw_f=(one two "th ree"); printf '<%s>' "\${sw_f[@]}" "\${sw_f[*]}" "\${sw_f[@]/o/0}" "\${sw_f[@]:1}" "\${sw_f[@]#o}" "\${!sw_f[@]}" "\${#sw_f[@]}" \${sw_f[@]} "x\${sw_f[@]}y"; echo; set -- p "q r" s; printf '<%s>' "$@" "$*" "\${@:2}" "\${@/p/P}" "\${@#q}" $@ "a$@b"; echo; declare -n sw_r=sw_f; printf '<%s>' "$sw_r" "\${sw_r[1]}"; echo; swv1=a swv2=b; printf '<%s>' "\${!swv@}" \${!swv*}; sw_n=swv1; printf '<%s>' "\${!sw_n}" \${!sw_n:-d} "\${sw_x:-def}" "\${sw_x:=set}" "$sw_x" "\${sw_x:+alt}" "\${sw_f[1]^^}" "\${sw_n@Q}"; echo`,
  ],
  [
    "process substitution and |& around plain commands",
    `cat <(echo a) <(echo b); wc -l < <(seq 3); while read -r x; do echo "[$x]"; done < <(seq 2); diff <(echo x) <(echo x) && echo same; { echo out; echo err >&2; } |& sort; ls /nonexistent |& wc -l`,
  ],
  [
    "set -x traces plain commands and assignments",
    `{ set -x; echo a; xt_x=1; true; echo "$xt_x" b; set +x; } 2>&1 >/dev/null`,
  ],
  [
    "appending to a file 40,000 times in a loop (each append copied the whole file, so the loop was quadratic)",
    `for i in $(seq 1 40000); do echo "line $i" >> ap.txt; done; wc -l < ap.txt; tail -1 ap.txt; cksum < ap.txt`,
  ],
  [
    "appends to files that share their bytes: a copy, a truncation, a read in between",
    `echo a > s1; for i in 1 2 3; do echo $i >> s1; done; cp s1 s2; echo x >> s1; echo y >> s2; cat s1 s2; cat s1 > s3; echo z >> s3; cat s3 s1; k=$(cat s1); echo w >> s1; echo "$k"; cat s1; echo new > s1; echo more >> s1; cat s1 s2 | tr '\n' ' '; printf 'p' >> s4; printf 'q' >> s4; printf '%s\n' "$(cat s4)"; for f in s1 s2 s3 s4; do wc -c < $f; done`,
  ],
  [
    "a function, its status, and an EXIT trap",
    `f() { printf '%s-' "$@"; echo; return 3; }; trap 'echo bye' EXIT; f a b; echo rc=$?`,
  ],
];

const bash = bashSandbox();

describe("just-bash's speed patches keep bash's behaviour", () => {
  it.each(CASES)(
    "%s",
    async (_label, script) => {
      const want = bashInTempDir(script);
      const got = await bash.sb.run("bash", script);
      expect({ stdout: got.stdout, exitCode: got.exitCode }).toEqual({
        stdout: want.stdout,
        exitCode: want.exitCode,
      });
    },
    60_000,
  );

  it("a file appended to in a loop reaches the workspace whole and exact", async () => {
    const r = await bash.sb.run(
      "bash",
      'rm -f grown.txt; for i in $(seq 1 3000); do echo "row $i" >> grown.txt; done; cksum < grown.txt',
    );
    expect(r.exitCode).toBe(0);
    const want = bashInTempDir(
      'for i in $(seq 1 3000); do echo "row $i" >> grown.txt; done; cksum < grown.txt',
    );
    expect(r.stdout).toBe(want.stdout);
    const bytes = await bash.sb.files.read("grown.txt");
    const text = Buffer.from(bytes).toString("utf8");
    expect(bytes.byteLength).toBe(text.length);
    expect(text.split("\n").length).toBe(3001);
    expect(text.endsWith("row 3000\n")).toBe(true);
  }, 60_000);

  it("a registered command still stops at the run's deadline, and the sandbox runs again", async () => {
    const short = await Sandbox.create({ runtime: bash.runtime, limits: { timeoutMs: 1500 } });
    try {
      const r = await short.run("bash", "echo start; sleep 30; echo never");
      expect(r.status).toBe("timeout");
      expect(r.stdout).toBe("start\n");
      const loop = await short.run("bash", "while true; do echo x > /dev/null; done");
      expect(loop.status).toBe("timeout");
      expect((await short.run("bash", "echo again")).stdout).toBe("again\n");
    } finally {
      await short.close();
    }
  }, 60_000);
});

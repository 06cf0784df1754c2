// What a program can see of the interpreter it runs in, printed in a stable order: two
// interpreters that print the same are indistinguishable to a guest (T6, T6b).

export const FINGERPRINT = {
  python: [
    "import builtins, os, sys",
    'print(sorted(k for k in globals() if k != "__builtins__"))',
    "print(sorted(dir(builtins)))",
    'print(os.listdir("."), sys.stdout.tell() if sys.stdout.seekable() else "-")',
  ].join("\n"),
  javascript: [
    "const own = (o) => Object.getOwnPropertyNames(o).sort().join(',');",
    "console.log(own(globalThis));",
    "console.log(own(console), typeof _, typeof $_);",
    "console.log(require('fs').readdirSync('.').join(','));",
  ].join("\n"),
  typescript: [
    "const own = (o: object): string => Object.getOwnPropertyNames(o).sort().join(',');",
    "console.log(own(globalThis));",
    "console.log(require('fs').readdirSync('.').join(','));",
  ].join("\n"),
  bash: 'echo "[$_][$?][$LINENO]"; set | grep -v -e ^RANDOM= -e ^SECONDS= -e ^EPOCH; declare -p | grep -v RANDOM; ls -A',
} as const;
export type Lang = keyof typeof FINGERPRINT;

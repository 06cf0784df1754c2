# Native mode's Bash driver, run by the native agent as `bash --noprofile --norc -c SOURCE bash
# LIMIT`. $1: the virtual-memory limit in KiB (0: none). Requests: three NUL-terminated fields
# on fd 3 (nonce, the run's `export` lines, the code); the run's stdin is the file the agent
# wrote. Variables, functions and the working directory persist, as in one interactive shell.
if [ "$1" != 0 ]; then ulimit -v "$1"; fi
while IFS= read -r -d '' __polybox_nonce <&3 && IFS= read -r -d '' __polybox_env <&3 &&
      IFS= read -r -d '' __polybox_code <&3; do
  eval "$__polybox_env"
  eval "$__polybox_code" </tmp/.polybox-stdin-bash
  __polybox_status=$?
  printf '%s' "$__polybox_nonce"
  printf '%s' "$__polybox_nonce" >&2
  printf '%s\n' "$__polybox_status" >&4
done

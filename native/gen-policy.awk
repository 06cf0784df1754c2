# Turns policy.txt into a C table, one entry per system call this architecture has.
/^[ \t]*(#|$)/ { next }
{
  if ($1 == "allow") action = "SECCOMP_RET_ALLOW"
  else if ($1 == "kill") action = "SECCOMP_RET_KILL_PROCESS"
  else if ($1 == "errno" && $3 != "") action = "SECCOMP_RET_ERRNO | (" $3 " & SECCOMP_RET_DATA)"
  else { printf "policy.txt:%d: cannot read \"%s\"\n", NR, $0 > "/dev/stderr"; exit 1 }
  printf "#ifdef __NR_%s\n  {__NR_%s, %s, \"%s\"},\n#endif\n", $2, $2, action, $2
}

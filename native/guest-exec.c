// polybox-guest-exec: runs one command in a Landlock domain of its own, inside a native jail.
//
//   polybox-guest-exec COMMAND [ARGS...]
//
// The native agent (polybox's own code, which talks to the server for the sandbox) starts every
// interpreter through this program. The interpreter and everything it starts then live in a
// Landlock domain nested below the agent's, and Landlock forbids a domain to ptrace, read or
// write the memory of (/proc/PID/mem), or (kernel ABI 6 and later) signal a process outside it:
// guest code cannot take the agent over, though both run as the jail's one user. Landlock only
// ever takes rights away, and the jail has set no_new_privs, so nothing here widens anything.
//
// Without Landlock in the kernel the command runs all the same (the jail is still the wall
// toward the host); `polybox doctor` reports whether the agent is out of the guest's reach.

#include <errno.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

// The ruleset's layout as of ABI 6 (older headers lack the last two fields).
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

static long ruleset_version(void) {
  return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

// Enters a new domain. Returns 0, or -1 with errno when Landlock is not there to use.
static int enter_domain(void) {
  long abi = ruleset_version();
  if (abi < 1) return -1;
  // A ruleset must handle some right. Making device nodes is one no guest needs (the jail has
  // no capability to do it anyway): handled and granted nowhere.
  struct ruleset_attr attr = {
      .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK,
  };
  if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
  int rc = (int)syscall(SYS_landlock_restrict_self, fd, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: polybox-guest-exec COMMAND [ARGS...]\n", stderr);
    return 125;
  }
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    // How much of the agent's protection this kernel gives: 0 none, 1 memory and ptrace,
    // 2 also signals.
    long abi = ruleset_version();
    printf("%d\n", abi >= 6 ? 2 : abi >= 1 ? 1 : 0);
    return 0;
  }
  if (enter_domain() < 0 && errno != ENOSYS && errno != EOPNOTSUPP) {
    fprintf(stderr, "polybox-guest-exec: cannot enter a Landlock domain: %s\n", strerror(errno));
    return 126;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "polybox-guest-exec: cannot run %s: %s\n", argv[1], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

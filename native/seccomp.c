// The seccomp-BPF filter: the architecture is checked first, then three calls are checked by
// argument, then every call in policy.txt gets its action; anything else fails with EPERM.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "jail.h"

#if defined(__x86_64__)
#define JAIL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define JAIL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "polybox-jail knows the system call numbers of x86_64 and aarch64 only"
#endif

struct rule {
  int nr;
  unsigned int action;
  const char *name;
};

static const struct rule POLICY[] = {
#include "policy.gen.h"
};

/** Namespaces a jailed process may not make: a new one would undo the jail's view. */
#define NEW_NAMESPACE_FLAGS                                                                        \
  (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |       \
   CLONE_NEWCGROUP)

#define MAX_FILTER 1024
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(value) BPF_STMT(BPF_RET | BPF_K, (value))
#define JEQ(value, jt, jf) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value), (jt), (jf))

static int special(int nr) { return nr == __NR_clone || nr == __NR_socket || nr == __NR_ioctl; }

int install_seccomp(void) {
  struct sock_filter f[MAX_FILTER];
  unsigned n = 0;

  f[n++] = (struct sock_filter)LOAD(arch);
  f[n++] = (struct sock_filter)JEQ(JAIL_AUDIT_ARCH, 1, 0);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
  f[n++] = (struct sock_filter)LOAD(nr);
#if defined(__x86_64__)
  // x32 system calls share the architecture value; none of them is allowed.
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
#endif

  // clone: threads and processes yes, new namespaces never.
  f[n++] = (struct sock_filter)JEQ(__NR_clone, 0, 4);
  f[n++] = (struct sock_filter)LOAD(args[0]);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NAMESPACE_FLAGS, 0, 1);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);

  // socket: local and IP families only (netlink, packet, vsock, ... are refused).
  f[n++] = (struct sock_filter)JEQ(__NR_socket, 0, 6);
  f[n++] = (struct sock_filter)LOAD(args[0]);
  f[n++] = (struct sock_filter)JEQ(AF_UNIX, 3, 0);
  f[n++] = (struct sock_filter)JEQ(AF_INET, 2, 0);
  f[n++] = (struct sock_filter)JEQ(AF_INET6, 1, 0);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA));
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);

  // ioctl: TIOCSTI would push input into a terminal outside the jail.
  f[n++] = (struct sock_filter)JEQ(__NR_ioctl, 0, 4);
  f[n++] = (struct sock_filter)LOAD(args[1]);
  f[n++] = (struct sock_filter)JEQ(TIOCSTI, 0, 1);
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);

  for (size_t i = 0; i < sizeof POLICY / sizeof POLICY[0]; i++) {
    if (special(POLICY[i].nr)) continue;
    if (n + 3 > MAX_FILTER) {
      errno = E2BIG;
      return -1;
    }
    f[n++] = (struct sock_filter)JEQ((unsigned)POLICY[i].nr, 0, 1);
    f[n++] = (struct sock_filter)RET(POLICY[i].action);
  }
  f[n++] = (struct sock_filter)RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));

  struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

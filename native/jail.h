// polybox-jail: starts one command inside a Linux jail (namespaces, a new root, no privileges,
// a seccomp allowlist, rlimits) and reports how it ended. See README.md in this folder.
#ifndef POLYBOX_JAIL_H
#define POLYBOX_JAIL_H

#include <stdbool.h>
#include <sys/types.h>

#define MAX_BINDS 256
#define MAX_KEEP_FDS 16

/** The user and group every jailed process runs as, inside the jail. */
#define JAIL_UID 1000
#define JAIL_GID 1000

struct bind {
  const char *src;
  const char *dst;
  bool writable;
};

struct limits {
  long address_space_mb; /* RLIMIT_AS; 0 = unlimited */
  long data_mb;          /* RLIMIT_DATA; 0 = unlimited */
  long cpu_seconds;      /* RLIMIT_CPU */
  long processes;        /* RLIMIT_NPROC */
  long file_size_mb;     /* RLIMIT_FSIZE */
  long open_files;       /* RLIMIT_NOFILE */
};

struct config {
  struct bind binds[MAX_BINDS];
  int nbinds;
  bool default_binds;
  const char *workspace_dir; /* bound read-write at /workspace */
  long workspace_mb;         /* or a tmpfs of this size at /workspace */
  long tmp_mb;               /* size of the tmpfs at /tmp */
  bool loopback;             /* bring up `lo` in the jail's network namespace */
  const char *cwd;
  struct limits limits;
  long memory_mb; /* cgroup v2 memory.max, where delegated */
  long pids;      /* cgroup v2 pids.max, where delegated */
  long timeout_ms;
  int status_fd;
  int keep_fds[MAX_KEEP_FDS];
  int nkeep;
  bool seccomp;
  bool probe;
  bool host_root;    /* the launcher runs as root on the host */
  uid_t outside_uid; /* who the jail's user is on the host (root only may choose) */
  gid_t outside_gid;
  char **argv;
  char root[64]; /* the directory the new root is built on (made by the launcher) */
};

/** How the command ended, as the jail's init saw it. */
struct outcome {
  int exit_code; /* -1 when killed by a signal */
  int signal;    /* 0 when it exited */
  long cpu_ms;   /* the command's CPU time, user and system */
  char error[200];
};

/* sandbox.c: runs in the jail's first process (pid 1 of the new pid namespace). */
int jail_init(const struct config *cfg, int sync_fd, int result_fd);

/* seccomp.c */
int install_seccomp(void);

/* cgroup.c: optional memory and pids limits on cgroup v2. */
struct cgroup {
  char path[512];
  bool active;
  char reason[200];
};
void cgroup_create(struct cgroup *cg, long memory_mb, long pids);
int cgroup_add(struct cgroup *cg, pid_t pid);
/** Which cgroup limit was hit, or NULL. */
const char *cgroup_verdict(const struct cgroup *cg);
void cgroup_destroy(struct cgroup *cg);

/* util.c */
void die(const char *step);
void fail_with(const char *step, int err);
int write_file(const char *path, const char *text);
int json_string(char *out, size_t size, const char *text);

#endif

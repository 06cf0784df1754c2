// polybox-jail: the launcher. It parses the command line, makes the jail's first process in new
// user, pid, mount, network, ipc, uts and cgroup namespaces, maps the jail's one user, enforces
// the wall-clock timeout, and writes how the command ended as one JSON line to --status-fd.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail.h"

static const char *USAGE =
    "usage: polybox-jail [options] -- command [args...]\n"
    "       polybox-jail --probe [options]\n"
    "\n"
    "  --ro-bind SRC[:DST]   bind a host path read-only (repeatable)\n"
    "  --bind SRC[:DST]      bind a host path read-write (repeatable)\n"
    "  --no-default-binds    do not bind /usr, /lib*, /bin, /sbin and /etc's loader files\n"
    "  --workspace DIR       bind DIR read-write at /workspace\n"
    "  --workspace-mb N      or a tmpfs of N MiB at /workspace\n"
    "  --tmp-mb N            size of the tmpfs at /tmp and /dev/shm's 16 MiB (default 64;\n"
    "                        0: no tmpfs, nothing in the jail is writable but /workspace)\n"
    "  --net none|loopback   the jail's network: nothing, or its own loopback (default none)\n"
    "  --cwd DIR             working directory inside the jail (default /workspace)\n"
    "  --as-mb N --data-mb N --cpu-s N --nproc N --fsize-mb N --nofile N   rlimits\n"
    "  --memory-mb N --pids N   cgroup v2 limits, where the host delegates them\n"
    "  --timeout-ms N        kill the whole jail after N ms of wall time\n"
    "  --status-fd N         write the outcome as one JSON line to fd N\n"
    "  --keep-fd N           pass fd N on to the command (repeatable)\n"
    "  --uid N --gid N       the host ids the jail's user maps to (root only; default 65534)\n"
    "  --no-seccomp          leave out the system call filter (diagnostics only)\n"
    "  --probe               build a jail, run nothing, print what works as JSON\n";

static const char *DEFAULT_BINDS[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/localtime", "/etc/ssl/certs",
    // Configuration that installed Python packages read from /etc (Debian's matplotlib reads
    // /etc/matplotlibrc and fontconfig's files).
    "/etc/matplotlibrc", "/etc/fonts", "/etc/python3", "/etc/mime.types",
};

static void usage_error(const char *what, const char *arg) {
  fprintf(stderr, "polybox-jail: %s%s%s\n%s", what, arg ? ": " : "", arg ? arg : "", USAGE);
  exit(125);
}

static long number(const char *flag, const char *text) {
  char *end;
  errno = 0;
  long value = text ? strtol(text, &end, 10) : -1;
  if (!text || errno || *end || value < 0) usage_error("expected a non-negative number for", flag);
  return value;
}

static void add_bind(struct config *cfg, const char *spec, bool writable) {
  if (cfg->nbinds == MAX_BINDS) usage_error("too many binds", NULL);
  char *copy = strdup(spec);
  char *colon = strchr(copy, ':');
  if (colon) *colon = 0;
  const char *dst = colon ? colon + 1 : copy;
  if (copy[0] != '/' || dst[0] != '/') usage_error("bind paths must be absolute", spec);
  if (strstr(dst, "/..") || strcmp(dst, "/") == 0) usage_error("bad bind destination", spec);
  cfg->binds[cfg->nbinds++] = (struct bind){.src = copy, .dst = dst, .writable = writable};
}

static void parse(struct config *cfg, int argc, char **argv) {
  const char *uid = NULL, *gid = NULL;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define FLAG(name) (strcmp(a, name) == 0)
#define VALUE(name) (FLAG(name) && (v || (usage_error("missing value for", name), 0)) && ++i)
    if (FLAG("--")) {
      i++;
      break;
    } else if (FLAG("--help")) {
      fputs(USAGE, stdout);
      exit(0);
    } else if (VALUE("--ro-bind")) add_bind(cfg, v, false);
    else if (VALUE("--bind")) add_bind(cfg, v, true);
    else if (FLAG("--no-default-binds")) cfg->default_binds = false;
    else if (VALUE("--workspace")) cfg->workspace_dir = v;
    else if (VALUE("--workspace-mb")) cfg->workspace_mb = number(a, v);
    else if (VALUE("--tmp-mb")) cfg->tmp_mb = number(a, v);
    else if (VALUE("--net")) {
      if (strcmp(v, "none") && strcmp(v, "loopback")) usage_error("--net is none or loopback", v);
      cfg->loopback = strcmp(v, "loopback") == 0;
    } else if (VALUE("--cwd")) cfg->cwd = v;
    else if (VALUE("--as-mb")) cfg->limits.address_space_mb = number(a, v);
    else if (VALUE("--data-mb")) cfg->limits.data_mb = number(a, v);
    else if (VALUE("--cpu-s")) cfg->limits.cpu_seconds = number(a, v);
    else if (VALUE("--nproc")) cfg->limits.processes = number(a, v);
    else if (VALUE("--fsize-mb")) cfg->limits.file_size_mb = number(a, v);
    else if (VALUE("--nofile")) cfg->limits.open_files = number(a, v);
    else if (VALUE("--memory-mb")) cfg->memory_mb = number(a, v);
    else if (VALUE("--pids")) cfg->pids = number(a, v);
    else if (VALUE("--timeout-ms")) cfg->timeout_ms = number(a, v);
    else if (VALUE("--status-fd")) cfg->status_fd = (int)number(a, v);
    else if (VALUE("--keep-fd")) {
      if (cfg->nkeep == MAX_KEEP_FDS) usage_error("too many --keep-fd", NULL);
      cfg->keep_fds[cfg->nkeep++] = (int)number(a, v);
    } else if (VALUE("--uid")) uid = v;
    else if (VALUE("--gid")) gid = v;
    else if (FLAG("--no-seccomp")) cfg->seccomp = false;
    else if (FLAG("--probe")) cfg->probe = true;
    else usage_error("unknown option", a);
#undef VALUE
#undef FLAG
  }
  cfg->argv = argv + i;
  if (!cfg->probe && !cfg->argv[0]) usage_error("no command given", NULL);
  if (cfg->workspace_dir && cfg->workspace_dir[0] != '/')
    usage_error("--workspace must be absolute", cfg->workspace_dir);

  cfg->host_root = geteuid() == 0;
  if ((uid || gid) && !cfg->host_root) usage_error("--uid and --gid need root", NULL);
  // Root maps the jail's user to an unprivileged host id, never to itself: a mapping to uid 0
  // would let the jail act as root's files' owner wherever a root-owned file is bound in.
  cfg->outside_uid = cfg->host_root ? (uid_t)(uid ? number("--uid", uid) : 65534) : geteuid();
  cfg->outside_gid = cfg->host_root ? (gid_t)(gid ? number("--gid", gid) : 65534) : getegid();
  if (cfg->host_root && (cfg->outside_uid == 0 || cfg->outside_gid == 0))
    usage_error("the jail's user may not be root on the host", NULL);

  if (cfg->default_binds) {
    struct bind user[MAX_BINDS];
    int nuser = cfg->nbinds;
    memcpy(user, cfg->binds, sizeof user);
    cfg->nbinds = 0;
    for (size_t d = 0; d < sizeof DEFAULT_BINDS / sizeof DEFAULT_BINDS[0]; d++)
      add_bind(cfg, DEFAULT_BINDS[d], false);
    for (int u = 0; u < nuser; u++) {
      if (cfg->nbinds == MAX_BINDS) usage_error("too many binds", NULL);
      cfg->binds[cfg->nbinds++] = user[u];
    }
  }
}

struct child_args {
  struct config *cfg;
  int sync_fd;
  int result_fd;
  /** The launcher's ends of the two pipes, which the clone inherited. */
  int launcher_fds[2];
};

static int child_main(void *arg) {
  struct child_args *a = arg;
  // Init learns of the launcher's death from a hang-up on the sync pipe, which cannot come while
  // init itself holds the write end: drop the launcher's ends before anything else. (Without
  // this, a launcher killed while init changed credentials, which clears the parent-death
  // signal, left init and its command running, reparented outside the jail.)
  close(a->launcher_fds[0]);
  close(a->launcher_fds[1]);
  return jail_init(a->cfg, a->sync_fd, a->result_fd);
}

static int write_maps(pid_t pid, const struct config *cfg) {
  char path[64], map[64];
  if (!cfg->host_root) {
    // An unprivileged user must give up setgroups before it may write a gid map.
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    if (write_file(path, "deny") != 0) return -1;
  }
  snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
  snprintf(map, sizeof map, "%d %d 1\n", JAIL_UID, (int)cfg->outside_uid);
  if (write_file(path, map) != 0) return -1;
  snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
  snprintf(map, sizeof map, "%d %d 1\n", JAIL_GID, (int)cfg->outside_gid);
  return write_file(path, map);
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static const char *signal_name(int sig) {
  static char buf[16];
  const char *abbrev = sigabbrev_np(sig);
  if (!abbrev) return snprintf(buf, sizeof buf, "%d", sig), buf;
  snprintf(buf, sizeof buf, "SIG%s", abbrev);
  return buf;
}

/** Which limit ended the run, from what the launcher and the kernel saw. */
static const char *limit_of(bool timed_out, bool terminated, const struct outcome *out,
                            const struct cgroup *cg, long cpu_seconds) {
  if (timed_out) return "timeout";
  if (terminated) return "terminated";
  const char *cgroup = cgroup_verdict(cg);
  if (cgroup) return cgroup;
  if (out->signal == SIGXCPU) return "cpu";
  // Past the hard limit (a guest that ignores SIGXCPU) the kernel sends SIGKILL instead.
  if (out->signal == SIGKILL && cpu_seconds > 0 && out->cpu_ms >= cpu_seconds * 1000) return "cpu";
  if (out->signal == SIGXFSZ) return "file_size";
  return NULL;
}

static void report(const struct config *cfg, const struct outcome *out, const char *limit,
                   const struct cgroup *cg, long wall_ms) {
  char error[512] = "null", cgroup[512], line[1400];
  if (out->error[0]) json_string(error, sizeof error, out->error);
  json_string(cgroup, sizeof cgroup, cg->active ? "active" : cg->reason);
  char sig[32] = "null";
  if (out->signal) snprintf(sig, sizeof sig, "\"%s\"", signal_name(out->signal));
  char lim[32] = "null";
  if (limit) snprintf(lim, sizeof lim, "\"%s\"", limit);
  int n = snprintf(line, sizeof line,
                   "{\"exitCode\":%d,\"signal\":%s,\"limit\":%s,\"wallMs\":%ld,\"cgroup\":%s,"
                   "\"error\":%s}\n",
                   out->signal ? -1 : out->exit_code, sig, lim, wall_ms, cgroup, error);
  int fd = cfg->probe ? 1 : cfg->status_fd;
  if (fd >= 0) (void)!write(fd, line, (size_t)n);
}

int main(int argc, char **argv) {
  struct config cfg = {.default_binds = true, .tmp_mb = 64, .status_fd = -1, .seccomp = true};
  cfg.limits = (struct limits){.processes = 256, .file_size_mb = 1024, .open_files = 1024};
  pid_t parent = getppid();
  parse(&cfg, argc, argv);

  // The jail dies with its launcher, and the launcher with whoever started it.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("PR_SET_PDEATHSIG");
  if (getppid() != parent) _exit(125);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, NULL);

  // The new root is a tmpfs mounted over /tmp inside the jail's own mount namespace: the host
  // sees nothing, and nothing is left behind however the launcher ends.
  snprintf(cfg.root, sizeof cfg.root, "/tmp");

  struct cgroup cg = {.active = false, .reason = "no cgroup limits asked for"};
  if (cfg.memory_mb || cfg.pids) cgroup_create(&cg, cfg.memory_mb, cfg.pids);

  int sync_pipe[2], result_pipe[2];
  if (pipe2(sync_pipe, O_CLOEXEC) != 0 || pipe2(result_pipe, O_CLOEXEC) != 0) die("pipe");
  struct child_args args = {.cfg = &cfg,
                            .sync_fd = sync_pipe[0],
                            .result_fd = result_pipe[1],
                            .launcher_fds = {sync_pipe[1], result_pipe[0]}};
  const size_t stack_size = 1 << 20;
  char *stack = malloc(stack_size);
  if (!stack) die("malloc");
  long started = now_ms();
  int flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
              CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD;
  pid_t init = clone(child_main, stack + stack_size, flags, &args);
  if (init < 0) {
    int err = errno;
    fail_with("clone (are unprivileged user namespaces allowed?)", err);
  }
  close(sync_pipe[0]);
  close(result_pipe[1]);
  if (write_maps(init, &cfg) != 0 || cgroup_add(&cg, init) != 0) {
    int err = errno;
    kill(init, SIGKILL);
    waitpid(init, NULL, 0);
    fail_with("set up the user namespace", err);
  }
  // The write end stays open until the launcher exits: init watches it to learn of our death.
  (void)!write(sync_pipe[1], "g", 1);

  bool timed_out = false, terminated = false;
  int status = 0;
  for (;;) {
    struct timespec wait = {.tv_sec = 3600, .tv_nsec = 0};
    if (cfg.timeout_ms > 0) {
      long left = cfg.timeout_ms - (now_ms() - started);
      if (left < 0) left = 0;
      wait = (struct timespec){.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000L};
    }
    int sig = sigtimedwait(&set, NULL, &wait);
    if (sig < 0 && errno == EINTR) continue;
    if (sig < 0 && errno == EAGAIN) {
      if (cfg.timeout_ms > 0 && now_ms() - started >= cfg.timeout_ms && !timed_out) {
        timed_out = true;
        kill(init, SIGKILL);
      }
      continue;
    }
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      terminated = true;
      kill(init, SIGKILL);
      continue;
    }
    if (waitpid(init, &status, WNOHANG) == init) break;
  }
  long wall = now_ms() - started;

  struct outcome out = {.exit_code = -1, .signal = SIGKILL, .error = ""};
  if (read(result_pipe[0], &out, sizeof out) != (ssize_t)sizeof out) {
    // Init was killed (timeout, termination) before it could say anything.
    out = (struct outcome){.exit_code = -1, .signal = SIGKILL, .error = ""};
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      out = (struct outcome){.exit_code = WEXITSTATUS(status), .signal = 0, .error = ""};
  }
  const char *limit = limit_of(timed_out, terminated, &out, &cg, cfg.limits.cpu_seconds);
  cgroup_destroy(&cg);
  report(&cfg, &out, limit, &cg, wall);
  if (out.error[0]) {
    fprintf(stderr, "polybox-jail: %s\n", out.error);
    return 125;
  }
  return out.signal ? 128 + out.signal : out.exit_code;
}

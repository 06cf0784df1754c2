// The jail's first process: pid 1 of a new pid namespace, root of a new user namespace. It builds
// the new root, drops every privilege, and starts the command as its only child. When that child
// ends, init reports how and exits, and the kernel kills whatever else is left in the namespace.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"

static struct outcome failure;

/** Setup failed: tell the launcher which step and why, and stop. */
static void setup_failed(int result_fd, const char *step, const char *detail) {
  failure.exit_code = 125;
  failure.signal = 0;
  snprintf(failure.error, sizeof failure.error, "%s: %s", step, detail);
  (void)!write(result_fd, &failure, sizeof failure);
  _exit(125);
}
#define CHECK(expr, step)                                                                          \
  do {                                                                                             \
    if ((expr) != 0) setup_failed(result_fd, (step), strerror(errno));                             \
  } while (0)

static int mkdirs(const char *path, mode_t mode) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return errno = ENAMETOOLONG, -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, mode) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, mode) != 0 && errno != EEXIST ? -1 : 0;
}

/** Creates an empty directory or file at `path` to mount on. */
static int mountpoint(const char *path, bool dir) {
  if (dir) return mkdirs(path, 0755);
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", path);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = 0;
    if (mkdirs(parent, 0755) != 0) return -1;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  return close(fd);
}

/** Mount flags the kernel locks on a mount seen from a user namespace: a remount must keep them. */
static unsigned long locked_flags(int fd) {
  struct statvfs st;
  unsigned long flags = 0;
  if (fstatvfs(fd, &st) != 0) return 0;
  if (st.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (st.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

/**
 * A bind's source, looked up with the launcher's own file access before the jail's user takes
 * over (root's files may be closed to that user, and the jail must still see what root binds).
 */
struct source {
  int fd; /* O_PATH; -1 if missing or a link */
  int err;
  bool dir;
  char link[4096]; /* set for a link bound at its own path */
};

static void open_source(const struct bind *b, struct source *src) {
  struct stat st;
  memset(src, 0, sizeof *src);
  src->fd = -1;
  if (lstat(b->src, &st) != 0) {
    src->err = errno;
    return;
  }
  if (S_ISLNK(st.st_mode) && strcmp(b->src, b->dst) == 0) {
    // A merged-/usr host has /bin -> usr/bin: the same link in the jail keeps paths working.
    ssize_t n = readlink(b->src, src->link, sizeof src->link - 1);
    if (n < 0) src->err = errno;
    else src->link[n] = 0;
    return;
  }
  src->fd = open(b->src, O_PATH | O_CLOEXEC);
  if (src->fd < 0 || fstat(src->fd, &st) != 0) {
    src->err = errno;
    return;
  }
  src->dir = S_ISDIR(st.st_mode);
}

/** Binds a source at `dst` under the new root, read-only unless asked; no setuid, no devices. */
static int bind_into(const char *root, const struct bind *b, const struct source *src) {
  char target[4096], from[64];
  snprintf(target, sizeof target, "%s%s", root, b->dst);
  if (src->err) return errno = src->err, -1;
  if (src->link[0]) {
    if (mountpoint(target, false) == 0) unlink(target);
    return symlink(src->link, target);
  }
  if (mountpoint(target, src->dir) != 0) return -1;
  snprintf(from, sizeof from, "/proc/self/fd/%d", src->fd);
  if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | locked_flags(src->fd);
  if (!b->writable) flags |= MS_RDONLY;
  if (src->dir) flags |= MS_NODEV;
  return mount(NULL, target, NULL, flags, NULL);
}

static int tmpfs(const char *target, long size_mb, const char *mode, unsigned long flags) {
  char options[128];
  snprintf(options, sizeof options, "size=%ldm,mode=%s,uid=%d,gid=%d", size_mb, mode, JAIL_UID,
           JAIL_GID);
  if (mkdirs(target, 0755) != 0) return -1;
  return mount("tmpfs", target, "tmpfs", MS_NOSUID | flags, options);
}

static int write_new(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

static const char *DEVICES[] = {"null", "zero", "full", "random", "urandom"};

/** /dev with the harmless character devices and the usual links, nothing else. */
static void build_dev(const char *root, bool writable_shm, int result_fd) {
  char path[4096], target[4096];
  snprintf(path, sizeof path, "%s/dev", root);
  CHECK(tmpfs(path, 1, "0755", 0), "mount /dev");
  for (size_t i = 0; i < sizeof DEVICES / sizeof DEVICES[0]; i++) {
    snprintf(path, sizeof path, "/dev/%s", DEVICES[i]);
    snprintf(target, sizeof target, "%s/dev/%s", root, DEVICES[i]);
    CHECK(mountpoint(target, false), "create a /dev entry");
    CHECK(mount(path, target, NULL, MS_BIND, NULL), "bind a device");
  }
  const char *links[][2] = {{"/proc/self/fd", "fd"},
                            {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"},
                            {"/proc/self/fd/2", "stderr"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    snprintf(target, sizeof target, "%s/dev/%s", root, links[i][1]);
    CHECK(symlink(links[i][0], target), "link in /dev");
  }
  if (!writable_shm) return;
  snprintf(path, sizeof path, "%s/dev/shm", root);
  CHECK(tmpfs(path, 16, "1777", MS_NODEV | MS_NOEXEC), "mount /dev/shm");
}

/** A small /etc: who the jail's user is, and the loopback's name. Host files come as binds. */
static void build_etc(const char *root, int result_fd) {
  char path[4096];
  snprintf(path, sizeof path, "%s/etc", root);
  CHECK(tmpfs(path, 1, "0755", MS_NODEV | MS_NOEXEC), "mount /etc");
  const char *files[][2] = {
      {"passwd", "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:polybox:/workspace:/bin/sh\n"
                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
      {"group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n"},
      {"hosts", "127.0.0.1 localhost polybox\n::1 localhost\n"},
      {"hostname", "polybox\n"},
      {"nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n"},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/etc/%s", root, files[i][0]);
    CHECK(write_new(path, files[i][1]), "write /etc");
  }
}

static int loopback_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
  }
  close(fd);
  return rc;
}

static void build_root(const struct config *cfg, struct source *sources, int result_fd) {
  const char *root = cfg->root;
  char path[4096];
  // Nothing mounted here may reach the host's mount table, and nothing of the host's may arrive.
  CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make mounts private");
  CHECK(mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755"), "mount root");
  build_etc(root, result_fd);
  // /workspace and /tmp first: binds of host paths below /tmp (a project checked out there, a
  // cache) must land on top of the jail's /tmp, not be hidden under it.
  snprintf(path, sizeof path, "%s/workspace", root);
  if (cfg->workspace_dir) {
    struct bind ws = {.src = cfg->workspace_dir, .dst = "/workspace", .writable = true};
    CHECK(bind_into(root, &ws, &sources[cfg->nbinds]), "bind the workspace");
  } else if (cfg->workspace_mb > 0) {
    CHECK(tmpfs(path, cfg->workspace_mb, "0755", MS_NODEV), "mount /workspace");
  } else {
    CHECK(mkdirs(path, 0755), "create /workspace");
  }
  snprintf(path, sizeof path, "%s/tmp", root);
  // --tmp-mb 0: nothing writable at all (a tmpfs of size 0 would be unbounded, not empty).
  if (cfg->tmp_mb > 0) CHECK(tmpfs(path, cfg->tmp_mb, "1777", MS_NODEV), "mount /tmp");
  else CHECK(mkdirs(path, 0755), "create /tmp");
  for (int i = 0; i < cfg->nbinds; i++) {
    const struct bind *b = &cfg->binds[i];
    if (bind_into(root, b, &sources[i]) != 0) {
      // Default binds that this host lacks (/lib32, /etc/alternatives...) are simply absent.
      if (errno == ENOENT && !b->writable) continue;
      char step[300];
      snprintf(step, sizeof step, "bind %s", b->src);
      setup_failed(result_fd, step, strerror(errno));
    }
  }
  snprintf(path, sizeof path, "%s/proc", root);
  CHECK(mkdirs(path, 0555), "create /proc");
  CHECK(mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "mount /proc");
  build_dev(root, cfg->tmp_mb > 0, result_fd);

  // Swap roots and forget the old one entirely.
  snprintf(path, sizeof path, "%s/.old-root", root);
  CHECK(mkdirs(path, 0700), "create the old-root mountpoint");
  CHECK(chdir(root), "enter the new root");
  CHECK((int)syscall(SYS_pivot_root, ".", ".old-root"), "pivot_root");
  CHECK(umount2("/.old-root", MNT_DETACH), "detach the host's root");
  CHECK(rmdir("/.old-root"), "remove the old-root mountpoint");
  CHECK(chdir("/"), "chdir /");
  // The skeleton and the generated /etc and /dev are read-only from here on.
  CHECK(mount(NULL, "/etc", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
        "make /etc read-only");
  CHECK(mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL),
        "make /dev read-only");
  CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
        "make / read-only");
}

/** Every capability gone: effective, permitted, inheritable, ambient and the bounding set. */
static int drop_capabilities(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  return (int)syscall(SYS_capset, &header, data);
}

static int become_jail_user(bool host_root) {
  // Root on the host may drop its supplementary groups; an unprivileged user cannot (setgroups is
  // denied in its namespace) and keeps only its own, which the jail cannot use for anything more.
  if (host_root && setgroups(0, NULL) != 0) return -1;
  if (setresgid(JAIL_GID, JAIL_GID, JAIL_GID) != 0) return -1;
  if (setresuid(JAIL_UID, JAIL_UID, JAIL_UID) != 0) return -1;
  return drop_capabilities();
}

static int set_limit(int resource, long value, long scale) {
  if (value <= 0) return 0;
  struct rlimit rl = {.rlim_cur = (rlim_t)value * (rlim_t)scale,
                      .rlim_max = (rlim_t)value * (rlim_t)scale};
  // CPU: SIGXCPU at the soft limit, so the status can name the limit; SIGKILL a second later.
  if (resource == RLIMIT_CPU) rl.rlim_max = rl.rlim_cur + 1;
  return setrlimit(resource, &rl);
}

static int apply_limits(const struct limits *l) {
  const long MB = 1024 * 1024;
  struct rlimit none = {0, 0};
  if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
  if (set_limit(RLIMIT_AS, l->address_space_mb, MB) != 0) return -1;
  if (set_limit(RLIMIT_DATA, l->data_mb, MB) != 0) return -1;
  if (set_limit(RLIMIT_CPU, l->cpu_seconds, 1) != 0) return -1;
  if (set_limit(RLIMIT_NPROC, l->processes, 1) != 0) return -1;
  if (set_limit(RLIMIT_FSIZE, l->file_size_mb, MB) != 0) return -1;
  return set_limit(RLIMIT_NOFILE, l->open_files, 1);
}

static bool kept(const struct config *cfg, int fd) {
  if (fd <= 2) return true;
  for (int i = 0; i < cfg->nkeep; i++)
    if (cfg->keep_fds[i] == fd) return true;
  return false;
}

/** Closes every descriptor but stdio and the ones the caller asked to pass on. */
static void close_others(const struct config *cfg) {
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return;
  int self = dirfd(dir);
  for (struct dirent *e; (e = readdir(dir));) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == self || kept(cfg, fd)) continue;
    close(fd);
  }
  closedir(dir);
}

/** The launcher blocks signals for its own wait loop; nothing jailed may inherit that. */
static void unblock_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static void run_command(const struct config *cfg, int result_fd) {
  unblock_signals();
  CHECK(setsid() < 0 ? -1 : 0, "setsid");
  CHECK(become_jail_user(cfg->host_root), "drop privileges");
  CHECK(apply_limits(&cfg->limits), "set rlimits");
  CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
  const char *cwd = cfg->cwd ? cfg->cwd : "/workspace";
  CHECK(chdir(cwd), "chdir");
  close_others(cfg);
  if (cfg->seccomp) CHECK(install_seccomp(), "install seccomp");
  if (cfg->probe) _exit(0);
  execvp(cfg->argv[0], cfg->argv);
  fprintf(stderr, "polybox-jail: cannot run %s: %s\n", cfg->argv[0], strerror(errno));
  _exit(127);
}

int jail_init(const struct config *cfg, int sync_fd, int result_fd) {
  char go;
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // The launcher writes one byte once our uid and gid maps exist; EOF means it died. It keeps
  // its end open for as long as it lives, so a hang-up on this pipe also means it is gone.
  if (read(sync_fd, &go, 1) != 1) _exit(125);

  static struct source sources[MAX_BINDS + 1];
  for (int i = 0; i < cfg->nbinds; i++) open_source(&cfg->binds[i], &sources[i]);
  if (cfg->workspace_dir) {
    struct bind ws = {.src = cfg->workspace_dir, .dst = "/workspace", .writable = true};
    open_source(&ws, &sources[cfg->nbinds]);
  }
  // Files made while building the root belong to the jail's user. (Root on the host has no
  // mapping in the jail's namespace at all, and the kernel refuses to create files as nobody.)
  setfsgid(JAIL_GID);
  setfsuid(JAIL_UID);
  CHECK(sethostname("polybox", 7), "sethostname");
  build_root(cfg, sources, result_fd);
  for (int i = 0; i <= cfg->nbinds; i++)
    if (sources[i].fd > 0) close(sources[i].fd);
  if (cfg->loopback) CHECK(loopback_up(), "bring up the loopback");

  pid_t child = fork();
  if (child < 0) setup_failed(result_fd, "fork", strerror(errno));
  if (child == 0) run_command(cfg, result_fd);

  // Init needs no privilege to reap: give it all up, and hold nothing the command was given.
  (void)become_jail_user(cfg->host_root);
  // Changing credentials cleared the parent-death signal: arm it again, then make sure the
  // launcher did not die in between (its end of the sync pipe would have hung up).
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  struct pollfd launcher = {.fd = sync_fd, .events = POLLIN};
  if (poll(&launcher, 1, 0) > 0 && (launcher.revents & (POLLHUP | POLLERR))) _exit(125);
  close(sync_fd);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // Same user as the command, so keep it out of /proc/1/mem and friends.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  for (int i = 0; i < cfg->nkeep; i++) close(cfg->keep_fds[i]);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
  }

  struct outcome out = {.exit_code = -1, .signal = 0, .cpu_ms = 0, .error = ""};
  for (;;) {
    int status;
    struct rusage usage;
    pid_t pid = wait4(-1, &status, 0, &usage);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid != child) continue;
    out.cpu_ms = (long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 +
                 (long)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000;
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
    break;
  }
  (void)!write(result_fd, &out, sizeof out);
  // Leaving kills everything else in the namespace, double-forked daemons included.
  _exit(0);
}

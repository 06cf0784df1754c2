// Memory and process-count limits on cgroup v2, where the host delegates the controllers to the
// launcher's own cgroup. Where it does not, the jail still has its rlimits and the reason is kept
// for the status line and `polybox doctor`.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"

static void unavailable(struct cgroup *cg, const char *reason) {
  cg->active = false;
  snprintf(cg->reason, sizeof cg->reason, "%s", reason);
}

static int read_small(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = 0;
  fclose(f);
  return 0;
}

/** The launcher's own cgroup v2 directory, from /proc/self/cgroup's "0::" line. */
static int own_cgroup(char *out, size_t size) {
  char text[4096];
  if (read_small("/proc/self/cgroup", text, sizeof text) != 0) return -1;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (strncmp(line, "0::", 3) != 0) continue;
    const char *mount = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0
                            ? "/sys/fs/cgroup"
                            : "/sys/fs/cgroup/unified";
    snprintf(out, size, "%s%s", mount, strcmp(line + 3, "/") == 0 ? "" : line + 3);
    return 0;
  }
  return -1;
}

static bool has_word(const char *list, const char *word) {
  size_t len = strlen(word);
  for (const char *p = strstr(list, word); p; p = strstr(p + 1, word)) {
    bool start = p == list || p[-1] == ' ';
    bool end = p[len] == 0 || p[len] == ' ' || p[len] == '\n';
    if (start && end) return true;
  }
  return false;
}

void cgroup_create(struct cgroup *cg, long memory_mb, long pids) {
  char parent[400], controllers[256], file[600], value[64];
  if (own_cgroup(parent, sizeof parent) != 0) return unavailable(cg, "no cgroup v2 hierarchy");
  snprintf(file, sizeof file, "%s/cgroup.subtree_control", parent);
  if (read_small(file, controllers, sizeof controllers) != 0)
    return unavailable(cg, "no cgroup v2 hierarchy");
  if ((memory_mb && !has_word(controllers, "memory")) || (pids && !has_word(controllers, "pids")))
    return unavailable(cg, "the memory and pids controllers are not delegated to polybox's cgroup");
  snprintf(cg->path, sizeof cg->path, "%s/polybox-jail-%d", parent, (int)getpid());
  if (mkdir(cg->path, 0755) != 0) return unavailable(cg, strerror(errno));
  cg->active = true;
  if (memory_mb) {
    snprintf(file, sizeof file, "%s/memory.max", cg->path);
    snprintf(value, sizeof value, "%ld", memory_mb * 1024 * 1024);
    if (write_file(file, value) != 0) return unavailable(cg, "memory.max is not writable");
    snprintf(file, sizeof file, "%s/memory.swap.max", cg->path);
    (void)write_file(file, "0");
  }
  if (pids) {
    snprintf(file, sizeof file, "%s/pids.max", cg->path);
    snprintf(value, sizeof value, "%ld", pids);
    if (write_file(file, value) != 0) return unavailable(cg, "pids.max is not writable");
  }
}

int cgroup_add(struct cgroup *cg, pid_t pid) {
  char file[600], value[32];
  if (!cg->active) return 0;
  snprintf(file, sizeof file, "%s/cgroup.procs", cg->path);
  snprintf(value, sizeof value, "%d", (int)pid);
  return write_file(file, value);
}

static long event_count(const struct cgroup *cg, const char *events, const char *key) {
  char file[600], text[1024];
  snprintf(file, sizeof file, "%s/%s", cg->path, events);
  if (read_small(file, text, sizeof text) != 0) return 0;
  size_t len = strlen(key);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    if (strncmp(line, key, len) == 0 && line[len] == ' ') return atol(line + len + 1);
  return 0;
}

const char *cgroup_verdict(const struct cgroup *cg) {
  if (!cg->active) return NULL;
  if (event_count(cg, "memory.events", "oom_kill") > 0) return "memory";
  if (event_count(cg, "pids.events", "max") > 0) return "pids";
  return NULL;
}

void cgroup_destroy(struct cgroup *cg) {
  if (!cg->active) return;
  // The jail's processes are gone, but the kernel may take a moment to let go of the cgroup.
  for (int i = 0; i < 50 && rmdir(cg->path) != 0 && errno == EBUSY; i++) usleep(2000);
}

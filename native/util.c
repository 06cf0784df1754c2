// Small helpers shared by the launcher and the jail's init.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jail.h"

void fail_with(const char *step, int err) {
  fprintf(stderr, "polybox-jail: %s: %s\n", step, strerror(err));
  _exit(125);
}

void die(const char *step) { fail_with(step, errno); }

int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)len ? 0 : -1;
}

/** Writes `text` as a JSON string literal (with quotes) into `out`; returns 0 if it fit. */
int json_string(char *out, size_t size, const char *text) {
  size_t at = 0;
  if (size < 3) return -1;
  out[at++] = '"';
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    char buf[8];
    const char *piece = buf;
    if (*p == '"' || *p == '\\') {
      buf[0] = '\\';
      buf[1] = (char)*p;
      buf[2] = 0;
    } else if (*p < 0x20) {
      snprintf(buf, sizeof buf, "\\u%04x", *p);
    } else {
      buf[0] = (char)*p;
      buf[1] = 0;
    }
    size_t len = strlen(piece);
    if (at + len + 2 > size) return -1;
    memcpy(out + at, piece, len);
    at += len;
  }
  out[at++] = '"';
  out[at] = 0;
  return 0;
}

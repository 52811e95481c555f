/* iocheck.c: see iocheck.h. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include "config.h"
#include "src/base/iocheck.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>

static struct {
  char *path;
  char what[48];
  int output;
} io[TPS_IO_MAX];
static size_t nio;

static void add(const char *path, size_t len, const char *what, int output) {
  if (nio == TPS_IO_MAX || len == 0) return;
  char *p = malloc(len + 1);
  if (!p) return; /* out of memory here: the check is skipped for this name, nothing else */
  memcpy(p, path, len);
  p[len] = 0;
  io[nio].path = p;
  snprintf(io[nio].what, sizeof io[nio].what, "%s", what ? what : "a file");
  io[nio].output = output;
  nio++;
}

void tps_io_input(const char *path, const char *what) {
  if (path) add(path, strlen(path), what, 0);
}

void tps_io_input_spec(const char *spec, const char *what) {
  if (!spec) return;
  tps_io_input(spec, what);
  const char *eq = strchr(spec, '='), *slash = strchr(spec, '/');
  if (eq && (!slash || eq < slash)) tps_io_input(eq + 1, what); /* BACKEND=FILE */
  const char *colon = strrchr(spec, ':');
  if (colon && strchr(colon, '=') && !strchr(colon, '/')) add(spec, (size_t)(colon - spec), what, 0); /* FILE:k=v */
}

void tps_io_output(const char *path, const char *what) {
  if (path && strcmp(path, "-") != 0) add(path, strlen(path), what, 1);
}

void tps_io_reset(void) {
  for (size_t i = 0; i < nio; i++) free(io[i].path);
  nio = 0;
}

/* The canonical name of p: realpath when it exists, else its folder's realpath and the
 * name.  0, or -1 when neither resolves. */
static int canon(const char *p, char *buf) {
  char tmp[PATH_MAX];
  if (realpath(p, buf)) return 0;
  const char *slash = strrchr(p, '/');
  const char *base = slash ? slash + 1 : p;
  size_t dl = slash ? (size_t)(slash - p) : 0;
  if (dl >= sizeof tmp) return -1;
  if (slash && dl == 0) strcpy(tmp, "/");
  else if (slash) { memcpy(tmp, p, dl); tmp[dl] = 0; }
  else strcpy(tmp, ".");
  char dir[PATH_MAX];
  if (!realpath(tmp, dir) || !*base || strlen(dir) + strlen(base) + 2 > PATH_MAX) return -1;
  size_t dl2 = strlen(dir);
  memcpy(buf, dir, dl2);
  if (strcmp(dir, "/") != 0) buf[dl2++] = '/';
  memcpy(buf + dl2, base, strlen(base) + 1);
  return 0;
}

/* An output that could replace a file: a regular file (through links) or a new name. */
static int replaceable(const char *p, struct stat *st, int *exists) {
  *exists = stat(p, st) == 0;
  if (*exists) return S_ISREG(st->st_mode);
  struct stat l;
  return lstat(p, &l) != 0; /* a dangling link: refused by tps_out_open */
}

static int same_output(size_t i, size_t j, const struct stat *si, int ei) {
  struct stat sj;
  int ej;
  if (!replaceable(io[j].path, &sj, &ej)) return 0;
  if (ei && ej) return si->st_dev == sj.st_dev && si->st_ino == sj.st_ino;
  char a[PATH_MAX], b[PATH_MAX];
  return canon(io[i].path, a) == 0 && canon(io[j].path, b) == 0 && strcmp(a, b) == 0;
}

int tps_io_check(tps_err *e) {
  int rc = 0;
  for (size_t i = 0; i < nio && !rc; i++) {
    if (!io[i].output) continue;
    struct stat so;
    int exists;
    if (!replaceable(io[i].path, &so, &exists)) continue;
    for (size_t j = 0; j < nio && !rc; j++) {
      if (j == i) continue;
      if (!io[j].output) {
        struct stat si;
        if (!exists || stat(io[j].path, &si) != 0 || !S_ISREG(si.st_mode)) continue;
        if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
          rc = tps_err_set(e, io[i].path, 0, "%s would replace an input, %s '%s' (the same file): nothing read or written",
                           io[i].what, io[j].what, io[j].path);
      } else if (j > i && same_output(i, j, &so, exists)) {
        rc = tps_err_set(e, io[i].path, 0, "%s and %s '%s' are the same file: nothing read or written", io[i].what,
                         io[j].what, io[j].path);
      }
    }
  }
  tps_io_reset();
  return rc;
}

/* ------------------------------------------------------------------ files read */

static struct rd_note {
  dev_t dev;
  ino_t ino;
  char *path;
} *rd;
static size_t nrd, caprd;
static int rd_lost; /* a note that could not be kept (out of memory): every existing output is then refused */
static pthread_mutex_t rd_lock = PTHREAD_MUTEX_INITIALIZER;

void tps_io_note_read(const char *path, const struct stat *st) {
  if (!S_ISREG(st->st_mode)) return; /* a pipe or FIFO is not replaced by writing a file */
  pthread_mutex_lock(&rd_lock);
  size_t i = 0;
  while (i < nrd && !(rd[i].dev == st->st_dev && rd[i].ino == st->st_ino)) i++;
  if (i == nrd) {
    if (nrd == caprd) {
      size_t c = caprd ? 2 * caprd : 32;
      struct rd_note *n = realloc(rd, c * sizeof *n);
      if (n) { rd = n; caprd = c; }
    }
    char *p = nrd < caprd ? strdup(path) : NULL;
    if (p) { rd[nrd].dev = st->st_dev; rd[nrd].ino = st->st_ino; rd[nrd].path = p; nrd++; }
    else rd_lost = 1;
  }
  pthread_mutex_unlock(&rd_lock);
}

int tps_io_refuse_read(const char *out, const struct stat *st, tps_err *e) {
  if (!S_ISREG(st->st_mode)) return 0;
  int rc = 0;
  pthread_mutex_lock(&rd_lock);
  for (size_t i = 0; i < nrd && !rc; i++)
    if (rd[i].dev == st->st_dev && rd[i].ino == st->st_ino)
      rc = tps_err_set(e, out, 0, "would replace '%s', which this run read: nothing written", rd[i].path);
  if (!rc && rd_lost)
    rc = tps_err_set(e, out, 0, "exists, and the files this run read could not all be noted (out of memory): nothing "
                     "written");
  pthread_mutex_unlock(&rd_lock);
  return rc;
}

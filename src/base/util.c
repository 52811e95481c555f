/* util.c: see util.h. */
/* realpath and readlink (XSI): -o through a symbolic link, the data folder beside the executable */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#define _GNU_SOURCE /* O_TMPFILE */
#include "config.h"
#include "src/base/util.h"
#include "model/predict/predict.h"
#include "src/base/exit.h"
#include "src/base/iocheck.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_sort_long.h>

_Static_assert(TPS_TOKENS_MAX == TPS_PRED_MAX_TMAX, "token lists stop where the model's scan does");

/* ------------------------------------------------------------------ temporaries and signals */

/* Fixed storage: the handler only reads these (async-signal-safe: unlink, rmdir, kill). */
static char tmp_path[TPS_TMP_MAX][4096];
static volatile sig_atomic_t tmp_used[TPS_TMP_MAX]; /* 0 free, 1 file, 2 folder */
static volatile sig_atomic_t tmp_order[TPS_TMP_MAX]; /* registration order, for newest first */
static volatile sig_atomic_t tmp_seq;
static volatile pid_t tmp_child;
static int handlers_set;
static pid_t tmp_owner; /* a forked child (gnuplot before exec) removes nothing of ours */

/* Remove every registered path, newest first (async-signal-safe). */
static void remove_all(void) {
  if (getpid() != tmp_owner) return;
  for (;;) { /* newest first: a folder's files before the folder */
    int best = -1;
    for (int i = 0; i < TPS_TMP_MAX; i++)
      if (tmp_used[i] && (best < 0 || tmp_order[i] > tmp_order[best])) best = i;
    if (best < 0) break;
    if (tmp_used[best] == 2) rmdir(tmp_path[best]);
    else unlink(tmp_path[best]);
    tmp_used[best] = 0;
  }
}

static void on_signal(int sig) {
  if (tmp_child > 0 && getpid() == tmp_owner) kill(-tmp_child, SIGKILL);
  remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* exit() on a path that did not abort its output (and a return from main): nothing stays. */
static void at_exit(void) {
  sigset_t s, old;
  sigfillset(&s);
  sigprocmask(SIG_BLOCK, &s, &old);
  remove_all();
  sigprocmask(SIG_SETMASK, &old, NULL);
}

static void set_handlers(void) {
  if (handlers_set) return;
  handlers_set = 1;
  tmp_owner = getpid();
  atexit(at_exit);
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue; /* nohup: keep */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t j = 0; j < sizeof sigs / sizeof sigs[0]; j++) sigaddset(&sa.sa_mask, sigs[j]);
    sigaction(sigs[i], &sa, NULL);
  }
}

/* Block the three signals while the registry changes. */
static void block(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  sigprocmask(SIG_BLOCK, &s, old);
}

int tps_tmp_add(const char *path, int is_dir) {
  if (strlen(path) >= sizeof tmp_path[0]) return -1;
  sigset_t old;
  block(&old);
  set_handlers();
  int slot = -1;
  for (int i = 0; i < TPS_TMP_MAX; i++)
    if (!tmp_used[i]) { slot = i; break; }
  if (slot >= 0) {
    memcpy(tmp_path[slot], path, strlen(path) + 1);
    tmp_order[slot] = ++tmp_seq;
    tmp_used[slot] = is_dir ? 2 : 1;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return slot;
}

void tps_tmp_del(int slot) {
  if (slot < 0 || slot >= TPS_TMP_MAX) return;
  sigset_t old;
  block(&old);
  tmp_used[slot] = 0;
  sigprocmask(SIG_SETMASK, &old, NULL);
}

void tps_tmp_child(pid_t pgid) {
  sigset_t old;
  block(&old);
  set_handlers();
  tmp_child = pgid;
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------ input files */

/* Bytes of pipes and FIFOs already read, by path: a second read of the same path gets them,
 * or the error of the first read (a FIFO nobody writes is waited for once, not per sniff). */
#define NSTREAM 16
static struct { char *path, *data; size_t len; tps_err *err; } streams[NSTREAM];

void tps_buf_free(tps_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = 0;
}

static int input_timeout_s(void) {
  const char *s = getenv("TPSPLIT_INPUT_TIMEOUT");
  long v;
  if (s && tps_parse_range(s, 1, 86400, &v) == 0) return (int)v;
  return TPS_INPUT_TIMEOUT_S;
}

/* Grow *data to hold need + 1 bytes. */
static int reserve(char **data, size_t *cap, size_t need) {
  if (need + 1 <= *cap) return 0;
  size_t nc = *cap ? *cap : 65536;
  while (nc < need + 1) nc *= 2;
  char *nd = realloc(*data, nc);
  if (!nd) return -1;
  *data = nd;
  *cap = nc;
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A pipe or FIFO: opened without blocking (a FIFO with no writer would block in open),
 * read while data comes, with the size, time and line bounds of util.h. */
static int read_stream(const char *path, tps_buf *b, tps_err *e) {
  for (int i = 0; i < NSTREAM; i++)
    if (streams[i].path && strcmp(streams[i].path, path) == 0) {
      if (streams[i].err) {
        if (e) *e = *streams[i].err;
        return -1;
      }
      if (!(b->data = malloc(streams[i].len + 1))) return tps_err_oom(e, "reading %s", path);
      memcpy(b->data, streams[i].data, streams[i].len + 1);
      b->len = streams[i].len;
      return 0;
    }
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return tps_err_set(e, path, 0, "cannot open: %s", strerror(errno));
  int tmo = input_timeout_s(), rc = 0, json = -1; /* json: -1 not yet known, 1 JSON (no line bound) */
  size_t cap = 0, len = 0, line_start = 0;
  long ln = 1;
  char *data = NULL;
  double last = now_s();
  for (;;) {
    int left_ms = (int)((last + tmo - now_s()) * 1000);
    if (left_ms <= 0) {
      rc = tps_err_set(e, path, 0, "no data for %d s (a FIFO nobody writes, or a writer that hangs; "
                       "TPSPLIT_INPUT_TIMEOUT sets the limit)", tmo);
      break;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, left_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      rc = tps_err_set(e, path, 0, "read error: %s", strerror(errno));
      break;
    }
    if (r == 0) continue; /* the timeout is checked above */
    if (reserve(&data, &cap, len + 65536)) { rc = tps_err_oom(e, "reading %s", path); break; }
    ssize_t n = read(fd, data + len, 65536);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      rc = tps_err_set(e, path, 0, "read error: %s", strerror(errno));
      break;
    }
    if (n == 0) break; /* the writer closed it */
    last = now_s();
    size_t old = len;
    len += (size_t)n;
    if (len > (size_t)TPS_INPUT_MAX_BYTES) {
      rc = tps_err_set(e, path, 0, "more than %ld bytes, the input limit (reading stopped)", TPS_INPUT_MAX_BYTES);
      break;
    }
    if (json < 0) { /* JSON may be one long line; text may not */
      size_t k = 0;
      if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) k = 3;
      while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r')) k++;
      if (k < len) json = data[k] == '{' || data[k] == '[';
    }
    for (size_t k = old; k < len; k++)
      if (data[k] == '\n') { line_start = k + 1; ln++; }
    if (json != 1 && len - line_start > TPS_TEXT_MAX_LINE) {
      rc = tps_err_set(e, path, ln, "line longer than the limit of %d bytes (reading stopped: a stream without newlines?)",
                       TPS_TEXT_MAX_LINE);
      break;
    }
  }
  close(fd);
  if (rc) {
    free(data);
    for (int i = 0; i < NSTREAM; i++) /* keep the error (when it fits) for the next read of path */
      if (!streams[i].path) {
        char *p = strdup(path);
        tps_err *ke = e ? malloc(sizeof *ke) : NULL;
        if (p && ke) {
          *ke = *e;
          streams[i].path = p; streams[i].err = ke;
        } else { free(p); free(ke); }
        break;
      }
    return -1;
  }
  if (reserve(&data, &cap, len)) { free(data); return tps_err_oom(e, "reading %s", path); }
  data[len] = '\0';
  b->data = data;
  b->len = len;
  for (int i = 0; i < NSTREAM; i++) /* keep a copy (when it fits) for the next read of path */
    if (!streams[i].path) {
      char *p = strdup(path), *d = malloc(len + 1);
      if (p && d) {
        memcpy(d, data, len + 1);
        streams[i].path = p; streams[i].data = d; streams[i].len = len;
      } else { free(p); free(d); }
      break;
    }
  return 0;
}

int tps_buf_read(const char *path, tps_buf *b, tps_err *e) {
  b->data = NULL;
  b->len = 0;
  struct stat st;
  if (stat(path, &st) != 0) return tps_err_set(e, path, 0, "cannot open: %s", strerror(errno));
  if (S_ISDIR(st.st_mode)) return tps_err_set(e, path, 0, "is a directory, not a measurement file");
  if (S_ISFIFO(st.st_mode)) return read_stream(path, b, e);
  if (!S_ISREG(st.st_mode)) {
    const char *kind = S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file";
    return tps_err_set(e, path, 0, "is %s, not a file (tpsplit reads regular files, pipes and FIFOs)", kind);
  }
  if (st.st_size > TPS_INPUT_MAX_BYTES)
    return tps_err_set(e, path, 0, "file of %lld bytes, larger than the input limit of %ld bytes", (long long)st.st_size,
                       TPS_INPUT_MAX_BYTES);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return tps_err_set(e, path, 0, "cannot open: %s", strerror(errno));
  tps_io_note_read(path, &st); /* no output of this run may replace it (src/base/iocheck.h) */
  size_t cap = 0, len = 0;
  char *data = NULL;
  int rc = 0;
  if (reserve(&data, &cap, (size_t)st.st_size)) rc = tps_err_oom(e, "reading %s", path);
  while (!rc) {
    if (reserve(&data, &cap, len + 65536)) { rc = tps_err_oom(e, "reading %s", path); break; }
    ssize_t n = read(fd, data + len, 65536);
    if (n < 0) {
      if (errno == EINTR) continue;
      rc = tps_err_set(e, path, 0, "read error: %s", strerror(errno));
      break;
    }
    if (n == 0) break;
    len += (size_t)n;
    if (len > (size_t)TPS_INPUT_MAX_BYTES) /* grew while we read */
      rc = tps_err_set(e, path, 0, "more than %ld bytes, the input limit", TPS_INPUT_MAX_BYTES);
  }
  close(fd);
  if (rc) { free(data); return -1; }
  data[len] = '\0';
  b->data = data;
  b->len = len;
  return 0;
}

size_t tps_utf8_check(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) { i++; continue; }
    size_t k;
    unsigned min;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) { k = 1; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; min = 0x10000; }
    else return i;
    if (n - i <= k) return i; /* cut short */
    for (size_t j = 1; j <= k; j++) {
      if ((p[i + j] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + j] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += k + 1;
  }
  return n;
}

/* ------------------------------------------------------------------ output files */

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* A file without a name in the folder of path (O_TMPFILE), linked in by tps_out_commit; -1
 * where the kernel, the file system or a missing /proc (the link goes through
 * /proc/self/fd) does not allow it: then a named temporary (mkstemp) is used. */
static int open_anon(const char *path) {
#ifdef O_TMPFILE
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash) strcpy(dir, ".");
  else if (slash == path) strcpy(dir, "/");
  else if ((size_t)(slash - path) < sizeof dir) { memcpy(dir, path, (size_t)(slash - path)); dir[slash - path] = 0; }
  else return -1;
  if (access("/proc/self/fd", X_OK) != 0) return -1;
  return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
  (void)path;
  return -1;
#endif
}

int tps_out_open(tps_outfile *o, const char *path, tps_err *e) {
  memset(o, 0, sizeof *o);
  o->slot = -1;
  if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0) { o->fp = stdout; return 0; }
  struct stat lst, st;
  int have = lstat(path, &lst) == 0;
  int target = have && stat(path, &st) == 0;
  if (have && S_ISLNK(lst.st_mode) && !target)
    return tps_err_set(e, path, 0, "is a symbolic link to a missing file (give the target instead)");
  if (target && S_ISDIR(st.st_mode)) return tps_err_set(e, path, 0, "is a directory, not an output file");
  if (target && tps_io_refuse_read(path, &st, e)) return -1;
  const char *final = path;
  char *resolved = NULL;
  if (target && (!S_ISREG(st.st_mode) || starts_with(path, "/dev/") || starts_with(path, "/proc/"))) {
    /* a device, FIFO or socket (or a /dev or /proc name): write in place.  O_NONBLOCK so a
     * FIFO without a reader fails (ENXIO) instead of waiting forever; cleared after open. */
    int fd = open(path, O_WRONLY | O_NONBLOCK | (S_ISREG(st.st_mode) ? O_TRUNC : 0));
    if (fd < 0) {
      int err = errno;
      return tps_err_set(e, path, 0, "cannot open for writing: %s%s", strerror(err),
                         err == ENXIO ? " (a FIFO nobody reads)" : "");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (!(o->path = strdup(path)) || !(o->fp = fdopen(fd, "w"))) {
      close(fd);
      free(o->path); o->path = NULL;
      return tps_err_oom(e, "opening %s", path);
    }
    o->direct = 1;
    return 0;
  }
  if (have && S_ISLNK(lst.st_mode)) { /* write through to the link's target */
    if (!(resolved = realpath(path, NULL))) return tps_err_set(e, path, 0, "cannot resolve the link: %s", strerror(errno));
    final = resolved;
  }
  size_t n = strlen(final);
  o->path = strdup(final);
  o->tmp_path = malloc(n + 16);
  free(resolved);
  if (!o->path || !o->tmp_path) { tps_out_abort(o); return tps_err_oom(e, "opening %s", path); }
  snprintf(o->tmp_path, n + 16, "%s.tmp.XXXXXX", o->path);
  int fd = open_anon(o->path);
  if (fd >= 0) { /* nameless until commit: even SIGKILL leaves nothing */
    o->anon = 1;
    set_handlers();
  }
  sigset_t old;
  block(&old); /* between mkstemp and tps_tmp_add a signal would leave the file */
  if (fd < 0) fd = mkstemp(o->tmp_path);
  int err = errno;
  if (fd >= 0 && !o->anon) o->slot = tps_tmp_add(o->tmp_path, 0);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) {
    free(o->tmp_path); o->tmp_path = NULL;
    free(o->path); o->path = NULL;
    if (err == ENOSPC || err == EDQUOT || err == EMFILE || err == ENFILE)
      return tps_err_resource(e, path, "cannot create output file: %s", strerror(err));
    return tps_err_set(e, path, 0, "cannot create output file: %s", strerror(err));
  }
  fchmod(fd, target ? (st.st_mode & 07777) : 0644);
  o->fp = fdopen(fd, "w");
  if (!o->fp) { close(fd); tps_out_abort(o); return tps_err_oom(e, "opening %s", path); }
  return 0;
}

/* Give the nameless file of o its name: linked straight to o->path when that does not exist
 * (nothing to replace), else linked to a new temporary name and renamed over o->path.  With
 * the three signals blocked; only a SIGKILL between the link and the rename (microseconds)
 * can leave a "PATH.tmp.XXXXXX" behind.  Closes o->fp.  0, or errno. */
static int link_anon(tps_outfile *o) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->fp));
  sigset_t old;
  block(&old);
  int err = 0;
  if (linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) == 0) {
    if (fclose(o->fp) != 0) { err = errno ? errno : EIO; unlink(o->path); }
    o->fp = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return err;
  }
  if (errno != EEXIST) err = errno;
  size_t n = strlen(o->path);
  for (unsigned k = 0; !err; k++) { /* a free temporary name */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(o->tmp_path + n, 16, ".tmp.%06lx", ((unsigned long)ts.tv_nsec ^ (unsigned long)getpid() * 2654435761u ^ k) & 0xffffff);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp_path, AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST || k == 100) err = errno;
  }
  if (!err) {
    o->slot = tps_tmp_add(o->tmp_path, 0);
    if (fclose(o->fp) != 0) err = errno ? errno : EIO;
    else if (rename(o->tmp_path, o->path) != 0) err = errno;
    o->fp = NULL;
    if (err) unlink(o->tmp_path);
    tps_tmp_del(o->slot);
    o->slot = -1;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return err;
}

/* The reason of a write error on fp: errno of a failing flush, else of a one-byte probe write
 * at the end (the earlier error's errno is lost once stdio has moved on). */
static int write_errno(FILE *fp) {
  errno = 0;
  if (fflush(fp) != 0 && errno) return errno;
  int fd = fileno(fp);
  if (fd >= 0 && lseek(fd, 0, SEEK_END) >= 0 && write(fd, "", 1) < 0 && errno) return errno;
  return EIO;
}

int tps_out_commit(tps_outfile *o, tps_err *e) {
  if (o->fp == stdout) {
    o->fp = NULL;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    return tps_err_resource(e, "stdout", "write error: %s", strerror(errno ? errno : EIO));
  }
  if (!o->fp) return tps_err_set(e, o->path, 0, "output file not open");
  struct stat st; /* a file read since tps_out_open is not replaced either */
  if (!o->direct && stat(o->path, &st) == 0 && tps_io_refuse_read(o->path, &st, e)) {
    tps_out_abort(o);
    return -1;
  }
  int err = 0;
  if (fflush(o->fp) != 0 || ferror(o->fp)) err = write_errno(o->fp);
  if (o->anon && !err) {
    if ((err = link_anon(o)) != 0) {
      int rc = tps_err_resource(e, o->path, "cannot put the file in place: %s", strerror(err));
      tps_out_abort(o);
      return rc;
    }
    free(o->tmp_path); o->tmp_path = NULL;
    free(o->path); o->path = NULL;
    return 0;
  }
  if (fclose(o->fp) != 0 && !err) err = errno ? errno : EIO;
  o->fp = NULL;
  if (err) {
    int rc = tps_err_resource(e, o->path, "write error: %s", strerror(err));
    tps_out_abort(o);
    return rc;
  }
  if (o->direct) { free(o->path); o->path = NULL; return 0; }
  if (rename(o->tmp_path, o->path) != 0) {
    int rc = tps_err_resource(e, o->path, "cannot rename into place: %s", strerror(errno));
    tps_out_abort(o);
    return rc;
  }
  tps_tmp_del(o->slot);
  o->slot = -1;
  free(o->tmp_path); o->tmp_path = NULL;
  free(o->path); o->path = NULL;
  return 0;
}

void tps_out_abort(tps_outfile *o) {
  if (o->fp && o->fp != stdout) fclose(o->fp);
  o->fp = NULL;
  if (o->tmp_path && !o->anon) unlink(o->tmp_path);
  free(o->tmp_path); o->tmp_path = NULL;
  o->anon = 0;
  tps_tmp_del(o->slot);
  o->slot = -1;
  free(o->path); o->path = NULL;
}

/* ------------------------------------------------------------------ data directory */

static char data_dir_buf[4096];

static int is_dir(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISDIR(st.st_mode); }

#ifndef TPS_BUILDDIR /* builds outside Makefile.am's flags (the fuzzers): no build tree to recognise */
#define TPS_BUILDDIR "/nonexistent/tpsplit-build"
#endif

/* The folder of the running executable, "" when unknown. */
static void exe_dir(char *buf, size_t bufsz) {
  buf[0] = 0;
  ssize_t n = readlink("/proc/self/exe", buf, bufsz - 1);
  if (n <= 0 || (size_t)n >= bufsz - 1) { buf[0] = 0; return; }
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0; else buf[0] = 0;
}

/* The data folder, first that exists of: TPSPLIT_DATADIR; the one installed beside the
 * executable (EXE/../share/tpsplit/data, so that `make install prefix=P` and a moved
 * install tree work); the configured pkgdatadir; and, only for a binary run from its build
 * tree (tpsplit or tests/), the source tree's data/. */
const char *tps_data_dir(void) {
  if (data_dir_buf[0]) return data_dir_buf;
  char exe[2048], beside[4096];
  exe_dir(exe, sizeof exe);
  beside[0] = 0;
  if (exe[0]) snprintf(beside, sizeof beside, "%s/../share/" PACKAGE "/data", exe);
  size_t bl = strlen(TPS_BUILDDIR);
  int in_build = exe[0] && strncmp(exe, TPS_BUILDDIR, bl) == 0 &&
                 (exe[bl] == 0 || strcmp(exe + bl, "/tests") == 0 || strcmp(exe + bl, "/.libs") == 0);
  const char *cand[4] = {getenv("TPSPLIT_DATADIR"), beside, TPS_PKGDATADIR "/data",
                         in_build ? TPS_SRCDATADIR : NULL};
  for (int i = 0; i < 4; i++) {
    if (cand[i] && cand[i][0] && is_dir(cand[i])) {
      if (i == 1 && realpath(cand[i], data_dir_buf)) return data_dir_buf;
      snprintf(data_dir_buf, sizeof data_dir_buf, "%s", cand[i]);
      return data_dir_buf;
    }
  }
  snprintf(data_dir_buf, sizeof data_dir_buf, "%s", TPS_PKGDATADIR "/data");
  return data_dir_buf;
}

int tps_data_path(const char *rel, char *buf, size_t bufsz, tps_err *e) {
  const char *d = tps_data_dir();
  if ((size_t)snprintf(buf, bufsz, "%s/%s", d, rel) >= bufsz)
    return tps_err_set(e, rel, 0, "data path too long");
  if (access(buf, R_OK) != 0)
    return tps_err_set(e, buf, 0, "bundled data file not found (set TPSPLIT_DATADIR to the data directory)");
  return 0;
}

/* ------------------------------------------------------------------ numbers and lists */

int tps_decimal_form(const char *s) {
  return s && (isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.') && !strpbrk(s, "xXpP");
}

int tps_parse_double(const char *s, double *out) {
  if (!s || !*s || !tps_decimal_form(s)) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int tps_parse_long(const char *s, long *out) {
  if (!s || !*s || !tps_decimal_form(s)) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

int tps_parse_range(const char *s, long lo, long hi, long *out) {
  long v;
  if (tps_parse_long(s, &v) || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int tps_opt_long(const char *cmd, const char *opt, const char *s, long lo, long hi, const char *why, long *out) {
  if (tps_parse_range(s, lo, hi, out) == 0) return 0;
  (void)cmd; /* the message names the command (src/base/err.h) */
  tps_usage_msg("--%s '%s': a whole number from %ld to %ld%s%s%s", opt, s, lo, hi, why ? " (" : "",
              why ? why : "", why ? ")" : "");
  return -1;
}

int tps_parse_tokens(const char *s, long **out, size_t *n, tps_err *e) {
  *out = NULL; *n = 0;
  static const char *const form = "want 6,12,48 or A..B or A..B:STEP, whole numbers from 1";
  const char *dots = strstr(s, "..");
  size_t cnt = 0, cap;
  long *v = NULL;
  if (dots) {
    char a[64], b[64], st[64] = "";
    size_t la = (size_t)(dots - s);
    const char *rest = dots + 2, *colon = strchr(rest, ':');
    size_t lb = colon ? (size_t)(colon - rest) : strlen(rest);
    if (la == 0 || la >= sizeof a || lb == 0 || lb >= sizeof b) goto bad;
    memcpy(a, s, la); a[la] = '\0';
    memcpy(b, rest, lb); b[lb] = '\0';
    if (colon && snprintf(st, sizeof st, "%s", colon + 1) >= (int)sizeof st) goto bad;
    long lo, hi, step = 0;
    if (tps_parse_long(a, &lo) || tps_parse_long(b, &hi) || lo < 1 || hi < lo) goto bad;
    if (colon && (tps_parse_long(st, &step) || step < 1)) goto bad;
    if (hi > TPS_TOKENS_MAX)
      return tps_err_set(e, NULL, 0, "token range '%s' goes to %ld, above the limit of %ld tokens", s, hi, TPS_TOKENS_MAX);
    /* entries before expanding: (hi - lo) / step + 1, or the doublings from lo to hi */
    if (step) cap = (size_t)((hi - lo) / step) + 1;
    else { cap = 0; for (long t = lo; t <= hi; t *= 2) cap++; }
    if (!(v = malloc(cap * sizeof *v))) return tps_err_oom(e, "expanding a token list");
    for (long t = lo; t <= hi && cnt < cap; t = step ? t + step : t * 2) v[cnt++] = t;
  } else {
    cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    if (cap > (size_t)TPS_TOKENS_MAX)
      return tps_err_set(e, NULL, 0, "token list of %zu entries, above the limit of %ld", cap, TPS_TOKENS_MAX);
    char *dup = strdup(s), *save = NULL;
    if (!dup || !(v = malloc(cap * sizeof *v))) { free(dup); return tps_err_oom(e, "expanding a token list"); }
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      long t;
      if (tps_parse_long(tok, &t) || t < 1) { free(dup); goto bad; }
      if (t > TPS_TOKENS_MAX) {
        free(dup);
        free(v);
        return tps_err_set(e, NULL, 0, "token count %ld in '%s' is above the limit of %ld tokens", t, s, TPS_TOKENS_MAX);
      }
      v[cnt++] = t;
    }
    free(dup);
  }
  if (cnt == 0) goto bad;
  gsl_sort_long(v, 1, cnt);
  size_t m = 0;
  for (size_t i = 0; i < cnt; i++) if (m == 0 || v[m - 1] != v[i]) v[m++] = v[i];
  *out = v; *n = m;
  return 0;
bad:
  free(v);
  return tps_err_set(e, NULL, 0, "bad token list '%s' (%s to %ld)", s, form, TPS_TOKENS_MAX);
}

int tps_parse_list(const char *s, char ***out, size_t *n) {
  *out = NULL; *n = 0;
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  if (cap > 4096) return -1;
  char *dup = strdup(s), *save = NULL;
  char **v = malloc(cap * sizeof *v);
  if (!dup || !v) { free(dup); free(v); return -1; }
  size_t cnt = 0;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!(v[cnt] = strdup(tok))) { free(dup); tps_free_list(v, cnt); return -1; }
    cnt++;
  }
  free(dup);
  if (cnt == 0) { free(v); return -1; }
  *out = v; *n = cnt;
  return 0;
}

void tps_free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

int tps_mkdirs(const char *path, tps_err *e) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return tps_err_set(e, path, 0, "path too long");
  for (char *p = buf + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(buf, 0755) != 0 && errno != EEXIST) return tps_err_set(e, buf, 0, "cannot create directory: %s", strerror(errno));
      *p = '/';
    }
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return tps_err_set(e, buf, 0, "cannot create directory: %s", strerror(errno));
  if (!is_dir(buf)) return tps_err_set(e, buf, 0, "not a directory");
  return 0;
}

int tps_close_stdout(void) {
  errno = 0;
  int bad = fflush(stdout) != 0 || ferror(stdout);
  int err = errno;
  if (bad && !err) {
    /* a write failed earlier (the buffer filled mid-run) and its errno is gone: one more byte
     * on the failed stream says why (ENOSPC on a full device, EPIPE, ...) instead of EIO */
    clearerr(stdout);
    if (fputc('\n', stdout) == EOF || fflush(stdout) != 0) err = errno;
  }
  if (fclose(stdout) != 0) { bad = 1; if (!err) err = errno; }
  if (bad) { tps_die_msg("write error on standard output: %s", strerror(err ? err : EIO)); return 1; }
  return 0;
}

static char cmdline_buf[4096];
void tps_set_cmdline(int argc, char **argv) {
  size_t off = 0;
  cmdline_buf[0] = '\0';
  for (int i = 0; i < argc && off < sizeof cmdline_buf - 1; i++) {
    int w = snprintf(cmdline_buf + off, sizeof cmdline_buf - off, "%s%s", i ? " " : "", i ? argv[i] : "tpsplit");
    if (w < 0) break;
    off += (size_t)w;
  }
  if (off >= sizeof cmdline_buf) off = sizeof cmdline_buf - 1;
  cmdline_buf[off] = '\0';
  /* control characters and invalid UTF-8 (also a sequence cut by the size limit) -> '?' */
  size_t i = 0;
  while (i < off) {
    unsigned char c = (unsigned char)cmdline_buf[i];
    if (c < 0x20 || c == 0x7f) { cmdline_buf[i++] = '?'; continue; }
    if (c < 0x80) { i++; continue; }
    size_t ok = tps_utf8_check(cmdline_buf + i, off - i); /* length of the valid run from i */
    if (ok == 0) cmdline_buf[i++] = '?';
    else i += ok;
  }
}
const char *tps_cmdline(void) { return cmdline_buf; }

int tps_print_version(const char *cmd) {
  printf("tpsplit %s (%s) %s\n", cmd, PACKAGE_NAME, PACKAGE_VERSION);
  return TPS_EXIT_OK;
}

int tps_parse_numbers(const char *arg, double *v, size_t max, size_t *n, double lo, double hi, int integers) {
  char **w;
  size_t nw;
  if (tps_parse_list(arg, &w, &nw) != 0 || nw > max) {
    if (w) tps_free_list(w, nw);
    return -1;
  }
  int ok = 1;
  for (size_t i = 0; ok && i < nw; i++) {
    long l;
    if (integers) ok = tps_parse_long(w[i], &l) == 0, v[i] = (double)l;
    else ok = tps_parse_double(w[i], &v[i]) == 0;
    ok = ok && v[i] >= lo && v[i] <= hi;
  }
  tps_free_list(w, nw);
  if (ok) *n = nw;
  return ok ? 0 : -1;
}

/* util.c: see util.h. */
#define _DEFAULT_SOURCE /* realpath, readlink */
#include "config.h"
#include "util.h"
#include "tpsplit.h"
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tps_out_open(tps_outfile *o, const char *path, tps_err *e) {
  memset(o, 0, sizeof *o);
  if (strcmp(path, "-") == 0) { o->fp = stdout; return 0; }
  size_t n = strlen(path);
  o->path = strdup(path);
  o->tmp_path = malloc(n + 16);
  if (!o->path || !o->tmp_path) return tps_err_set(e, path, 0, "out of memory");
  snprintf(o->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(o->tmp_path);
  if (fd < 0) {
    int err = errno;
    free(o->tmp_path); o->tmp_path = NULL;
    return tps_err_set(e, path, 0, "cannot create output file: %s", strerror(err));
  }
  o->fp = fdopen(fd, "w");
  if (!o->fp) { close(fd); unlink(o->tmp_path); return tps_err_set(e, path, 0, "fdopen failed"); }
  fchmod(fd, 0644);
  return 0;
}

int tps_out_commit(tps_outfile *o, tps_err *e) {
  if (o->fp == stdout) { o->fp = NULL; return fflush(stdout) == 0 ? 0 : tps_err_set(e, "stdout", 0, "write error"); }
  if (!o->fp) return tps_err_set(e, o->path, 0, "output file not open");
  int bad = ferror(o->fp);
  if (fclose(o->fp) != 0) bad = 1;
  o->fp = NULL;
  if (bad) {
    unlink(o->tmp_path);
    return tps_err_set(e, o->path, 0, "write error");
  }
  if (rename(o->tmp_path, o->path) != 0) {
    int err = errno;
    unlink(o->tmp_path);
    return tps_err_set(e, o->path, 0, "cannot rename into place: %s", strerror(err));
  }
  free(o->tmp_path); o->tmp_path = NULL;
  free(o->path); o->path = NULL;
  return 0;
}

void tps_out_abort(tps_outfile *o) {
  if (o->fp && o->fp != stdout) fclose(o->fp);
  o->fp = NULL;
  if (o->tmp_path) { unlink(o->tmp_path); free(o->tmp_path); o->tmp_path = NULL; }
  free(o->path); o->path = NULL;
}

static char data_dir_buf[4096];

static int is_dir(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISDIR(st.st_mode); }

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

int tps_parse_double(const char *s, double *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int tps_parse_long(const char *s, long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

int tps_parse_tokens(const char *s, long **out, size_t *n, tps_err *e) {
  *out = NULL; *n = 0;
  const char *dots = strstr(s, "..");
  size_t cap = 64, cnt = 0;
  long *v = malloc(cap * sizeof *v);
  if (!v) return tps_err_set(e, NULL, 0, "out of memory");
  if (dots) {
    char a[64], b[64], st[64] = "";
    size_t la = (size_t)(dots - s);
    if (la == 0 || la >= sizeof a) goto bad;
    memcpy(a, s, la); a[la] = '\0';
    const char *rest = dots + 2, *colon = strchr(rest, ':');
    size_t lb = colon ? (size_t)(colon - rest) : strlen(rest);
    if (lb == 0 || lb >= sizeof b) goto bad;
    memcpy(b, rest, lb); b[lb] = '\0';
    if (colon) snprintf(st, sizeof st, "%s", colon + 1);
    long lo, hi, step = 0;
    if (tps_parse_long(a, &lo) || tps_parse_long(b, &hi) || lo < 1 || hi < lo) goto bad;
    if (colon && (tps_parse_long(st, &step) || step < 1)) goto bad;
    if (hi > 100000000L) goto bad;
    for (long t = lo; t <= hi; t = step ? t + step : t * 2) {
      if (cnt == cap) { cap *= 2; long *nv = realloc(v, cap * sizeof *v); if (!nv) goto oom; v = nv; }
      v[cnt++] = t;
    }
  } else {
    char *dup = strdup(s), *save = NULL;
    if (!dup) goto oom;
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      long t;
      if (tps_parse_long(tok, &t) || t < 1 || t > 100000000L) { free(dup); goto bad; }
      if (cnt == cap) { cap *= 2; long *nv = realloc(v, cap * sizeof *v); if (!nv) { free(dup); goto oom; } v = nv; }
      v[cnt++] = t;
    }
    free(dup);
  }
  if (cnt == 0) goto bad;
  qsort(v, cnt, sizeof *v, cmp_long);
  size_t m = 0;
  for (size_t i = 0; i < cnt; i++) if (m == 0 || v[m - 1] != v[i]) v[m++] = v[i];
  *out = v; *n = m;
  return 0;
bad:
  free(v);
  return tps_err_set(e, NULL, 0, "bad token list '%s' (want 6,12,48 or A..B or A..B:STEP, positive integers)", s);
oom:
  free(v);
  return tps_err_set(e, NULL, 0, "out of memory");
}

int tps_parse_list(const char *s, char ***out, size_t *n) {
  *out = NULL; *n = 0;
  char *dup = strdup(s), *save = NULL;
  if (!dup) return -1;
  size_t cap = 8, cnt = 0;
  char **v = malloc(cap * sizeof *v);
  if (!v) { free(dup); return -1; }
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (cnt == cap) { cap *= 2; char **nv = realloc(v, cap * sizeof *v); if (!nv) break; v = nv; }
    v[cnt++] = strdup(tok);
  }
  free(dup);
  *out = v; *n = cnt;
  return cnt ? 0 : -1;
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
  int bad = fflush(stdout) != 0 || ferror(stdout);
  if (fclose(stdout) != 0) bad = 1;
  if (bad) { fputs("tpsplit: write error on standard output\n", stderr); return 1; }
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
}
const char *tps_cmdline(void) { return cmdline_buf; }

int tps_print_version(const char *cmd) {
  printf("tpsplit %s (%s) %s\n", cmd, PACKAGE_NAME, PACKAGE_VERSION);
  return TPS_EXIT_OK;
}

/* plot.c: the gnuplot writer (see plot.h): .dat + .gp per figure, gnuplot run without a shell.
 *
 * Decisions:
 *  - generated files, not a pipe: the .dat/.gp pair is the artefact a user can edit and re-run,
 *    and the golden file tests check without gnuplot (conventions B4);
 *  - the .gp holds no date and no path: it names its .dat and its image by base name and is run
 *    in the output folder; provenance (version, command line, inputs) lives in the .dat;
 *  - numbers are written with 10 significant digits ("%.10g"), "nan" for missing values
 *    (gnuplot skips such points);
 *  - data files and scripts are written through tps_out_open/commit (temp file + rename); the
 *    image is rendered by gnuplot in a temporary folder and renamed into place only when it is
 *    complete (render): a failed, killed or interrupted gnuplot, or a full disk, leaves no
 *    partial image;
 *  - gnuplot is looked up on PATH when a figure is drawn, and killed when it runs past
 *    $TPSPLIT_GNUPLOT_TIMEOUT seconds (default TPS_PLOT_GNUPLOT_TIMEOUT_S). */
#include "config.h"
#include "src/plot/plot.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "model/latency/allgather.h"
#include "src/base/util.h"

const char *const tps_plot_format_names[3] = {"png", "svg", "pdf"};

void tps_plot_opts_init(tps_plot_opts *o) {
  memset(o, 0, sizeof *o);
  o->format = TPS_PLOT_PNG;
  o->width_px = 1200;
  o->height_px = 800;
  o->render = 1;
  o->seed = 1;
}

int tps_plot_parse_format(const char *s, int *format) {
  for (int i = 0; i < 3; i++)
    if (strcmp(s, tps_plot_format_names[i]) == 0) { *format = i; return 0; }
  return -1;
}

int tps_plot_parse_size(const char *s, int *w, int *h) {
  char buf[64];
  if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return -1;
  char *x = strchr(buf, 'x');
  if (!x) x = strchr(buf, 'X');
  if (!x) x = strchr(buf, ',');
  if (!x) return -1;
  *x = '\0';
  long a, b;
  if (tps_parse_long(buf, &a) || tps_parse_long(x + 1, &b)) return -1;
  if (a < 100 || a > 10000 || b < 100 || b > 10000) return -1;
  *w = (int)a; *h = (int)b;
  return 0;
}

void tps_plot_files_init(tps_plot_files *w) { memset(w, 0, sizeof *w); }

void tps_plot_files_free(tps_plot_files *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n; i++) free(w->path[i]);
  free(w->path);
  memset(w, 0, sizeof *w);
}

static void files_add(tps_plot_files *w, const char *dir, const char *name, const char *ext) {
  if (!w) return;
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 16;
    char **np = realloc(w->path, cap * sizeof *np);
    if (!np) return;
    w->path = np; w->cap = cap;
  }
  size_t len = strlen(dir) + strlen(name) + strlen(ext) + 3;
  char *p = malloc(len);
  if (!p) return;
  snprintf(p, len, "%s/%s.%s", dir, name, ext);
  w->path[w->n++] = p;
}

/* ---------------------------------------------------------------- which gnuplot */

static int executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* Resolve a program name on PATH (or a path with a '/') into buf. */
static int resolve(const char *prog, char *buf, size_t bufsz) {
  if (!prog || !*prog) return -1;
  if (strchr(prog, '/')) {
    if (!executable(prog)) return -1;
    snprintf(buf, bufsz, "%s", prog);
    return 0;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    if (len == 0) snprintf(buf, bufsz, "./%s", prog);
    else snprintf(buf, bufsz, "%.*s/%s", (int)len, path, prog);
    if (executable(buf)) return 0;
    if (!colon) break;
    path = colon + 1;
  }
  return -1;
}

const char *tps_plot_gnuplot(void) {
  static char buf[4096];
  const char *env = getenv("TPSPLIT_GNUPLOT");
  if (env) return resolve(env, buf, sizeof buf) == 0 ? buf : NULL;
  return resolve("gnuplot", buf, sizeof buf) == 0 ? buf : NULL; /* PATH now, not at configure time */
}

static int gnuplot_timeout_s(void) {
  const char *s = getenv("TPSPLIT_GNUPLOT_TIMEOUT");
  long v;
  if (s && tps_parse_range(s, 1, 86400, &v) == 0) return (int)v;
  return TPS_PLOT_GNUPLOT_TIMEOUT_S;
}

/* Run `gnuplot -d NAME.gp` in dir, in its own process group; its stdout goes to our stderr
 * (keeps --json clean).  Killed (the whole group) when it runs past the timeout. */
static int run_gnuplot(const char *gp, const char *dir, const char *script, tps_err *e) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return tps_err_resource(e, script, "cannot start gnuplot: %s", strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (chdir(dir) != 0) _exit(126);
    dup2(2, 1);
    char *argv[] = {(char *)gp, (char *)"-d", (char *)script, NULL};
    execv(gp, argv);
    _exit(127);
  }
  setpgid(pid, pid); /* also here: no race with the kill below */
  tps_tmp_child(pid);
  int tmo = gnuplot_timeout_s(), st = 0, timed_out = 0;
  struct timespec t0, now, nap = {0, 5 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) { tps_tmp_child(0); return tps_err_resource(e, script, "waitpid: %s", strerror(errno)); }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!timed_out && (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > tmo) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      timed_out = 1;
    }
    nanosleep(&nap, NULL);
  }
  tps_tmp_child(0);
  if (timed_out)
    return tps_err_resource(e, script, "gnuplot (%s) did not finish within %d s: killed (TPSPLIT_GNUPLOT_TIMEOUT sets the limit)",
                            gp, tmo);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  if (WIFEXITED(st))
    return tps_err_set(e, script, 0, "gnuplot (%s) failed with exit status %d (run `gnuplot -d %s` in %s to see why)",
                       gp, WEXITSTATUS(st), script, dir);
  return tps_err_resource(e, script, "gnuplot (%s) killed by signal %d (%s)", gp, WTERMSIG(st), strsignal(WTERMSIG(st)));
}

/* An image as gnuplot's terminals end one: PNG with its IEND chunk, SVG with "</svg>", PDF
 * with "%%EOF".  A full disk (or a killed gnuplot) leaves a file without its end. */
static int image_complete(const char *path, int format) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  unsigned char head[8], tail[1024];
  size_t nh = fread(head, 1, sizeof head, fp);
  long size = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
  long from = size > (long)sizeof tail ? size - (long)sizeof tail : 0;
  size_t nt = size > 0 && fseek(fp, from, SEEK_SET) == 0 ? fread(tail, 1, sizeof tail, fp) : 0;
  fclose(fp);
  if (size <= 0 || nt == 0) return 0;
  if (format == TPS_PLOT_PNG) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    return nh == 8 && memcmp(head, sig, 8) == 0 && nt >= 12 && memcmp(tail + nt - 12, iend, 12) == 0;
  }
  const char *mark = format == TPS_PLOT_SVG ? "</svg>" : "%%EOF";
  size_t ml = strlen(mark);
  for (size_t i = 0; i + ml <= nt; i++)
    if (memcmp(tail + i, mark, ml) == 0) return 1;
  return 0;
}

/* ---------------------------------------------------------------- colours *//* ---------------------------------------------------------------- colours */

/* The plot_colour column of the GPU table in use (tps_plot_use_gpus): name, aliases, colour. */
#define MAXCOL 128
static struct { char name[32], aliases[256], rgb[8]; } colmap[MAXCOL];
static size_t ncolmap;

void tps_plot_use_gpus(const tps_gpu_table *t) {
  ncolmap = 0;
  for (size_t i = 0; t && i < t->n && ncolmap < MAXCOL; i++) {
    if (!t->gpu[i].colour[0]) continue;
    snprintf(colmap[ncolmap].name, sizeof colmap[ncolmap].name, "%s", t->gpu[i].name);
    snprintf(colmap[ncolmap].aliases, sizeof colmap[ncolmap].aliases, "%s", t->aliases[i]);
    snprintf(colmap[ncolmap].rgb, sizeof colmap[ncolmap].rgb, "%s", t->gpu[i].colour);
    ncolmap++;
  }
}

/* a and b equal up to their first '-', case-insensitive (H200 = H200-SXM) */
static int stem_eq(const char *a, const char *b) {
  size_t la = strcspn(a, "-"), lb = strcspn(b, "-");
  return la == lb && strncasecmp(a, b, la) == 0;
}

static int alias_of(const char *list, const char *gpu) {
  char buf[256], *save = NULL;
  snprintf(buf, sizeof buf, "%s", list);
  for (char *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save))
    if (strcasecmp(a, gpu) == 0) return 1;
  return 0;
}

const char *tps_plot_gpu_colour(const char *gpu) {
  static const char *const fallback[] = {"#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD",
                                         "#17BECF", "#BCBD22", "#7F7F7F"};
  if (!gpu) return fallback[0];
  for (size_t i = 0; i < ncolmap; i++)
    if (strcasecmp(colmap[i].name, gpu) == 0 || alias_of(colmap[i].aliases, gpu)) return colmap[i].rgb;
  for (size_t i = 0; i < ncolmap; i++)
    if (stem_eq(colmap[i].name, gpu)) return colmap[i].rgb;
  uint32_t h = 2166136261u; /* FNV-1a of the upper-cased name */
  for (const char *p = gpu; *p; p++) { h ^= (uint32_t)toupper((unsigned char)*p); h *= 16777619u; }
  return fallback[h % (sizeof fallback / sizeof fallback[0])];
}

/* Shade of the GPU colour for a TP size: TP2 light .. TP8 as is .. TP16 dark.  out: "#rrggbb". */
static void tp_shade(const char *rgb, int tp, char out[8]) {
  unsigned r, g, b;
  if (sscanf(rgb + 1, "%2x%2x%2x", &r, &g, &b) != 3) { snprintf(out, 8, "%s", rgb); return; }
  double f; /* > 0: mix with white, < 0: with black */
  switch (tp) {
  case 1: f = 0.70; break;
  case 2: f = 0.55; break;
  case 4: f = 0.30; break;
  case 8: f = 0.0; break;
  default: f = tp > 8 ? -0.45 : 0.15; break;
  }
  unsigned c[3] = {r, g, b};
  for (int i = 0; i < 3; i++) {
    double v = c[i];
    v = f >= 0 ? v + (255.0 - v) * f : v * (1.0 + f);
    c[i] = (unsigned)lround(v);
  }
  snprintf(out, 8, "#%02X%02X%02X", c[0] & 255, c[1] & 255, c[2] & 255);
}

/* Dash type of a kernel path: its id in tps_paths + 1, so every path has its own
 * (1 solid: marlin-w8a16, the seed PR's path); 1 for an unknown name. */
static int path_dash(const char *path) {
  const tps_path *p = tps_path_find(path);
  return p ? (int)p->id + 1 : 1;
}

/* ---------------------------------------------------------------- writing helpers */

void tps_plot_safe_name(const char *s, char *out, size_t outsz) {
  size_t j = 0;
  for (size_t i = 0; s && s[i] && j + 1 < outsz; i++) {
    unsigned char ch = (unsigned char)s[i];
    out[j++] = (isalnum(ch) || ch == '.' || ch == '-' || ch == '_') ? (char)ch : '-';
  }
  out[j] = '\0';
}

/* A gnuplot single-quoted string: ' doubles. */
static void gp_str(FILE *fp, const char *s) {
  fputc('\'', fp);
  for (; s && *s; s++) {
    if (*s == '\'') fputc('\'', fp);
    if (*s == '\n' || *s == '\r') { fputc(' ', fp); continue; }
    fputc(*s, fp);
  }
  fputc('\'', fp);
}

static void num(FILE *fp, double x) {
  if (isfinite(x)) fprintf(fp, "%.10g", x);
  else fputs("nan", fp);
}
static double at(const double *v, size_t i) { return v ? v[i] : NAN; }

typedef struct {
  const char *dir, *name;
  const tps_plot_opts *o;
  tps_plot_opts defaults;
  tps_outfile dat, gp;
  char ext[8];
} fig;

static int fig_begin(fig *F, const char *dir, const char *name, const tps_plot_opts *o,
                     const char *what, tps_err *e) {
  memset(F, 0, sizeof *F);
  tps_plot_opts_init(&F->defaults);
  F->o = o ? o : &F->defaults;
  F->dir = dir; F->name = name;
  snprintf(F->ext, sizeof F->ext, "%s", tps_plot_format_names[F->o->format >= 0 && F->o->format <= 2 ? F->o->format : 0]);
  if (tps_mkdirs(dir, e)) return -1;
  char p[4096];
  snprintf(p, sizeof p, "%s/%s.dat", dir, name);
  if (tps_out_open(&F->dat, p, e)) return -1;
  snprintf(p, sizeof p, "%s/%s.gp", dir, name);
  if (tps_out_open(&F->gp, p, e)) { tps_out_abort(&F->dat); return -1; }
  FILE *d = F->dat.fp;
  fprintf(d, "# %s %s: %s\n", PACKAGE_NAME, PACKAGE_VERSION, what);
  fprintf(d, "# command: %s\n", tps_cmdline()[0] ? tps_cmdline() : "(library call)");
  fprintf(d, "# inputs: %s\n", F->o->inputs ? F->o->inputs : "-");
  fprintf(d, "# drawn by %s.gp (gnuplot -d %s.gp); blocks are gnuplot indexes 0, 1, ...\n", name, name);
  /* script preamble */
  FILE *g = F->gp.fp;
  fprintf(g, "# %s.gp: %s\n# Written by %s %s; redraw with `gnuplot -d %s.gp` in this folder.\n",
          name, what, PACKAGE_NAME, PACKAGE_VERSION, name);
  int W = F->o->width_px, H = F->o->height_px;
  switch (F->o->format) {
  case TPS_PLOT_SVG:
    fprintf(g, "set terminal svg size %d,%d dynamic noenhanced font 'Sans,11' background '#ffffff'\n", W, H);
    break;
  case TPS_PLOT_PDF:
    fprintf(g, "set terminal pdfcairo size %.2fin,%.2fin noenhanced font 'Sans,11' fontscale 0.6\n", W / 150.0, H / 150.0);
    break;
  default:
    fprintf(g, "set terminal pngcairo size %d,%d noenhanced font 'Sans,11'\n", W, H);
  }
  fprintf(g, "set output '%s.%s'\n", name, F->ext);
  fprintf(g, "set datafile separator tab\nset datafile missing 'nan'\n");
  fprintf(g, "set grid back lc rgb '#dddddd'\nset border lw 1\n");
  return 0;
}

static void block(fig *F, int idx, const char *what, const char *header) {
  fprintf(F->dat.fp, "%s# block %d: %s\n%s\n", idx ? "\n\n" : "", idx, what, header);
}

/* Render F's image: gnuplot runs in a temporary folder DIR/.NAME.XXXXXX holding links to
 * ../NAME.dat and ../NAME.gp, so the image it writes by base name lands there; a complete
 * image is renamed to DIR/NAME.EXT, anything else is removed.  The folder and what is in it
 * are registered for removal on SIGINT/SIGTERM (tps_tmp_add): an interrupted run leaves the
 * figures it finished and nothing half-written. */
static int render(fig *F, const char *gp, tps_plot_files *w, tps_err *e) {
  char tdir[4096], dat[4200], gps[4200], timg[4200], img[4096], script[512], rel[600];
  snprintf(script, sizeof script, "%s.gp", F->name);
  snprintf(img, sizeof img, "%s/%s.%s", F->dir, F->name, F->ext);
  if ((size_t)snprintf(tdir, sizeof tdir, "%s/.%s.XXXXXX", F->dir, F->name) >= sizeof tdir)
    return tps_err_set(e, img, 0, "path too long");
  int slot[4] = {-1, -1, -1, -1}, rc = 0;
  sigset_t all, old;
  sigemptyset(&all);
  sigaddset(&all, SIGINT); sigaddset(&all, SIGTERM); sigaddset(&all, SIGHUP);
  sigprocmask(SIG_BLOCK, &all, &old); /* create and register together */
  if (!mkdtemp(tdir)) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return tps_err_resource(e, F->dir, "cannot create a temporary folder for gnuplot's image: %s", strerror(err));
  }
  slot[0] = tps_tmp_add(tdir, 1);
  snprintf(dat, sizeof dat, "%s/%s.dat", tdir, F->name);
  snprintf(gps, sizeof gps, "%s/%s.gp", tdir, F->name);
  snprintf(timg, sizeof timg, "%s/%s.%s", tdir, F->name, F->ext);
  slot[1] = tps_tmp_add(dat, 0);
  slot[2] = tps_tmp_add(gps, 0);
  slot[3] = tps_tmp_add(timg, 0);
  sigprocmask(SIG_SETMASK, &old, NULL);
  /* symbolic links to ../NAME.*; hard links where the file system has no symbolic ones */
  const char *ext2[2] = {"dat", "gp"};
  const char *dst2[2] = {dat, gps};
  for (int k = 0; k < 2 && !rc; k++) {
    char real[4200];
    snprintf(rel, sizeof rel, "../%s.%s", F->name, ext2[k]);
    snprintf(real, sizeof real, "%s/%s.%s", F->dir, F->name, ext2[k]);
    if (symlink(rel, dst2[k]) != 0 && link(real, dst2[k]) != 0)
      rc = tps_err_resource(e, dst2[k], "cannot link the %s for gnuplot: %s", k ? "script" : "data file", strerror(errno));
  }
  if (!rc) rc = run_gnuplot(gp, tdir, script, e);
  if (!rc && !image_complete(timg, F->o->format)) {
    struct stat st;
    struct statvfs vs;
    int have = stat(timg, &st) == 0;
    char room[96] = "";
    if (statvfs(F->dir, &vs) == 0)
      snprintf(room, sizeof room, "; %.0f bytes free there", (double)vs.f_bavail * (double)vs.f_frsize);
    rc = !have || st.st_size == 0
             ? tps_err_resource(e, img, "gnuplot produced no image%s", room)
             : tps_err_resource(e, img, "gnuplot wrote an incomplete image (%lld bytes without its end: the disk full?%s); "
                                "nothing kept", (long long)st.st_size, room);
  }
  if (!rc && rename(timg, img) != 0) rc = tps_err_resource(e, img, "cannot rename gnuplot's image into place: %s", strerror(errno));
  unlink(timg);
  unlink(dat);
  unlink(gps);
  rmdir(tdir);
  for (int k = 3; k >= 0; k--) tps_tmp_del(slot[k]);
  if (rc) return -1;
  files_add(w, F->dir, F->name, F->ext);
  if (w) w->images++;
  return 0;
}

static int fig_end(fig *F, tps_plot_files *w, tps_err *e) {
  fprintf(F->gp.fp, "unset output\n");
  if (tps_out_commit(&F->dat, e)) { tps_out_abort(&F->gp); return -1; }
  files_add(w, F->dir, F->name, "dat");
  if (tps_out_commit(&F->gp, e)) return -1;
  files_add(w, F->dir, F->name, "gp");
  if (!F->o->render) return 0;
  const char *gp = tps_plot_gnuplot();
  if (!gp) {
    static int told;
    if (w) w->gnuplot_missing = 1;
    if (!told && !F->o->quiet) {
      const char *env = getenv("TPSPLIT_GNUPLOT");
      fprintf(stderr, "tpsplit: gnuplot not found%s%s%s: wrote .dat and .gp files only in %s "
              "(install gnuplot, then run `gnuplot -d NAME.gp` there)\n",
              env ? " (TPSPLIT_GNUPLOT='" : "", env ? env : "", env ? "')" : "", F->dir);
      told = 1;
    }
    return 0;
  }
  return render(F, gp, w, e);
}

static void fig_abort(fig *F) {
  tps_out_abort(&F->dat);
  tps_out_abort(&F->gp);
}

/* Legend text of a curve: the part that varies, plus where it comes from. */
static void curve_label(const tps_plot_curve *c, int by, char *out, size_t sz) {
  switch (by) {
  case TPS_PLOT_BY_TP: snprintf(out, sz, "TP%d", c->tp); break;
  case TPS_PLOT_BY_PATH: snprintf(out, sz, "%s", c->path ? c->path : "?"); break;
  default: snprintf(out, sz, "%s", c->gpu ? c->gpu : "?");
  }
  if (c->source && *c->source) {
    size_t l = strlen(out);
    snprintf(out + l, sz - l, " (%s)", c->source);
  }
}

static void curve_colour(const tps_plot_curve *c, char out[8]) {
  if (c->colour && c->colour[0] == '#' && strlen(c->colour) == 7) { snprintf(out, 8, "%s", c->colour); return; }
  tp_shade(tps_plot_gpu_colour(c->gpu), c->tp, out);
}

static int check_curve(const tps_plot_curve *c, tps_err *e) {
  if (!c || c->n < 2 || !c->tokens || !c->rep_us || !c->split_us)
    return tps_err_set(e, NULL, 0, "plot: a model curve needs at least 2 tokens with replicated and split times");
  for (size_t i = 0; i < c->n; i++)
    if (c->tokens[i] < 1 || (i && c->tokens[i] <= c->tokens[i - 1]))
      return tps_err_set(e, NULL, 0, "plot: curve %s TP%d %s: tokens must be positive and increasing",
                         c->gpu ? c->gpu : "?", c->tp, c->path ? c->path : "?");
  return 0;
}

/* Token where the gather backend changes (first token with the new backend), or 0. */
static long backend_switch(const tps_plot_curve *c, int *from, int *to) {
  if (!c->backend) return 0;
  for (size_t i = 1; i < c->n; i++)
    if (c->backend[i] != c->backend[i - 1]) {
      *from = c->backend[i - 1]; *to = c->backend[i];
      return c->tokens[i];
    }
  return 0;
}

static const char *backend_name(int b) { return b >= 0 && b <= 2 ? tps_gather_name(b) : "-"; }

/* Model-curve block: tokens, rep, band, split, band, speedup, band, backend. */
static void write_curve_block(fig *F, int idx, const tps_plot_curve *c) {
  char what[256];
  snprintf(what, sizeof what, "model %s TP%d %s (%s)", c->gpu ? c->gpu : "?", c->tp,
           c->path ? c->path : "?", c->source ? c->source : "model");
  block(F, idx, what,
        "tokens\treplicated_us\treplicated_lo_us\treplicated_hi_us\tsplit_us\tsplit_lo_us\tsplit_hi_us\t"
        "speedup\tspeedup_lo\tspeedup_hi\tgather_backend");
  FILE *d = F->dat.fp;
  for (size_t i = 0; i < c->n; i++) {
    fprintf(d, "%ld", c->tokens[i]);
    double s = c->rep_us[i] / c->split_us[i];
    double v[9] = {c->rep_us[i], at(c->rep_lo_us, i), at(c->rep_hi_us, i), c->split_us[i],
                   at(c->split_lo_us, i), at(c->split_hi_us, i), s, at(c->speedup_lo, i), at(c->speedup_hi, i)};
    for (int k = 0; k < 9; k++) { fputc('\t', d); num(d, v[k]); }
    fprintf(d, "\t%s\n", c->backend ? backend_name(c->backend[i]) : "-");
  }
}

/* Measured block: tokens, rep, min, max, split, min, max, speedup and its range.  The range of
 * the speedup is the widest the min/max allow: rep_min / split_max .. rep_max / split_min. */
static void write_meas_block(fig *F, int idx, const tps_plot_meas *m) {
  char what[512];
  snprintf(what, sizeof what, "measured %s TP%d %s (%s)", m->gpu ? m->gpu : "?", m->tp,
           m->path ? m->path : "?", m->file ? m->file : "-");
  block(F, idx, what,
        "tokens\treplicated_us\treplicated_min_us\treplicated_max_us\tsplit_us\tsplit_min_us\tsplit_max_us\tspeedup\t"
        "speedup_min\tspeedup_max");
  FILE *d = F->dat.fp;
  for (size_t i = 0; i < m->n; i++) {
    fprintf(d, "%ld", m->tokens[i]);
    double sp = at(m->split_us, i);
    double v[9] = {m->rep_us[i], at(m->rep_min_us, i), at(m->rep_max_us, i), sp,
                   at(m->split_min_us, i), at(m->split_max_us, i), m->rep_us[i] / sp,
                   at(m->rep_min_us, i) / at(m->split_max_us, i), at(m->rep_max_us, i) / at(m->split_min_us, i)};
    for (int k = 0; k < 9; k++) { fputc('\t', d); num(d, v[k]); }
    fputc('\n', d);
  }
}

/* 1 when some row of v (may be NULL) is a number. */
static int any_finite(const double *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) if (isfinite(v[i])) return 1;
  return 0;
}

static int has_band(const double *lo, const double *hi, size_t n) {
  if (!lo || !hi) return 0;
  for (size_t i = 0; i < n; i++) if (isfinite(lo[i]) && isfinite(hi[i])) return 1;
  return 0;
}

/* Token axis: log2, a tic per power of two (per power of four when the image is narrow). */
static void gp_token_axis(FILE *g, const tps_plot_opts *o) {
  fprintf(g, "set logscale x 2\nset format x '%%.0f'\nset xtics 1, %d\nset mxtics default\n"
             "set xlabel 'tokens per step T'\n", o->width_px < 900 ? 4 : 2);
}

/* Legend outside the plot: on the right in wide images, below in narrow ones. */
static void gp_key(FILE *g, const tps_plot_opts *o) {
  if (o->width_px >= 1000) fprintf(g, "set key outside right top vertical Left reverse samplen 3 spacing 1.2\n");
  else fprintf(g, "set key below left vertical Left reverse samplen 3 maxcols 2\n");
}

/* ---------------------------------------------------------------- figure 1: latency */

int tps_plot_latency(const char *dir, const char *name, const tps_plot_curve *c,
                     const tps_plot_meas *m, const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (check_curve(c, e)) return -1;
  fig F;
  if (fig_begin(&F, dir, name, o, "latency vs tokens, replicated and split", e)) return -1;
  write_curve_block(&F, 0, c);
  if (m && m->n) write_meas_block(&F, 1, m);
  FILE *g = F.gp.fp;
  char col[8], title[512];
  curve_colour(c, col);
  snprintf(title, sizeof title, "%s, TP%d, %s: replicated vs split latency (%s)", c->gpu, c->tp,
           c->path, c->source && *c->source ? c->source : "model");
  fprintf(g, "set title "); gp_str(g, title); fputc('\n', g);
  gp_token_axis(g, F.o);
  fprintf(g, "set logscale y 10\nset ylabel 'latency (us)'\nset format y '%%g'\n");
  fprintf(g, "set autoscale yfix\nset offsets 0, 0, graph 0.04, graph 0.04  # the data range, not the next decades\n");
  /* the legend under the axis, two columns: the plot keeps the full width for the token axis */
  fprintf(g, "set key below left horizontal Left reverse samplen 3 spacing 1.2 maxcols 2\n");
  fprintf(g, "set style fill transparent solid 0.18 noborder\n");
  int from, to;
  long sw = backend_switch(c, &from, &to);
  if (sw) {
    fprintf(g, "# the gather backend changes here\n");
    fprintf(g, "set arrow 1 from %ld, graph 0 to %ld, graph 1 nohead dt 3 lw 1.5 lc rgb '#555555' back\n", sw, sw);
    fprintf(g, "set label 1 'gather %s -> %s from T = %ld' at %ld, graph 0.04 right offset -0.6,0 tc rgb '#555555'\n",
            backend_name(from), backend_name(to), sw, sw);
  }
  fprintf(g, "plot \\\n");
  int first = 1;
#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
  if (has_band(c->rep_lo_us, c->rep_hi_us, c->n)) {
    SEP(); fprintf(g, "  '%s.dat' index 0 using 1:3:4 with filledcurves lc rgb '#888888' title 'replicated, 90%% band'", name);
  }
  if (has_band(c->split_lo_us, c->split_hi_us, c->n)) {
    SEP(); fprintf(g, "  '%s.dat' index 0 using 1:6:7 with filledcurves lc rgb '%s' title 'split, 90%% band'", name, col);
  }
  SEP(); fprintf(g, "  '%s.dat' index 0 using 1:2 with lines lw 2.5 dt 2 lc rgb '#444444' title 'replicated, model'", name);
  SEP(); fprintf(g, "  '%s.dat' index 0 using 1:5 with lines lw 2.5 lc rgb '%s' title 'split, model'", name, col);
  if (m && m->n) {
    /* measured medians, with min..max bars when the table has them; a measurement of the
     * replicated GEMM alone (a GEMM table) has no split points */
    int eb_r = any_finite(m->rep_min_us, m->n) && any_finite(m->rep_max_us, m->n);
    int eb_s = any_finite(m->split_min_us, m->n) && any_finite(m->split_max_us, m->n);
    const char *rw = m->split_us ? "replicated" : "replicated (GEMM of T rows)";
    SEP();
    if (eb_r) fprintf(g, "  '%s.dat' index 1 using 1:2:3:4 with yerrorbars pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title '%s, measured median (bar: min..max)'", name, rw);
    else fprintf(g, "  '%s.dat' index 1 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title '%s, measured median (no min/max in the table)'", name, rw);
    if (any_finite(m->split_us, m->n)) {
      SEP();
      if (eb_s) fprintf(g, "  '%s.dat' index 1 using 1:5:6:7 with yerrorbars pt 5 ps 1.4 lw 1.5 lc rgb '%s' title 'split, measured median (bar: min..max)'", name, col);
      else fprintf(g, "  '%s.dat' index 1 using 1:5 with points pt 5 ps 1.4 lc rgb '%s' title 'split, measured median (no min/max in the table)'", name, col);
    }
  }
  fprintf(g, "\n");
#undef SEP
  return fig_end(&F, w, e) ? (fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 2: speedup */

/* Two curves on the same tokens whose speedups would look the same: mean relative difference
 * under 2% and none over 10%. */
static int same_speedup(const tps_plot_curve *a, const tps_plot_curve *b) {
  if (a->n != b->n || a->n == 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < a->n; i++) {
    double x = a->rep_us[i] / a->split_us[i], y = b->rep_us[i] / b->split_us[i], d = fabs(x - y) / fabs(x);
    if (a->tokens[i] != b->tokens[i] || !(d <= 0.10)) return 0;
    sum += d;
  }
  return sum / (double)a->n < 0.02;
}

int tps_plot_speedup(const char *dir, const char *name, int by, const tps_plot_curve *c, size_t nc,
                     const tps_plot_meas *m, size_t nm, const tps_plot_opts *o, tps_plot_files *w,
                     tps_err *e) {
  if (nc == 0) return tps_err_set(e, NULL, 0, "plot: speedup figure without curves");
  for (size_t i = 0; i < nc; i++) if (check_curve(&c[i], e)) return -1;
  if (by < 0 || by > 2) by = TPS_PLOT_BY_GPU;
  fig F;
  if (fig_begin(&F, dir, name, o, "speedup (replicated / split) vs tokens", e)) return -1;
  int idx = 0;
  for (size_t i = 0; i < nc; i++) write_curve_block(&F, idx++, &c[i]);
  int meas0 = idx;
  for (size_t i = 0; i < nm; i++) write_meas_block(&F, idx++, &m[i]);
  /* y range of the speedup panel: 0 .. 8% above the highest speedup (curves, bands, points
   * and their bars) */
  double ymax = 1.0;
  for (size_t i = 0; i < nc; i++)
    for (size_t r = 0; r < c[i].n; r++) {
      double v[2] = {c[i].rep_us[r] / c[i].split_us[r], at(c[i].speedup_hi, r)};
      for (int q = 0; q < 2; q++) if (isfinite(v[q]) && v[q] > ymax) ymax = v[q];
    }
  for (size_t i = 0; i < nm; i++)
    for (size_t r = 0; r < m[i].n; r++) {
      double v[2] = {m[i].rep_us[r] / at(m[i].split_us, r), at(m[i].rep_max_us, r) / at(m[i].split_min_us, r)};
      for (int q = 0; q < 2; q++) if (isfinite(v[q]) && v[q] > ymax) ymax = v[q];
    }
  ymax *= 1.08;
  /* token range shared by both panels */
  long tlo = c[0].tokens[0], thi = c[0].tokens[c[0].n - 1];
  for (size_t i = 1; i < nc; i++) {
    if (c[i].tokens[0] < tlo) tlo = c[i].tokens[0];
    if (c[i].tokens[c[i].n - 1] > thi) thi = c[i].tokens[c[i].n - 1];
  }
  if (thi <= tlo) thi = tlo + 1;
  /* layout in screen fractions: the title, the speedup panel, under it the break-even panel
   * (a row of 26 px per curve), the token axis at the bottom; the legend right of the panels
   * (wide images) or inside the speedup panel's top left corner (narrow ones) */
  const double H = F.o->height_px, W = F.o->width_px;
  const int wide = F.o->width_px >= 1000;
  size_t maxlab = 0; /* the longest row name of the break-even panel sets the left margin */
  for (size_t i = 0; i < nc; i++) {
    char who[128];
    curve_label(&c[i], by, who, sizeof who);
    char *paren = strstr(who, " (");
    if (paren) *paren = '\0';
    if (strlen(who) > maxlab) maxlab = strlen(who);
  }
  size_t maxkey = 30; /* and the longest legend entry the right margin */
  for (size_t i = 0; i < nc; i++) {
    char lab[256];
    curve_label(&c[i], by, lab, sizeof lab);
    if (strlen(lab) > maxkey) maxkey = strlen(lab);
  }
  for (size_t j = 0; j < nm; j++)
    if (strlen(m[j].gpu ? m[j].gpu : "") + 45 > maxkey) maxkey = strlen(m[j].gpu ? m[j].gpu : "") + 45;
  double keyw = 7.6 * (double)maxkey + 80.0;
  if (keyw > 0.5 * W) keyw = 0.5 * W;
  double lm = (maxlab * 8.5 + 30.0 > 75.0 ? maxlab * 8.5 + 30.0 : 75.0) / W, rm = wide ? 1.0 - keyw / W : 1.0 - 30.0 / W;
  if (rm < lm + 0.3) rm = lm + 0.3;
  /* break-even blocks, one per curve, drawn in a panel of their own below the speedup axis
   * (row r: curve r, top down).  bar_lo..bar_hi is the 90% interval, up to the axis end
   * when its upper end never breaks even; the label goes right of the bar, or left of it
   * when it would not fit there. */
  int mark = idx;
  int *left_of = calloc(nc, sizeof *left_of); /* 1: the label of curve i goes left of its bar */
  if (!left_of) { fig_abort(&F); return tps_err_oom(e, "speedup figure"); }
  for (size_t i = 0; i < nc; i++) {
    char what[200], lab[160];
    snprintf(what, sizeof what, "break-even of curve %zu (NaN: the split never wins); row, bar, label: its row in the "
             "break-even panel", i);
    block(&F, idx++, what,
          "curve\tgpu\ttp\tpath\tbreakeven_tokens\tbreakeven_lo\tbreakeven_hi\tthreshold_tokens\trow\tbar_lo\tbar_hi\t"
          "label\tlabel_right_of\tlabel_left_of");
    double be = c[i].breakeven_tokens, lo = c[i].breakeven_lo, hi = c[i].breakeven_hi, blo = NAN, bhi = NAN;
    if (!isfinite(be)) snprintf(lab, sizeof lab, "never wins up to %ld", thi);
    else if (isfinite(lo) && isfinite(hi)) { snprintf(lab, sizeof lab, "%.0f [90%%: %.0f..%.0f]", be, lo, hi); blo = lo; bhi = hi; }
    else if (isfinite(lo)) { snprintf(lab, sizeof lab, "%.0f [90%%: %.0f..never]", be, lo); blo = lo; bhi = (double)thi; }
    else { snprintf(lab, sizeof lab, "%.0f", be); blo = bhi = be; }
    if (isfinite(c[i].threshold_tokens)) {
      size_t l = strlen(lab);
      snprintf(lab + l, sizeof lab - l, ", threshold %.0f", c[i].threshold_tokens);
    }
    double span = log((double)thi / (double)tlo), right_end = isfinite(bhi) ? bhi : (double)thi;
    double panel_px = (rm - lm) * W, lab_px = 7.5 * (double)strlen(lab) + 16.0;
    int left = log(right_end / (double)tlo) / span * panel_px + lab_px > panel_px;
    double anchor_r = NAN, anchor_l = NAN;
    if (!isfinite(be)) anchor_l = (double)thi;
    else if (left) anchor_l = isfinite(blo) ? blo : be;
    else anchor_r = right_end;
    left_of[i] = isfinite(anchor_l);
    FILE *d = F.dat.fp;
    fprintf(d, "%zu\t%s\t%d\t%s\t", i, c[i].gpu, c[i].tp, c[i].path);
    double v[5] = {be, lo, hi, c[i].threshold_tokens, (double)i};
    for (int k = 0; k < 5; k++) { num(d, v[k]); fputc('\t', d); }
    num(d, blo); fputc('\t', d);
    num(d, bhi);
    fprintf(d, "\t%s\t", lab);
    num(d, anchor_r); fputc('\t', d);
    num(d, anchor_l); fputc('\n', d);
  }
  /* title: what is fixed across the curves */
  FILE *g = F.gp.fp;
  char title[512];
  const tps_plot_curve *c0 = &c[0];
  if (by == TPS_PLOT_BY_GPU)
    snprintf(title, sizeof title, "split vs replicated: speedup at TP%d, %s (one curve per GPU)", c0->tp, c0->path);
  else if (by == TPS_PLOT_BY_TP)
    snprintf(title, sizeof title, "split vs replicated: speedup on %s, %s (one curve per TP)", c0->gpu, c0->path);
  else
    snprintf(title, sizeof title, "split vs replicated: speedup on %s, TP%d (one curve per kernel path)", c0->gpu, c0->tp);
  double bot = 55.0 / H, strip_top = bot + (26.0 * (double)nc + 14.0) / H, gap = 12.0 / H, top = 1.0 - 70.0 / H;
  fprintf(g, "set xrange [%ld:%ld]\n", tlo, thi);
  gp_token_axis(g, F.o);
  if ((rm - lm) * W < 700) fprintf(g, "set xtics 1, 4\n"); /* a narrow panel: a tic per power of four */
  fprintf(g, "set style textbox opaque noborder\n");
  fprintf(g, "set style fill transparent solid 0.15 noborder\n");
  fprintf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", lm, rm);
  /* recommended thresholds: a dotted vertical line through both panels per distinct value,
   * in the curve's colour (dark grey when curves share it), its value above the frame */
  size_t nthr = 0;
  for (size_t i = 0; i < nc; i++) {
    if (!isfinite(c[i].threshold_tokens)) continue;
    int seen = 0, shared = 0;
    for (size_t q = 0; q < nc; q++)
      if (c[q].threshold_tokens == c[i].threshold_tokens) { if (q < i) seen = 1; if (q != i) shared = 1; }
    if (seen) continue;
    char col[8];
    if (shared) snprintf(col, sizeof col, "#555555"); else curve_colour(&c[i], col);
    nthr++;
    fprintf(g, "set arrow %zu from %.10g, graph 0 to %.10g, graph 1 nohead dt 3 lw 1.5 lc rgb '%s' back\n", nthr,
            c[i].threshold_tokens, c[i].threshold_tokens, col);
    fprintf(g, "set label %zu '%.0f' at %.10g, graph 1 center offset 0,0.8 tc rgb '%s' front\n", nthr,
            c[i].threshold_tokens, c[i].threshold_tokens, col);
  }
  fprintf(g, "set multiplot title ");
  gp_str(g, title);
  fprintf(g, " font 'Sans,12'\n");
  fprintf(g, "# panel 1: the speedup\n");
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", top, strip_top + gap);
  fprintf(g, "set format x ''\nunset xlabel\n");
  fprintf(g, "set ylabel 'speedup of the split = replicated / split'\nset yrange [0:%.4g]\n", ymax);
  if (wide) fprintf(g, "set key at screen %.4f, screen %.4f left top vertical Left reverse samplen 3 spacing 1.2\n", rm + 10.0 / W, top);
  else fprintf(g, "set key inside left top vertical Left reverse samplen 3 opaque box lc rgb '#cccccc'\n");
  fprintf(g, "# speedup 1: the split neither wins nor loses\n");
  fprintf(g, "set arrow 100 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#000000' back\n");
  fprintf(g, "plot \\\n");
  int first = 1;
#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
  for (size_t i = 0; i < nc; i++) {
    char col[8], lab[256];
    curve_colour(&c[i], col);
    curve_label(&c[i], by, lab, sizeof lab);
    if (has_band(c[i].speedup_lo, c[i].speedup_hi, c[i].n)) {
      SEP(); fprintf(g, "  '%s.dat' index %zu using 1:9:10 with filledcurves lc rgb '%s' notitle", name, i, col);
    }
    /* later curves thinner, and dashed when they coincide with an earlier one, so that a
     * curve drawn over an equal one stays visible */
    double lw = 3.4 - 0.5 * (double)i;
    int dt = path_dash(c[i].path);
    for (size_t q = 0; q < i; q++) if (same_speedup(&c[q], &c[i])) dt = 2;
    SEP(); fprintf(g, "  '%s.dat' index %zu using 1:8 with lines lw %.1f dt %d lc rgb '%s' title ", name, i,
                   lw < 1.2 ? 1.2 : lw, dt, col);
    gp_str(g, lab);
  }
  for (size_t j = 0; j < nm; j++) {
    char col[8], lab[256];
    tp_shade(tps_plot_gpu_colour(m[j].gpu), m[j].tp, col);
    int bars = any_finite(m[j].rep_min_us, m[j].n) && any_finite(m[j].split_max_us, m[j].n);
    snprintf(lab, sizeof lab, "%s TP%d measured median%s", m[j].gpu, m[j].tp,
             bars ? " (bar: min..max)" : " (no min/max in the table)");
    SEP();
    if (bars)
      fprintf(g, "  '%s.dat' index %d using 1:8:9:10 with yerrorbars pt 7 ps 1.3 lw 1.5 lc rgb '%s' title ", name,
              meas0 + (int)j, col);
    else
      fprintf(g, "  '%s.dat' index %d using 1:8 with points pt 7 ps 1.5 lc rgb '%s' title ", name, meas0 + (int)j, col);
    gp_str(g, lab);
  }
  if (nthr) { SEP(); fprintf(g, "  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title 'recommended threshold (value above)'"); }
  if (!wide) { SEP(); fprintf(g, "  NaN with xerrorbars pt 13 lc rgb '#555555' title 'break-even (marker), 90%% interval (bar): panel below'"); }
  fprintf(g, "\n");
  fprintf(g, "# panel 2: the break-even of each curve (marker) and its 90%% interval (bar), one row per curve\n");
  fprintf(g, "unset label\nunset arrow 100\nunset key\nunset title\n");
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", strip_top, bot);
  fprintf(g, "set format x '%%.0f'\nset xlabel 'tokens per step T'\nset ylabel ''\n");
  fprintf(g, "set yrange [%.1f:-0.6]\nset ytics (", (double)nc - 0.4);
  for (size_t i = 0; i < nc; i++) {
    char who[128];
    curve_label(&c[i], by, who, sizeof who);
    char *paren = strstr(who, " (");
    if (paren) *paren = '\0';
    fprintf(g, "%s", i ? ", " : "");
    gp_str(g, who);
    fprintf(g, " %zu", i);
  }
  fprintf(g, ") scale 0\nset grid noytics\n");
  if (wide)
    fprintf(g, "set label 1 'break-even (marker) and its 90%% interval (bar)' at screen %.4f, screen %.4f left "
               "tc rgb '#555555' front\n", rm + 20.0 / W, (strip_top + bot) / 2);
  fprintf(g, "plot \\\n");
  first = 1;
  for (size_t i = 0; i < nc; i++) {
    static const int pts[5] = {13, 9, 11, 5, 7}; /* diamond, triangles, square, circle */
    char col[8];
    curve_colour(&c[i], col);
    int pt = pts[i % 5], b = mark + (int)i;
    SEP(); fprintf(g, "  '%s.dat' index %d using 5:9:10:11 with xerrorbars pt %d ps 1.6 lw 2 lc rgb '%s'", name, b, pt, col);
    SEP();
    if (left_of[i]) fprintf(g, "  '' index %d using 14:9:12 with labels right offset -1,0 tc rgb '%s'", b, col);
    else fprintf(g, "  '' index %d using 13:9:12 with labels left offset 1,0 tc rgb '%s'", b, col);
  }
  fprintf(g, "\nunset multiplot\n");
  free(left_of);
#undef SEP
  return fig_end(&F, w, e) ? (fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 3: crossover map */

static int find_str(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++) if (strcmp(v[i], s) == 0) return (int)i;
  return -1;
}
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

int tps_plot_crossover(const char *dir, const char *name, const tps_plot_cell *cells, size_t n,
                       const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (n == 0) return tps_err_set(e, NULL, 0, "plot: crossover map without cells");
  const char **gpus = calloc(n, sizeof *gpus), **paths = calloc(n, sizeof *paths);
  int *tps = calloc(n, sizeof *tps);
  if (!gpus || !paths || !tps) { free(gpus); free(paths); free(tps); return tps_err_set(e, NULL, 0, "out of memory"); }
  size_t ng = 0, np = 0, nt = 0;
  double bmin = INFINITY, bmax = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    const char *gname = cells[i].gpu ? cells[i].gpu : "?", *pname = cells[i].path ? cells[i].path : "?";
    if (find_str(gpus, ng, gname) < 0) gpus[ng++] = gname;
    if (find_str(paths, np, pname) < 0) paths[np++] = pname;
    size_t k = 0;
    while (k < nt && tps[k] != cells[i].tp) k++;
    if (k == nt) tps[nt++] = cells[i].tp;
    double b = cells[i].breakeven_tokens;
    if (!cells[i].na && isfinite(b) && b > 0) { if (b < bmin) bmin = b; if (b > bmax) bmax = b; }
  }
  qsort(tps, nt, sizeof *tps, cmp_int);
  fig F;
  if (fig_begin(&F, dir, name, o, "crossover map: break-even tokens per GPU x TP, one panel per kernel path", e)) {
    free(gpus); free(paths); free(tps);
    return -1;
  }
  FILE *d = F.dat.fp, *g = F.gp.fp;
  for (size_t p = 0; p < np; p++) {
    char what[128];
    snprintf(what, sizeof what, "kernel path %s (col, row: cell position; label: what the cell shows)", paths[p]);
    block(&F, (int)p, what,
          "col\trow\ttp\tgpu\tbreakeven_tokens\tbreakeven_lo\tbreakeven_hi\tthreshold_tokens\tlabel\tinterval\t"
          "interval_line1\tinterval_line2");
    for (size_t i = 0; i < n; i++) {
      const tps_plot_cell *c = &cells[i];
      if (strcmp(c->path ? c->path : "?", paths[p]) != 0) continue;
      int col = 0, row = find_str(gpus, ng, c->gpu ? c->gpu : "?");
      while (tps[col] != c->tp) col++;
      fprintf(d, "%d\t%d\t%d\t%s\t", col, (int)ng - 1 - row, c->tp, c->gpu ? c->gpu : "?");
      double b = c->na ? NAN : c->breakeven_tokens;
      num(d, b); fputc('\t', d);
      num(d, c->na ? NAN : c->breakeven_lo); fputc('\t', d);
      num(d, c->na ? NAN : c->breakeven_hi); fputc('\t', d);
      num(d, c->na ? NAN : c->threshold_tokens); fputc('\t', d);
      /* the interval on one line, then the same on two ("lo.." and "hi") for narrow cells */
      if (c->na) fputs("n/a\t \t \t ", d);
      else if (!isfinite(b)) fputs("never\t \t \t ", d);
      else {
        fprintf(d, "%.0f\t", b);
        if (isfinite(c->breakeven_lo) && isfinite(c->breakeven_hi))
          fprintf(d, "%.0f..%.0f\t%.0f..\t%.0f", c->breakeven_lo, c->breakeven_hi, c->breakeven_lo, c->breakeven_hi);
        else if (isfinite(c->breakeven_lo)) /* the upper quantile never breaks even */
          fprintf(d, "%.0f..never\t%.0f..\tnever", c->breakeven_lo, c->breakeven_lo);
        else fputs(" \t \t ", d);
      }
      fputc('\n', d);
    }
  }
  /* colour scale: log2 of the break-even, shared by the panels */
  if (!isfinite(bmin)) { bmin = 1; bmax = 16384; }
  double lo = floor(log2(bmin)), hi = ceil(log2(bmax));
  if (hi <= lo) hi = lo + 1;
  /* layout: the panels side by side (up to 4, else rows of 3); the left margin fits the
   * longest GPU name, the right one the colour box and its label.  A cell narrower than its
   * interval (under 75 px) shows the interval on two lines, "lo.." over "hi", in small text */
  int cols = np <= 4 ? (int)np : 3, rows = (int)((np + (size_t)cols - 1) / (size_t)cols);
  const double W = F.o->width_px, H = F.o->height_px;
  size_t maxname = 4;
  for (size_t r = 0; r < ng; r++) if (strlen(gpus[r]) > maxname) maxname = strlen(gpus[r]);
  double lm = (7.5 * (double)maxname + 30.0) / W, rm = 1.0 - 120.0 / W, hsp = 30.0 / W;
  double cell_w = ((rm - lm) - hsp * (cols - 1)) * W / cols / (double)nt;
  int narrow = cell_w < 75;
  fprintf(g, "set palette defined (0 '#c7e9c0', 0.5 '#fee391', 1 '#fc9272')\n");
  fprintf(g, "set logscale cb 2\nset cbrange [%.0f:%.0f]\nset format cb '%%.0f'\n", pow(2, lo), pow(2, hi));
  fprintf(g, "set cblabel 'break-even tokens (split faster from T)'\n");
  fprintf(g, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", nt - 1, ng - 1);
  fprintf(g, "set xtics (");
  for (size_t t = 0; t < nt; t++) fprintf(g, "%s'TP%d' %zu", t ? ", " : "", tps[t], t);
  fprintf(g, ") scale 0\nYT = \"set ytics (");
  /* the GPU names as a macro string, set on the first panel of each row */
  for (size_t r = 0; r < ng; r++) {
    if (r) fputs(", ", g);
    fputc('\'', g);
    for (const char *q = gpus[r]; *q; q++) if (*q != '\'' && *q != '"' && *q != '\\') fputc(*q, g);
    fprintf(g, "' %zu", ng - 1 - r);
  }
  fprintf(g, ") scale 0\"\nunset grid\nunset key\nset xlabel 'tensor-parallel size'\n");
  fprintf(g, "# cells where the split never wins (or the path cannot run) stay grey\n");
  fprintf(g, "set object 1 rect from graph 0, graph 0 to graph 1, graph 1 fc rgb '#e6e6e6' fs solid 1 noborder behind\n");
  fprintf(g, "set colorbox user origin %.4f, %.4f size %.4f, %.4f\n", rm + 20.0 / W, 80.0 / H, 15.0 / W, 1.0 - 180.0 / H);
  fprintf(g, "set multiplot layout %d,%d margins %.4f, %.4f, %.4f, %.4f spacing %.4f, 0.06 "
             "title 'break-even tokens per GPU x TP, one panel per kernel path "
             "(small: 90%% interval; light grey: never; dark grey: n/a)' font 'Sans,13'\n", rows, cols, lm, rm,
          70.0 / H, 1.0 - 80.0 / H, hsp);
  for (size_t p = 0; p < np; p++) {
    fprintf(g, "set title "); gp_str(g, paths[p]); fputc('\n', g);
    fprintf(g, "%s\n", p % (size_t)cols == 0 ? "eval YT" : "unset ytics");
    fprintf(g, "%s\n", p + (size_t)cols < np ? "unset xlabel" : "set xlabel 'tensor-parallel size'");
    if (p + 1 < np) fprintf(g, "unset colorbox\n");
    else fprintf(g, "set colorbox user origin %.4f, %.4f size %.4f, %.4f\n", rm + 20.0 / W, 80.0 / H, 15.0 / W, 1.0 - 180.0 / H);
    /* coloured cells; "n/a" cells a darker grey than "never" (the background) */
    fprintf(g, "plot '%s.dat' index %zu using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \\\n"
               "     '' index %zu using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \\\n"
               "     '' index %zu using 1:2:9 with labels offset 0,%s font 'Sans,11'",
            name, p, p, p, narrow ? "0.7" : "0.45");
    if (narrow)
      fprintf(g, ", \\\n     '' index %zu using 1:2:11 with labels offset 0,-0.35 font 'Sans,8' tc rgb '#333333', \\\n"
                 "     '' index %zu using 1:2:12 with labels offset 0,-1.1 font 'Sans,8' tc rgb '#333333'\n", p, p);
    else fprintf(g, ", \\\n     '' index %zu using 1:2:10 with labels offset 0,-0.6 font 'Sans,8' tc rgb '#333333'\n", p);
  }
  fprintf(g, "unset multiplot\n");
  free(gpus); free(paths); free(tps);
  return fig_end(&F, w, e) ? (fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 4: fit quality */

int tps_plot_fitq(const char *dir, const char *name, const tps_fit *f, const char *path_name,
                  const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (!f || f->npts == 0) return tps_err_set(e, NULL, 0, "plot: fit-quality figure of an empty fit");
  fig F;
  if (fig_begin(&F, dir, name, o, "fit quality: relative residuals and leave-one-out errors", e)) return -1;
  const char *xname = f->kind == TPS_FIT_GEMM ? "rows" : f->kind == TPS_FIT_ALLGATHER ? "bytes" : "tokens";
  const char *sname[2] = {f->kind == TPS_FIT_SPLIT ? "replicated" : f->kind == TPS_FIT_GEMM ? "gemm" : "allgather", "split"};
  int has[2] = {0, 0}, loo = 0;
  for (size_t i = 0; i < f->npts; i++) {
    has[f->pt[i].series ? 1 : 0] = 1;
    if (isfinite(f->pt[i].loo_rel)) loo = 1;
  }
  int idx[2] = {-1, -1}, nb = 0;
  char hdr[256];
  snprintf(hdr, sizeof hdr, "%s\tmeasured_us\tmodel_us\trel_resid_pct\tloo_rel_pct\tgather_us\tgather_se_us", xname);
  for (int s = 0; s < 2; s++) {
    if (!has[s]) continue;
    char what[128];
    snprintf(what, sizeof what, "%s series: measured, model, (model-measured)/measured and leave-one-out error in %%", sname[s]);
    idx[s] = nb;
    block(&F, nb++, what, hdr);
    for (size_t i = 0; i < f->npts; i++) {
      const tps_fit_point *p = &f->pt[i];
      if ((p->series ? 1 : 0) != s) continue;
      FILE *d = F.dat.fp;
      num(d, p->x);
      double v[6] = {p->measured_us, p->model_us, 100 * p->rel_resid, 100 * p->loo_rel, p->gather_us, p->gather_se_us};
      for (int k = 0; k < 6; k++) { fputc('\t', d); num(d, v[k]); }
      fputc('\n', d);
    }
  }
  FILE *g = F.gp.fp;
  char col[8], title[512];
  tp_shade(tps_plot_gpu_colour(f->gpu), f->tp ? f->tp : 8, col);
  int len = snprintf(title, sizeof title, "fit quality: %s", f->gpu[0] ? f->gpu : "?");
  if (f->tp && f->kind != TPS_FIT_GEMM) len += snprintf(title + len, sizeof title - (size_t)len, ", TP%d", f->tp);
  if (path_name) len += snprintf(title + len, sizeof title - (size_t)len, ", %s", path_name);
  len += snprintf(title + len, sizeof title - (size_t)len, ": median |residual| %.1f%% (max %.1f%%)",
                  100 * f->med_abs_rel, 100 * f->max_abs_rel);
  if (loo && isfinite(f->loo_med_abs))
    snprintf(title + len, sizeof title - (size_t)len, ", leave-one-out median %.1f%% (max %.1f%%)",
             100 * f->loo_med_abs, 100 * f->loo_max_abs);
  fprintf(g, "set title "); gp_str(g, title); fputc('\n', g);
  fprintf(g, "set logscale x 2\nset format x '%%.0f'\nset xlabel '%s'\n",
          f->kind == TPS_FIT_ALLGATHER ? "gathered bytes" : f->kind == TPS_FIT_GEMM ? "GEMM rows M" : "tokens per step T");
  if (f->kind == TPS_FIT_ALLGATHER) fprintf(g, "set format x '%%.0b%%BB'\n");
  fprintf(g, "set ylabel 'relative error (model - measured) / measured (%%)'\n");
  gp_key(g, F.o);
  fprintf(g, "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n");
  fprintf(g, "set yrange [*<-6:6<*]  # at least -6..6%%, so the +-5%% guides show\n");
  fprintf(g, "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb '#000000' back\n");
  fprintf(g, "set arrow 2 from graph 0, first 5 to graph 1, first 5 nohead dt 2 lc rgb '#999999' back\n");
  fprintf(g, "set arrow 3 from graph 0, first -5 to graph 1, first -5 nohead dt 2 lc rgb '#999999' back\n");
  fprintf(g, "set label 1 '+-5%%' at graph 1, first 5 right offset -0.5,0.6 tc rgb '#777777' front\n");
  fprintf(g, "plot \\\n");
  int first = 1;
#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
  for (int s = 0; s < 2; s++) {
    if (idx[s] < 0) continue;
    const char *c = s ? col : "#444444";
    double dx = s ? 1.04 : 0.96; /* nudge the two series apart on shared x values */
    SEP(); fprintf(g, "  '%s.dat' index %d using ($1*%.2f):4 with impulses lw 2 lc rgb '%s' notitle", name, idx[s], dx, c);
    SEP(); fprintf(g, "  '%s.dat' index %d using ($1*%.2f):4 with points pt %d ps 1.6 lc rgb '%s' title '%s: residual of the fit'",
                   name, idx[s], dx, s ? 5 : 7, c, sname[s]);
    if (loo) {
      SEP(); fprintf(g, "  '%s.dat' index %d using ($1*%.2f):5 with points pt %d ps 1.8 lw 1.5 lc rgb '%s' title '%s: leave-one-out error'",
                     name, idx[s], dx, s ? 4 : 6, c, sname[s]);
    }
  }
  fprintf(g, "\n");
#undef SEP
  return fig_end(&F, w, e) ? (fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 5: the stage by layer kind */

/* Two horizontal bars, replicated (top) and split (bottom), each the stage of one chunk summed
 * over the model's layers, stacked by layer kind: a segment per kind as long as count x the
 * stage of one layer of that kind, in the kind's colour.  The totals written at the bar ends
 * are the model's (l->total_*), and the .dat holds the kinds, the totals and the segments,
 * then the per-layer rows. */
int tps_plot_layers_fig(const char *dir, const char *name, const tps_plot_layers *l,
                        const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (!l || l->nkind == 0 || !l->kind_label || !l->kind_count || !l->kind_main_us || !l->kind_split_us)
    return tps_err_set(e, NULL, 0, "plot: per-layer figure without layer kinds");
  if (l->n && (!l->layer || !l->main_us || !l->split_us))
    return tps_err_set(e, NULL, 0, "plot: per-layer figure: per-layer rows without times");
  static const char *const kcol[] = {"#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#E15759", "#76B7B2", "#EDC948", "#9C755F"};
  const size_t ncol = sizeof kcol / sizeof kcol[0];
  fig F;
  if (fig_begin(&F, dir, name, o, "input-projection stage over all layers, replicated vs split, by layer kind", e)) return -1;
  FILE *d = F.dat.fp;
  int nlayers = 0;
  block(&F, 0, "layer kinds: one layer's stage (main_us, split_us) and count x it (*_total_us)",
        "kind\tcount\tmain_us\tsplit_us\tmain_total_us\tsplit_total_us\tsaving_total_us\tlayers");
  for (size_t k = 0; k < l->nkind; k++) {
    double mt = l->kind_count[k] * l->kind_main_us[k], st = l->kind_count[k] * l->kind_split_us[k];
    nlayers += l->kind_count[k];
    fprintf(d, "%s\t%d\t", l->kind_label[k], l->kind_count[k]);
    double v[5] = {l->kind_main_us[k], l->kind_split_us[k], mt, st, mt - st};
    for (int q = 0; q < 5; q++) { num(d, v[q]); fputc('\t', d); }
    fprintf(d, "%s\n", l->kind_layers && l->kind_layers[k] ? l->kind_layers[k] : "-");
  }
  double M = l->total_main_us, S = l->total_split_us;
  block(&F, 1, "the model's totals over all layers", "layers\tmain_us\tsplit_us\tsaving_us\tsaving_pct");
  fprintf(d, "%d\t", nlayers);
  num(d, M); fputc('\t', d);
  num(d, S); fputc('\t', d);
  num(d, M - S); fputc('\t', d);
  num(d, 100.0 * (M - S) / M); fputc('\n', d);
  /* segments: one block per kind, its replicated (y = 1) and split (y = 0) pieces in ms */
  double x[2] = {0, 0};
  for (size_t k = 0; k < l->nkind; k++) {
    char what[256];
    snprintf(what, sizeof what, "segments of kind %s (ms from the bar's start; bar 1 replicated, 0 split)", l->kind_label[k]);
    block(&F, 2 + (int)k, what, "bar\tx_ms\tlo_ms\thi_ms\ty_lo\ty_hi");
    for (int bar = 1; bar >= 0; bar--) {
      double len = l->kind_count[k] * (bar ? l->kind_main_us[k] : l->kind_split_us[k]) / 1000.0;
      double a = x[bar], b = x[bar] + len;
      x[bar] = b;
      fprintf(d, "%d\t", bar);
      double v[5] = {(a + b) / 2, a, b, bar - 0.32, bar + 0.32};
      for (int q = 0; q < 5; q++) { num(d, v[q]); fputc(q < 4 ? '\t' : '\n', d); }
    }
  }
  int per_layer = 2 + (int)l->nkind;
  if (l->n) {
    block(&F, per_layer, "one row per layer", "layer\tmain_us\tsplit_us\tsaved_us");
    for (size_t i = 0; i < l->n; i++) {
      fprintf(d, "%d\t", l->layer[i]);
      num(d, l->main_us[i]); fputc('\t', d);
      num(d, l->split_us[i]); fputc('\t', d);
      num(d, l->main_us[i] - l->split_us[i]); fputc('\n', d);
    }
  }
  FILE *g = F.gp.fp;
  char title[512];
  snprintf(title, sizeof title, "%s on %s, TP%d, %s: input-projection stage of one %ld-token chunk, all %d layers, by layer kind",
           l->model ? l->model : "model", l->gpu ? l->gpu : "?", l->tp, l->path ? l->path : "?", l->tokens, nlayers);
  fprintf(g, "set title "); gp_str(g, title); fputc('\n', g);
  fprintf(g, "set xlabel 'time summed over the %d layers (ms)'\n", nlayers);
  fprintf(g, "set xrange [0:%.4g]\nset yrange [-0.7:1.7]\n", 1.3 * (M > S ? M : S) / 1000.0);
  fprintf(g, "set ytics ('replicated' 1, 'split by token' 0) scale 0\nset grid noytics\n");
  fprintf(g, "set style fill solid 0.9 border lc rgb '#ffffff'\n");
  fprintf(g, "set key below left horizontal Left reverse samplen 2 spacing 1.3 maxcols %d title 'layer kind: layers x the stage of one layer, replicated -> split' left\n",
          F.o->width_px >= 1000 ? 2 : 1);
  fprintf(g, "# the model's totals at the bar ends\n");
  fprintf(g, "set label 1 '%.2f ms' at %.10g, 1 left offset 0.8,0 front\n", M / 1000.0, M / 1000.0);
  fprintf(g, "set label 2 '%.2f ms: saves %.2f ms (%.0f%%)' at %.10g, 0 left offset 0.8,0 front\n", S / 1000.0,
          (M - S) / 1000.0, 100.0 * (M - S) / M, S / 1000.0);
  fprintf(g, "plot \\\n");
  for (size_t k = 0; k < l->nkind; k++) {
    char lab[320];
    snprintf(lab, sizeof lab, "%s: %d x (%.1f -> %.1f us)", l->kind_label[k], l->kind_count[k], l->kind_main_us[k],
             l->kind_split_us[k]);
    fprintf(g, "  '%s.dat' index %zu using 2:1:3:4:5:6 with boxxyerror fc rgb '%s' title ", name, 2 + k, kcol[k % ncol]);
    gp_str(g, lab);
    fprintf(g, "%s\n", k + 1 < l->nkind ? ", \\" : "");
  }
  return fig_end(&F, w, e) ? (fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- batch rendering */
/* Render every .gp script of w in nproc gnuplot processes at once (one start-up per process,
 * not per figure), with the guarantees of render(): each process runs in its own temporary
 * folder DIR/.batchK.XXXXXX holding links to ../NAME.dat and ../NAME.gp, so its images land
 * there; all processes share one process group, killed on SIGINT/SIGTERM (tps_tmp_child) or
 * when they pass the timeout (TPSPLIT_GNUPLOT_TIMEOUT per script); a complete image is renamed
 * to DIR/NAME.EXT, anything else removed: an interrupted run leaves no partial figure. */
int tps_plot_render_batch(const char *dir, const tps_plot_opts *o, int nproc, tps_plot_files *w, tps_err *e) {
  const char *gp = tps_plot_gnuplot();
  size_t n0 = w->n, ns = 0;
  char **scripts = calloc(n0 + 1, sizeof *scripts);
  if (!scripts) return tps_err_oom(e, "rendering figures");
  for (size_t i = 0; i < n0; i++) {
    size_t l = strlen(w->path[i]);
    if (l > 3 && !strcmp(w->path[i] + l - 3, ".gp")) scripts[ns++] = w->path[i];
  }
  if (!gp) {
    w->gnuplot_missing = 1;
    if (!o || !o->quiet) {
      const char *env = getenv("TPSPLIT_GNUPLOT");
      fprintf(stderr, "tpsplit: gnuplot not found%s%s%s: wrote .dat and .gp files only in %s "
              "(install gnuplot, then run `gnuplot -d NAME.gp` there)\n",
              env ? " (TPSPLIT_GNUPLOT='" : "", env ? env : "", env ? "')" : "", dir);
    }
    free(scripts);
    return 0;
  }
  enum { MAXP = 8 };
  if (nproc < 1) nproc = 1;
  if (nproc > MAXP) nproc = MAXP;
  if ((size_t)nproc > ns) nproc = ns ? (int)ns : 1;
  const int format = o ? o->format : TPS_PLOT_PNG;
  const char *ext = tps_plot_format_names[format];
  char tdir[MAXP][4096];
  int tslot[MAXP], np = 0, rc = 0;
  pid_t pid[MAXP], group = 0;
  int *lslot = malloc((3 * ns + 1) * sizeof *lslot); /* per script: two links and the image */
  char (*lpath)[4200] = malloc((3 * ns + 1) * sizeof *lpath);
  size_t nl = 0;
  if (!lslot || !lpath) { free(scripts); free(lslot); free(lpath); return tps_err_oom(e, "rendering figures"); }
  sigset_t all, old;
  sigemptyset(&all);
  sigaddset(&all, SIGINT); sigaddset(&all, SIGTERM); sigaddset(&all, SIGHUP);
  fflush(stdout);
  fflush(stderr);
  for (int k = 0; k < nproc && !rc; k++) {
    snprintf(tdir[k], sizeof tdir[k], "%s/.batch%d.XXXXXX", dir, k);
    sigprocmask(SIG_BLOCK, &all, &old); /* create and register together */
    if (!mkdtemp(tdir[k])) {
      int err = errno;
      sigprocmask(SIG_SETMASK, &old, NULL);
      rc = tps_err_resource(e, dir, "cannot create a temporary folder for gnuplot's images: %s", strerror(err));
      break;
    }
    tslot[k] = tps_tmp_add(tdir[k], 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    size_t cnt = 0;
    for (size_t i = (size_t)k; i < ns; i += (size_t)nproc) cnt++;
    char **argv = calloc(2 + 3 * cnt + 1, sizeof *argv);
    if (!argv) { rc = tps_err_oom(e, "rendering figures"); rmdir(tdir[k]); tps_tmp_del(tslot[k]); break; }
    size_t a = 0;
    argv[a++] = (char *)gp;
    argv[a++] = (char *)"-d";
    for (size_t i = (size_t)k; i < ns && !rc; i += (size_t)nproc) {
      const char *b = strrchr(scripts[i], '/');
      b = b ? b + 1 : scripts[i];
      size_t bl = strlen(b) - 3; /* NAME of NAME.gp */
      static const char *const kinds[2] = {"dat", "gp"};
      for (int q = 0; q < 2 && !rc; q++) {
        char rel[4200], real[4200];
        snprintf(lpath[nl], sizeof lpath[nl], "%s/%.*s.%s", tdir[k], (int)bl, b, kinds[q]);
        snprintf(rel, sizeof rel, "../%.*s.%s", (int)bl, b, kinds[q]);
        snprintf(real, sizeof real, "%s/%.*s.%s", dir, (int)bl, b, kinds[q]);
        sigprocmask(SIG_BLOCK, &all, &old);
        if (symlink(rel, lpath[nl]) != 0 && link(real, lpath[nl]) != 0)
          rc = tps_err_resource(e, lpath[nl], "cannot link the %s for gnuplot: %s", q ? "script" : "data file", strerror(errno));
        else {
          lslot[nl] = tps_tmp_add(lpath[nl], 0);
          nl++;
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
      }
      if (!rc) { /* the image gnuplot will write here, registered too: an interrupt before it is
                   * moved into place removes it, and then the folder can go */
        snprintf(lpath[nl], sizeof lpath[nl], "%s/%.*s.%s", tdir[k], (int)bl, b, ext);
        sigprocmask(SIG_BLOCK, &all, &old);
        lslot[nl] = tps_tmp_add(lpath[nl], 0);
        nl++;
        sigprocmask(SIG_SETMASK, &old, NULL);
      }
      argv[a++] = (char *)"-e";
      argv[a++] = (char *)"reset";
      argv[a++] = (char *)b;
    }
    argv[a] = NULL;
    if (rc) { free(argv); break; }
    pid_t p = fork();
    if (p < 0) { free(argv); rc = tps_err_resource(e, dir, "cannot start gnuplot: %s", strerror(errno)); break; }
    if (p == 0) {
      setpgid(0, group);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      if (chdir(tdir[k]) != 0) _exit(126);
      dup2(2, 1); /* its chatter goes to our stderr: --json stays clean */
      execv(gp, argv);
      _exit(127);
    }
    free(argv);
    setpgid(p, group ? group : p); /* also here: no race with a kill */
    if (!group) { group = p; tps_tmp_child(group); }
    pid[np++] = p;
  }
  /* wait for every process, killing the group past the timeout */
  int tmo = gnuplot_timeout_s() * (int)(ns / (size_t)(np ? np : 1) + 1), timed_out = 0, failed = 0;
  struct timespec t0, now, nap = {0, 5 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int left = np; left > 0;) {
    for (int k = 0; k < np; k++) {
      if (!pid[k]) continue;
      int st;
      pid_t r = waitpid(pid[k], &st, WNOHANG);
      if (r == pid[k]) {
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) failed = 1;
        pid[k] = 0;
        left--;
      }
    }
    if (!left) break;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!timed_out && (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > tmo) {
      kill(-group, SIGKILL);
      timed_out = 1;
    }
    nanosleep(&nap, NULL);
  }
  tps_tmp_child(0);
  if (!rc && timed_out)
    rc = tps_err_resource(e, dir, "gnuplot (%s) did not finish within %d s: killed (TPSPLIT_GNUPLOT_TIMEOUT sets the limit)",
                          gp, tmo);
  else if (!rc && failed)
    rc = tps_err_set(e, dir, 0, "gnuplot (%s) failed on a figure script (run `gnuplot -d NAME.gp` in %s to see which)", gp, dir);
  /* move the complete images into place */
  for (size_t i = 0; i < ns; i++) {
    const char *b = strrchr(scripts[i], '/');
    b = b ? b + 1 : scripts[i];
    int k = (int)(i % (size_t)(np ? np : 1));
    char timg[4300], img[4300];
    snprintf(timg, sizeof timg, "%s/%.*s.%s", tdir[k], (int)(strlen(b) - 3), b, ext);
    snprintf(img, sizeof img, "%s/%.*s.%s", dir, (int)(strlen(b) - 3), b, ext);
    if (!rc && !image_complete(timg, format)) {
      struct stat st;
      rc = stat(timg, &st) != 0 || st.st_size == 0
               ? tps_err_resource(e, img, "gnuplot produced no image")
               : tps_err_resource(e, img, "gnuplot wrote an incomplete image (%lld bytes without its end: the disk full?); "
                                  "nothing kept", (long long)st.st_size);
    }
    if (!rc && rename(timg, img) != 0)
      rc = tps_err_resource(e, img, "cannot rename gnuplot's image into place: %s", strerror(errno));
    unlink(timg);
    if (!rc) {
      char nm[4096];
      snprintf(nm, sizeof nm, "%.*s", (int)(strlen(b) - 3), b);
      files_add(w, dir, nm, ext);
      w->images++;
    }
  }
  for (size_t q = 0; q < nl; q++) { unlink(lpath[q]); tps_tmp_del(lslot[q]); }
  for (int k = 0; k < np; k++) { rmdir(tdir[k]); tps_tmp_del(tslot[k]); }
  free(lslot);
  free(lpath);
  free(scripts);
  return rc ? -1 : 0;
}

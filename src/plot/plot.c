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
 *    $TPSPLIT_GNUPLOT_TIMEOUT seconds (default TPS_PLOT_GNUPLOT_TIMEOUT_S).
 * The figures themselves are plot_figs.c; what both share, plot_fig.h. */
#include "config.h"
#include "src/plot/plot.h"
#include "src/plot/plot_fig.h"
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

const char *const tps_plot_format_names[TPS_PLOT_NFORMATS] = {"png", "svg", "pdf"};

void tps_plot_opts_init(tps_plot_opts *o) {
  memset(o, 0, sizeof *o);
  o->format = TPS_PLOT_PNG;
  o->width_px = 1200;
  o->height_px = 800;
  o->render = 1;
  o->seed = 1;
}

int tps_plot_parse_format(const char *s, int *format) {
  for (int i = 0; i < TPS_PLOT_NFORMATS; i++)
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
void pf_tp_shade(const char *rgb, int tp, char out[8]) {
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
int pf_path_dash(const char *path) {
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
void pf_gp_str(FILE *fp, const char *s) {
  fputc('\'', fp);
  for (; s && *s; s++) {
    if (*s == '\'') fputc('\'', fp);
    if (*s == '\n' || *s == '\r') { fputc(' ', fp); continue; }
    fputc(*s, fp);
  }
  fputc('\'', fp);
}

void pf_num(FILE *fp, double x) {
  if (isfinite(x)) fprintf(fp, "%.10g", x);
  else fputs("nan", fp);
}


int pf_fig_begin(fig *F, const char *dir, const char *name, const tps_plot_opts *o,
                     const char *what, tps_err *e) {
  memset(F, 0, sizeof *F);
  tps_plot_opts_init(&F->defaults);
  F->o = o ? o : &F->defaults;
  F->dir = dir; F->name = name;
  snprintf(F->ext, sizeof F->ext, "%s", tps_plot_format_names[F->o->format >= 0 && F->o->format < TPS_PLOT_NFORMATS ? F->o->format : 0]);
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

void pf_block(fig *F, int idx, const char *what, const char *header) {
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

int pf_fig_end(fig *F, tps_plot_files *w, tps_err *e) {
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
      tps_die_msg("gnuplot not found%s%s%s: wrote .dat and .gp files only in %s "
              "(install gnuplot, then run `gnuplot -d NAME.gp` there)",
              env ? " (TPSPLIT_GNUPLOT='" : "", env ? env : "", env ? "')" : "", F->dir);
      told = 1;
    }
    return 0;
  }
  return render(F, gp, w, e);
}

void pf_fig_abort(fig *F) {
  tps_out_abort(&F->dat);
  tps_out_abort(&F->gp);
}

/* Legend text of a curve: the part that varies, plus where it comes from. */

/* ---------------------------------------------------------------- batch rendering */
/* Render every .gp script of w in nproc gnuplot processes at once (one start-up per process,
 * not per figure), with the guarantees of render(): each process runs in its own temporary
 * folder DIR/.batchK.XXXXXX holding links to ../NAME.dat and ../NAME.gp, so its images land
 * there; all processes share one process group, killed on SIGINT/SIGTERM (tps_tmp_child) or
 * when they pass the timeout (TPSPLIT_GNUPLOT_TIMEOUT per script); a complete image is renamed
 * to DIR/NAME.EXT, anything else removed: an interrupted run leaves no partial figure. */
enum { BATCH_MAXP = 8 };

/* A batch of gnuplot processes: K runs in tdir[K] the scripts K, K + np, ... */
typedef struct {
  const char *dir, *gp, *ext;
  char **scripts;                /* the .gp files of w */
  size_t ns;
  int nproc, np;                 /* processes asked, started */
  char tdir[BATCH_MAXP][4096];
  int tslot[BATCH_MAXP];
  pid_t pid[BATCH_MAXP], group;
  int *lslot;                    /* per script: two links and the image, registered for removal */
  char (*lpath)[4200];
  size_t nl;
  sigset_t all;
} batch;

/* In process k's folder: links to the script NAME.gp (base b, NAME of length bl) and its
 * .dat, and the image it will write, all registered for removal (an interrupt before the
 * image is moved into place removes it, and then the folder can go).  0 or an error. */
static int batch_link(batch *B, int k, const char *b, size_t bl, tps_err *e) {
  static const char *const kinds[2] = {"dat", "gp"};
  sigset_t old;
  int rc = 0;
  for (int q = 0; q < 2 && !rc; q++) {
    char rel[4200], real[4200];
    snprintf(B->lpath[B->nl], sizeof B->lpath[B->nl], "%s/%.*s.%s", B->tdir[k], (int)bl, b, kinds[q]);
    snprintf(rel, sizeof rel, "../%.*s.%s", (int)bl, b, kinds[q]);
    snprintf(real, sizeof real, "%s/%.*s.%s", B->dir, (int)bl, b, kinds[q]);
    sigprocmask(SIG_BLOCK, &B->all, &old);
    if (symlink(rel, B->lpath[B->nl]) != 0 && link(real, B->lpath[B->nl]) != 0)
      rc = tps_err_resource(e, B->lpath[B->nl], "cannot link the %s for gnuplot: %s", q ? "script" : "data file",
                            strerror(errno));
    else {
      B->lslot[B->nl] = tps_tmp_add(B->lpath[B->nl], 0);
      B->nl++;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
  }
  if (!rc) {
    snprintf(B->lpath[B->nl], sizeof B->lpath[B->nl], "%s/%.*s.%s", B->tdir[k], (int)bl, b, B->ext);
    sigprocmask(SIG_BLOCK, &B->all, &old);
    B->lslot[B->nl] = tps_tmp_add(B->lpath[B->nl], 0);
    B->nl++;
    sigprocmask(SIG_SETMASK, &old, NULL);
  }
  return rc;
}

/* Start process k: its temporary folder (created and registered together), the links of its
 * scripts, then gnuplot -d -e reset SCRIPT ... in the folder.  0 or an error. */
static int batch_start(batch *B, int k, tps_err *e) {
  sigset_t old;
  int rc = 0;
  snprintf(B->tdir[k], sizeof B->tdir[k], "%s/.batch%d.XXXXXX", B->dir, k);
  sigprocmask(SIG_BLOCK, &B->all, &old); /* create and register together */
  if (!mkdtemp(B->tdir[k])) {
    int err = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return tps_err_resource(e, B->dir, "cannot create a temporary folder for gnuplot's images: %s", strerror(err));
  }
  B->tslot[k] = tps_tmp_add(B->tdir[k], 1);
  sigprocmask(SIG_SETMASK, &old, NULL);
  size_t cnt = 0;
  for (size_t i = (size_t)k; i < B->ns; i += (size_t)B->nproc) cnt++;
  char **argv = calloc(2 + 3 * cnt + 1, sizeof *argv);
  if (!argv) { rc = tps_err_oom(e, "rendering figures"); rmdir(B->tdir[k]); tps_tmp_del(B->tslot[k]); return rc; }
  size_t a = 0;
  argv[a++] = (char *)B->gp;
  argv[a++] = (char *)"-d";
  for (size_t i = (size_t)k; i < B->ns && !rc; i += (size_t)B->nproc) {
    const char *b = strrchr(B->scripts[i], '/');
    b = b ? b + 1 : B->scripts[i];
    rc = batch_link(B, k, b, strlen(b) - 3 /* NAME of NAME.gp */, e);
    argv[a++] = (char *)"-e";
    argv[a++] = (char *)"reset";
    argv[a++] = (char *)b;
  }
  argv[a] = NULL;
  if (rc) { free(argv); return rc; }
  pid_t p = fork();
  if (p < 0) { free(argv); return tps_err_resource(e, B->dir, "cannot start gnuplot: %s", strerror(errno)); }
  if (p == 0) {
    setpgid(0, B->group);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (chdir(B->tdir[k]) != 0) _exit(126);
    dup2(2, 1); /* its chatter goes to our stderr: --json stays clean */
    execv(B->gp, argv);
    _exit(127);
  }
  free(argv);
  setpgid(p, B->group ? B->group : p); /* also here: no race with a kill */
  if (!B->group) { B->group = p; tps_tmp_child(B->group); }
  B->pid[B->np++] = p;
  return 0;
}

/* Wait for every process, killing the group past tmo seconds. */
static void batch_wait(batch *B, int tmo, int *timed_out, int *failed) {
  struct timespec t0, now, nap = {0, 5 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int left = B->np; left > 0;) {
    for (int k = 0; k < B->np; k++) {
      if (!B->pid[k]) continue;
      int st;
      pid_t r = waitpid(B->pid[k], &st, WNOHANG);
      if (r == B->pid[k]) {
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) *failed = 1;
        B->pid[k] = 0;
        left--;
      }
    }
    if (!left) break;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!*timed_out && (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > tmo) {
      kill(-B->group, SIGKILL);
      *timed_out = 1;
    }
    nanosleep(&nap, NULL);
  }
  tps_tmp_child(0);
}

/* Move the complete images into place (rc: the error so far; none is moved after one). */
static int batch_collect(batch *B, int format, int rc, tps_plot_files *w, tps_err *e) {
  for (size_t i = 0; i < B->ns; i++) {
    const char *b = strrchr(B->scripts[i], '/');
    b = b ? b + 1 : B->scripts[i];
    int k = (int)(i % (size_t)(B->np ? B->np : 1));
    char timg[4300], img[4300];
    snprintf(timg, sizeof timg, "%s/%.*s.%s", B->tdir[k], (int)(strlen(b) - 3), b, B->ext);
    snprintf(img, sizeof img, "%s/%.*s.%s", B->dir, (int)(strlen(b) - 3), b, B->ext);
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
      files_add(w, B->dir, nm, B->ext);
      w->images++;
    }
  }
  return rc;
}

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
      tps_die_msg("gnuplot not found%s%s%s: wrote .dat and .gp files only in %s "
              "(install gnuplot, then run `gnuplot -d NAME.gp` there)",
              env ? " (TPSPLIT_GNUPLOT='" : "", env ? env : "", env ? "')" : "", dir);
    }
    free(scripts);
    return 0;
  }
  if (nproc < 1) nproc = 1;
  if (nproc > BATCH_MAXP) nproc = BATCH_MAXP;
  if ((size_t)nproc > ns) nproc = ns ? (int)ns : 1;
  const int format = o ? o->format : TPS_PLOT_PNG;
  batch *B = calloc(1, sizeof *B);
  if (!B) { free(scripts); return tps_err_oom(e, "rendering figures"); }
  B->dir = dir;
  B->gp = gp;
  B->ext = tps_plot_format_names[format];
  B->scripts = scripts;
  B->ns = ns;
  B->nproc = nproc;
  B->lslot = malloc((3 * ns + 1) * sizeof *B->lslot);
  B->lpath = malloc((3 * ns + 1) * sizeof *B->lpath);
  int rc = 0;
  if (!B->lslot || !B->lpath) { free(scripts); free(B->lslot); free(B->lpath); free(B); return tps_err_oom(e, "rendering figures"); }
  sigemptyset(&B->all);
  sigaddset(&B->all, SIGINT); sigaddset(&B->all, SIGTERM); sigaddset(&B->all, SIGHUP);
  fflush(stdout);
  fflush(stderr);
  for (int k = 0; k < nproc && !rc; k++) rc = batch_start(B, k, e);
  int tmo = gnuplot_timeout_s() * (int)(ns / (size_t)(B->np ? B->np : 1) + 1), timed_out = 0, failed = 0;
  batch_wait(B, tmo, &timed_out, &failed);
  if (!rc && timed_out)
    rc = tps_err_resource(e, dir, "gnuplot (%s) did not finish within %d s: killed (TPSPLIT_GNUPLOT_TIMEOUT sets the limit)",
                          gp, tmo);
  else if (!rc && failed)
    rc = tps_err_set(e, dir, 0, "gnuplot (%s) failed on a figure script (run `gnuplot -d NAME.gp` in %s to see which)", gp, dir);
  rc = batch_collect(B, format, rc, w, e);
  for (size_t q = 0; q < B->nl; q++) { unlink(B->lpath[q]); tps_tmp_del(B->lslot[q]); }
  for (int k = 0; k < B->np; k++) { rmdir(B->tdir[k]); tps_tmp_del(B->tslot[k]); }
  free(B->lslot);
  free(B->lpath);
  free(B);
  free(scripts);
  return rc ? -1 : 0;
}

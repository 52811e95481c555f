/* test_plot.c: unit tests of src/plot/plot.c (the figure writers, colours, options, gnuplot
 * lookup) and src/cli/plot_job.c (curves from the bundled H20 fit).
 *
 * The .dat numbers are checked against values computed here independently: by hand for the
 * synthetic curves (comments), and for the fitted curves directly from the cost model
 * (tps_gemm_time_us + tps_ag_time_us on the fit's parameters), not through predict or plot.
 * Files go to a fresh folder under $TMPDIR; nothing here needs gnuplot (render = 0, or
 * TPSPLIT_GNUPLOT pointing nowhere). */
#include "config.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "model/latency/allgather.h"
#include "model/latency/gemm.h"
#include "src/io/gpus.h"
#include "src/plot/plot.h"
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/base/util.h"

#include "tests/unit/expect.h"
#define NEAR(a, b, rel) CHECK(fabs((a) - (b)) <= (rel) * fabs(b), "%s = %.10g, want %.10g", #a, (double)(a), (double)(b))

static char root[512];

/* ---------------------------------------------------------------- .dat reader */
#define MAXROWS 2048
#define MAXCOLS 16
typedef struct {
  size_t n;
  int ncol;
  char cell[MAXROWS][MAXCOLS][32];
} block_t;

/* Rows of block `want` ("# block N:" lines start blocks; the header row is skipped). */
static int read_block(const char *file, int want, block_t *b) {
  FILE *fp = fopen(file, "r");
  if (!fp) return -1;
  char line[4096];
  int cur = -1, header = 0;
  b->n = 0;
  while (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "# block ", 8) == 0) { cur = atoi(line + 8); header = 1; continue; }
    if (line[0] == '#' || line[0] == '\0' || cur != want) continue;
    if (header) { header = 0; continue; }
    if (b->n == MAXROWS) break;
    int c = 0;
    for (char *s = line, *t; c < MAXCOLS; c++) {
      t = strchr(s, '\t');
      size_t l = t ? (size_t)(t - s) : strlen(s);
      snprintf(b->cell[b->n][c], 32, "%.*s", (int)l, s);
      if (!t) { c++; break; }
      s = t + 1;
    }
    b->ncol = c;
    b->n++;
  }
  fclose(fp);
  return 0;
}
static double D(const block_t *b, size_t r, int c) { return strtod(b->cell[r][c], NULL); }

static int exists(const char *dir, const char *name) {
  char p[1024];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return stat(p, &st) == 0 && st.st_size > 0;
}
static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d));) if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}
static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  char *buf = malloc(1 << 20);
  *len = buf ? fread(buf, 1, (1 << 20) - 1, fp) : 0;
  if (buf) buf[*len] = '\0';
  fclose(fp);
  return buf;
}

/* ---------------------------------------------------------------- options and colours */
static void test_options(void) {
  int w, h, f;
  CHECK(tps_plot_parse_size("800x600", &w, &h) == 0 && w == 800 && h == 600, "800x600 -> %dx%d", w, h);
  CHECK(tps_plot_parse_size("50x50", &w, &h) != 0, "50x50 accepted");
  CHECK(tps_plot_parse_size("axb", &w, &h) != 0, "axb accepted");
  CHECK(tps_plot_parse_size("800", &w, &h) != 0, "800 accepted");
  CHECK(tps_plot_parse_format("svg", &f) == 0 && f == TPS_PLOT_SVG, "svg");
  CHECK(tps_plot_parse_format("pdf", &f) == 0 && f == TPS_PLOT_PDF, "pdf");
  CHECK(tps_plot_parse_format("jpg", &f) != 0, "jpg accepted");
  unsigned bits;
  CHECK(tps_plot_parse_figures("speedup,crossover", &bits) == 0 &&
            bits == (TPS_PLOT_FIG_SPEEDUP | TPS_PLOT_FIG_CROSSOVER), "figures bits %u", bits);
  CHECK(tps_plot_parse_figures("speedup,nope", &bits) != 0, "unknown figure accepted");
  /* colours come from the GPU table's plot_colour column (tps_plot_use_gpus): by name, alias
   * and the name up to its first '-'; a GPU without one, or no table, gets a stable hash colour */
  const char *unknown_before = tps_plot_gpu_colour("ACME-X1");
  static const char tsv[] =
      "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\tsource\t"
      "plot_colour\n"
      "ACME-X1\tX1,Roadrunner\t100\t9.0\t500\t1000\t3000\t50\tNVLink4\t18\t450\t20.6\tmade up\t#123ABC\n"
      "ACME-X2\t\t100\t9.0\t500\t1000\t3000\t50\tNVLink4\t18\t450\t20.6\tmade up\t-\n";
  tps_gpu_table gt;
  tps_err ge;
  CHECK(tps_gpus_load_mem("mem.tsv", tsv, sizeof tsv - 1, &gt, &ge) == 0, "table: %s", ge.msg);
  tps_plot_use_gpus(&gt);
  tps_gpus_free(&gt); /* the colours were copied */
  CHECK(strcmp(tps_plot_gpu_colour("ACME-X1"), "#123ABC") == 0, "by name %s", tps_plot_gpu_colour("ACME-X1"));
  CHECK(strcmp(tps_plot_gpu_colour("roadrunner"), "#123ABC") == 0, "by alias %s", tps_plot_gpu_colour("roadrunner"));
  CHECK(strcmp(tps_plot_gpu_colour("acme-X9"), "#123ABC") == 0, "by stem %s", tps_plot_gpu_colour("acme-X9"));
  CHECK(strcmp(unknown_before, "#123ABC") != 0, "no table, yet the table's colour");
  const char *u1 = tps_plot_gpu_colour("MyGPU-9000"), *u2 = tps_plot_gpu_colour("MyGPU-9000");
  CHECK(strcmp(u1, u2) == 0 && u1[0] == '#' && strlen(u1) == 7, "unknown GPU colour '%s'", u1);
  tps_plot_use_gpus(NULL);
  CHECK(strcmp(tps_plot_gpu_colour("ACME-X1"), unknown_before) == 0, "table dropped, colour '%s'", tps_plot_gpu_colour("ACME-X1"));
  char s[64];
  tps_plot_safe_name("H100 SXM/x'y", s, sizeof s);
  CHECK(strcmp(s, "H100-SXM-x-y") == 0, "safe name '%s'", s);
}

/* ---------------------------------------------------------------- writers on synthetic data */
static const long T3[3] = {1, 8, 64};
static const double REP3[3] = {10, 20, 40}, SPL3[3] = {20, 20, 20};
static const int BK3[3] = {TPS_GATHER_CUSTOM, TPS_GATHER_CUSTOM, TPS_GATHER_NCCL};

static tps_plot_curve synth_curve(const char *gpu) {
  tps_plot_curve c;
  memset(&c, 0, sizeof c);
  c.gpu = gpu; c.tp = 8; c.path = "marlin-w8a16"; c.source = "synthetic";
  c.n = 3; c.tokens = T3; c.rep_us = REP3; c.split_us = SPL3; c.backend = BK3;
  c.breakeven_tokens = 8; c.breakeven_lo = 4; c.breakeven_hi = 16; c.threshold_tokens = 8;
  return c;
}

static void test_writers(void) {
  char dir[600], dir2[600], p[1024];
  tps_plot_opts o;
  tps_plot_opts_init(&o);
  o.render = 0;
  tps_err e;
  tps_err_clear(&e);
  snprintf(dir, sizeof dir, "%s/w1", root);
  tps_plot_curve c = synth_curve("H200");
  CHECK(tps_plot_latency(dir, "lat", &c, NULL, &o, NULL, &e) == 0, "latency: %s", e.msg);
  snprintf(p, sizeof p, "%s/lat.dat", dir);
  block_t *b = malloc(sizeof *b);
  read_block(p, 0, b);
  CHECK(b->n == 3 && b->ncol == 11, "latency block: %zu rows, %d cols", b->n, b->ncol);
  /* speedup = replicated / split: 10/20 = 0.5, 20/20 = 1, 40/20 = 2 */
  NEAR(D(b, 0, 7), 0.5, 1e-12);
  NEAR(D(b, 1, 7), 1.0, 1e-12);
  NEAR(D(b, 2, 7), 2.0, 1e-12);
  NEAR(D(b, 2, 1), 40.0, 1e-12);
  CHECK(strcmp(b->cell[0][2], "nan") == 0, "no band must read nan, got %s", b->cell[0][2]);
  CHECK(strcmp(b->cell[2][10], "nccl") == 0 && strcmp(b->cell[1][10], "custom") == 0, "backend column");
  /* the script marks the backend switch at the first NCCL token (64) and prints names literally */
  snprintf(p, sizeof p, "%s/lat.gp", dir);
  size_t len;
  char *gp = slurp(p, &len);
  CHECK(gp && strstr(gp, "set arrow 1 from 64, graph 0"), "backend switch arrow missing");
  CHECK(gp && strstr(gp, "noenhanced"), "noenhanced missing");
  CHECK(gp && strstr(gp, "set logscale x 2"), "log2 x axis missing");
  CHECK(gp && !strstr(gp, root), "the .gp names the output folder");
  free(gp);

  /* determinism: the same figure twice, two folders: identical scripts */
  snprintf(dir2, sizeof dir2, "%s/w2", root);
  static const char two[] =
      "name\taliases\tsms\tcc\tbf16_tflops\tfp8_tflops\thbm_gbps\tl2_mb\tlink\tlinks\tlink_gbps\tnccl_link_gbps\tsource\t"
      "plot_colour\n"
      "H200-SXM\tH200\t132\t9.0\t989\t1979\t4800\t50\tNVLink4\t18\t450\t20.6\tx\t#009E73\n"
      "H100-SXM\tH100\t132\t9.0\t989\t1979\t3350\t50\tNVLink4\t18\t450\t20.6\tx\t#0072B2\n";
  tps_gpu_table gt2;
  CHECK(tps_gpus_load_mem("two.tsv", two, sizeof two - 1, &gt2, &e) == 0, "table: %s", e.msg);
  tps_plot_use_gpus(&gt2);
  tps_gpus_free(&gt2);
  tps_plot_curve cs[2] = {synth_curve("H200"), synth_curve("H100")};
  CHECK(tps_plot_speedup(dir, "sp", TPS_PLOT_BY_GPU, cs, 2, NULL, 0, &o, NULL, &e) == 0, "speedup: %s", e.msg);
  CHECK(tps_plot_speedup(dir2, "sp", TPS_PLOT_BY_GPU, cs, 2, NULL, 0, &o, NULL, &e) == 0, "speedup 2: %s", e.msg);
  char p2[1024];
  snprintf(p, sizeof p, "%s/sp.gp", dir);
  snprintf(p2, sizeof p2, "%s/sp.gp", dir2);
  size_t l1, l2;
  char *g1 = slurp(p, &l1), *g2 = slurp(p2, &l2);
  CHECK(g1 && g2 && l1 == l2 && memcmp(g1, g2, l1) == 0, "speedup .gp differs between runs");
  /* each GPU in its own colour, the table's */
  CHECK(g1 && strstr(g1, "#009E73") && strstr(g1, "#0072B2"), "GPU colours missing");
  /* break-even marks outside the speedup axis: two panels, the break-even one below the
   * speedup one (its top margin under the speedup panel's bottom margin), every break-even
   * interval (xerrorbars) drawn in the second panel only, and no label or arrow placed
   * inside the speedup axis at a data y (the old strip used `first` y coordinates) */
  const char *p2s = g1 ? strstr(g1, "# panel 2:") : NULL;
  const char *p1s = g1 ? strstr(g1, "# panel 1:") : NULL;
  CHECK(g1 && strstr(g1, "set multiplot") && p1s && p2s && p1s < p2s, "speedup: not two panels");
  if (p1s && p2s) {
    double b1 = NAN, t2 = NAN;
    const char *q = strstr(p1s, "set bmargin at screen ");
    if (q && q < p2s) b1 = strtod(q + 22, NULL);
    q = strstr(p2s, "set tmargin at screen ");
    if (q) t2 = strtod(q + 22, NULL);
    CHECK(isfinite(b1) && isfinite(t2) && t2 < b1, "break-even panel top %g not below the speedup panel bottom %g", t2, b1);
    const char *xe = strstr(g1, "xerrorbars");
    CHECK(xe && xe > p2s, "a break-even interval is drawn in the speedup panel");
    char *panel1 = strndup(p1s, (size_t)(p2s - p1s));
    CHECK(panel1 && !strstr(panel1, "xerrorbars") && !strstr(panel1, "using 5:"), "break-even data in the speedup panel");
    free(panel1);
  }
  /* thresholds shared by the two curves: one line, its value above the frame (graph y >= 1) */
  CHECK(g1 && strstr(g1, "set label 1 '8' at 8, graph 1 center offset 0,0.8") && !strstr(g1, "set arrow 2 from 8"),
        "one threshold mark above the frame for the shared threshold 8");
  free(g1); free(g2);
  /* break-even block of curve 1 (blocks: 0-1 curves, 2-3 break-even): row 1, bar 4..16, label */
  snprintf(p, sizeof p, "%s/sp.dat", dir);
  read_block(p, 3, b);
  CHECK(b->n == 1 && strcmp(b->cell[0][1], "H100") == 0 && D(b, 0, 4) == 8 && D(b, 0, 7) == 8, "marker block");
  CHECK(b->n == 1 && D(b, 0, 8) == 1 && D(b, 0, 9) == 4 && D(b, 0, 10) == 16 &&
            strcmp(b->cell[0][11], "8 [90%: 4..16], threshold 8") == 0,
        "break-even row: %s %s %s '%s'", b->cell[0][8], b->cell[0][9], b->cell[0][10], b->cell[0][11]);

  /* crossover cells: 2 GPUs x 2 TPs, one never, one n/a; rows top-down in GPU order */
  tps_plot_cell cells[4] = {
    {"H20", 8, "marlin-w8a16", 33, 20, 40, 64, 0}, {"H20", 2, "marlin-w8a16", NAN, NAN, NAN, NAN, 0},
    {"A100", 8, "marlin-w8a16", 100, NAN, NAN, 128, 0}, {"A100", 2, "marlin-w8a16", NAN, NAN, NAN, NAN, 1}};
  CHECK(tps_plot_crossover(dir, "cx", cells, 4, &o, NULL, &e) == 0, "crossover: %s", e.msg);
  snprintf(p, sizeof p, "%s/cx.dat", dir);
  read_block(p, 0, b);
  CHECK(b->n == 4, "crossover rows %zu", b->n);
  /* H20 is the first GPU: top row (row 1 of 0..1); TP8 is the second column (col 1) */
  CHECK(strcmp(b->cell[0][0], "1") == 0 && strcmp(b->cell[0][1], "1") == 0 && strcmp(b->cell[0][8], "33") == 0 &&
            strcmp(b->cell[0][9], "20..40") == 0, "H20 TP8 cell: %s %s %s %s", b->cell[0][0], b->cell[0][1], b->cell[0][8], b->cell[0][9]);
  CHECK(strcmp(b->cell[1][8], "never") == 0, "never cell: %s", b->cell[1][8]);
  CHECK(strcmp(b->cell[3][8], "n/a") == 0 && strcmp(b->cell[3][1], "0") == 0, "n/a cell: %s", b->cell[3][8]);

  /* the per-layer figure: 3 layers of kind A (100 -> 60 us) and 1 of kind B (200 -> 150 us),
   * model totals 500 and 330 us (= 3 x 100 + 200, 3 x 60 + 150): the kinds block holds
   * count x one layer, the totals block the model's numbers, the segments of each bar run
   * end to end from 0 to its total (ms), one boxxyerror per kind and no bar per layer */
  {
    static const int lay[4] = {0, 1, 2, 3};
    static const double lm[4] = {100, 100, 200, 100}, ls[4] = {60, 60, 150, 60};
    static const char *const kl[2] = {"A", "B"}, *const kw[2] = {"0-1,3", "2"};
    static const int kc[2] = {3, 1};
    static const double km[2] = {100, 200}, ks[2] = {60, 150};
    tps_plot_layers ly = {"M", "H200", 8, "marlin-w8a16", 8192, 4, lay, lm, ls, 2, kl, kw, kc, km, ks, 500, 330};
    CHECK(tps_plot_layers_fig(dir, "ly", &ly, &o, NULL, &e) == 0, "layers: %s", e.msg);
    snprintf(p, sizeof p, "%s/ly.dat", dir);
    read_block(p, 0, b);
    CHECK(b->n == 2 && D(b, 0, 1) == 3 && D(b, 0, 4) == 300 && D(b, 0, 5) == 180 && D(b, 1, 4) == 200 && D(b, 1, 6) == 50 &&
              strcmp(b->cell[0][7], "0-1,3") == 0, "kinds block");
    read_block(p, 1, b);
    CHECK(b->n == 1 && D(b, 0, 0) == 4 && D(b, 0, 1) == 500 && D(b, 0, 2) == 330 && D(b, 0, 3) == 170, "totals block");
    double end[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
      read_block(p, 2 + k, b);
      for (size_t r = 0; r < b->n; r++) {
        int bar = atoi(b->cell[r][0]);
        NEAR(D(b, r, 2), end[bar], 1e-12);
        end[bar] = D(b, r, 3);
      }
    }
    NEAR(end[1], 0.5, 1e-12);
    NEAR(end[0], 0.33, 1e-12);
    read_block(p, 4, b);
    CHECK(b->n == 4 && D(b, 2, 1) == 200 && D(b, 2, 3) == 50, "per-layer block");
    snprintf(p, sizeof p, "%s/ly.gp", dir);
    char *lg = slurp(p, &len);
    int nbox = 0;
    for (const char *q = lg; q && (q = strstr(q, "with boxxyerror")); q++) nbox++;
    CHECK(nbox == 2 && lg && !strstr(lg, "with boxes"), "layers: %d boxxyerror plots, want one per kind", nbox);
    CHECK(lg && strstr(lg, "'0.33 ms: saves 0.17 ms (34%)'"), "layers: the split bar's total and saving label");
    free(lg);
  }

  /* bad data: nothing half-written */
  char dir3[600];
  snprintf(dir3, sizeof dir3, "%s/w3", root);
  tps_plot_curve bad = synth_curve("H200");
  static const long Tbad[3] = {1, 64, 8};
  bad.tokens = Tbad;
  CHECK(tps_plot_latency(dir3, "lat", &bad, NULL, &o, NULL, &e) == -1 && strstr(e.msg, "increasing"), "unsorted accepted");
  CHECK(count_files(dir3) == 0, "files left after an error: %d", count_files(dir3));

  /* gnuplot missing: .dat/.gp written, no image, the run still succeeds */
  char dir4[600];
  snprintf(dir4, sizeof dir4, "%s/w4", root);
  setenv("TPSPLIT_GNUPLOT", "/nonexistent/gnuplot", 1);
  CHECK(tps_plot_gnuplot() == NULL, "TPSPLIT_GNUPLOT=/nonexistent still finds gnuplot");
  tps_plot_opts o2;
  tps_plot_opts_init(&o2);
  o2.quiet = 1;
  tps_plot_files w;
  tps_plot_files_init(&w);
  CHECK(tps_plot_latency(dir4, "lat", &c, NULL, &o2, &w, &e) == 0, "without gnuplot: %s", e.msg);
  CHECK(w.gnuplot_missing == 1 && w.images == 0 && w.n == 2, "files: %zu, missing %d", w.n, w.gnuplot_missing);
  CHECK(exists(dir4, "lat.dat") && exists(dir4, "lat.gp") && !exists(dir4, "lat.png"), "files without gnuplot");
  tps_plot_files_free(&w);
  setenv("TPSPLIT_GNUPLOT", "", 1);
  CHECK(tps_plot_gnuplot() == NULL, "TPSPLIT_GNUPLOT='' still finds gnuplot");
  unsetenv("TPSPLIT_GNUPLOT");
  free(b);
}

/* ---------------------------------------------------------------- curves of the bundled fit */
static double rep_model(const tps_fit *f, long T) { return tps_gemm_time_us(&f->gemm, &f->shape, T); }
/* split(T) = GEMM(ceil(T/tp)) + gather of tp equal shards of ceil(T/tp) rows each */
static double split_model(const tps_fit *f, long T, int *used) {
  long rows = (T + f->tp - 1) / f->tp;
  return tps_gemm_time_us(&f->gemm, &f->shape, rows) +
         tps_ag_time_us(&f->ag, (double)f->tp * rows * f->out_bytes_per_token, f->tp, TPS_GATHER_AUTO, used, NULL);
}

static void test_fit_curves(void) {
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  char path[4096];
  tps_plot_meas m;
  memset(&m, 0, sizeof m);
  if (tps_gpus_load(NULL, &gt, &e) || tps_data_path("h20_tp8_fused_wqa_wkv.tsv", path, sizeof path, &e)) {
    CHECK(0, "bundled data: %s", e.msg);
    return;
  }
  const tps_gpu *h20 = tps_gpus_find(&gt, "H20", &e);
  tps_fit *f = malloc(sizeof *f);
  tps_fit_opts fo = {1, 0};
  int status;
  CHECK(h20 && tps_fit_file(path, NULL, NULL, &fo, f, &status, &e) == 0, "fit: %s", e.msg);
  CHECK(tps_plot_meas_from_fit(f, "H20", "marlin-w8a16", "h20", &m) == 0 && m.n == 11, "measured points of the fit: %zu", m.n);
  if (fails) goto out;
  tps_plot_opts o;
  tps_plot_opts_init(&o);
  o.render = 0;
  const tps_fit *fits[1] = {f};
  const tps_gpu *fg[1] = {h20};
  const char *fp[1] = {"marlin-w8a16"};
  const tps_plot_meas *ms[1] = {&m};
  tps_plot_job j;
  memset(&j, 0, sizeof j);
  char dir[600];
  snprintf(dir, sizeof dir, "%s/fit", root);
  j.outdir = dir; j.o = &o; j.nfit = 1; j.fit = fits; j.fit_gpu = fg; j.fit_path = fp; j.meas = ms;
  o.nsamples = 50;
  j.figures = TPS_PLOT_FIG_LATENCY | TPS_PLOT_FIG_SPEEDUP | TPS_PLOT_FIG_FITQ;
  CHECK(tps_plot_run(&j, NULL, &e) == 0, "plot run: %s", e.msg);
  block_t *b = malloc(sizeof *b);
  char p[1024];
  snprintf(p, sizeof p, "%s/latency_H20_tp8_marlin-w8a16.dat", dir);
  read_block(p, 0, b);
  CHECK(b->n > 300, "grid of %zu tokens", b->n);
  /* every row: replicated = GEMM(T), split = GEMM(ceil(T/8)) + gather(8 * ceil(T/8) * 3584 B),
   * computed here from the fit's parameters; the gather is custom while the per-rank input
   * ceil(T/8) * 3584 B is at most 2 MiB: ceil(T/8) <= 2097152 / 3584 = 585.1, i.e. T <= 4680,
   * NCCL from T = 4681 */
  int seen[4] = {0, 0, 0, 0}, bad = 0;
  for (size_t r = 0; r < b->n; r++) {
    long T = atol(b->cell[r][0]);
    int used;
    double rv = rep_model(f, T), sv = split_model(f, T, &used);
    if (fabs(D(b, r, 1) - rv) > 1e-8 * rv || fabs(D(b, r, 4) - sv) > 1e-8 * sv) {
      if (bad++ < 3) CHECK(0, "T=%ld: replicated %s vs %.10g, split %s vs %.10g", T, b->cell[r][1], rv, b->cell[r][4], sv);
    }
    const char *want = T <= 4680 ? "custom" : "nccl";
    if (strcmp(b->cell[r][10], want) != 0 && bad++ < 3) CHECK(0, "T=%ld backend %s, want %s", T, b->cell[r][10], want);
    if (T == 1) seen[0] = 1;
    if (T == 48) seen[1] = 1;
    if (T == 4096) seen[2] = 1;
    if (T == 16384) seen[3] = 1;
  }
  CHECK(bad == 0, "%d rows differ from the model", bad);
  CHECK(seen[0] && seen[1] && seen[2] && seen[3], "grid misses 1, 48, 4096 or 16384");
  /* the exact switch is on the grid and marked: first T with ceil(T/8) * 3584 > 2 MiB is 4681 */
  snprintf(p, sizeof p, "%s/latency_H20_tp8_marlin-w8a16.gp", dir);
  size_t len;
  char *gp = slurp(p, &len);
  CHECK(gp && strstr(gp, "set arrow 1 from 4681, graph 0") && strstr(gp, "custom -> nccl from T = 4681"),
        "backend switch not marked at 4681");
  free(gp);
  snprintf(p, sizeof p, "%s/latency_H20_tp8_marlin-w8a16.dat", dir);
  /* measured block: the bundled rows (6 tokens: 14.1 / 23.2 us, 16384: 3570.8 / 635.4) */
  read_block(p, 1, b);
  CHECK(b->n == 11 && D(b, 0, 0) == 6 && D(b, 0, 1) == 14.1 && D(b, 0, 4) == 23.2 && D(b, 10, 1) == 3570.8,
        "measured block");
  NEAR(D(b, 10, 7), 3570.8 / 635.4, 1e-9);
  /* break-even (speedup figure, block 2 = curve 0's marker): the split wins at T0 and on
   * every T up to 16384, and not at T0 - 1; checked by a scan of the model here */
  snprintf(p, sizeof p, "%s/speedup_tp8_marlin-w8a16.dat", dir);
  read_block(p, 2, b);
  long T0 = b->n ? atol(b->cell[0][4]) : -1;
  CHECK(T0 > 24 && T0 <= 48, "H20 break-even %ld not in (24, 48]", T0);
  int wins = 1;
  for (long T = T0; T <= 16384 && T0 > 0; T++) if (!(split_model(f, T, NULL) < rep_model(f, T))) { wins = 0; break; }
  CHECK(wins, "split does not win on [%ld, 16384]", T0);
  CHECK(T0 > 1 && !(split_model(f, T0 - 1, NULL) < rep_model(f, T0 - 1)), "split already wins at %ld", T0 - 1);
  /* threshold: of least predicted excess; the split wins once and for good (the scan above:
   * from T0 on, and not at T0 - 1; the fit's curves cross once), so it is the break-even */
  CHECK(T0 > 0 && atol(b->cell[0][7]) == T0, "threshold %s, want the break-even %ld", b->cell[0][7], T0);
  /* fit quality: residuals (model - measured) / measured in percent */
  snprintf(p, sizeof p, "%s/fitq_H20_tp8_marlin-w8a16.dat", dir);
  read_block(p, 1, b); /* split series */
  CHECK(b->n == 11, "fitq split rows %zu", b->n);
  for (size_t r = 0; r < b->n; r++) {
    long T = atol(b->cell[r][0]);
    double sv = split_model(f, T, NULL), meas = D(b, r, 1);
    CHECK(fabs(D(b, r, 3) - 100 * (sv - meas) / meas) <= 1e-6 * fabs(D(b, r, 3)) + 1e-9, "T=%ld residual %s%%, model here %.10g%%", T, b->cell[r][3], 100 * (sv - meas) / meas);
  }
  free(b);
out:
  free(f);
  tps_plot_meas_free(&m);
  tps_gpus_free(&gt);
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
    else unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

int main(void) {
  gsl_set_error_handler_off();
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/tpsplit-plot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) { perror("mkdtemp"); return 99; }
  test_options();
  test_writers();
  test_fit_curves();
  printf("%d checks, %d failed\n", checks, fails);
  if (!fails) {
    rm_tree(root); /* only what this test made; kept when a check failed */
  }
  return fails ? 1 : 0;
}

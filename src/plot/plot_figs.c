/* plot_figs.c: the figures (see plot.h): latency, speedup, crossover map, fit quality, the
 * stage by layer kind; each a .dat and a .gp through plot_fig.h. */
#include "config.h"
#include "src/plot/plot.h"
#include "src/plot/plot_fig.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort_int.h>
#include "model/latency/allgather.h"
#include "src/base/util.h"

void pf_curve_label(const tps_plot_curve *c, int by, char *out, size_t sz) {
  switch (by) {
  case TPS_PLOT_BY_TP: snprintf(out, sz, "TP%d", c->tp); break;
  case TPS_PLOT_BY_PATH: snprintf(out, sz, "%s", c->path ? c->path : "?"); break;
  default: snprintf(out, sz, "%s", c->gpu ? c->gpu : "?");
  }
  if (c->source && *c->source) {
    size_t l = strlen(out);
    snprintf(out + l, sz - l, ": %s", c->source);
  }
}

void pf_curve_colour(const tps_plot_curve *c, char out[8]) {
  if (c->colour && c->colour[0] == '#' && strlen(c->colour) == 7) { snprintf(out, 8, "%s", c->colour); return; }
  pf_tp_shade(tps_plot_gpu_colour(c->gpu), c->tp, out);
}

int pf_check_curve(const tps_plot_curve *c, tps_err *e) {
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

/* Model-curve block: tokens, rep, band, split, band, speedup, band, backend. */
void pf_write_curve_block(fig *F, int idx, const tps_plot_curve *c) {
  char what[256];
  snprintf(what, sizeof what, "model %s TP%d %s (%s)", c->gpu ? c->gpu : "?", c->tp,
           c->path ? c->path : "?", c->source ? c->source : "model");
  pf_block(F, idx, what,
        "tokens\treplicated_us\treplicated_lo_us\treplicated_hi_us\tsplit_us\tsplit_lo_us\tsplit_hi_us\t"
        "speedup\tspeedup_lo\tspeedup_hi\tgather_backend");
  FILE *d = F->dat.fp;
  for (size_t i = 0; i < c->n; i++) {
    fprintf(d, "%ld", c->tokens[i]);
    double s = c->rep_us[i] / c->split_us[i];
    double v[9] = {c->rep_us[i], at(c->rep_lo_us, i), at(c->rep_hi_us, i), c->split_us[i],
                   at(c->split_lo_us, i), at(c->split_hi_us, i), s, at(c->speedup_lo, i), at(c->speedup_hi, i)};
    for (int k = 0; k < 9; k++) { fputc('\t', d); pf_num(d, v[k]); }
    fprintf(d, "\t%s\n", c->backend ? tps_gather_name(c->backend[i]) : "-");
  }
}

/* Measured block: tokens, rep, min, max, split, min, max, speedup and its range.  The range of
 * the speedup is the widest the min/max allow: rep_min / split_max .. rep_max / split_min. */
void pf_write_meas_block(fig *F, int idx, const tps_plot_meas *m) {
  char what[512];
  snprintf(what, sizeof what, "measured %s TP%d %s (%s)", m->gpu ? m->gpu : "?", m->tp,
           m->path ? m->path : "?", m->file ? m->file : "-");
  pf_block(F, idx, what,
        "tokens\treplicated_us\treplicated_min_us\treplicated_max_us\tsplit_us\tsplit_min_us\tsplit_max_us\tspeedup\t"
        "speedup_min\tspeedup_max");
  FILE *d = F->dat.fp;
  for (size_t i = 0; i < m->n; i++) {
    fprintf(d, "%ld", m->tokens[i]);
    double sp = at(m->split_us, i);
    double v[9] = {m->rep_us[i], at(m->rep_min_us, i), at(m->rep_max_us, i), sp,
                   at(m->split_min_us, i), at(m->split_max_us, i), m->rep_us[i] / sp,
                   at(m->rep_min_us, i) / at(m->split_max_us, i), at(m->rep_max_us, i) / at(m->split_min_us, i)};
    for (int k = 0; k < 9; k++) { fputc('\t', d); pf_num(d, v[k]); }
    fputc('\n', d);
  }
}

/* 1 when some row of v (may be NULL) is a number. */
int pf_any_finite(const double *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) if (isfinite(v[i])) return 1;
  return 0;
}

int pf_has_band(const double *lo, const double *hi, size_t n) {
  if (!lo || !hi) return 0;
  for (size_t i = 0; i < n; i++) if (isfinite(lo[i]) && isfinite(hi[i])) return 1;
  return 0;
}

/* Token axis: log2, a tic per power of two (per power of four when the image is narrow). */
void pf_token_axis(FILE *g, const tps_plot_opts *o) {
  fprintf(g, "set logscale x 2\nset format x '%%.0f'\nset xtics 1, %d\nset mxtics default\n"
             "set xlabel 'tokens per step T'\n", o->width_px < 900 ? 4 : 2);
}

/* Legend outside the plot: on the right in wide images, below in narrow ones. */
void pf_key_right(FILE *g, const tps_plot_opts *o) {
  if (o->width_px >= 1000) fprintf(g, "set key outside right top vertical Left reverse samplen 3 spacing 1.2\n");
  else fprintf(g, "set key below left vertical Left reverse samplen 3 maxcols 2\n");
}

/* ---------------------------------------------------------------- figure 1: latency */

/* Latency vs tokens: replicated (dark grey) and split (the GPU's colour), both solid (a dashed
 * line over a jagged measured GEMM reads as noise), bands, measured points; the break-even
 * (a line, its 90% interval shaded) and the gather switch (dotted) marked, their values above
 * the frame; the legend under the token axis.  Layout in pixels (plot_fig.h). */
int tps_plot_latency(const char *dir, const char *name, const tps_plot_curve *c,
                     const tps_plot_meas *m, const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (pf_check_curve(c, e)) return -1;
  fig F;
  if (pf_fig_begin(&F, dir, name, o, "latency vs tokens, replicated and split", e)) return -1;
  pf_write_curve_block(&F, 0, c);
  if (m && m->n) pf_write_meas_block(&F, 1, m);
  FILE *g = F.gp.fp;
  const double W = F.o->width_px, H = F.o->height_px;
  char col[8], setup[512], line1[160];
  pf_curve_colour(c, col);
  pf_setup_words(setup, sizeof setup, c->gpu, c->tp, c->path, c->k, c->nout, c->gather);
  snprintf(line1, sizeof line1, "Latency of the projection, replicated on every rank vs split by token");
  double top_px = pf_title(g, &F, line1, setup);
  pf_token_axis(g, F.o);
  fprintf(g, "set logscale y 10\nset ylabel 'latency (us)'\nset format y '%%g'\n");
  fprintf(g, "set autoscale yfix\nset offsets 0, 0, graph 0.04, graph 0.04  # the data range, not the next decades\n");
  fprintf(g, "set style fill transparent solid 0.18 noborder\n");
  /* the legend's entries, in plot order */
  const char *keys[12];
  char kb[12][400];
  size_t nk = 0;
  int band_r = pf_has_band(c->rep_lo_us, c->rep_hi_us, c->n), band_s = pf_has_band(c->split_lo_us, c->split_hi_us, c->n);
  if (band_r) snprintf(kb[nk++], sizeof kb[0], "replicated, 90%% band");
  if (band_s) snprintf(kb[nk++], sizeof kb[0], "split, 90%% band");
  snprintf(kb[nk++], sizeof kb[0], "replicated = GEMM(T), model");
  snprintf(kb[nk++], sizeof kb[0], "split = GEMM(ceil(T/%d)) + all-gather, model", c->tp);
  int eb_r = 0, eb_s = 0, has_ms = 0;
  const char *rw = "replicated";
  if (m && m->n) {
    eb_r = pf_any_finite(m->rep_min_us, m->n) && pf_any_finite(m->rep_max_us, m->n);
    eb_s = pf_any_finite(m->split_min_us, m->n) && pf_any_finite(m->split_max_us, m->n);
    rw = m->split_us ? "replicated" : "replicated (GEMM of T rows)";
    has_ms = pf_any_finite(m->split_us, m->n);
    snprintf(kb[nk++], sizeof kb[0], "%s, measured median (%s)", rw, eb_r ? "bar: min..max" : "no min/max in the table");
    if (has_ms) snprintf(kb[nk++], sizeof kb[0], "split, measured median (%s)", eb_s ? "bar: min..max" : "no min/max in the table");
  }
  double be = c->breakeven_tokens, blo = c->breakeven_lo, bhi = c->breakeven_hi;
  if (isfinite(be)) {
    if (isfinite(blo) && isfinite(bhi)) snprintf(kb[nk++], sizeof kb[0], "break-even T = %.0f (shaded: 90%% interval %.0f..%.0f)", be, blo, bhi);
    else if (isfinite(blo)) snprintf(kb[nk++], sizeof kb[0], "break-even T = %.0f (shaded: 90%% interval %.0f..never)", be, blo);
    else snprintf(kb[nk++], sizeof kb[0], "break-even T = %.0f", be);
    if (isfinite(c->threshold_tokens)) {
      size_t l = strlen(kb[nk - 1]);
      snprintf(kb[nk - 1] + l, sizeof kb[0] - l, ", threshold %.0f", c->threshold_tokens);
    }
  }
  else if (isfinite(blo))
    snprintf(kb[nk++], sizeof kb[0], "the split never wins up to T = %ld (90%% interval from %.0f)", c->tokens[c->n - 1], blo);
  else snprintf(kb[nk++], sizeof kb[0], "the split never wins up to T = %ld", c->tokens[c->n - 1]);
  int from, to;
  long sw = backend_switch(c, &from, &to);
  if (sw) snprintf(kb[nk++], sizeof kb[0], "gather %s -> %s from T = %ld", tps_gather_name(from), tps_gather_name(to), sw);
  for (size_t i = 0; i < nk; i++) keys[i] = kb[i];
  double foot_px = pf_footnote(g, &F, c->source);
  /* layout: title, a line (two when they crowd) of values above the frame, the plot, tics
   * and the x label, the legend */
  double lm = 78.0 / W, rm = 1.0 - 25.0 / W, key_h = pf_key_below_h(&F, keys, nk, 2), bot_px = foot_px + 12.0 + key_h + 56.0;
  double tlo = (double)c->tokens[0], thi = (double)c->tokens[c->n - 1];
  const double xs[2] = {be, (double)sw};
  char t0[32], t1[32];
  snprintf(t0, sizeof t0, "%.0f", be);
  snprintf(t1, sizeof t1, "%ld", sw);
  const char *tx[2] = {t0, t1}, *cl[2] = {col, "#555555"};
  size_t nabove = 0, first_above = isfinite(be) ? 0 : 1;
  if (isfinite(be)) nabove++;
  if (sw) nabove++;
  fprintf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", lm, rm);
  fprintf(g, "set xrange [%.0f:%.0f]\n", tlo, thi);
  int lines = nabove ? pf_above_frame(g, 1, xs + first_above, tx + first_above, cl + first_above, nabove, lm, rm, tlo, thi, W) : 0;
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", 1.0 - (top_px + 10.0 + 19.0 * lines) / H, bot_px / H);
  pf_key_below(g, &F, keys, nk, 2, lm, foot_px + 12.0);
  if (isfinite(be)) {
    fprintf(g, "# the break-even (line) and its 90%% interval (shaded)\n");
    if (isfinite(blo))
      fprintf(g, "set object 1 rect from %.10g, graph 0 to %.10g, graph 1 fc rgb '%s' fs transparent solid 0.10 noborder behind\n",
              blo, isfinite(bhi) ? bhi : thi, col);
    fprintf(g, "set arrow 3 from %.10g, graph 0 to %.10g, graph 1 nohead dt 1 lw 1.5 lc rgb '%s' back\n", be, be, col);
  }
  if (sw) {
    fprintf(g, "# the gather backend changes here\n");
    fprintf(g, "set arrow 1 from %ld, graph 0 to %ld, graph 1 nohead dt 3 lw 1.5 lc rgb '#555555' back\n", sw, sw);
  }
  fprintf(g, "plot \\\n");
  int first = 1;
  size_t ki = 0;
#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
#define KEY() pf_gp_str(g, keys[ki++])
  if (band_r) { SEP(); fprintf(g, "  '%s.dat' index 0 using 1:3:4 with filledcurves lc rgb '#888888' title ", name); KEY(); }
  if (band_s) { SEP(); fprintf(g, "  '%s.dat' index 0 using 1:6:7 with filledcurves lc rgb '%s' title ", name, col); KEY(); }
  SEP(); fprintf(g, "  '%s.dat' index 0 using 1:2 with lines lw 2 lc rgb '#444444' title ", name); KEY();
  SEP(); fprintf(g, "  '%s.dat' index 0 using 1:5 with lines lw 2.5 lc rgb '%s' title ", name, col); KEY();
  if (m && m->n) {
    SEP();
    if (eb_r) fprintf(g, "  '%s.dat' index 1 using 1:2:3:4 with yerrorbars pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title ", name);
    else fprintf(g, "  '%s.dat' index 1 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title ", name);
    KEY();
    if (has_ms) {
      SEP();
      if (eb_s) fprintf(g, "  '%s.dat' index 1 using 1:5:6:7 with yerrorbars pt 5 ps 1.4 lw 1.5 lc rgb '%s' title ", name, col);
      else fprintf(g, "  '%s.dat' index 1 using 1:5 with points pt 5 ps 1.4 lc rgb '%s' title ", name, col);
      KEY();
    }
  }
  if (isfinite(be)) { SEP(); fprintf(g, "  NaN with lines dt 1 lw 1.5 lc rgb '%s' title ", col); KEY(); }
  else { SEP(); fprintf(g, "  NaN with lines lc rgb '#ffffff' title "); KEY(); }
  if (sw) { SEP(); fprintf(g, "  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title "); KEY(); }
  fprintf(g, "\n");
#undef KEY
#undef SEP
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 3: crossover map */

static int find_str(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++) if (strcmp(v[i], s) == 0) return (int)i;
  return -1;
}
/* The map's title block: what it holds, and the shape and gather backend the cells share. */
static double crossover_title(FILE *g, const fig *F, const tps_plot_cell *cells, size_t n) {
  int same = 1;
  for (size_t i = 1; i < n; i++)
    if (cells[i].k != cells[0].k || cells[i].nout != cells[0].nout || !cells[i].gather != !cells[0].gather ||
        (cells[0].gather && cells[i].gather && strcmp(cells[i].gather, cells[0].gather)))
      same = 0;
  char l2[512];
  pf_setup_words(l2, sizeof l2, NULL, 0, NULL, same ? cells[0].k : 0, same ? cells[0].nout : 0, same ? cells[0].gather : NULL);
  return pf_title(g, F, "Break-even tokens per GPU x TP, one panel per kernel path (small: 90% interval; light grey: "
                  "the split never wins; dark grey: n/a)", l2);
}

/* Fonts and offsets of a map cell cell_w x cell_h px: cf[0] the break-even's size (at most 11
 * pt), cf[1] the interval's (at most 8), cf[2] the break-even's vertical offset, cf[3] the
 * scale of the interval lines' offsets (in characters: 1 at the default 1200x800).  Returns 1
 * when the cell is too small for the interval (under 6.5 pt): the break-even alone, centred. */
static int cell_fonts(double cell_w, double cell_h, int narrow, double cf[4]) {
  double k = cell_h / 53.0 < 1 ? cell_h / 53.0 : 1;
  cf[0] = fmin(11.0, fmin((cell_w - 6.0) / 4.0, cell_h / 3.2));
  cf[1] = fmin(8.0, fmin((cell_w - 6.0) / 4.9, cell_h / 4.5));
  int bare = cf[1] < 6.5;
  cf[2] = bare ? 0 : (narrow ? 0.7 : 0.45) * k;
  cf[3] = k;
  return bare;
}

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
  gsl_sort_int(tps, 1, nt);
  fig F;
  if (pf_fig_begin(&F, dir, name, o, "crossover map: break-even tokens per GPU x TP, one panel per kernel path", e)) {
    free(gpus); free(paths); free(tps);
    return -1;
  }
  FILE *d = F.dat.fp, *g = F.gp.fp;
  for (size_t p = 0; p < np; p++) {
    char what[128];
    snprintf(what, sizeof what, "kernel path %s (col, row: cell position; label: what the cell shows)", paths[p]);
    pf_block(&F, (int)p, what,
          "col\trow\ttp\tgpu\tbreakeven_tokens\tbreakeven_lo\tbreakeven_hi\tthreshold_tokens\tlabel\tinterval\t"
          "interval_line1\tinterval_line2");
    for (size_t i = 0; i < n; i++) {
      const tps_plot_cell *c = &cells[i];
      if (strcmp(c->path ? c->path : "?", paths[p]) != 0) continue;
      int col = 0, row = find_str(gpus, ng, c->gpu ? c->gpu : "?");
      while (tps[col] != c->tp) col++;
      fprintf(d, "%d\t%d\t%d\t%s\t", col, (int)ng - 1 - row, c->tp, c->gpu ? c->gpu : "?");
      double b = c->na ? NAN : c->breakeven_tokens;
      pf_num(d, b); fputc('\t', d);
      pf_num(d, c->na ? NAN : c->breakeven_lo); fputc('\t', d);
      pf_num(d, c->na ? NAN : c->breakeven_hi); fputc('\t', d);
      pf_num(d, c->na ? NAN : c->threshold_tokens); fputc('\t', d);
      /* the interval on one line, then the same on two ("lo.." and "hi") for narrow cells */
      if (c->na) fputs("n/a\t \t \t ", d);
      else if (!isfinite(b) && isfinite(c->breakeven_lo)) /* never, but some draws win from lo */
        fprintf(d, "never\t%.0f..never\t%.0f..\tnever", c->breakeven_lo, c->breakeven_lo);
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
  double top_px = crossover_title(g, &F, cells, n), cf[4];
  double vsp = rows > 1 && 72.0 / H > 0.06 ? 72.0 / H : 0.06; /* row gap: TP tics above, a title below */
  int bare = cell_fonts(cell_w, ((1.0 - (top_px + 108.0) / H - vsp * (rows - 1)) * H / rows) / (double)ng, narrow, cf);
  fprintf(g, "set palette defined (0 '#c7e9c0', 0.5 '#fee391', 1 '#fc9272')\n");
  fprintf(g, "set logscale cb 2\nset cbrange [%.0f:%.0f]\nset format cb '%%.0f'\n", pow(2, lo), pow(2, hi));
  fprintf(g, "set cblabel 'break-even tokens (split faster from T)'\n");
  fprintf(g, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", nt - 1, ng - 1);
  fprintf(g, "set xtics (");
  for (size_t t = 0; t < nt; t++) fprintf(g, "%s'TP%d' %zu", t ? ", " : "", tps[t], t);
  fprintf(g, ") scale 0 font 'Sans,%.1f'\nYT = \"set ytics (", cf[0] < 10 ? cf[0] : 10);
  /* the GPU names as a macro string, set on the first panel of each row */
  for (size_t r = 0; r < ng; r++) {
    if (r) fputs(", ", g);
    fputc('\'', g);
    for (const char *q = gpus[r]; *q; q++) if (*q != '\'' && *q != '"' && *q != '\\') fputc(*q, g);
    fprintf(g, "' %zu", ng - 1 - r);
  }
  const char *xl = cell_w * (double)nt < pf_text_px("tensor-parallel size", PF_FONT_PT) + 16 ? "TP size" : "tensor-parallel size";
  fprintf(g, ") scale 0\"\nunset grid\nunset key\nset xlabel '%s'\n", xl);
  fprintf(g, "# cells where the split never wins (or the path cannot run) stay grey\n");
  fprintf(g, "set object 1 rect from graph 0, graph 0 to graph 1, graph 1 fc rgb '#e6e6e6' fs solid 1 noborder behind\n");
  fprintf(g, "set colorbox user origin %.4f, %.4f size %.4f, %.4f\n", rm + 20.0 / W, 80.0 / H, 15.0 / W, 1.0 - 180.0 / H);
  fprintf(g, "set multiplot layout %d,%d margins %.4f, %.4f, %.4f, %.4f spacing %.4f, %g\n", rows, cols, lm, rm,
          70.0 / H, 1.0 - (top_px + 38.0) / H, hsp, vsp);
  for (size_t p = 0; p < np; p++) {
    if (p) fprintf(g, "unset label  # the title block is drawn once, with the first panel\n");
    fprintf(g, "set title "); pf_gp_str(g, paths[p]); fputc('\n', g);
    fprintf(g, "%s\n", p % (size_t)cols == 0 ? "eval YT" : "unset ytics");
    if (p + (size_t)cols < np) fprintf(g, "unset xlabel\n"); else fprintf(g, "set xlabel '%s'\n", xl);
    if (p + 1 < np) fprintf(g, "unset colorbox\n");
    else fprintf(g, "set colorbox user origin %.4f, %.4f size %.4f, %.4f\n", rm + 20.0 / W, 80.0 / H, 15.0 / W, 1.0 - 180.0 / H);
    /* coloured cells; "n/a" cells a darker grey than "never" (the background) */
    fprintf(g, "plot '%s.dat' index %zu using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \\\n"
               "     '' index %zu using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \\\n"
               "     '' index %zu using 1:2:9 with labels offset 0,%.2f font 'Sans,%.1f'",
            name, p, p, p, cf[2], cf[0]);
    if (bare) fprintf(g, "\n");
    else if (narrow)
      fprintf(g, ", \\\n     '' index %zu using 1:2:11 with labels offset 0,%.2f font 'Sans,%.1f' tc rgb '#333333', \\\n"
                 "     '' index %zu using 1:2:12 with labels offset 0,%.2f font 'Sans,%.1f' tc rgb '#333333'\n", p,
              -0.35 * cf[3], cf[1], p, -1.1 * cf[3], cf[1]);
    else fprintf(g, ", \\\n     '' index %zu using 1:2:10 with labels offset 0,%.2f font 'Sans,%.1f' tc rgb '#333333'\n", p,
                 -0.6 * cf[3], cf[1]);
  }
  fprintf(g, "unset multiplot\n");
  free(gpus); free(paths); free(tps);
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
}

/* ---------------------------------------------------------------- figure 4: fit quality */

int tps_plot_fitq(const char *dir, const char *name, const tps_fit *f, const char *path_name,
                  const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  if (!f || f->npts == 0) return tps_err_set(e, NULL, 0, "plot: fit-quality figure of an empty fit");
  fig F;
  if (pf_fig_begin(&F, dir, name, o, "fit quality: relative residuals and leave-one-out errors", e)) return -1;
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
    pf_block(&F, nb++, what, hdr);
    for (size_t i = 0; i < f->npts; i++) {
      const tps_fit_point *p = &f->pt[i];
      if ((p->series ? 1 : 0) != s) continue;
      FILE *d = F.dat.fp;
      pf_num(d, p->x);
      double v[6] = {p->measured_us, p->model_us, 100 * p->rel_resid, 100 * p->loo_rel, p->gather_us, p->gather_se_us};
      for (int k = 0; k < 6; k++) { fputc('\t', d); pf_num(d, v[k]); }
      fputc('\n', d);
    }
  }
  FILE *g = F.gp.fp;
  char col[8], title[512];
  pf_tp_shade(tps_plot_gpu_colour(f->gpu), f->tp ? f->tp : 8, col);
  int len = snprintf(title, sizeof title, "Fit quality: median |residual| %.1f%% (max %.1f%%)", 100 * f->med_abs_rel,
                     100 * f->max_abs_rel);
  if (loo && isfinite(f->loo_med_abs))
    snprintf(title + len, sizeof title - (size_t)len, ", leave-one-out median %.1f%% (max %.1f%%)",
             100 * f->loo_med_abs, 100 * f->loo_max_abs);
  char setup[512];
  pf_setup_words(setup, sizeof setup, f->gpu[0] ? f->gpu : "?", f->kind != TPS_FIT_GEMM ? f->tp : 0, path_name,
                 f->shape.k, f->shape.n, f->kind == TPS_FIT_GEMM ? NULL : tps_gather_name(f->gather));
  double top_px = pf_title(g, &F, title, setup);
  fprintf(g, "set tmargin at screen %.4f\n", 1.0 - (top_px + 14.0) / F.o->height_px);
  fprintf(g, "set logscale x 2\nset format x '%%.0f'\nset xlabel '%s'\n",
          f->kind == TPS_FIT_ALLGATHER ? "gathered bytes" : f->kind == TPS_FIT_GEMM ? "GEMM rows M" : "tokens per step T");
  if (f->kind == TPS_FIT_ALLGATHER) fprintf(g, "set format x '%%.0b%%BB'\n");
  fprintf(g, "set ylabel 'relative error (model - measured) / measured (%%)'\n");
  pf_key_right(g, F.o);
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
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
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
  if (pf_fig_begin(&F, dir, name, o, "input-projection stage over all layers, replicated vs split, by layer kind", e)) return -1;
  FILE *d = F.dat.fp;
  int nlayers = 0;
  pf_block(&F, 0, "layer kinds: one layer's stage (main_us, split_us) and count x it (*_total_us)",
        "kind\tcount\tmain_us\tsplit_us\tmain_total_us\tsplit_total_us\tsaving_total_us\tlayers");
  for (size_t k = 0; k < l->nkind; k++) {
    double mt = l->kind_count[k] * l->kind_main_us[k], st = l->kind_count[k] * l->kind_split_us[k];
    nlayers += l->kind_count[k];
    fprintf(d, "%s\t%d\t", l->kind_label[k], l->kind_count[k]);
    double v[5] = {l->kind_main_us[k], l->kind_split_us[k], mt, st, mt - st};
    for (int q = 0; q < 5; q++) { pf_num(d, v[q]); fputc('\t', d); }
    fprintf(d, "%s\n", l->kind_layers && l->kind_layers[k] ? l->kind_layers[k] : "-");
  }
  double M = l->total_main_us, S = l->total_split_us;
  pf_block(&F, 1, "the model's totals over all layers", "layers\tmain_us\tsplit_us\tsaving_us\tsaving_pct");
  fprintf(d, "%d\t", nlayers);
  pf_num(d, M); fputc('\t', d);
  pf_num(d, S); fputc('\t', d);
  pf_num(d, M - S); fputc('\t', d);
  pf_num(d, 100.0 * (M - S) / M); fputc('\n', d);
  /* segments: one block per kind, its replicated (y = 1) and split (y = 0) pieces in ms */
  double x[2] = {0, 0};
  for (size_t k = 0; k < l->nkind; k++) {
    char what[256];
    snprintf(what, sizeof what, "segments of kind %s (ms from the bar's start; bar 1 replicated, 0 split)", l->kind_label[k]);
    pf_block(&F, 2 + (int)k, what, "bar\tx_ms\tlo_ms\thi_ms\ty_lo\ty_hi");
    for (int bar = 1; bar >= 0; bar--) {
      double len = l->kind_count[k] * (bar ? l->kind_main_us[k] : l->kind_split_us[k]) / 1000.0;
      double a = x[bar], b = x[bar] + len;
      x[bar] = b;
      fprintf(d, "%d\t", bar);
      double v[5] = {(a + b) / 2, a, b, bar - 0.32, bar + 0.32};
      for (int q = 0; q < 5; q++) { pf_num(d, v[q]); fputc(q < 4 ? '\t' : '\n', d); }
    }
  }
  int per_layer = 2 + (int)l->nkind;
  if (l->n) {
    pf_block(&F, per_layer, "one row per layer", "layer\tmain_us\tsplit_us\tsaved_us");
    for (size_t i = 0; i < l->n; i++) {
      fprintf(d, "%d\t", l->layer[i]);
      pf_num(d, l->main_us[i]); fputc('\t', d);
      pf_num(d, l->split_us[i]); fputc('\t', d);
      pf_num(d, l->main_us[i] - l->split_us[i]); fputc('\n', d);
    }
  }
  FILE *g = F.gp.fp;
  char title[512];
  snprintf(title, sizeof title, "Input-projection stage of one %ld-token chunk, all %d layers, replicated vs split by token, "
           "by layer kind", l->tokens, nlayers);
  char setup[512], gw[300], model[160];
  snprintf(model, sizeof model, "%s on %s", l->model ? l->model : "model", l->gpu ? l->gpu : "?");
  pf_setup_words(gw, sizeof gw, NULL, 0, NULL, 0, 0, l->gather);
  snprintf(setup, sizeof setup, "%s, TP%d, %s%s%ld x N of each projection%s%s", model, l->tp, l->path ? l->path : "?",
           l->hidden > 0 ? ", K " : "", l->hidden, *gw ? ", " : "", gw);
  if (l->hidden <= 0) snprintf(setup, sizeof setup, "%s, TP%d, %s%s%s", model, l->tp, l->path ? l->path : "?", *gw ? ", " : "", gw);
  double top_px = pf_title(g, &F, title, setup);
  const double W = F.o->width_px, H = F.o->height_px;
  /* the legend (a key title line, then one entry per kind) under the x label */
  char (*lab)[320] = calloc(l->nkind + 1, sizeof *lab);
  const char **keys = calloc(l->nkind + 1, sizeof *keys);
  if (!lab || !keys) { free(lab); free(keys); pf_fig_abort(&F); return tps_err_oom(e, "per-layer figure"); }
  for (size_t k = 0; k < l->nkind; k++) {
    snprintf(lab[k], sizeof lab[k], "%s: %d x (%.1f -> %.1f us)", l->kind_label[k], l->kind_count[k], l->kind_main_us[k],
             l->kind_split_us[k]);
    keys[k] = lab[k];
  }
  double lm = (pf_text_px("split by token", PF_FONT_PT) + 36.0) / W, key_h = pf_key_below_h(&F, keys, l->nkind, 2), bot_px = 12.0 + key_h + 18.0 + 48.0;
  fprintf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", lm, 1.0 - 25.0 / W);
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", 1.0 - (top_px + 16.0) / H, bot_px / H);
  pf_key_below(g, &F, keys, l->nkind, 2, lm, 12.0);
  fprintf(g, "set label 3 'layer kind: layers x the stage of one layer, replicated -> split' at screen %.4f, screen %.4f "
             "left front\n", lm, (12.0 + key_h + 8.0) / H);
  fprintf(g, "set xlabel 'time summed over the %d layers (ms)'\n", nlayers);
  fprintf(g, "set xrange [0:%.4g]\nset yrange [-0.7:1.7]\n", 1.3 * (M > S ? M : S) / 1000.0);
  fprintf(g, "set ytics ('replicated' 1, 'split by token' 0) scale 0\nset grid noytics\n");
  fprintf(g, "set style fill solid 0.9 border lc rgb '#ffffff'\n");
  fprintf(g, "# the model's totals at the bar ends\n");
  fprintf(g, "set label 1 '%.2f ms' at %.10g, 1 left offset 0.8,0 front\n", M / 1000.0, M / 1000.0);
  fprintf(g, "set label 2 '%.2f ms: saves %.2f ms (%.0f%%)' at %.10g, 0 left offset 0.8,0 front\n", S / 1000.0,
          (M - S) / 1000.0, 100.0 * (M - S) / M, S / 1000.0);
  fprintf(g, "plot \\\n");
  for (size_t k = 0; k < l->nkind; k++) {
    fprintf(g, "  '%s.dat' index %zu using 2:1:3:4:5:6 with boxxyerror fc rgb '%s' title ", name, 2 + k, kcol[k % ncol]);
    pf_gp_str(g, keys[k]);
    fprintf(g, "%s\n", k + 1 < l->nkind ? ", \\" : "");
  }
  free(lab);
  free(keys);
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
}

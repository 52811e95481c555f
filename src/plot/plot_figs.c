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
#include "model/latency/allgather.h"
#include "src/base/util.h"

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
  pf_tp_shade(tps_plot_gpu_colour(c->gpu), c->tp, out);
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
    fprintf(d, "\t%s\n", c->backend ? backend_name(c->backend[i]) : "-");
  }
}

/* Measured block: tokens, rep, min, max, split, min, max, speedup and its range.  The range of
 * the speedup is the widest the min/max allow: rep_min / split_max .. rep_max / split_min. */
static void write_meas_block(fig *F, int idx, const tps_plot_meas *m) {
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
  if (pf_fig_begin(&F, dir, name, o, "latency vs tokens, replicated and split", e)) return -1;
  write_curve_block(&F, 0, c);
  if (m && m->n) write_meas_block(&F, 1, m);
  FILE *g = F.gp.fp;
  char col[8], title[512];
  curve_colour(c, col);
  snprintf(title, sizeof title, "%s, TP%d, %s: replicated vs split latency (%s)", c->gpu, c->tp,
           c->path, c->source && *c->source ? c->source : "model");
  fprintf(g, "set title "); pf_gp_str(g, title); fputc('\n', g);
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
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
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

/* The layout of a speedup figure: the y range, the token range shared by both panels, and
 * the panels' margins in screen fractions. */
typedef struct {
  double ymax, H, W, lm, rm;
  long tlo, thi;
  int wide;
} sp_layout;

static void speedup_layout(const fig *F, int by, const tps_plot_curve *c, size_t nc, const tps_plot_meas *m, size_t nm,
                           sp_layout *L) {
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
  const double H = F->o->height_px, W = F->o->width_px;
  const int wide = F->o->width_px >= 1000;
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
  L->ymax = ymax;
  L->tlo = tlo;
  L->thi = thi;
  L->H = H;
  L->W = W;
  L->wide = wide;
  L->lm = lm;
  L->rm = rm;
}

/* The break-even blocks, one per curve, drawn in a panel of their own below the speedup axis
 * (row r: curve r, top down).  bar_lo..bar_hi is the 90% interval, up to the axis end
 * when its upper end never breaks even; the label goes right of the bar, or left of it
 * when it would not fit there. */
static int speedup_be_blocks(fig *F, int *idx, const tps_plot_curve *c, size_t nc, const sp_layout *L, int *left_of) {
  const long tlo = L->tlo, thi = L->thi;
  const double W = L->W, lm = L->lm, rm = L->rm;
  for (size_t i = 0; i < nc; i++) {
    char what[200], lab[160];
    snprintf(what, sizeof what, "break-even of curve %zu (NaN: the split never wins); row, bar, label: its row in the "
             "break-even panel", i);
    pf_block(F, (*idx)++, what,
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
    FILE *d = F->dat.fp;
    fprintf(d, "%zu\t%s\t%d\t%s\t", i, c[i].gpu, c[i].tp, c[i].path);
    double v[5] = {be, lo, hi, c[i].threshold_tokens, (double)i};
    for (int k = 0; k < 5; k++) { pf_num(d, v[k]); fputc('\t', d); }
    pf_num(d, blo); fputc('\t', d);
    pf_num(d, bhi);
    fprintf(d, "\t%s\t", lab);
    pf_num(d, anchor_r); fputc('\t', d);
    pf_num(d, anchor_l); fputc('\n', d);
  }
  return 0;
}

/* Recommended thresholds: a dotted vertical line through both panels per distinct value, in
 * the curve's colour (dark grey when curves share it), its value above the frame.  Returns
 * how many. */
static size_t speedup_thresholds(FILE *g, const tps_plot_curve *c, size_t nc) {
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
  return nthr;
}

#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
/* Panel 1: the speedup curves, their bands and the measured points. */
static void speedup_panel1(FILE *g, const char *name, int by, const tps_plot_curve *c, size_t nc, const tps_plot_meas *m,
                           size_t nm, int meas0, size_t nthr, const char *title, double strip_top, double gap, double top,
                           const sp_layout *L) {
  const double W = L->W, rm = L->rm, ymax = L->ymax;
  const int wide = L->wide;
  fprintf(g, "set multiplot title ");
  pf_gp_str(g, title);
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
    int dt = pf_path_dash(c[i].path);
    for (size_t q = 0; q < i; q++) if (same_speedup(&c[q], &c[i])) dt = 2;
    SEP(); fprintf(g, "  '%s.dat' index %zu using 1:8 with lines lw %.1f dt %d lc rgb '%s' title ", name, i,
                   lw < 1.2 ? 1.2 : lw, dt, col);
    pf_gp_str(g, lab);
  }
  for (size_t j = 0; j < nm; j++) {
    char col[8], lab[256];
    pf_tp_shade(tps_plot_gpu_colour(m[j].gpu), m[j].tp, col);
    int bars = any_finite(m[j].rep_min_us, m[j].n) && any_finite(m[j].split_max_us, m[j].n);
    snprintf(lab, sizeof lab, "%s TP%d measured median%s", m[j].gpu, m[j].tp,
             bars ? " (bar: min..max)" : " (no min/max in the table)");
    SEP();
    if (bars)
      fprintf(g, "  '%s.dat' index %d using 1:8:9:10 with yerrorbars pt 7 ps 1.3 lw 1.5 lc rgb '%s' title ", name,
              meas0 + (int)j, col);
    else
      fprintf(g, "  '%s.dat' index %d using 1:8 with points pt 7 ps 1.5 lc rgb '%s' title ", name, meas0 + (int)j, col);
    pf_gp_str(g, lab);
  }
  if (nthr) { SEP(); fprintf(g, "  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title 'recommended threshold (value above)'"); }
  if (!wide) { SEP(); fprintf(g, "  NaN with xerrorbars pt 13 lc rgb '#555555' title 'break-even (marker), 90%% interval (bar): panel below'"); }
  fprintf(g, "\n");
}

/* Panel 2: the break-even of each curve (marker) and its 90% interval (bar), one row per curve. */
static void speedup_panel2(FILE *g, const char *name, int by, const tps_plot_curve *c, size_t nc, int mark,
                           const int *left_of, double strip_top, double bot, const sp_layout *L) {
  const double W = L->W, rm = L->rm;
  const int wide = L->wide;
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
    pf_gp_str(g, who);
    fprintf(g, " %zu", i);
  }
  fprintf(g, ") scale 0\nset grid noytics\n");
  if (wide)
    fprintf(g, "set label 1 'break-even (marker) and its 90%% interval (bar)' at screen %.4f, screen %.4f left "
               "tc rgb '#555555' front\n", rm + 20.0 / W, (strip_top + bot) / 2);
  fprintf(g, "plot \\\n");
  int first = 1;
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
}
#undef SEP

int tps_plot_speedup(const char *dir, const char *name, int by, const tps_plot_curve *c, size_t nc,
                     const tps_plot_meas *m, size_t nm, const tps_plot_opts *o, tps_plot_files *w,
                     tps_err *e) {
  if (nc == 0) return tps_err_set(e, NULL, 0, "plot: speedup figure without curves");
  for (size_t i = 0; i < nc; i++) if (check_curve(&c[i], e)) return -1;
  if (by < 0 || by > 2) by = TPS_PLOT_BY_GPU;
  fig F;
  if (pf_fig_begin(&F, dir, name, o, "speedup (replicated / split) vs tokens", e)) return -1;
  int idx = 0;
  for (size_t i = 0; i < nc; i++) write_curve_block(&F, idx++, &c[i]);
  int meas0 = idx;
  for (size_t i = 0; i < nm; i++) write_meas_block(&F, idx++, &m[i]);
  sp_layout L;
  speedup_layout(&F, by, c, nc, m, nm, &L);
  int mark = idx;
  int *left_of = calloc(nc, sizeof *left_of); /* 1: the label of curve i goes left of its bar */
  if (!left_of) { pf_fig_abort(&F); return tps_err_oom(e, "speedup figure"); }
  speedup_be_blocks(&F, &idx, c, nc, &L, left_of);
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
  const double H = L.H, W = L.W, lm = L.lm, rm = L.rm;
  double bot = 55.0 / H, strip_top = bot + (26.0 * (double)nc + 14.0) / H, gap = 12.0 / H, top = 1.0 - 70.0 / H;
  fprintf(g, "set xrange [%ld:%ld]\n", L.tlo, L.thi);
  gp_token_axis(g, F.o);
  if ((rm - lm) * W < 700) fprintf(g, "set xtics 1, 4\n"); /* a narrow panel: a tic per power of four */
  fprintf(g, "set style textbox opaque noborder\n");
  fprintf(g, "set style fill transparent solid 0.15 noborder\n");
  fprintf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", lm, rm);
  size_t nthr = speedup_thresholds(g, c, nc);
  speedup_panel1(g, name, by, c, nc, m, nm, meas0, nthr, title, strip_top, gap, top, &L);
  speedup_panel2(g, name, by, c, nc, mark, left_of, strip_top, bot, &L);
  fprintf(g, "\nunset multiplot\n");
  free(left_of);
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
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
    fprintf(g, "set title "); pf_gp_str(g, paths[p]); fputc('\n', g);
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
  int len = snprintf(title, sizeof title, "fit quality: %s", f->gpu[0] ? f->gpu : "?");
  if (f->tp && f->kind != TPS_FIT_GEMM) len += snprintf(title + len, sizeof title - (size_t)len, ", TP%d", f->tp);
  if (path_name) len += snprintf(title + len, sizeof title - (size_t)len, ", %s", path_name);
  len += snprintf(title + len, sizeof title - (size_t)len, ": median |residual| %.1f%% (max %.1f%%)",
                  100 * f->med_abs_rel, 100 * f->max_abs_rel);
  if (loo && isfinite(f->loo_med_abs))
    snprintf(title + len, sizeof title - (size_t)len, ", leave-one-out median %.1f%% (max %.1f%%)",
             100 * f->loo_med_abs, 100 * f->loo_max_abs);
  fprintf(g, "set title "); pf_gp_str(g, title); fputc('\n', g);
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
  snprintf(title, sizeof title, "%s on %s, TP%d, %s: input-projection stage of one %ld-token chunk, all %d layers, by layer kind",
           l->model ? l->model : "model", l->gpu ? l->gpu : "?", l->tp, l->path ? l->path : "?", l->tokens, nlayers);
  fprintf(g, "set title "); pf_gp_str(g, title); fputc('\n', g);
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
    pf_gp_str(g, lab);
    fprintf(g, "%s\n", k + 1 < l->nkind ? ", \\" : "");
  }
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
}

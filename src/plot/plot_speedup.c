/* plot_speedup.c: the speedup figure (see plot.h): replicated / split vs tokens, one curve per
 * GPU, TP or path; under it a panel with each curve's break-even and its 90% interval; the
 * recommended thresholds as lines through the speedup panel; the legend under the token axis.
 * Layout in pixels from estimated text widths (plot_fig.h). */
#include "config.h"
#include "src/plot/plot.h"
#include "src/plot/plot_fig.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two curves on the same tokens that would hide each other: within 4% of each other on at
 * least a fifth of the tokens (drawn over the other, the later one is dashed). */
static int overlapping(const tps_plot_curve *a, const tps_plot_curve *b) {
  if (a->n != b->n || a->n == 0) return 0;
  size_t close = 0;
  for (size_t i = 0; i < a->n; i++) {
    double x = a->rep_us[i] / a->split_us[i], y = b->rep_us[i] / b->split_us[i];
    if (a->tokens[i] != b->tokens[i]) return 0;
    if (fabs(x - y) <= 0.04 * fabs(x)) close++;
  }
  return 5 * close >= a->n;
}

/* The layout of a speedup figure: the y range, the token range shared by both panels, and
 * the panels' margins in screen fractions. */
typedef struct {
  double ymax, H, W, lm, rm;
  long tlo, thi;
} sp_layout;

/* Row name of curve i in the break-even panel: the part that varies. */
static void row_name(const tps_plot_curve *c, int by, char *out, size_t sz) {
  pf_curve_label(c, by, out, sz);
  char *colon = strstr(out, ": ");
  if (colon && c->source && *c->source) *colon = '\0';
}

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
  L->ymax = ymax * 1.08;
  /* token range shared by both panels */
  long tlo = c[0].tokens[0], thi = c[0].tokens[c[0].n - 1];
  for (size_t i = 1; i < nc; i++) {
    if (c[i].tokens[0] < tlo) tlo = c[i].tokens[0];
    if (c[i].tokens[c[i].n - 1] > thi) thi = c[i].tokens[c[i].n - 1];
  }
  if (thi <= tlo) thi = tlo + 1;
  L->tlo = tlo;
  L->thi = thi;
  L->H = F->o->height_px;
  L->W = F->o->width_px;
  /* the left margin fits the longest row name of the break-even panel (and the y tic
   * labels); the legend is under the panels, so they take the full width */
  double maxlab = 0;
  for (size_t i = 0; i < nc; i++) {
    char who[128];
    row_name(&c[i], by, who, sizeof who);
    double px = pf_text_px(who, PF_FONT_PT);
    if (px > maxlab) maxlab = px;
  }
  double lm_px = maxlab + 24.0 > 78.0 ? maxlab + 24.0 : 78.0;
  L->lm = lm_px / L->W;
  L->rm = 1.0 - 25.0 / L->W;
}

/* The break-even blocks, one per curve, drawn in a panel of their own below the speedup axis
 * (row r: curve r, top down).  bar_lo..bar_hi is the 90% interval, up to the axis end
 * when its upper end never breaks even; the label goes right of the bar, or left of it
 * when it would not fit there. */
static void speedup_be_blocks(fig *F, int *idx, const tps_plot_curve *c, size_t nc, const sp_layout *L, int *left_of) {
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
    if (!isfinite(be) && isfinite(lo)) { snprintf(lab, sizeof lab, "never wins up to %ld [90%%: %.0f..never]", thi, lo); blo = lo; bhi = (double)thi; }
    else if (!isfinite(be)) snprintf(lab, sizeof lab, "never wins up to %ld", thi);
    else if (isfinite(lo) && isfinite(hi)) { snprintf(lab, sizeof lab, "%.0f [90%%: %.0f..%.0f]", be, lo, hi); blo = lo; bhi = hi; }
    else if (isfinite(lo)) { snprintf(lab, sizeof lab, "%.0f [90%%: %.0f..never]", be, lo); blo = lo; bhi = (double)thi; }
    else { snprintf(lab, sizeof lab, "%.0f", be); blo = bhi = be; }
    if (isfinite(c[i].threshold_tokens)) {
      size_t l = strlen(lab);
      snprintf(lab + l, sizeof lab - l, ", threshold %.0f", c[i].threshold_tokens);
    }
    /* room right of the bar's end (or marker), and left of its start, in px */
    double span = log((double)thi / (double)tlo), panel_px = (rm - lm) * W;
    double right_end = isfinite(bhi) ? bhi : isfinite(be) ? be : (double)thi;
    double left_end = isfinite(blo) ? blo : isfinite(be) ? be : (double)thi;
    double lab_px = pf_text_px(lab, PF_FONT_PT) + 24.0;
    double room_r = panel_px - log(right_end / (double)tlo) / span * panel_px;
    int left = room_r < lab_px;
    double anchor_r = NAN, anchor_l = NAN;
    if (!isfinite(be) && !isfinite(blo)) anchor_l = (double)thi * 0.9995; /* inside the axis: its end is clipped */
    else if (left) anchor_l = left_end;
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
}

/* Recommended thresholds: a dotted vertical line through the speedup panel per distinct
 * value, in the curve's colour (dark grey when curves share it), its value above the frame
 * (pf_above_frame).  Returns how many lines of values it used (0: no threshold). */
static int speedup_thresholds(FILE *g, const tps_plot_curve *c, size_t nc, const sp_layout *L) {
  double xs[16];
  char txt[16][24], cols[16][8];
  const char *tp[16], *cp[16];
  size_t n = 0;
  /* distinct values in increasing order */
  for (;;) {
    double best = INFINITY;
    size_t bi = 0;
    for (size_t i = 0; i < nc; i++) {
      double t = c[i].threshold_tokens;
      if (isfinite(t) && t < best && (n == 0 || t > xs[n - 1])) { best = t; bi = i; }
    }
    if (!isfinite(best) || n == 16) break;
    int shared = 0;
    for (size_t q = 0; q < nc; q++) if (q != bi && c[q].threshold_tokens == best) shared = 1;
    if (shared) snprintf(cols[n], sizeof cols[n], "#555555"); else pf_curve_colour(&c[bi], cols[n]);
    xs[n] = best;
    snprintf(txt[n], sizeof txt[n], "%.0f", best);
    tp[n] = txt[n];
    cp[n] = cols[n];
    fprintf(g, "set arrow %zu from %.10g, graph 0 to %.10g, graph 1 nohead dt 3 lw 1.5 lc rgb '%s' back\n", n + 1, best,
            best, cols[n]);
    n++;
  }
  if (!n) return 0;
  return pf_above_frame(g, 1, xs, tp, cp, n, L->lm, L->rm, (double)L->tlo, (double)L->thi, L->W);
}

#define SEP() do { if (!first) fprintf(g, ", \\\n"); first = 0; } while (0)
/* Panel 1: the speedup curves, their bands and the measured points; keys[] the legend. */
static void speedup_panel1(FILE *g, const char *name, const tps_plot_curve *c, size_t nc, const tps_plot_meas *m,
                           size_t nm, int meas0, int nthr, const char *const *keys, double strip_top, double gap,
                           double top, const sp_layout *L) {
  fprintf(g, "set multiplot\n# panel 1: the speedup\n");
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", top, strip_top + gap);
  fprintf(g, "set format x ''\nunset xlabel\n");
  fprintf(g, "set ylabel 'speedup of the split = replicated / split'\nset yrange [0:%.4g]\n", L->ymax);
  fprintf(g, "# speedup 1: the split neither wins nor loses\n");
  fprintf(g, "set arrow 100 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#000000' back\n");
  fprintf(g, "plot \\\n");
  int first = 1;
  size_t ki = 0;
  for (size_t i = 0; i < nc; i++) {
    char col[8];
    pf_curve_colour(&c[i], col);
    if (pf_has_band(c[i].speedup_lo, c[i].speedup_hi, c[i].n)) {
      SEP(); fprintf(g, "  '%s.dat' index %zu using 1:9:10 with filledcurves lc rgb '%s' notitle", name, i, col);
    }
    /* later curves thinner, and dashed where they overlap an earlier one, so that a curve
     * drawn over another stays visible */
    double lw = 3.4 - 0.5 * (double)i;
    int dt = pf_path_dash(c[i].path);
    for (size_t q = 0; q < i; q++) if (overlapping(&c[q], &c[i])) dt = 2;
    SEP(); fprintf(g, "  '%s.dat' index %zu using 1:8 with lines lw %.1f dt %d lc rgb '%s' title ", name, i,
                   lw < 1.2 ? 1.2 : lw, dt, col);
    pf_gp_str(g, keys[ki++]);
  }
  for (size_t j = 0; j < nm; j++) {
    char col[8];
    pf_tp_shade(tps_plot_gpu_colour(m[j].gpu), m[j].tp, col);
    int bars = pf_any_finite(m[j].rep_min_us, m[j].n) && pf_any_finite(m[j].split_max_us, m[j].n);
    SEP();
    if (bars)
      fprintf(g, "  '%s.dat' index %d using 1:8:9:10 with yerrorbars pt 7 ps 1.3 lw 1.5 lc rgb '%s' title ", name,
              meas0 + (int)j, col);
    else
      fprintf(g, "  '%s.dat' index %d using 1:8 with points pt 7 ps 1.5 lc rgb '%s' title ", name, meas0 + (int)j, col);
    pf_gp_str(g, keys[ki++]);
  }
  if (nthr) { SEP(); fprintf(g, "  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title "); pf_gp_str(g, keys[ki++]); }
  SEP(); fprintf(g, "  NaN with points pt 13 ps 1.6 lc rgb '#555555' title "); pf_gp_str(g, keys[ki++]);
  fprintf(g, "\n");
}

/* Panel 2: the break-even of each curve (marker) and its 90% interval (bar), one row per curve. */
static void speedup_panel2(FILE *g, const char *name, int by, const tps_plot_curve *c, size_t nc, int mark,
                           const int *left_of, double strip_top, double bot) {
  fprintf(g, "# panel 2: the break-even of each curve (marker) and its 90%% interval (bar), one row per curve\n");
  fprintf(g, "unset label\nunset arrow\nunset key\nunset title\n");
  fprintf(g, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", strip_top, bot);
  fprintf(g, "set format x '%%.0f'\nset xlabel 'tokens per step T'\nset ylabel ''\n");
  fprintf(g, "set yrange [%.1f:-0.6]\nset ytics (", (double)nc - 0.4);
  for (size_t i = 0; i < nc; i++) {
    char who[128];
    row_name(&c[i], by, who, sizeof who);
    fprintf(g, "%s", i ? ", " : "");
    pf_gp_str(g, who);
    fprintf(g, " %zu", i);
  }
  fprintf(g, ") scale 0\nset grid noytics\n");
  fprintf(g, "plot \\\n");
  int first = 1;
  for (size_t i = 0; i < nc; i++) {
    static const int pts[5] = {13, 9, 11, 5, 7}; /* diamond, triangles, square, circle */
    char col[8];
    pf_curve_colour(&c[i], col);
    int pt = pts[i % 5], b = mark + (int)i;
    /* a marker at the break-even; where the split never wins, the bar alone (from the
     * interval's lower end), or nothing */
    if (isfinite(c[i].breakeven_tokens)) {
      SEP(); fprintf(g, "  '%s.dat' index %d using 5:9:10:11 with xerrorbars pt %d ps 1.6 lw 2 lc rgb '%s'", name, b, pt, col);
    } else if (isfinite(c[i].breakeven_lo)) {
      SEP(); fprintf(g, "  '%s.dat' index %d using 10:9:10:11 with xerrorbars ps 0 lw 2 lc rgb '%s'", name, b, col);
    }
    SEP();
    if (left_of[i]) fprintf(g, "  '' index %d using 14:9:12 with labels right offset -1,0 tc rgb '%s'", b, col);
    else fprintf(g, "  '' index %d using 13:9:12 with labels left offset 1,0 tc rgb '%s'", b, col);
  }
}
#undef SEP

/* The title: what is fixed across the curves (all of gpu, tp, path, K x N and gather that
 * the curves share), unless the options give one. */
static void speedup_title(int by, const tps_plot_curve *c, size_t nc, const tps_plot_opts *o, char *l1, size_t s1,
                          char *l2, size_t s2) {
  const tps_plot_curve *c0 = &c[0];
  int same_k = 1, same_g = 1;
  for (size_t i = 1; i < nc; i++) {
    if (c[i].k != c0->k || c[i].nout != c0->nout) same_k = 0;
    if (!c[i].gather != !c0->gather || (c0->gather && strcmp(c[i].gather, c0->gather))) same_g = 0;
  }
  static const char *const per[3] = {"one curve per GPU", "one curve per TP", "one curve per kernel path"};
  if (o->title) snprintf(l1, s1, "%s", o->title);
  else snprintf(l1, s1, "Speedup of the split by token over the replicated projection, %s", per[by]);
  pf_setup_words(l2, s2, by == TPS_PLOT_BY_GPU ? NULL : c0->gpu, by == TPS_PLOT_BY_TP ? 0 : c0->tp,
                 by == TPS_PLOT_BY_PATH ? NULL : c0->path, same_k ? c0->k : 0, same_k ? c0->nout : 0,
                 same_g ? c0->gather : NULL);
}

int tps_plot_speedup(const char *dir, const char *name, int by, const tps_plot_curve *c, size_t nc,
                     const tps_plot_meas *m, size_t nm, const tps_plot_opts *o, tps_plot_files *w,
                     tps_err *e) {
  if (nc == 0) return tps_err_set(e, NULL, 0, "plot: speedup figure without curves");
  if (nc > 64) return tps_err_set(e, NULL, 0, "plot: speedup figure with %zu curves (at most 64)", nc);
  for (size_t i = 0; i < nc; i++) if (pf_check_curve(&c[i], e)) return -1;
  if (by < 0 || by > 2) by = TPS_PLOT_BY_GPU;
  fig F;
  if (pf_fig_begin(&F, dir, name, o, "speedup (replicated / split) vs tokens", e)) return -1;
  int idx = 0;
  for (size_t i = 0; i < nc; i++) pf_write_curve_block(&F, idx++, &c[i]);
  int meas0 = idx;
  for (size_t i = 0; i < nm; i++) pf_write_meas_block(&F, idx++, &m[i]);
  sp_layout L;
  speedup_layout(&F, by, c, nc, m, nm, &L);
  int mark = idx;
  int *left_of = calloc(nc, sizeof *left_of); /* 1: the label of curve i goes left of its bar */
  char (*kb)[400] = calloc(nc + nm + 2, sizeof *kb);
  const char **keys = calloc(nc + nm + 2, sizeof *keys);
  if (!left_of || !kb || !keys) { free(left_of); free(kb); free(keys); pf_fig_abort(&F); return tps_err_oom(e, "speedup figure"); }
  speedup_be_blocks(&F, &idx, c, nc, &L, left_of);
  FILE *g = F.gp.fp;
  char l1[256], l2[512];
  speedup_title(by, c, nc, F.o, l1, sizeof l1, l2, sizeof l2);
  double top_px = pf_title(g, &F, l1, l2);
  /* the legend: curves (with their sources in words), measured sets, the threshold line and
   * the break-even marker */
  size_t nk = 0;
  int any_thr = 0;
  for (size_t i = 0; i < nc; i++) {
    pf_curve_label(&c[i], by, kb[nk], sizeof kb[0]);
    keys[nk] = kb[nk];
    nk++;
    if (isfinite(c[i].threshold_tokens)) any_thr = 1;
  }
  for (size_t j = 0; j < nm; j++) {
    int bars = pf_any_finite(m[j].rep_min_us, m[j].n) && pf_any_finite(m[j].split_max_us, m[j].n);
    snprintf(kb[nk], sizeof kb[0], "%s TP%d measured median%s", m[j].gpu, m[j].tp,
             bars ? " (bar: min..max)" : " (no min/max in the table)");
    keys[nk] = kb[nk];
    nk++;
  }
  if (any_thr) { snprintf(kb[nk], sizeof kb[0], "recommended threshold: least predicted excess (value above the frame)"); keys[nk] = kb[nk]; nk++; }
  snprintf(kb[nk], sizeof kb[0], "break-even (marker) with its 90%% interval (bar), lower panel");
  keys[nk] = kb[nk];
  nk++;
  /* layout, bottom up: legend, x label and tics, the break-even panel (26 px a row), a gap,
   * the speedup panel, a line (or two) of threshold values, the title */
  const double H = L.H;
  double key_h = pf_key_below_h(&F, keys, nk, 2);
  double bot = (12.0 + key_h + 56.0) / H, strip_top = bot + (26.0 * (double)nc + 14.0) / H, gap = 12.0 / H;
  fprintf(g, "set xrange [%ld:%ld]\n", L.tlo, L.thi);
  pf_token_axis(g, F.o);
  if ((L.rm - L.lm) * L.W < 700) fprintf(g, "set xtics 1, 4\n"); /* a narrow panel: a tic per power of four */
  fprintf(g, "set style fill transparent solid 0.15 noborder\n");
  fprintf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", L.lm, L.rm);
  pf_key_below(g, &F, keys, nk, 2, L.lm, 12.0);
  int lines = speedup_thresholds(g, c, nc, &L);
  double top = 1.0 - (top_px + 10.0 + 19.0 * (lines ? lines : 0)) / H;
  speedup_panel1(g, name, c, nc, m, nm, meas0, any_thr, keys, strip_top, gap, top, &L);
  speedup_panel2(g, name, by, c, nc, mark, left_of, strip_top, bot);
  fprintf(g, "\nunset multiplot\n");
  free(left_of);
  free(kb);
  free(keys);
  return pf_fig_end(&F, w, e) ? (pf_fig_abort(&F), -1) : 0;
}

/* calib_choose.c: what the calibrated models of calib.c decide (see calib.h): the break-even
 * and win bands of a configuration, the adaptive second phase's rows, the held-out choice of
 * the method, and the offline replay of a sweep on a measured table. */
#include "model/calib/calib.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_sort_long.h>
#include "model/core/path.h"
#include "model/core/status.h"
#include "model/predict/excess.h"

static int has_row(const long *rows, size_t n, long r) {
  for (size_t i = 0; i < n; i++) if (rows[i] == r) return 1;
  return 0;
}

/* ------------------------------------------------------------------ break-even */

double tps_cal_gemm_fn(double m, void *ctx) { return tps_cal_gemm_time_us((const tps_cal_gemm *)ctx, m); }
double tps_cal_curve_fn(double x, void *ctx) { return tps_loo_curve_eval((const tps_loo_curve *)ctx, x); }

/* split(T) + z sigma(T) < replicated(T), z = -1, 0 or +1: sigma(T) the 90% half-width of
 * replicated - split from its three parts in quadrature, w_gemm rep, w_gemm gemm(T/tp),
 * w_gather gather.  -1 when a part is unavailable. */
static int wins(const tps_cal_parts *p, int tp, double ob, double T, double z) {
  double rep = p->gemm(T, p->gemm_ctx), g = p->gemm(ceil(T / tp), p->gemm_ctx), a = p->gather(T * ob, p->gather_ctx);
  if (!(rep > 0) || !(g > 0) || !(a >= 0)) return -1;
  double wr = p->w_gemm * rep, wg = p->w_gemm * g, wa = p->w_gather * a;
  return g + a + z * sqrt(wr * wr + wg * wg + wa * wa) < rep;
}

static int be_at(const tps_cal_parts *p, int tp, double ob, long t_max, double z, double *out) {
  double last_lose = 0, next_win = 0, prev = 0;
  for (double lt = 0;; lt += 1.0 / 64.0) {
    double T = floor(exp2(lt) + 0.5);
    if (T > (double)t_max) T = (double)t_max;
    if (T != prev) {
      int w = wins(p, tp, ob, T, z);
      if (w < 0) return TPS_EINVAL;
      if (!w) { last_lose = T; next_win = 0; }
      else if (!next_win) next_win = T;
      prev = T;
    }
    if (T >= (double)t_max) break;
  }
  if (last_lose >= (double)t_max || !next_win) { *out = 0; return TPS_OK; }
  double T = next_win;
  while (T - 1 > last_lose && wins(p, tp, ob, T - 1, z) == 1) T -= 1;
  *out = T;
  return TPS_OK;
}

typedef struct {
  const tps_cal_parts *p;
  int tp;
  double ob;
} band_ctx;

/* replicated(T) = gemm(T), split(T) = gemm(ceil(T/tp)) + gather(T out_bytes): the nominal
 * times of wins() (z = 0); TPS_EINVAL where a part is unavailable, as there. */
static int band_times(long t, void *ctx, double *rep, double *split) {
  const band_ctx *c = ctx;
  double T = (double)t;
  double r = c->p->gemm(T, c->p->gemm_ctx), g = c->p->gemm(ceil(T / c->tp), c->p->gemm_ctx);
  double a = c->p->gather(T * c->ob, c->p->gather_ctx);
  if (!(r > 0) || !(g > 0) || !(a >= 0)) return TPS_EINVAL;
  *rep = r;
  *split = g + a;
  return TPS_OK;
}

/* The nominal costs as a threshold's costs (model/predict/excess.h); NaN where unavailable. */
static double cost_rep(long t, void *ctx) {
  double r, s;
  return band_times(t, ctx, &r, &s) == TPS_OK ? r : NAN;
}
static double cost_split(long t, void *ctx) {
  double r, s;
  return band_times(t, ctx, &r, &s) == TPS_OK ? s : NAN;
}

/* The threshold of least excess on the nominal parts (tps_threshold_choose); 0: never. */
static int cal_threshold(const tps_cal_parts *p, int tp, double ob, long t_max, long *thr) {
  band_ctx c = {p, tp, ob};
  tps_costs costs = {cost_rep, cost_split, &c};
  tps_excess x;
  long t = -1;
  *thr = 0;
  if (tps_threshold_choose(&costs, t_max, &t, &x) != 0) return TPS_EINVAL;
  *thr = t > 0 ? t : 0;
  return TPS_OK;
}

int tps_cal_breakeven(const tps_cal_parts *p, int tp, double out_bytes, long t_max, tps_cal_be *out) {
  memset(out, 0, sizeof *out);
  if (!p || !p->gemm || !p->gather || tp < 2 || !(out_bytes > 0) || t_max < 1 || p->w_gemm < 0 || p->w_gather < 0)
    return TPS_EINVAL;
  int st = be_at(p, tp, out_bytes, t_max, 0, &out->breakeven);
  if (st == TPS_OK) st = be_at(p, tp, out_bytes, t_max, -1, &out->lo);
  if (st == TPS_OK) st = be_at(p, tp, out_bytes, t_max, +1, &out->hi);
  if (st != TPS_OK) return st;
  /* the split's advantage raised can only move the break-even down, lowered only up */
  if (out->breakeven > 0 && (out->lo == 0 || out->lo > out->breakeven)) out->lo = out->breakeven;
  if (out->breakeven > 0 && out->hi > 0 && out->hi < out->breakeven) out->hi = out->breakeven;
  if (out->breakeven == 0) out->hi = 0;
  return cal_threshold(p, tp, out_bytes, t_max, &out->threshold);
}

int tps_cal_bands(const tps_cal_parts *p, int tp, double out_bytes, long t_max, tps_bands *out) {
  memset(out, 0, sizeof *out);
  out->breakeven = -1;
  if (!p || !p->gemm || !p->gather || tp < 2 || !(out_bytes > 0) || t_max < 1) return TPS_EINVAL;
  band_ctx c = {p, tp, out_bytes};
  return tps_bands_find(band_times, &c, 1, t_max, TPS_BANDS_LOG64, out);
}

double tps_cal_curve_w90(const double *x, const double *t, size_t n) {
  if (n < 4) return TPS_CAL_MIN_W;
  double le[TPS_CAL_MAX_PTS];
  size_t nl = 0;
  for (size_t i = 1; i + 1 < n && nl < TPS_CAL_MAX_PTS; i++) {
    double xs[TPS_CAL_MAX_PTS], ts[TPS_CAL_MAX_PTS];
    size_t m = 0;
    for (size_t j = 0; j < n && m < TPS_CAL_MAX_PTS; j++) if (j != i) { xs[m] = x[j]; ts[m] = t[j]; m++; }
    tps_loo_curve *c = tps_loo_curve_measured(xs, ts, m);
    le[nl++] = c ? log(tps_loo_curve_eval(c, x[i]) / t[i]) : NAN;
    tps_loo_curve_free(c);
  }
  return tps_loo_quantile_abs(le, nl, 0.9, TPS_CAL_MIN_W);
}

/* ------------------------------------------------------------------ adaptive second phase */

const char *const tps_cal_why_names[4] = {"", "model", "slope", "rise"};

void tps_cal_adapt_defaults(tps_cal_adapt_opts *o) {
  o->max_rows = 16;
  o->per_round = 4;
  o->min_ratio = 1.1;
  o->min_score = 0.02;
  o->slope_max = 1.2;
  o->rise_w = 0.25;
  o->budget_frac = 0.9;
}

long tps_cal_adapt_round(long lo, long hi) {
  if (lo < 1 || hi - lo < 2) return 0;
  const double mid = sqrt((double)lo * (double)hi);
  long g = 1;
  while (g * 2 <= mid / 8 && g < 128) g *= 2;
  for (; g >= 1; g /= 2) {
    long r = (long)floor(mid / (double)g + 0.5) * g;
    if (r > lo && r < hi) return r;
    /* the other multiple next to the midpoint */
    r = mid / (double)g > floor(mid / (double)g + 0.5) ? r + g : r - g;
    if (r > lo && r < hi) return r;
  }
  return 0;
}

int tps_cal_adapt_fits(double elapsed_s, double est_s, double reserve_s, double budget_s, double frac) {
  if (!(est_s >= 0) || !(reserve_s >= 0) || !(budget_s > 0) || !(frac > 0)) return 0;
  return elapsed_s + est_s <= frac * budget_s - reserve_s;
}

static int cmp_pick(const void *a, const void *b) {
  const tps_cal_adapt_pick *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  return (x->lo > y->lo) - (x->lo < y->lo); /* ties: the lower interval first */
}

size_t tps_cal_adapt_rows(const tps_cal_gemm *g, const tps_cal_adapt_opts *o, const long *skip_lo, size_t nskip,
                          tps_cal_adapt_pick *picks, size_t cap) {
  if (!g || !o || !picks || !cap || g->npts < 2 || !g->steffen) return 0;
  tps_cal_adapt_pick all[TPS_CAL_MAX_PTS];
  size_t n = 0;
  for (size_t i = 0; i + 1 < g->npts; i++) {
    const long lo = g->rows[i], hi = g->rows[i + 1];
    if ((double)hi < o->min_ratio * (double)lo || has_row(skip_lo, nskip, lo)) continue;
    const long row = tps_cal_adapt_round(lo, hi);
    if (!row) continue;
    const double L = log((double)hi / (double)lo), rise = log(g->t_us[i + 1] / g->t_us[i]);
    /* the model against the log-log line through the measured ends */
    double dep = 0;
    for (int j = 1; j < 16; j++) {
      const double lm = log((double)lo) + L * j / 16.0, t = tps_cal_gemm_time_us(g, exp(lm));
      if (!(t > 0)) continue;
      const double e = fabs(log(t) - (log(g->t_us[i]) + rise * j / 16.0));
      if (e > dep) dep = e;
    }
    /* the measured slope outside [0, slope_max]: a fall beyond 1% noise, a rise too steep */
    double sl = 0;
    if (rise < -0.01) sl = -rise;
    else if (rise > o->slope_max * L) sl = rise - o->slope_max * L;
    const double ri = rise > 0 ? o->rise_w * rise : 0;
    tps_cal_adapt_pick p = {row, lo, hi, dep, TPS_CAL_WHY_MODEL, dep, sl, ri};
    if (sl > p.score) { p.score = sl; p.why = TPS_CAL_WHY_SLOPE; }
    if (ri > p.score) { p.score = ri; p.why = TPS_CAL_WHY_RISE; }
    if (p.score >= o->min_score) all[n++] = p;
  }
  qsort(all, n, sizeof *all, cmp_pick);
  if (n > cap) n = cap;
  memcpy(picks, all, n * sizeof *all);
  return n;
}

/* ------------------------------------------------------------------ held-out method choice */

int tps_cal_heldout_choose(const tps_cal_gemm *first, const long *rows, const double *t_us, size_t n,
                           tps_cal_heldout *out) {
  if (!out) return TPS_EINVAL;
  memset(out, 0, sizeof *out);
  for (int m = 0; m < 2; m++) out->max_abs_rel[m] = out->med_abs_rel[m] = NAN;
  if (!first || !first->steffen || n > TPS_CAL_MAX_PTS || (n && (!rows || !t_us))) return TPS_EINVAL;
  out->prior = out->method = first->method;
  double rel[2][TPS_CAL_MAX_PTS];
  int have[2] = {1, 1};
  for (size_t i = 0; i < n; i++) {
    if (rows[i] < 1 || !(t_us[i] > 0) || !isfinite(t_us[i])) return TPS_EBADDATA;
    if (has_row(first->rows, first->npts, rows[i])) continue;
    for (int m = 0; m < 2; m++) {
      const double r = tps_cal_gemm_time_by(first, m, (double)rows[i]) / t_us[i] - 1.0;
      if (!isfinite(r)) have[m] = 0;
      rel[m][out->n] = r;
    }
    out->rows[out->n++] = rows[i];
  }
  if (!out->n) return TPS_OK;
  for (int m = 0; m < 2; m++) {
    if (!have[m]) continue;
    tps_loo_err s = tps_loo_summary(rel[m], out->n);
    if (s.n != out->n) return TPS_ENOMEM;
    out->max_abs_rel[m] = s.max_abs;
    out->med_abs_rel[m] = s.med_abs;
  }
  /* the other method only when both its max and its median are smaller by more than the
   * tie margin (one row where the first-phase method misses does not decide) */
  const int cur = out->prior, oth = 1 - cur;
  const double *mx = out->max_abs_rel, *md = out->med_abs_rel;
  if (isfinite(mx[cur]) && isfinite(mx[oth]) && mx[oth] < mx[cur] - TPS_CAL_HELDOUT_TIE &&
      md[oth] < md[cur] - TPS_CAL_HELDOUT_TIE)
    out->method = oth;
  return TPS_OK;
}

/* ------------------------------------------------------------------ offline replay */

/* The index of the row of M[0..nm) nearest to want in log M among those strictly inside
 * (lo, hi) (lo, hi 0: no bound) and in neither taken[0..nt) nor also[0..na); nm when none. */
static size_t nearest_row(const long *M, size_t nm, long want, long lo, long hi, const long *taken, size_t nt,
                          const long *also, size_t na) {
  size_t best = nm;
  double bd = INFINITY;
  for (size_t j = 0; j < nm; j++) {
    if ((lo && M[j] <= lo) || (hi && M[j] >= hi) || has_row(taken, nt, M[j]) || has_row(also, na, M[j])) continue;
    const double d = fabs(log((double)M[j] / (double)want));
    if (d < bd) { bd = d; best = j; }
  }
  return best;
}

/* The times of rows[0..n) from the table M, T (every row is one of M). */
static void times_of(const long *M, const double *T, size_t nm, const long *rows, size_t n, double *t) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < nm; j++) if (M[j] == rows[i]) t[i] = T[j];
}

/* Median and max |relative error| of a fit over the rows of M[0..nm) not in sw[0..nsw), and
 * the row of the max; the count scored into *scored.  TPS_OK, TPS_ENOMEM. */
static int replay_score(const tps_cal_gemm *g, const long *M, const double *T, size_t nm, const long *sw, size_t nsw,
                        double *med, double *max, long *worst, size_t *scored) {
  *med = *max = NAN;
  *worst = 0;
  *scored = 0;
  double *rel = malloc((nm ? nm : 1) * sizeof *rel);
  if (!rel) return TPS_ENOMEM;
  size_t k = 0;
  double wmax = -1;
  for (size_t i = 0; i < nm; i++) {
    if (has_row(sw, nsw, M[i])) continue;
    const double r = tps_cal_gemm_time_us(g, (double)M[i]) / T[i] - 1;
    if (!isfinite(r)) continue;
    rel[k++] = r;
    if (fabs(r) > wmax) { wmax = fabs(r); *worst = M[i]; }
  }
  int st = TPS_OK;
  if (k) {
    tps_loo_err s = tps_loo_summary(rel, k);
    if (s.n != k) st = TPS_ENOMEM;
    *med = s.med_abs;
    *max = s.max_abs;
  }
  free(rel);
  *scored = k;
  return st;
}

int tps_cal_replay(const long *M, const double *T, size_t n, int path, long k, long nn, const tps_gpu *gpu, int harness,
                   const tps_cal_replay_opts *o, tps_cal_replay_res *out) {
  if (!out) return TPS_EINVAL;
  memset(out, 0, sizeof *out);
  out->med[0] = out->med[1] = out->max[0] = out->max[1] = NAN;
  if (!M || !T || !o || o->points < 2 || o->t_max < 2 || !(o->row_s >= 0) || !(o->share_s > 0) || o->adapt.max_rows < 0 ||
      o->adapt.per_round < 1)
    return TPS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (M[i] < 1 || !(T[i] > 0) || (i && M[i] <= M[i - 1])) return TPS_EBADDATA;
  size_t nm = 0;
  while (nm < n && M[nm] <= o->t_max) nm++;
  out->nm = nm;
  if (nm < 8) return TPS_ETOOFEW;
  /* the first phase: each row asked, the nearest row of the table not taken yet */
  tps_cal_sweep_req q = {path, k, nn, gpu, M[nm - 1], o->points};
  long want[TPS_CAL_MAX_PTS], sw[TPS_CAL_MAX_PTS];
  double st[TPS_CAL_MAX_PTS];
  size_t nw = tps_cal_sweep_rows(&q, want, TPS_CAL_MAX_PTS), ns = 0;
  for (size_t i = 0; i < nw; i++) {
    size_t j = nearest_row(M, nm, want[i], 0, 0, sw, ns, NULL, 0);
    if (j < nm) sw[ns++] = M[j];
  }
  gsl_sort_long(sw, 1, ns);
  times_of(M, T, nm, sw, ns, st);
  out->n0 = ns;
  tps_cal_gemm fixed, cur;
  int rc = tps_cal_gemm_fit_quick(&fixed, path, k, nn, gpu, NULL, harness, sw, st, ns, o->method);
  if (rc != TPS_OK) { tps_cal_gemm_free(&fixed); return rc; }
  int have_cur = 0;
  const tps_cal_gemm *g = &fixed;
  /* the clock: this part's share of the budget; its first phase took ns rows */
  out->clock_s = (double)ns * o->row_s;
  const double reserve_s = 2 * o->row_s; /* the break-even rows after the adaptive phase */
  long skip[TPS_CAL_MAX_PTS];
  size_t nskip = 0;
  while ((int)out->nadd < o->adapt.max_rows && ns < TPS_CAL_MAX_PTS) {
    tps_cal_adapt_pick pk[TPS_CAL_MAX_PTS];
    size_t np = tps_cal_adapt_rows(g, &o->adapt, skip, nskip, pk, (size_t)o->adapt.per_round);
    if (!np) break;
    long rows[TPS_CAL_MAX_PTS];
    int why[TPS_CAL_MAX_PTS];
    size_t nr = 0;
    for (size_t i = 0; i < np; i++) {
      size_t j = nearest_row(M, nm, pk[i].row, pk[i].lo, pk[i].hi, sw, ns, rows, nr);
      if (j == nm) { skip[nskip++] = pk[i].lo; continue; }
      if (M[j] != pk[i].row) out->snapped++;
      why[nr] = pk[i].why;
      rows[nr++] = M[j];
    }
    if (!nr) continue; /* every interval proposed had no row: ask again without them */
    size_t left = (size_t)o->adapt.max_rows - out->nadd;
    if (nr > left) nr = left;
    if (nr > TPS_CAL_MAX_PTS - ns) nr = TPS_CAL_MAX_PTS - ns;
    while (nr && !tps_cal_adapt_fits(out->clock_s, (double)nr * o->row_s, reserve_s, o->share_s, o->adapt.budget_frac)) nr--;
    if (!nr) break;
    out->clock_s += (double)nr * o->row_s;
    for (size_t i = 0; i < nr; i++) {
      out->add[out->nadd] = rows[i];
      out->why[out->nadd++] = why[i];
      sw[ns++] = rows[i];
    }
    gsl_sort_long(sw, 1, ns);
    times_of(M, T, nm, sw, ns, st);
    if (have_cur) tps_cal_gemm_free(&cur);
    have_cur = 0;
    g = &fixed;
    if (tps_cal_gemm_fit_frozen(&cur, &fixed, sw, st, ns, 0) != TPS_OK) { tps_cal_gemm_free(&cur); break; }
    have_cur = 1;
    g = &cur;
  }
  /* the held-out check of the adaptive rows against the first-phase fit, and its choice */
  double ta[TPS_CAL_MAX_PTS];
  times_of(M, T, nm, out->add, out->nadd, ta);
  rc = tps_cal_heldout_choose(&fixed, out->add, ta, out->nadd, &out->ho);
  if (!o->heldout || !have_cur) out->ho.method = out->ho.prior; /* the method the adaptive fit uses */
  if (rc == TPS_OK && o->heldout && have_cur && out->ho.n) {
    int u = tps_cal_gemm_use_method(&cur, out->ho.method);
    if (u != TPS_OK && u != TPS_NA) rc = u;
  }
  /* both on the rows in neither sweep (sw holds the first phase and the adaptive rows) */
  size_t sc1 = 0;
  if (rc == TPS_OK) rc = replay_score(&fixed, M, T, nm, sw, ns, &out->med[0], &out->max[0], &out->worst_m[0], &out->scored);
  if (rc == TPS_OK) rc = replay_score(g, M, T, nm, sw, ns, &out->med[1], &out->max[1], &out->worst_m[1], &sc1);
  if (have_cur) tps_cal_gemm_free(&cur);
  tps_cal_gemm_free(&fixed);
  return rc;
}

int tps_cal_replay_summary(const tps_cal_replay_res *r, size_t n, const tps_cal_replay_opts *o, tps_cal_replay_sum *s) {
  if (!s) return TPS_EINVAL;
  memset(s, 0, sizeof *s);
  s->med_max[0] = s->med_max[1] = NAN;
  if ((n && !r) || !o) return TPS_EINVAL;
  s->n = n;
  if (!n) return TPS_OK;
  double *m = malloc(2 * n * sizeof *m);
  if (!m) return TPS_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const tps_cal_replay_res *x = &r[i];
    const double rise = x->max[1] - x->max[0];
    if (rise > 1e-12) {
      s->worse++;
      if (rise > s->worst_rise) s->worst_rise = rise;
    }
    if ((int)x->nadd > o->adapt.max_rows) s->over_cap++;
    if (x->nadd && x->clock_s > o->adapt.budget_frac * o->share_s + 1e-9) s->over_budget++;
    if (o->heldout && x->ho.n && x->ho.method != x->ho.prior) s->switched++;
    m[i] = x->max[0];
    m[n + i] = x->max[1];
  }
  for (int j = 0; j < 2; j++) {
    gsl_sort(m + (size_t)j * n, 1, n);
    s->med_max[j] = gsl_stats_median_from_sorted_data(m + (size_t)j * n, 1, n);
  }
  free(m);
  return TPS_OK;
}

/* crossover.c: break-even, sign changes and thresholds (see crossover.h): the dense scan
 * of every integer T and the bisection that skips intervals a bound decides. */
#include "crossover.h"
#include <math.h>
#include <string.h>
#include "pred_impl.h"

const int tps_grid_tp[TPS_GRID_NTP] = {2, 4, 8, 16};

long tps_threshold(long be, long rounding) {
  if (be < 1) return -1;
  if (rounding > 0) return (be + rounding - 1) / rounding * rounding;
  long t = 1;
  while (t < be) t *= 2;
  return t;
}

int tps_crossover_find(double (*diff)(long t, void *arg), void *arg, long tmin, long tmax, tps_crossover *c) {
  memset(c, 0, sizeof *c);
  c->tmin = tmin;
  c->tmax = tmax;
  c->breakeven = -1;
  if (tmin < 1 || tmin > tmax) return TPS_EINVAL;
  int prev = 0;
  long start = -1; /* first T of the current winning run */
  for (long t = tmin; t <= tmax; t++) {
    double d = diff(t, arg);
    if (isnan(d)) return TPS_EINVAL;
    int win = d < 0;
    if (t == tmin) {
      if (win) start = t;
    } else if (win != prev) {
      if (c->nchg < TPS_CROSS_MAXCHG) { c->chg[c->nchg] = t; c->chg_wins[c->nchg] = win; }
      c->nchg++;
      if (win) start = t;
    }
    prev = win;
  }
  c->breakeven = prev ? start : -1;
  return TPS_OK;
}

static double dense_diff(long t, void *arg) { return tps_gemmgrid_diff(arg, t); }

int tps_pred_tmax_ok(const tps_pred *p, long tmax) {
  return p->applicable && tmax >= 1 && tmax <= TPS_PRED_MAX_TMAX;
}

/* Dense scan of p with a structure (built here when gs is NULL). */
int tps_pred_crossover_on(const tps_pred *p, long tmax, tps_crossover *c, tps_gemmgrid *gs) {
  memset(c, 0, sizeof *c);
  c->breakeven = -1;
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  tps_gemmgrid *mc = gs ? gs : tps_gemmgrid_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  tps_gemmgrid_load(mc, p, 1);
  int rc = tps_crossover_find(dense_diff, mc, 1, tmax, c);
  if (!gs) tps_gemmgrid_free(mc);
  return rc;
}

int tps_pred_crossover(const tps_pred *p, long tmax, tps_crossover *c) { return tps_pred_crossover_on(p, tmax, c, NULL); }

int tps_pred_breakeven(const tps_pred *p, long tmax, long *be) {
  tps_crossover c;
  int rc = tps_pred_crossover_on(p, tmax, &c, NULL);
  *be = c.breakeven;
  return rc;
}

/* Largest T in [a, b] where the split does not win (0 when none).  Inside [a, b] the
 * gather is nondecreasing (one backend), so split(T) <= max GEMM over rows
 * [1, ceil(b/tp)] + gather(b), and replicated(T) >= min GEMM over [a, tmax]: when the
 * first is below the second the split wins on all of [a, b].  (Parts: a measured gather
 * need not be monotone; its largest value over [a, b] stands for gather(b).) */
static long last_nonwin(tps_gemmgrid *c, long a, long b) {
  const tps_pred *p = c->p;
  if (b - a < 8) {
    for (long t = b; t >= a; t--)
      if (!(tps_gemmgrid_diff(c, t) < 0)) return t;
    return 0;
  }
  double gmax = tps_gemmgrid_gather_max(c, a, b);
  if (tps_gemmgrid_pmax(c, tps_pred_rows_per_rank(p, b)) + gmax < tps_gemmgrid_smin(c, a)) return 0;
  if (!(tps_gemmgrid_diff(c, b) < 0)) return b;
  long m = a + (b - a) / 2;
  long r = last_nonwin(c, m + 1, b);
  return r ? r : last_nonwin(c, a, m);
}

int tps_pred_breakeven_on(const tps_pred *p, long tmax, long *be, tps_gemmgrid *gs) {
  *be = -1;
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return tps_pred_breakeven(p, tmax, be);
  tps_gemmgrid *mc = gs ? gs : tps_gemmgrid_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  tps_gemmgrid_load(mc, p, 0);
  /* Monotone pieces of the gather: the custom gather runs up to tc tokens, NCCL above. */
  long cuts[2];
  int nc = 0;
  if (tps_pred_custom_possible(p) || p->backend == TPS_GATHER_CUSTOM) {
    double x = p->tp * floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* ceil(T/tp) rows <= cap */
    if (x >= 1 && x < (double)tmax) cuts[nc++] = (long)x;
  }
  cuts[nc++] = tmax;
  long t = 0;
  for (int i = nc - 1; i >= 0 && !t; i--) t = last_nonwin(mc, i ? cuts[i - 1] + 1 : 1, cuts[i]);
  if (!gs) tps_gemmgrid_free(mc);
  *be = t == tmax ? -1 : t + 1;
  return TPS_OK;
}

int tps_pred_breakeven_fast(const tps_pred *p, long tmax, long *be) { return tps_pred_breakeven_on(p, tmax, be, NULL); }

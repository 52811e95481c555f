/* calib.c: sweep points and the calibrated GEMM model (see calib.h); what they decide (break-even,
 * adaptive rows, held-out choice, replay) is calib_choose.c. */
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

const char *const tps_cal_method_names[3] = {"steffen", "shaped", "auto"};
const char *const tps_cal_base_names[3] = {"none", "xgemm", "xw8"};

int tps_cal_method_parse(const char *name) {
  for (int i = 0; name && i < 3; i++)
    if (!strcasecmp(name, tps_cal_method_names[i])) return i;
  return -1;
}

int tps_cal_xg_path(int path) {
  const tps_path *p = tps_path_get(path); /* the path's own model kind, never its id */
  return p && p->model == TPS_PATH_MODEL_XGEMM ? p->xgemm_form : -1;
}

/* Which structural model the shaped method uses for a path on a GPU. */
static int base_of(int path, const tps_gpu *gpu) {
  if (!gpu) return TPS_CAL_BASE_NONE;
  int xp = tps_cal_xg_path(path);
  if (xp >= 0) return tps_xg_supported(gpu, (tps_xg_path)xp) ? TPS_CAL_BASE_XGEMM : TPS_CAL_BASE_NONE;
  /* tps_xw8 follows the SM90 dispatch (stream / wgmma); other GPUs run the mma kernel */
  const tps_path *p = tps_path_get(path);
  if (p && p->model == TPS_PATH_MODEL_OWN && gpu->cc_major * 10 + gpu->cc_minor == p->own_cc && gpu->sms > 0)
    return TPS_CAL_BASE_XW8;
  return TPS_CAL_BASE_NONE;
}

/* ------------------------------------------------------------------ base models */

typedef struct {
  int base;
  tps_xg_harness h;          /* xgemm: how the points were measured */
  int path;
  long k, n;
  const tps_gpu *gpu;
  tps_xg_model xg;
  tps_xw8_model w8;
} basem;

static double base_eval(const basem *b, double m) {
  long r = (long)ceil(m - 1e-9);
  if (r < 1) r = 1;
  if (b->base == TPS_CAL_BASE_XGEMM) return tps_xg_time_us(&b->xg, b->gpu, &b->h, r, b->n, b->k, NULL);
  if (b->base == TPS_CAL_BASE_XW8) return tps_xw8_time_us(&b->w8, b->gpu, r, b->n, b->k, NULL);
  return NAN;
}

/* Parameters of the xgemm base fitted per GPU: the harness's floor and the terms that
 * shape the curve on one GPU.  With tpsplit bench's flush before every replay neither
 * floor_us (AIConfigurator's harness) nor the L2 rate enters a prediction; with the
 * AIConfigurator harness (calibrate --simulate on its tables) floor_bench_us does not. */
static const int xg_free_flushed[] = {TPS_XG_FLOOR_BENCH_US, TPS_XG_STREAM_EFF, TPS_XG_SAT_FRAC,
                                      TPS_XG_EFF_MAX,        TPS_XG_OPERAND_BPC, TPS_XG_TILE_US,
                                      TPS_XG_SPLITK_US,      TPS_XG_STREAMK_US,  TPS_XG_QUANT_BYTES};
static const int xg_free_aic[] = {TPS_XG_FLOOR_US,  TPS_XG_STREAM_EFF, TPS_XG_L2_BPC_SM,  TPS_XG_SAT_FRAC,
                                  TPS_XG_EFF_MAX,   TPS_XG_OPERAND_BPC, TPS_XG_TILE_US,   TPS_XG_SPLITK_US,
                                  TPS_XG_STREAMK_US, TPS_XG_QUANT_BYTES};
#define NXG_FREE (int)(sizeof xg_free_aic / sizeof xg_free_aic[0])

/* Weak pull of every log parameter towards its start (as xgemm.c: weight 0.02, log sd 2):
 * a sweep of ~10 points leaves some of ~9 parameters loose. */
#define PULL_W 0.02
#define PULL_LOGSD 2.0

typedef struct {
  basem *b;
  int idx[TPS_XW8_NPAR > NXG_FREE ? TPS_XW8_NPAR : NXG_FREE], np;
  const long *rows;
  const double *t;
  size_t n;
  long skip;                 /* point left out (weight 0), -1 none */
  double x0[16];
} bfit;

static void bunpack(bfit *c, const double *x) {
  for (int j = 0; j < c->np; j++) {
    double v = exp(x[j]);
    if (c->b->base == TPS_CAL_BASE_XGEMM) {
      int id = c->idx[j];
      if ((id == TPS_XG_STREAM_EFF || id == TPS_XG_EFF_MAX) && v > 1.2) v = 1.2;
      if (id == TPS_XG_SAT_FRAC && v > 1.0) v = 1.0;
      c->b->xg.p[id] = v;
    } else {
      /* weights come from HBM (L2 flushed): no faster than its bandwidth */
      if (j == TPS_XW8_STREAM_GBPS && v > c->b->gpu->hbm_gbps) v = c->b->gpu->hbm_gbps;
      c->b->w8.p[j] = v;
    }
  }
}

static int bresid(const double *x, double *r, double *w, void *vc) {
  bfit *c = vc;
  bunpack(c, x);
  for (size_t i = 0; i < c->n; i++) {
    double t = base_eval(c->b, (double)c->rows[i]);
    r[i] = isfinite(t) && t > 0 ? log(t / c->t[i]) : 10.0;
    w[i] = (long)i == c->skip ? 0.0 : 1.0;
  }
  for (int j = 0; j < c->np; j++) {
    r[c->n + j] = TPS_LOO_LOSS_SCALE * (x[j] - c->x0[j]) / PULL_LOGSD;
    w[c->n + j] = PULL_W;
  }
  return 0;
}

/* Fit the base of b to the points (skip: one left out), from its start parameters. */
static int base_fit(basem *b, const basem *start, const long *rows, const double *t, size_t n, long skip) {
  *b = *start;
  bfit c;
  memset(&c, 0, sizeof c);
  c.b = b;
  c.rows = rows;
  c.t = t;
  c.n = n;
  c.skip = skip;
  double x[16];
  if (b->base == TPS_CAL_BASE_XGEMM) {
    const int aic = b->h.kind == TPS_XG_AIC;
    const int *fr = aic ? xg_free_aic : xg_free_flushed;
    const int nfr = aic ? (int)(sizeof xg_free_aic / sizeof *fr) : (int)(sizeof xg_free_flushed / sizeof *fr);
    for (int j = 0; j < nfr; j++)
      if (tps_xg_par_free(b->xg.path, fr[j])) c.idx[c.np++] = fr[j];
    for (int j = 0; j < c.np; j++) {
      double v = b->xg.p[c.idx[j]];
      x[j] = c.x0[j] = log(v > 0 ? v : 1e-3);
    }
  } else if (b->base == TPS_CAL_BASE_XW8) {
    c.np = TPS_XW8_NPAR;
    for (int j = 0; j < c.np; j++) {
      double v = b->w8.p[j];
      x[j] = c.x0[j] = log(v > 0 ? v : 1e-3);
    }
  } else {
    return TPS_EINVAL;
  }
  int st = tps_robust_fit(x, c.np, n + (size_t)c.np, bresid, &c, TPS_LOO_LOSS_SCALE, 200, 2, NULL);
  bunpack(&c, x);
  return st;
}

/* ------------------------------------------------------------------ regimes and residuals */

/* Regime of m rows under a base: rows whose base time comes from the same kernel
 * configuration.  Under xw8 every step of the kernels' dispatch is a regime (the same launches:
 * kernel, tile, split-K or grid, waves, head; tps_xw8_regime), whose time is constant inside it, so a
 * measured row of a regime gives that regime's time; one row is a regime of its own there
 * (our stream kernel runs one row slower than 2..16: 5.47 vs 5.22 us on the H200 table),
 * neither interpolated from nor into.  Under xgemm (cuBLASLt's own choice of tiles is not
 * the model's) all rows are one regime. */
#define REGIME_ONE_ROW (-1L)
static long regime_of(int base, long m, long n, long k, const tps_gpu *gpu) {
  if (base != TPS_CAL_BASE_XW8 || !gpu || gpu->sms < 1) return 0;
  if (m <= 1) return REGIME_ONE_ROW;
  return tps_xw8_regime(gpu, m, n, k); /* >= 0: the launches of the kernels' rule (model/core/w8plan.h) */
}

/* r(m): the residuals of the points of m's regime (linear in log m between them, flat
 * outside them) when it has any; else linear in log m between the points of the other
 * regimes except the single row, flat outside.  skip: a point left out (-1 none). */
static double resid_at(int base, const tps_gpu *gpu, long n, long k, const long *rows, const double *lres, size_t np,
                       long skip, double m) {
  long mr = (long)ceil(m - 1e-9), reg = regime_of(base, mr, n, k, gpu);
  int same = 0;
  for (size_t i = 0; i < np; i++)
    if ((long)i != skip && regime_of(base, rows[i], n, k, gpu) == reg) same = 1;
  if (reg == REGIME_ONE_ROW && !same) reg = 0, same = 0; /* no one-row point: from the rest */
  double lm = log(m);
  long lo = -1, hi = -1;
  for (size_t i = 0; i < np; i++) {
    if ((long)i == skip) continue;
    long ri = regime_of(base, rows[i], n, k, gpu);
    if (same ? ri != reg : ri == REGIME_ONE_ROW) continue;
    if ((double)rows[i] <= m) lo = (long)i;
    if ((double)rows[i] >= m && hi < 0) hi = (long)i;
  }
  if (lo < 0 && hi < 0) {
    /* only the single-row point: use it */
    for (size_t i = 0; i < np; i++) if ((long)i != skip) return lres[i];
    return 0.0;
  }
  if (lo < 0) return lres[hi];
  if (hi < 0 || hi == lo) return lres[lo];
  double a = log((double)rows[lo]), b = log((double)rows[hi]);
  return lres[lo] + (lm - a) / (b - a) * (lres[hi] - lres[lo]);
}

/* ------------------------------------------------------------------ sweep points */

/* The candidate rows: 2^j and 3 * 2^(j-1) (two per octave: 1, 2, 3, 4, 6, 8, 12, ...) up to
 * t_max, and t_max itself. */
static size_t grid_rows(long t_max, long *g, size_t cap) {
  size_t n = 0;
  for (long p = 1; p <= t_max && n < cap; p *= 2) {
    g[n++] = p;
    if (p >= 2 && p + p / 2 <= t_max && n < cap) g[n++] = p + p / 2;
  }
  if (n && g[n - 1] < t_max && n < cap) g[n++] = t_max;
  return n;
}

static int has_row(const long *rows, size_t n, long r) {
  for (size_t i = 0; i < n; i++) if (rows[i] == r) return 1;
  return 0;
}

/* Stepwise base (xw8): the top row of every regime from 2 to t_max (the most rows one
 * kernel configuration serves), ascending. */
static size_t stair_tops(const basem *b, long t_max, long *tops, size_t cap) {
  size_t n = 0;
  long prev = regime_of(b->base, 2, b->n, b->k, b->gpu);
  for (long m = 3; m <= t_max + 1 && n < cap; m++) {
    long r = m <= t_max ? regime_of(b->base, m, b->n, b->k, b->gpu) : prev + 1;
    if (r != prev) tops[n++] = m - 1;
    prev = r;
  }
  return n;
}

/* Add the candidate farthest (in log rows) from every row chosen so far. */
static int add_farthest(long *rows, size_t *n, const long *cand, size_t nc) {
  double best = -1;
  long pick = 0;
  for (size_t i = 0; i < nc; i++) {
    if (has_row(rows, *n, cand[i])) continue;
    double d = INFINITY;
    for (size_t j = 0; j < *n; j++) {
      double e = fabs(log((double)cand[i] / (double)rows[j]));
      if (e < d) d = e;
    }
    if (d > best) { best = d; pick = cand[i]; }
  }
  if (best < 0) return 0;
  rows[(*n)++] = pick;
  return 1;
}

size_t tps_cal_sweep_rows(const tps_cal_sweep_req *q, long *rows, size_t cap) {
  if (!q || !rows || cap < 2 || q->t_max < 2 || q->npoints < 2) return 0;
  size_t want = (size_t)q->npoints < cap ? (size_t)q->npoints : cap;
  long grid[128];
  size_t ng = grid_rows(q->t_max, grid, 128);
  basem b;
  memset(&b, 0, sizeof b);
  b.path = q->path;
  b.k = q->k;
  b.n = q->n;
  b.gpu = q->gpu;
  b.h.kind = TPS_XG_FLUSHED;
  b.base = base_of(q->path, q->gpu);
  if (b.base == TPS_CAL_BASE_XGEMM) tps_xg_prior(&b.xg, (tps_xg_path)tps_cal_xg_path(q->path));
  if (b.base == TPS_CAL_BASE_XW8) tps_xw8_prior(&b.w8, q->gpu);
  size_t n = 0;
  rows[n++] = 1;
  rows[n++] = q->t_max;
  if (b.base == TPS_CAL_BASE_XW8) {
    /* one row per stream-kernel regime (token tile, launches: up to 128 rows), then the tops
     * of the other regimes of the kernels' rule (split, stream-K, wgmma forms and waves) spread
     * in log rows */
    long tops[256], wg[256];
    size_t nt = stair_tops(&b, q->t_max, tops, 256), nw = 0;
    for (size_t i = 0; i < nt && n < want; i++) {
      if (tops[i] <= 128) {
        if (!has_row(rows, n, tops[i])) rows[n++] = tops[i];
      } else {
        wg[nw++] = tops[i];
      }
    }
    while (n < want && add_farthest(rows, &n, wg, nw)) {}
    while (n < want && add_farthest(rows, &n, grid, ng)) {}
    gsl_sort_long(rows, 1, n);
    return n;
  }
  double prior[128];
  int have_prior = b.base != TPS_CAL_BASE_NONE;
  for (size_t i = 0; i < ng && have_prior; i++) {
    prior[i] = base_eval(&b, (double)grid[i]);
    if (!(prior[i] > 0)) have_prior = 0;
  }
  if (!have_prior) {
    /* no model of this path on this GPU: spread in log rows */
    while (n < want && add_farthest(rows, &n, grid, ng)) {}
    gsl_sort_long(rows, 1, n);
    return n;
  }
  /* where monotone interpolation of the chosen points misses the prior curve most */
  while (n < want) {
    gsl_sort_long(rows, 1, n);
    double x[TPS_CAL_MAX_PTS], y[TPS_CAL_MAX_PTS];
    for (size_t i = 0; i < n; i++) { x[i] = (double)rows[i]; y[i] = base_eval(&b, x[i]); }
    tps_loo_curve *c = tps_loo_curve_measured(x, y, n);
    if (!c) break;
    double worst = -1;
    long pick = 0;
    for (size_t i = 0; i < ng; i++) {
      if (has_row(rows, n, grid[i])) continue;
      double e = fabs(log(tps_loo_curve_eval(c, (double)grid[i]) / prior[i]));
      if (e > worst) { worst = e; pick = grid[i]; }
    }
    tps_loo_curve_free(c);
    if (worst < 0) break;
    rows[n++] = pick;
  }
  gsl_sort_long(rows, 1, n);
  return n;
}

size_t tps_cal_breakeven_rows(const long *have, size_t nhave, const int *tps, const double *be, size_t ntps,
                              long t_max, double near, long *rows, size_t cap) {
  size_t n = 0;
  if (!(near >= 1)) near = 1;
  for (size_t i = 0; i < ntps; i++) {
    if (!(be[i] >= 1) || tps[i] < 1) continue;
    long t = (long)ceil(be[i]);
    if (t > t_max) t = t_max;
    long cand[2] = {t, (t + tps[i] - 1) / tps[i]};
    for (int c = 0; c < 2; c++) {
      int close = 0;
      for (size_t j = 0; j < nhave && !close; j++)
        if (fabs(log((double)cand[c] / (double)have[j])) < log(near)) close = 1;
      for (size_t j = 0; j < n && !close; j++)
        if (fabs(log((double)cand[c] / (double)rows[j])) < log(near)) close = 1;
      if (!close && n < cap) rows[n++] = cand[c];
    }
  }
  gsl_sort_long(rows, 1, n);
  return n;
}

size_t tps_cal_gather_sizes(double out_bytes, int tp, long t_max, int npoints, double cap_per_rank, long *sizes,
                            size_t cap) {
  if (!(out_bytes > 0) || tp < 1 || t_max < 1 || npoints < 1 || !sizes || !cap) return 0;
  const long unit = 16L * tp;
  double tmax = (double)t_max;
  if (cap_per_rank > 0) {
    double tc = floor(cap_per_rank * tp / out_bytes);
    if (tc < tmax) tmax = tc;
  }
  if (tmax < 1) return 0;
  size_t n = 0;
  for (int j = 0; j < npoints && n < cap; j++) {
    double T = npoints > 1 && j < npoints - 1 ? floor(exp(log(tmax) * (double)j / (double)(npoints - 1)) + 0.5) : tmax;
    long s = (long)floor(T * out_bytes / (double)unit) * unit;
    if (s < unit) s = unit;
    if (cap_per_rank > 0 && (double)(s / tp) > cap_per_rank) s -= unit;
    if (s < unit) continue;
    if (n == 0 || s > sizes[n - 1]) sizes[n++] = s;
  }
  return n;
}

/* ------------------------------------------------------------------ calibrated GEMM */

/* The Steffen curve of the points (skip: one left out). */
static tps_loo_curve *steffen_build(const long *rows, const double *t, size_t n, long skip) {
  double xs[TPS_CAL_MAX_PTS], ts[TPS_CAL_MAX_PTS];
  size_t m = 0;
  for (size_t j = 0; j < n; j++) {
    if ((long)j == skip) continue;
    xs[m] = (double)rows[j];
    ts[m] = t[j];
    m++;
  }
  return tps_loo_curve_measured(xs, ts, m);
}

static double steffen_at(const tps_loo_curve *c, double m) { return tps_loo_curve_eval(c, m); }

static double shaped_at(const tps_cal_gemm *g, const basem *b, const double *lres, long skip, double m) {
  double t = base_eval(b, m);
  if (!(t > 0)) return NAN;
  t *= exp(resid_at(b->base, b->gpu, b->n, b->k, g->rows, lres, g->npts, skip, m));
  return t;
}

static void basem_of(const tps_cal_gemm *g, basem *b) {
  memset(b, 0, sizeof *b);
  b->base = g->base;
  b->path = g->path;
  b->k = g->k;
  b->n = g->n;
  b->gpu = &g->gpu;
  b->h.kind = g->harness;
  b->xg = g->xg;
  b->w8 = g->w8;
}

static int fit_impl(tps_cal_gemm *g, int path, long k, long n, const tps_gpu *gpu, const tps_xg_model *start,
                    int harness, const long *rows, const double *t_us, size_t npts, int method, int lopo,
                    const tps_cal_gemm *frozen) {
  memset(g, 0, sizeof *g);
  g->lopo_med[0] = g->lopo_med[1] = g->lopo_max[0] = g->lopo_max[1] = NAN;
  g->w90 = g->w90_by[0] = g->w90_by[1] = NAN;
  g->base_status = TPS_NA;
  if (!tps_path_get(path) || k < 1 || n < 1 || method < 0 || method > TPS_CAL_AUTO ||
      (harness != TPS_XG_FLUSHED && harness != TPS_XG_AIC))
    return TPS_EINVAL;
  g->harness = harness;
  if (npts < 2) return TPS_ETOOFEW;
  if (npts > TPS_CAL_MAX_PTS || !rows || !t_us) return TPS_EINVAL;
  for (size_t i = 0; i < npts; i++) {
    if (rows[i] < 1 || !(t_us[i] > 0) || !isfinite(t_us[i])) return TPS_EBADDATA;
    if (i && rows[i] <= rows[i - 1]) return TPS_EBADDATA;
  }
  g->path = path;
  g->k = k;
  g->n = n;
  g->npts = npts;
  memcpy(g->rows, rows, npts * sizeof *rows);
  memcpy(g->t_us, t_us, npts * sizeof *t_us);
  if (gpu) { g->gpu = *gpu; g->have_gpu = 1; }
  double x[TPS_CAL_MAX_PTS];
  for (size_t i = 0; i < npts; i++) x[i] = (double)rows[i];
  g->steffen = steffen_build(rows, t_us, npts, -1);
  if (!g->steffen) return TPS_ENOMEM;

  /* the base: start parameters, then fitted to every point */
  basem start_b, fit_b;
  memset(&start_b, 0, sizeof start_b);
  start_b.base = base_of(path, gpu);
  start_b.path = path;
  start_b.k = k;
  start_b.n = n;
  start_b.gpu = &g->gpu;
  start_b.h.kind = harness;
  if (start_b.base == TPS_CAL_BASE_XGEMM) {
    if (start && start->path == (tps_xg_path)tps_cal_xg_path(path)) start_b.xg = *start;
    else tps_xg_prior(&start_b.xg, (tps_xg_path)tps_cal_xg_path(path));
  } else if (start_b.base == TPS_CAL_BASE_XW8) {
    tps_xw8_prior(&start_b.w8, &g->gpu);
  }
  g->base = start_b.base;
  const int keep = frozen && frozen->base == g->base && frozen->base != TPS_CAL_BASE_NONE && frozen->base_status == TPS_OK;
  if (keep) {
    /* the base of an earlier fit, unchanged: only the residuals take the new points */
    fit_b = start_b;
    fit_b.xg = frozen->xg;
    fit_b.w8 = frozen->w8;
  }
  if (g->base != TPS_CAL_BASE_NONE && (npts >= 3 || keep)) {
    g->base_status = keep ? TPS_OK : base_fit(&fit_b, &start_b, rows, t_us, npts, -1);
    if (g->base_status == TPS_OK) {
      g->xg = fit_b.xg;
      g->w8 = fit_b.w8;
      for (size_t i = 0; i < npts; i++) {
        double t = base_eval(&fit_b, x[i]);
        if (!(t > 0)) { g->base_status = TPS_EBADDATA; break; }
        g->lres[i] = log(t_us[i] / t);
      }
    }
  } else if (g->base != TPS_CAL_BASE_NONE) {
    g->base_status = TPS_ETOOFEW;
  }
  const int shaped_ok = g->base != TPS_CAL_BASE_NONE && g->base_status == TPS_OK;

  /* leave one interior point out: refit without it, predict it */
  double le[2][TPS_CAL_MAX_PTS];
  size_t nl = 0;
  for (size_t i = 1; lopo && i + 1 < npts; i++) {
    tps_loo_curve *c = steffen_build(rows, t_us, npts, (long)i);
    le[0][nl] = c ? log(steffen_at(c, x[i]) / t_us[i]) : NAN;
    tps_loo_curve_free(c);
    le[1][nl] = NAN;
    if (shaped_ok) {
      basem b = fit_b;
      if (keep || base_fit(&b, &start_b, rows, t_us, npts, (long)i) == TPS_OK) {
        double lr[TPS_CAL_MAX_PTS];
        int ok = 1;
        for (size_t j = 0; j < npts; j++) {
          double t = base_eval(&b, x[j]);
          if (!(t > 0)) ok = 0;
          else lr[j] = log(t_us[j] / t);
        }
        if (ok) le[1][nl] = log(shaped_at(g, &b, lr, (long)i, x[i]) / t_us[i]);
      }
    }
    nl++;
  }
  g->lopo_n = nl;
  for (int mth = 0; mth < 2; mth++) {
    double rel[TPS_CAL_MAX_PTS];
    size_t k2 = 0;
    for (size_t i = 0; i < nl; i++) if (isfinite(le[mth][i])) rel[k2++] = expm1(le[mth][i]);
    if (k2 && k2 == nl) {
      tps_loo_err s = tps_loo_summary(rel, k2);
      g->lopo_med[mth] = s.med_abs;
      g->lopo_max[mth] = s.max_abs;
    }
  }
  /* auto: shaped wherever the path has a base on this GPU (calib.h says why) */
  g->method = (method == TPS_CAL_AUTO || method == TPS_CAL_SHAPED) && shaped_ok ? TPS_CAL_SHAPED : TPS_CAL_STEFFEN;
  for (int mth = 0; mth < 2; mth++) {
    g->w90_by[mth] = nl ? tps_loo_quantile_abs(le[mth], nl, 0.9, TPS_CAL_MIN_W) : TPS_CAL_MIN_W;
    if (!isfinite(g->w90_by[mth])) g->w90_by[mth] = TPS_CAL_MIN_W;
  }
  if (!shaped_ok) g->w90_by[TPS_CAL_SHAPED] = NAN;
  g->w90 = g->w90_by[g->method];
  return TPS_OK;
}

int tps_cal_gemm_fit(tps_cal_gemm *g, int path, long k, long n, const tps_gpu *gpu, const tps_xg_model *start,
                     int harness, const long *rows, const double *t_us, size_t npts, int method) {
  return fit_impl(g, path, k, n, gpu, start, harness, rows, t_us, npts, method, 1, NULL);
}

int tps_cal_gemm_fit_quick(tps_cal_gemm *g, int path, long k, long n, const tps_gpu *gpu, const tps_xg_model *start,
                           int harness, const long *rows, const double *t_us, size_t npts, int method) {
  return fit_impl(g, path, k, n, gpu, start, harness, rows, t_us, npts, method, 0, NULL);
}

int tps_cal_gemm_fit_frozen(tps_cal_gemm *g, const tps_cal_gemm *base, const long *rows, const double *t_us, size_t npts,
                            int lopo) {
  if (!base) { memset(g, 0, sizeof *g); return TPS_EINVAL; }
  return fit_impl(g, base->path, base->k, base->n, base->have_gpu ? &base->gpu : NULL, NULL, base->harness, rows, t_us, npts,
                  base->method, lopo, base);
}

double tps_cal_gemm_time_by(const tps_cal_gemm *g, int method, double m) {
  if (!g || !g->steffen || !(m >= 1)) return NAN;
  if (method == TPS_CAL_STEFFEN) return steffen_at(g->steffen, m);
  if (method != TPS_CAL_SHAPED || g->base == TPS_CAL_BASE_NONE || g->base_status != TPS_OK) return NAN;
  basem b;
  basem_of(g, &b);
  return shaped_at(g, &b, g->lres, -1, m);
}

double tps_cal_gemm_time_us(const tps_cal_gemm *g, double m) { return g ? tps_cal_gemm_time_by(g, g->method, m) : NAN; }

int tps_cal_gemm_use_method(tps_cal_gemm *g, int method) {
  if (!g || !g->steffen || (method != TPS_CAL_STEFFEN && method != TPS_CAL_SHAPED)) return TPS_EINVAL;
  if (method == TPS_CAL_SHAPED && (g->base == TPS_CAL_BASE_NONE || g->base_status != TPS_OK)) return TPS_NA;
  g->method = method;
  g->w90 = isfinite(g->w90_by[method]) ? g->w90_by[method] : TPS_CAL_MIN_W;
  return TPS_OK;
}

void tps_cal_gemm_free(tps_cal_gemm *g) {
  if (!g) return;
  tps_loo_curve_free(g->steffen);
  g->steffen = NULL;
}

size_t tps_cal_gemm_score(const tps_cal_gemm *g, const long *rows, const double *t_us, size_t n, double *rel) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    rel[i] = NAN;
    int swept = 0;
    for (size_t j = 0; j < g->npts; j++) if (g->rows[j] == rows[i]) swept = 1;
    if (swept || !(t_us[i] > 0)) continue;
    rel[i] = tps_cal_gemm_time_us(g, (double)rows[i]) / t_us[i] - 1.0;
    if (isfinite(rel[i])) k++;
  }
  return k;
}

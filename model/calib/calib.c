/* calib.c: sweep points, calibrated GEMM model, break-even per config (see calib.h). */
#include "model/calib/calib.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
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
  return path == TPS_PATH_DENSE_BF16 ? TPS_XG_BF16 : path == TPS_PATH_NATIVE_FP8 ? TPS_XG_FP8 : -1;
}

/* Which structural model the shaped method uses for a path on a GPU. */
static int base_of(int path, const tps_gpu *gpu) {
  if (!gpu) return TPS_CAL_BASE_NONE;
  int xp = tps_cal_xg_path(path);
  if (xp >= 0) return tps_xg_supported(gpu, (tps_xg_path)xp) ? TPS_CAL_BASE_XGEMM : TPS_CAL_BASE_NONE;
  /* tps_xw8 follows the SM90 dispatch (stream / wgmma); other GPUs run the mma kernel */
  if (path == TPS_PATH_W8A16 && gpu->cc_major == 9 && gpu->cc_minor == 0 && gpu->sms > 0) return TPS_CAL_BASE_XW8;
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
 * configuration.  Under xw8 every step of the dispatch is a regime (stream kernel: token
 * tile and launches; wgmma: token tile and waves), whose time is constant inside it, so a
 * measured row of a regime gives that regime's time; one row is a regime of its own there
 * (our stream kernel runs one row slower than 2..16: 5.47 vs 5.22 us on the H200 table),
 * neither interpolated from nor into.  Under xgemm (cuBLASLt's own choice of tiles is not
 * the model's) all rows are one regime. */
#define REGIME_ONE_ROW (-1L)
static long regime_of(int base, long m, long n, const tps_gpu *gpu) {
  if (base != TPS_CAL_BASE_XW8 || !gpu || gpu->sms < 1) return 0;
  if (m <= 1) return REGIME_ONE_ROW;
  if (m <= TPS_XW8_STREAM_MAX) {
    long bt = m <= 16 ? 16 : m <= 32 ? 32 : m <= 48 ? 48 : m <= 64 ? 64 : 128;
    return 1 + bt * 16 + (m + bt - 1) / bt;
  }
  long bt = m <= 1024 ? 128 : 256;
  long blocks = (n + 127) / 128 * ((m + bt - 1) / bt);
  return 100000 + bt * 1000 + (blocks + gpu->sms - 1) / gpu->sms;
}

/* r(m): the residuals of the points of m's regime (linear in log m between them, flat
 * outside them) when it has any; else linear in log m between the points of the other
 * regimes except the single row, flat outside.  skip: a point left out (-1 none). */
static double resid_at(int base, const tps_gpu *gpu, long n, const long *rows, const double *lres, size_t np,
                       long skip, double m) {
  long mr = (long)ceil(m - 1e-9), reg = regime_of(base, mr, n, gpu);
  int same = 0;
  for (size_t i = 0; i < np; i++)
    if ((long)i != skip && regime_of(base, rows[i], n, gpu) == reg) same = 1;
  if (reg == REGIME_ONE_ROW && !same) reg = 0, same = 0; /* no one-row point: from the rest */
  double lm = log(m);
  long lo = -1, hi = -1;
  for (size_t i = 0; i < np; i++) {
    if ((long)i == skip) continue;
    long ri = regime_of(base, rows[i], n, gpu);
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

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static int has_row(const long *rows, size_t n, long r) {
  for (size_t i = 0; i < n; i++) if (rows[i] == r) return 1;
  return 0;
}

/* Stepwise base (xw8): the top row of every regime from 2 to t_max (the most rows one
 * kernel configuration serves), ascending. */
static size_t stair_tops(const basem *b, long t_max, long *tops, size_t cap) {
  size_t n = 0;
  long prev = regime_of(b->base, 2, b->n, b->gpu);
  for (long m = 3; m <= t_max + 1 && n < cap; m++) {
    long r = m <= t_max ? regime_of(b->base, m, b->n, b->gpu) : prev + 1;
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
    /* one row per stream-kernel regime (token tile, launches), then the wgmma regimes:
     * the 128-token tile's, then the 256-token tile's waves spread in log rows */
    long tops[256], wg[256];
    size_t nt = stair_tops(&b, q->t_max, tops, 256), nw = 0;
    for (size_t i = 0; i < nt && n < want; i++) {
      if (tops[i] <= TPS_XW8_STREAM_MAX || tops[i] <= 1024) {
        if (!has_row(rows, n, tops[i])) rows[n++] = tops[i];
      } else {
        wg[nw++] = tops[i];
      }
    }
    while (n < want && add_farthest(rows, &n, wg, nw)) {}
    while (n < want && add_farthest(rows, &n, grid, ng)) {}
    qsort(rows, n, sizeof *rows, cmp_long);
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
    qsort(rows, n, sizeof *rows, cmp_long);
    return n;
  }
  /* where monotone interpolation of the chosen points misses the prior curve most */
  while (n < want) {
    qsort(rows, n, sizeof *rows, cmp_long);
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
  qsort(rows, n, sizeof *rows, cmp_long);
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
  qsort(rows, n, sizeof *rows, cmp_long);
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
  t *= exp(resid_at(b->base, b->gpu, b->n, g->rows, lres, g->npts, skip, m));
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

/* ------------------------------------------------------------------ break-even */

double tps_cal_gemm_fn(double m, void *ctx) { return tps_cal_gemm_time_us((const tps_cal_gemm *)ctx, m); }
double tps_cal_curve_fn(double x, void *ctx) { return tps_loo_curve_eval((const tps_loo_curve *)ctx, x); }

long tps_cal_pow2_ceil(double t) {
  if (!(t > 0)) return 0;
  long p = 1;
  while ((double)p < t && p < (1L << 40)) p <<= 1;
  return p;
}

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
  out->threshold = tps_cal_pow2_ceil(out->breakeven);
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
  qsort(sw, ns, sizeof *sw, cmp_long);
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
    qsort(sw, ns, sizeof *sw, cmp_long);
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

/* robust.c: robust fitter, error summaries, measured curves and break-even (see robust.h). */
#include "model/numeric/robust.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>
#include "model/core/status.h"

/* ------------------------------------------------------------------ robust fit */

typedef struct {
  tps_rf_resid f;
  void *ctx;
  double c;
  size_t n;
  double *r, *w;
  int failed;
} rfctx;

static double rho(double r, double c) { return 2.0 * c * c * (sqrt(1.0 + (r / c) * (r / c)) - 1.0); }

static int rf_f(const gsl_vector *x, void *vp, gsl_vector *out) {
  rfctx *c = vp;
  if (c->f(x->data, c->r, c->w, c->ctx)) { c->failed = 1; return GSL_EBADFUNC; }
  for (size_t i = 0; i < c->n; i++) {
    double r = isfinite(c->r[i]) ? c->r[i] : 10.0;
    double v = sqrt(2.0 * c->w[i] * rho(r, c->c));
    gsl_vector_set(out, i, r < 0 ? -v : v);
  }
  return GSL_SUCCESS;
}

static double rf_loss(rfctx *c, const double *x) {
  if (c->f(x, c->r, c->w, c->ctx)) return INFINITY;
  double s = 0;
  for (size_t i = 0; i < c->n; i++) s += c->w[i] * rho(isfinite(c->r[i]) ? c->r[i] : 10.0, c->c);
  return s;
}

static int rf_run(rfctx *c, double *x, int np, int max_iter) {
  gsl_multifit_nlinear_fdf fdf;
  memset(&fdf, 0, sizeof fdf);
  fdf.f = rf_f;
  fdf.n = c->n;
  fdf.p = (size_t)np;
  fdf.params = c;
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
  prm.h_df = 1e-4;
  gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, c->n, (size_t)np);
  if (!w) return TPS_ENOMEM;
  gsl_vector_view xv = gsl_vector_view_array(x, (size_t)np);
  int info = 0, st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
  if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-8, 1e-8, 0.0, NULL, NULL, &info, w);
  gsl_vector *sol = gsl_multifit_nlinear_position(w);
  int ok = 1;
  for (int j = 0; j < np; j++) if (!isfinite(gsl_vector_get(sol, (size_t)j))) ok = 0;
  if (ok) for (int j = 0; j < np; j++) x[j] = gsl_vector_get(sol, (size_t)j);
  gsl_multifit_nlinear_free(w);
  return ok ? TPS_OK : TPS_ENOCONV;
}

int tps_robust_fit(double *x, int np, size_t n, tps_rf_resid f, void *ctx, double c, int max_iter, int nstarts,
                   double *loss) {
  if (np < 1 || n < (size_t)np) return TPS_ETOOFEW;
  rfctx rc = {f, ctx, c, n, malloc(n * sizeof(double)), malloc(n * sizeof(double)), 0};
  double *x0 = malloc((size_t)np * sizeof *x0), *xt = malloc((size_t)np * sizeof *xt),
         *xb = malloc((size_t)np * sizeof *xb);
  if (!rc.r || !rc.w || !x0 || !xt || !xb) {
    free(rc.r); free(rc.w); free(x0); free(xt); free(xb);
    return TPS_ENOMEM;
  }
  memcpy(x0, x, (size_t)np * sizeof *x);
  double best = rf_loss(&rc, x0);
  memcpy(xb, x0, (size_t)np * sizeof *x);
  /* starts: the given point, then (nstarts > 1) a deterministic perturbation of it (+-0.4
   * in log space, alternating); each run is followed by one restart from its own end point
   * (the min over tilings has kinks where the trust region can stall). */
  for (int s = 0; s < (nstarts > 1 ? 2 : 1); s++) {
    for (int j = 0; j < np; j++) xt[j] = x0[j] + (s == 0 ? 0.0 : (((j + s) % 2) ? 0.4 : -0.4));
    for (int rep = 0; rep < 2; rep++) {
      if (rf_run(&rc, xt, np, max_iter) == TPS_ENOMEM) { best = NAN; break; }
      double l = rf_loss(&rc, xt);
      if (l < best) { best = l; memcpy(xb, xt, (size_t)np * sizeof *x); }
    }
  }
  memcpy(x, xb, (size_t)np * sizeof *x);
  if (loss) *loss = best;
  free(rc.r); free(rc.w); free(x0); free(xt); free(xb);
  if (isnan(best)) return TPS_ENOMEM;
  return isfinite(best) ? TPS_OK : TPS_ENOCONV;
}

/* ------------------------------------------------------------------ summaries */

tps_loo_err tps_loo_summary(const double *rel, size_t n) {
  tps_loo_err s = {0, NAN, NAN, NAN};
  double *a = malloc((n ? n : 1) * sizeof *a);
  if (!a) return s;
  double sl = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(rel[i])) { a[s.n++] = fabs(rel[i]); sl += log1p(rel[i]); }
  if (s.n) {
    gsl_sort(a, 1, s.n);
    s.med_abs = gsl_stats_median_from_sorted_data(a, 1, s.n);
    s.max_abs = a[s.n - 1];
    s.mean_log = sl / (double)s.n;
  }
  free(a);
  return s;
}

double tps_loo_quantile_abs(const double *v, size_t n, double q, double floor_value) {
  double *a = malloc((n ? n : 1) * sizeof *a);
  size_t k = 0;
  if (!a) return floor_value;
  for (size_t i = 0; i < n; i++) if (isfinite(v[i])) a[k++] = fabs(v[i]);
  double s = floor_value;
  if (k) {
    gsl_sort(a, 1, k);
    double x = gsl_stats_quantile_from_sorted_data(a, 1, k, q);
    if (x > s) s = x;
  }
  free(a);
  return s;
}

/* ------------------------------------------------------------------ curves */

struct tps_loo_curve {
  size_t n;
  double *x, *y; /* log x, log t */
  gsl_interp *interp;
  gsl_interp_accel *acc;
  double (*fn)(double, void *);
  void *ctx;
};

#define TWIN_MIN_X 64.0 /* below, consecutive rows are a dense sweep, not twins */
#define TWIN_GAP 8.0    /* the other neighbours at least this far */
static int is_twin(const double *x, const double *t, size_t n, size_t i) {
  if (n <= 2 || i + 1 >= n || fabs(x[i + 1] - x[i] - 1.0) > 1e-9 || x[i] < TWIN_MIN_X || !(t[i + 1] < t[i])) return 0;
  return (i == 0 || x[i] - x[i - 1] >= TWIN_GAP) && (i + 2 >= n || x[i + 2] - x[i + 1] >= TWIN_GAP);
}

size_t tps_twins_merge(const double *x, const double *t, size_t n, double *xo, double *to, double *spread) {
  size_t k = 0;
  if (spread) *spread = 0;
  for (size_t i = 0; i < n; i++, k++) {
    if (is_twin(x, t, n, i)) {
      double d = 0.5 * fabs(log(t[i + 1] / t[i]));
      xo[k] = i + 2 == n ? x[i + 1] : x[i]; /* the aligned row; the last row at the table's end */
      to[k] = sqrt(t[i] * t[i + 1]);
      if (spread && d > *spread) *spread = d;
      i++;
      continue;
    }
    xo[k] = x[i];
    to[k] = t[i];
  }
  return k;
}

tps_loo_curve *tps_loo_curve_measured(const double *x, const double *t, size_t n) {
  if (n < 2) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] > 0) || !(t[i] > 0) || !isfinite(x[i]) || !isfinite(t[i])) return NULL;
    if (i && x[i] <= x[i - 1]) return NULL;
  }
  tps_loo_curve *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->x = malloc(n * sizeof *c->x);
  c->y = malloc(n * sizeof *c->y);
  c->acc = gsl_interp_accel_alloc();
  if (!c->x || !c->y || !c->acc) { tps_loo_curve_free(c); return NULL; }
  n = tps_twins_merge(x, t, n, c->x, c->y, NULL);
  c->n = n;
  c->interp = gsl_interp_alloc(n >= 3 ? gsl_interp_steffen : gsl_interp_linear, n);
  if (!c->interp) { tps_loo_curve_free(c); return NULL; }
  for (size_t i = 0; i < n; i++) { c->x[i] = log(c->x[i]); c->y[i] = log(c->y[i]); }
  if (gsl_interp_init(c->interp, c->x, c->y, n) != GSL_SUCCESS) { tps_loo_curve_free(c); return NULL; }
  return c;
}

tps_loo_curve *tps_loo_curve_fn(double (*fn)(double x, void *ctx), void *ctx) {
  if (!fn) return NULL;
  tps_loo_curve *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fn = fn;
  c->ctx = ctx;
  return c;
}

double tps_loo_curve_eval(const tps_loo_curve *c, double x) {
  if (!c || !(x > 0)) return NAN;
  if (c->fn) return c->fn(x, c->ctx);
  double lx = log(x);
  if (lx <= c->x[0]) return exp(c->y[0]);
  size_t n = c->n;
  if (lx >= c->x[n - 1]) {
    double s = (c->y[n - 1] - c->y[n - 2]) / (c->x[n - 1] - c->x[n - 2]);
    return exp(c->y[n - 1] + s * (lx - c->x[n - 1]));
  }
  return exp(gsl_interp_eval(c->interp, c->x, c->y, lx, c->acc));
}

int tps_loo_curve_covers(const tps_loo_curve *c, double x) {
  if (!c) return 0;
  if (c->fn) return 1;
  double lx = log(x);
  return lx >= c->x[0] - 1e-12 && lx <= c->x[c->n - 1] + 1e-12;
}

void tps_loo_curve_free(tps_loo_curve *c) {
  if (!c) return;
  if (c->interp) gsl_interp_free(c->interp);
  if (c->acc) gsl_interp_accel_free(c->acc);
  free(c->x);
  free(c->y);
  free(c);
}

/* ------------------------------------------------------------------ break-even */

int tps_loo_split_wins(const tps_loo_curve *gemm, const tps_loo_curve *gather, int tp, double out_bytes, double T) {
  double rows = ceil(T / tp);
  double repl = tps_loo_curve_eval(gemm, T);
  double split = tps_loo_curve_eval(gemm, rows) + tps_loo_curve_eval(gather, T * out_bytes);
  return split < repl;
}

double tps_loo_breakeven(const tps_loo_curve *gemm, const tps_loo_curve *gather, int tp, double out_bytes,
                         double t_max) {
  if (!gemm || !gather || tp < 2 || !(out_bytes > 0) || !(t_max >= 1)) return NAN;
  /* grid: 64 points per octave, rounded to distinct integers (every integer up to ~92) */
  double last_lose = 0, next_win = 0, prev = 0;
  for (double lt = 0;; lt += 1.0 / 64.0) {
    double T = floor(exp2(lt) + 0.5);
    if (T > t_max) T = t_max;
    if (T != prev) {
      if (!tps_loo_split_wins(gemm, gather, tp, out_bytes, T)) { last_lose = T; next_win = 0; }
      else if (!next_win) next_win = T;
      prev = T;
    }
    if (T >= t_max) break;
  }
  if (last_lose >= t_max || !next_win) return 0;
  /* the integers between the last losing grid point and the next one */
  double T = next_win;
  while (T - 1 > last_lose && tps_loo_split_wins(gemm, gather, tp, out_bytes, T - 1)) T -= 1;
  return T;
}

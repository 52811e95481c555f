/* fit.c: fitting the GEMM and all-gather latency models (see fit.h for the method).
 *
 * One engine serves the three kinds of fit: a list of points (series, x, measured_us), a
 * parameter vector theta whose entries each set one field of the gemm or all-gather model
 * (par_target), and the model value of a point.  gsl_multifit_nlinear minimizes the relative
 * residuals; then covariance, intervals, parameters the data cannot identify are fixed at
 * their priors and the fit repeated, and optionally one refit per left-out point.
 * Pure C, no I/O; every failure is a status plus one line in msg. */
#include "fit.h"
#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#define BAD_RESID 1e3      /* residual returned outside the parameter domain (a wall) */
#define DEFAULT_MAX_ITER 400
#define GENERIC_LINK_GBPS 450.0  /* NVLink4, when no GPU is given */
#define GENERIC_HBM_GBPS 3350.0

/* ------------------------------------------------------------------ names and targets */

static const char *const ag_target_names[] = {
  "ag_custom_floor_us", "ag_custom_gbps", "ag_nccl_bw_scale",
  "ag_lat_LL_us", "ag_lat_LL128_us", "ag_lat_Simple_us",
  "ag_busbw_LL_gbps", "ag_busbw_LL128_gbps", "ag_busbw_Simple_gbps"};

const char *tps_fit_target_name(int t) {
  if (t >= 0 && t < TPS_GEMM_NPAR) return tps_gemm_par_names[t];
  if (t >= TPS_FT_AG_CUSTOM_FLOOR && t < TPS_FT_END) return ag_target_names[t - TPS_FT_AG_CUSTOM_FLOOR];
  return NULL;
}

int tps_fit_target_from_name(const char *name) {
  if (!name) return -1;
  for (int t = 0; t < TPS_GEMM_NPAR; t++)
    if (strcmp(name, tps_gemm_par_names[t]) == 0) return t;
  for (int t = TPS_FT_AG_CUSTOM_FLOOR; t < TPS_FT_END; t++)
    if (strcmp(name, ag_target_names[t - TPS_FT_AG_CUSTOM_FLOOR]) == 0) return t;
  return -1;
}

int tps_fit_par_index(const tps_fit *f, const char *name) {
  for (int j = 0; j < f->npar; j++)
    if (strcmp(f->par_name[j], name) == 0) return j;
  return -1;
}

static int fail(char *msg, size_t msgsz, int status, const char *fmt, ...) {
  if (msg && msgsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
  }
  return status;
}

/* ------------------------------------------------------------------ theta <-> models */

/* Copy f's models and write theta into them. -1 when a value is outside its domain. */
static int apply_theta(const tps_fit *f, const double *th, tps_gemm_model *g, tps_ag_model *a) {
  *g = f->gemm;
  *a = f->ag;
  for (int j = 0; j < f->npar; j++) {
    int t = f->par_target[j];
    double v = th[j];
    if (!isfinite(v)) return -1;
    if (t >= 0 && t < TPS_GEMM_NPAR) {
      int positive = t == TPS_GP_BW_GBPS || t == TPS_GP_TFLOPS;
      if (t == TPS_GP_SHARP ? v < 1 : positive ? !(v > 0) : v < 0) return -1;
      g->p[t] = v;
    } else if (t == TPS_FT_AG_CUSTOM_FLOOR) {
      if (v < 0) return -1;
      a->custom_floor_us = v;
    } else if (t == TPS_FT_AG_CUSTOM_GBPS) {
      if (!(v > 0)) return -1;
      a->custom_gbps = v;
    } else if (t == TPS_FT_AG_NCCL_SCALE) {
      if (!(v > 0)) return -1;
      for (int p = 0; p < TPS_NPROTO; p++) a->busbw_gbps[p] = v * f->nccl_busbw_ref[p];
    } else if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) {
      if (v < 0) return -1;
      a->lat_us[t - TPS_FT_AG_LAT0] = v;
    } else if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) {
      if (!(v > 0)) return -1;
      a->busbw_gbps[t - TPS_FT_AG_BW0] = v;
    } else {
      return -1;
    }
  }
  return 0;
}

/* Current value of a target in (g, a). */
static double target_value(const tps_fit *f, int t, const tps_gemm_model *g, const tps_ag_model *a) {
  if (t >= 0 && t < TPS_GEMM_NPAR) return g->p[t];
  if (t == TPS_FT_AG_CUSTOM_FLOOR) return a->custom_floor_us;
  if (t == TPS_FT_AG_CUSTOM_GBPS) return a->custom_gbps;
  if (t == TPS_FT_AG_NCCL_SCALE) {
    for (int p = 0; p < TPS_NPROTO; p++)
      if (f->nccl_busbw_ref[p] > 0) return a->busbw_gbps[p] / f->nccl_busbw_ref[p];
    return NAN;
  }
  if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) return a->lat_us[t - TPS_FT_AG_LAT0];
  if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) return a->busbw_gbps[t - TPS_FT_AG_BW0];
  return NAN;
}

/* Write one value into f's models (fixing a parameter at its prior). */
static void set_target(tps_fit *f, int t, double v) {
  if (t >= 0 && t < TPS_GEMM_NPAR) f->gemm.p[t] = v;
  else if (t == TPS_FT_AG_CUSTOM_FLOOR) f->ag.custom_floor_us = v;
  else if (t == TPS_FT_AG_CUSTOM_GBPS) f->ag.custom_gbps = v;
  else if (t == TPS_FT_AG_NCCL_SCALE)
    for (int p = 0; p < TPS_NPROTO; p++) f->ag.busbw_gbps[p] = v * f->nccl_busbw_ref[p];
  else if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) f->ag.lat_us[t - TPS_FT_AG_LAT0] = v;
  else if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) f->ag.busbw_gbps[t - TPS_FT_AG_BW0] = v;
}

int tps_fit_set_theta(tps_fit *f, const double *theta) {
  tps_gemm_model g;
  tps_ag_model a;
  if (apply_theta(f, theta, &g, &a) != 0) return -1;
  f->gemm = g;
  f->ag = a;
  return 0;
}

/* ------------------------------------------------------------------ model of one point */

static long rows_per_rank(const tps_fit *f, long tokens) { return (tokens + f->tp - 1) / f->tp; }

/* The gather of a split of T tokens: every rank contributes its ceil(T/tp) rows, so the
 * gathered buffer is tp * ceil(T/tp) * out_bytes_per_token (= T * out_bytes_per_token
 * when tp divides T) and the custom backend's cap applies to ceil(T/tp) rows. */
static double gather_of(const tps_fit *f, const tps_ag_model *a, long tokens, int *backend) {
  int used = -1;
  double total = (double)f->tp * (double)rows_per_rank(f, tokens) * f->out_bytes_per_token;
  double t = tps_ag_time_us(a, total, f->tp, f->gather, &used, NULL);
  if (backend) *backend = used;
  return t;
}

static double point_model(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a,
                          const tps_fit_point *pt) {
  switch (f->kind) {
  case TPS_FIT_SPLIT: {
    long T = (long)pt->x;
    if (pt->series == 0) return tps_gemm_time_us(g, &f->shape, T);
    return tps_gemm_time_us(g, &f->shape, rows_per_rank(f, T)) + gather_of(f, a, T, NULL);
  }
  case TPS_FIT_GEMM:
    return tps_gemm_time_us(g, &f->shape, (long)pt->x);
  case TPS_FIT_ALLGATHER:
    return tps_ag_time_us(a, pt->x, f->tp, f->gather, NULL, NULL);
  }
  return NAN;
}

/* ------------------------------------------------------------------ least squares */

typedef struct {
  const tps_fit *f;
  const size_t *idx;  /* active points */
  size_t n;
  tps_gemm_model g;
  tps_ag_model a;
} problem;

static int resid_f(const gsl_vector *x, void *params, gsl_vector *fv) {
  problem *P = params;
  double th[TPS_FIT_MAXPAR];
  for (int j = 0; j < P->f->npar; j++) th[j] = gsl_vector_get(x, (size_t)j);
  int ok = apply_theta(P->f, th, &P->g, &P->a) == 0;
  for (size_t i = 0; i < P->n; i++) {
    const tps_fit_point *pt = &P->f->pt[P->idx[i]];
    double r = BAD_RESID;
    if (ok) {
      double m = point_model(P->f, &P->g, &P->a, pt);
      r = (m - pt->measured_us) / pt->measured_us;
      if (!isfinite(r) || r > BAD_RESID) r = BAD_RESID;
    }
    gsl_vector_set(fv, i, r);
  }
  return GSL_SUCCESS;
}

typedef struct {
  int status;       /* TPS_FIT_* */
  double theta[TPS_FIT_MAXPAR];
  double chi2;
  double covu[TPS_FIT_MAXPAR * TPS_FIT_MAXPAR]; /* (J^T J)^-1, unscaled */
  double rcond;
  int iterations;
} nls_result;

static int run_nls(const tps_fit *f, const size_t *idx, size_t n, const double *x0, int max_iter,
                   int want_cov, nls_result *res) {
  size_t p = (size_t)f->npar;
  problem P = {f, idx, n, f->gemm, f->ag};
  gsl_multifit_nlinear_fdf fdf = {resid_f, NULL, NULL, n, p, &P, 0, 0, 0};
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
  prm.fdtype = GSL_MULTIFIT_NLINEAR_CTRDIFF;
  gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, n, p);
  if (!w) return res->status = TPS_ENOCONV;
  gsl_vector_const_view xv = gsl_vector_const_view_array(x0, p);
  int info = 0, st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
  if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-10, 1e-10, 0.0, NULL, NULL, &info, w);
  if (st == GSL_ENOPROG || st == GSL_EMAXITER) {
    /* no further progress: accept when a looser convergence test holds at this point */
    if (gsl_multifit_nlinear_test(1e-6, 1e-6, 0.0, &info, w) == GSL_SUCCESS && info != 0) st = GSL_SUCCESS;
  }
  res->iterations = (int)gsl_multifit_nlinear_niter(w);
  gsl_vector *r = gsl_multifit_nlinear_residual(w);
  gsl_vector *x = gsl_multifit_nlinear_position(w);
  double chi2 = 0;
  gsl_blas_ddot(r, r, &chi2);
  res->chi2 = chi2;
  for (size_t j = 0; j < p; j++) res->theta[j] = gsl_vector_get(x, j);
  res->status = TPS_OK;
  if (st != GSL_SUCCESS || !isfinite(chi2) || chi2 >= BAD_RESID * BAD_RESID * 0.5) res->status = TPS_ENOCONV;
  if (res->status == TPS_OK && want_cov) {
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *C = gsl_matrix_alloc(p, p);
    gsl_multifit_nlinear_covar(J, 1e-10, C);
    for (size_t a = 0; a < p; a++)
      for (size_t b = 0; b < p; b++) res->covu[a * p + b] = gsl_matrix_get(C, a, b);
    gsl_matrix_free(C);
    double rc = 0;
    gsl_multifit_nlinear_rcond(&rc, w);
    res->rcond = rc;
  }
  gsl_multifit_nlinear_free(w);
  return res->status;
}

/* ------------------------------------------------------------------ setup helpers */

static void add_par(tps_fit *f, int target, double x0, double *x0v) {
  int j = f->npar++;
  f->par_target[j] = target;
  snprintf(f->par_name[j], sizeof f->par_name[j], "%s", tps_fit_target_name(target));
  x0v[j] = x0;
}

static void remove_par(tps_fit *f, int j, double *x0v) {
  for (int k = j; k + 1 < f->npar; k++) {
    f->par_target[k] = f->par_target[k + 1];
    memcpy(f->par_name[k], f->par_name[k + 1], sizeof f->par_name[k]);
    x0v[k] = x0v[k + 1];
  }
  f->npar--;
}

/* Prior value of a target (what it is fixed at when the data cannot identify it). */
typedef struct {
  double v[TPS_FT_END];
} priors;

static void note_fixed(tps_fit *f, const char *name, double v, const char *why) {
  size_t len = strlen(f->fixed_note);
  snprintf(f->fixed_note + len, sizeof f->fixed_note - len, "%s%s=%.4g (%s)", len ? "; " : "", name, v, why);
}

static double median_abs(const double *v, size_t n) {
  double tmp[2 * TPS_FIT_MAXPTS];
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) tmp[m++] = fabs(v[i]);
  if (!m) return NAN;
  gsl_sort(tmp, 1, m);
  return gsl_stats_median_from_sorted_data(tmp, 1, m);
}

/* Fill intervals, model values, residual statistics from a converged result. */
static void finish_fit(tps_fit *f, const nls_result *res, size_t n) {
  int p = f->npar;
  f->dof = (int)n - p;
  f->chi2 = res->chi2;
  double s2 = res->chi2 / f->dof;
  f->tq = gsl_cdf_tdist_Pinv(0.975, f->dof);
  f->iterations = res->iterations;
  f->rcond = res->rcond;
  for (int a = 0; a < p; a++) {
    f->theta[a] = res->theta[a];
    for (int b = 0; b < p; b++) f->cov[a * p + b] = s2 * res->covu[a * p + b];
  }
  for (int a = 0; a < p; a++) {
    f->se[a] = sqrt(f->cov[a * p + a]);
    f->lo95[a] = f->theta[a] - f->tq * f->se[a];
    f->hi95[a] = f->theta[a] + f->tq * f->se[a];
  }
  tps_fit_set_theta(f, f->theta);
  double r[TPS_FIT_MAXPTS], ss = 0, mx = 0;
  for (size_t i = 0; i < f->npts; i++) {
    tps_fit_point *pt = &f->pt[i];
    pt->model_us = point_model(f, &f->gemm, &f->ag, pt);
    pt->rel_resid = (pt->model_us - pt->measured_us) / pt->measured_us;
    r[i] = pt->rel_resid;
    ss += r[i] * r[i];
    if (fabs(r[i]) > mx) mx = fabs(r[i]);
    pt->gather_us = pt->gather_se_us = NAN;
    pt->backend = -1;
    if (f->kind == TPS_FIT_SPLIT && pt->series == 1)
      pt->gather_us = tps_fit_gather_us(f, (long)pt->x, &pt->gather_se_us, &pt->backend);
  }
  f->med_abs_rel = median_abs(r, f->npts);
  f->max_abs_rel = mx;
  f->rms_rel = sqrt(ss / (double)f->npts);
}

/* The fit proper: several starts, keep the best; then fix unidentified parameters and
 * repeat; then leave-one-out. x0 holds starting values of f's parameters. */
static int fit_engine(tps_fit *f, double *x0, const priors *pri, const int *prunable,
                      const tps_fit_opts *o, char *msg, size_t msgsz) {
  int max_iter = o && o->max_iter > 0 ? o->max_iter : DEFAULT_MAX_ITER;
  size_t idx[TPS_FIT_MAXPTS];
  for (size_t i = 0; i < f->npts; i++) idx[i] = i;
  nls_result best;
  for (;;) {
    if ((int)f->npts <= f->npar)
      return fail(msg, msgsz, TPS_ETOOFEW, "%zu points cannot fit %d parameters (need at least %d)",
                  f->npts, f->npar, f->npar + 1);
    /* starts: the data-driven guess, and the time-like parameters halved and doubled */
    static const double scale[3] = {1.0, 0.5, 2.0};
    best.status = TPS_ENOCONV;
    best.chi2 = INFINITY;
    for (int s = 0; s < 3; s++) {
      double xs[TPS_FIT_MAXPAR];
      for (int j = 0; j < f->npar; j++) {
        int t = f->par_target[j];
        int timelike = t == TPS_GP_FLOOR_US || t == TPS_GP_LAUNCH_US || t == TPS_GP_REDUCE_US ||
                       t == TPS_FT_AG_CUSTOM_FLOOR || (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO);
        xs[j] = timelike ? x0[j] * scale[s] : x0[j];
      }
      nls_result r;
      if (run_nls(f, idx, f->npts, xs, max_iter, 1, &r) == TPS_OK && r.chi2 < best.chi2 * (1 - 1e-9))
        best = r;
    }
    if (best.status != TPS_OK)
      return fail(msg, msgsz, TPS_ENOCONV, "the fit did not converge from any of 3 starting points "
                  "(%d parameters, %zu points)", f->npar, f->npts);
    /* identifiability: when a parameter's 95% interval includes 0 (or its variance is 0),
     * fix one prunable parameter at its prior and refit: the first in priority order
     * (prunable[] holds 1 + rank: streaming bandwidth first, the weakest-identified on
     * compute-starved GPUs) whose interval is wider than +-50%, else the worst one. */
    int dof = (int)f->npts - f->npar;
    double tq = gsl_cdf_tdist_Pinv(0.975, dof), s2 = best.chi2 / dof;
    int worst = -1, first = -1, any = 0;
    double worst_rel = 0;
    int singular = 0;
    for (int j = 0; j < f->npar; j++) {
      double var = s2 * best.covu[j * f->npar + j];
      double half = tq * sqrt(var > 0 ? var : 0);
      double rel = var > 0 ? half / fabs(best.theta[j]) : INFINITY;
      if (!(var > 0) && s2 > 0) singular = 1;
      if (!(var > 0) && s2 == 0) rel = 0; /* exact fit: nothing to judge */
      if (rel > 1.0) any = 1;
      int pr = prunable[f->par_target[j]];
      if (!pr) continue;
      if (rel > worst_rel) { worst_rel = rel; worst = j; }
      if (rel > 0.5 && (first < 0 || pr < prunable[f->par_target[first]])) first = j;
    }
    if (!any && !singular) worst = -1;
    else if (first >= 0) worst = first;
    else if (worst_rel <= 0) worst = -1;
    if (worst < 0) {
      if (singular) {
        tps_fit_set_theta(f, best.theta); /* callers may look at the model that failed */
        return fail(msg, msgsz, TPS_ESINGULAR, "the covariance is singular: these data do not identify "
                    "all %d parameters", f->npar);
      }
      break;
    }
    int t = f->par_target[worst];
    /* keep the fitted values of the others in the models, the prior for this one */
    tps_fit_set_theta(f, best.theta);
    set_target(f, t, pri->v[t]);
    note_fixed(f, f->par_name[worst], pri->v[t], "not identified by these data: fixed at the prior");
    for (int j = 0; j < f->npar; j++) x0[j] = best.theta[j];
    remove_par(f, worst, x0);
  }
  finish_fit(f, &best, f->npts);
  /* leave-one-out */
  f->loo_med_abs = f->loo_max_abs = NAN;
  f->loo_failed = 0;
  for (size_t i = 0; i < f->npts; i++) f->pt[i].loo_rel = NAN;
  if (o && o->loo) {
    double lr[TPS_FIT_MAXPTS], mx = 0;
    size_t nl = 0;
    for (size_t k = 0; k < f->npts; k++) {
      size_t m = 0;
      for (size_t i = 0; i < f->npts; i++)
        if (i != k) idx[m++] = i;
      if ((int)m <= f->npar) { f->loo_failed++; continue; }
      nls_result r;
      if (run_nls(f, idx, m, f->theta, max_iter, 0, &r) != TPS_OK) { f->loo_failed++; continue; }
      tps_gemm_model g;
      tps_ag_model a;
      if (apply_theta(f, r.theta, &g, &a) != 0) { f->loo_failed++; continue; }
      double pred = point_model(f, &g, &a, &f->pt[k]);
      f->pt[k].loo_rel = (pred - f->pt[k].measured_us) / f->pt[k].measured_us;
      lr[nl++] = f->pt[k].loo_rel;
      if (fabs(f->pt[k].loo_rel) > mx) mx = fabs(f->pt[k].loo_rel);
    }
    if (nl) {
      f->loo_med_abs = median_abs(lr, nl);
      f->loo_max_abs = mx;
    }
  }
  return TPS_OK;
}

static int check_times(const double *t, size_t n, const char *what, char *msg, size_t msgsz) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(t[i]) || !(t[i] > 0))
      return fail(msg, msgsz, TPS_EBADDATA, "%s[%zu] = %g: latencies must be finite and > 0", what, i, t[i]);
  return 0;
}

static void init_common(tps_fit *f, tps_fit_kind kind) {
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->loo_med_abs = f->loo_max_abs = NAN;
}

static tps_gpu generic_gpu(void) {
  tps_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "generic");
  g.link_gbps = GENERIC_LINK_GBPS;
  g.hbm_gbps = GENERIC_HBM_GBPS;
  g.nvlink = 1;
  return g;
}

/* GEMM parameters and starting values from the GEMM points (rows m[], times t[]). */
static void gemm_setup(tps_fit *f, const long *m, const double *t, size_t n, const tps_gpu *gpu,
                       double *x0, priors *pri, int *prunable) {
  const tps_path *path = f->gemm.path;
  double K = (double)f->shape.k, N = (double)f->shape.n;
  size_t imax = 0, imin = 0;
  for (size_t i = 0; i < n; i++) {
    if (m[i] > m[imax]) imax = i;
    if (t[i] < t[imin]) imin = i;
  }
  double tmin = t[imin];
  double tf0 = 2.0 * m[imax] * K * N / (t[imax] * 1e6) * 1.1;
  double bw_prior = (gpu && gpu->hbm_gbps > 0 ? gpu->hbm_gbps : GENERIC_HBM_GBPS) * path->stream_eff;
  int sliced = path->slice_rows > 0;
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  f->gemm.p[TPS_GP_SHARP] = TPS_GEMM_DEFAULT_SHARP;
  f->gemm.p[TPS_GP_BW_GBPS] = bw_prior;
  f->gemm.p[TPS_GP_LAUNCH_US] = 0;
  f->gemm.p[TPS_GP_REDUCE_US] = sliced ? path->reduce_us : 0;
  f->gemm.p[TPS_GP_FLOOR_US] = 0.3 * tmin;
  f->gemm.p[TPS_GP_TFLOPS] = tf0;
  pri->v[TPS_GP_BW_GBPS] = bw_prior;
  pri->v[TPS_GP_LAUNCH_US] = 0;
  pri->v[TPS_GP_REDUCE_US] = path->reduce_us;
  pri->v[TPS_GP_FLOOR_US] = path->floor_us;
  /* pruning priority (1 = first): see fit_engine */
  prunable[TPS_GP_BW_GBPS] = 1;
  prunable[TPS_GP_FLOOR_US] = 2;
  prunable[TPS_GP_REDUCE_US] = 3;
  prunable[TPS_GP_LAUNCH_US] = 4;
  /* sliced paths: every launch pays launch_us and there is no separate floor (floor and
   * launch cost are not separable on the H20 data: only 96 tokens and >= 2048 tokens make
   * more than one launch) */
  if (sliced) f->gemm.p[TPS_GP_FLOOR_US] = 0;
  else add_par(f, TPS_GP_FLOOR_US, 0.5 * tmin, x0);
  add_par(f, TPS_GP_TFLOPS, tf0, x0);
  add_par(f, TPS_GP_BW_GBPS, bw_prior, x0);
  if (sliced) {
    add_par(f, TPS_GP_LAUNCH_US, 0.4 * tmin, x0);
    add_par(f, TPS_GP_REDUCE_US, path->reduce_us > 0 ? path->reduce_us : 0.01 * tmin, x0);
  }
}

static int check_shape(const tps_gemm_shape *s, const tps_path *path, int sms, char *msg, size_t msgsz) {
  if (!path) return fail(msg, msgsz, TPS_EBADDATA, "no kernel path given");
  if (s->k < 1 || s->n < 1 || !(s->out_bytes > 0))
    return fail(msg, msgsz, TPS_EBADDATA, "GEMM shape k=%ld n=%ld out_bytes=%g is not valid", s->k, s->n, s->out_bytes);
  if (sms < 1) return fail(msg, msgsz, TPS_EBADDATA, "the number of SMs (%d) must be >= 1", sms);
  return 0;
}

/* ------------------------------------------------------------------ public fits */

int tps_fit_split(const tps_split_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  init_common(f, TPS_FIT_SPLIT);
  int st;
  if (!d || d->n < 1) return fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if ((st = check_shape(&d->shape, d->path, d->sms, msg, msgsz))) return st;
  if (d->tp < 2) return fail(msg, msgsz, TPS_EBADDATA, "TP must be >= 2 for a split table (got %d)", d->tp);
  if (!(d->out_bytes_per_token > 0)) return fail(msg, msgsz, TPS_EBADDATA, "out_bytes_per_token must be > 0");
  if (d->gather < 0 || d->gather >= TPS_NGATHERS)
    return fail(msg, msgsz, TPS_EINVAL, "gather backend %d is not a tps_gather_id", d->gather);
  if (2 * d->n > TPS_FIT_MAXPTS) return fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS / 2);
  for (size_t i = 0; i < d->n; i++)
    if (d->tokens[i] < 1 || (i && d->tokens[i] <= d->tokens[i - 1]))
      return fail(msg, msgsz, TPS_EBADDATA, "tokens[%zu] = %ld: tokens must be >= 1 and strictly increasing", i, d->tokens[i]);
  if ((st = check_times(d->replicated_us, d->n, "replicated_us", msg, msgsz))) return st;
  if ((st = check_times(d->split_us, d->n, "split_us", msg, msgsz))) return st;
  tps_gpu gg = d->gpu ? *d->gpu : generic_gpu();
  snprintf(f->gpu, sizeof f->gpu, "%s", gg.name);
  f->tp = d->tp;
  f->shape = d->shape;
  f->out_bytes_per_token = d->out_bytes_per_token;
  f->gather = d->gather;
  f->gemm.path = d->path;
  f->gemm.sms = d->sms;
  tps_ag_from_spec(&f->ag, &gg, d->tp);
  if (!gg.nvlink && f->ag.custom_gbps <= 0) {
    /* no custom backend prior on a non-NVLink GPU: give it one so custom tables still fit */
    tps_gpu nv = gg;
    nv.nvlink = 1;
    tps_ag_model tmp;
    tps_ag_from_spec(&tmp, &nv, d->tp);
    f->ag.custom_floor_us = tmp.custom_floor_us;
    f->ag.custom_gbps = tmp.custom_gbps;
  }
  f->ag.custom_cap_bytes = d->gather == TPS_GATHER_CUSTOM ? 1e300 : d->gather_cap_bytes > 0 ? d->gather_cap_bytes : TPS_GATHER_CUSTOM_CAP_BYTES;
  for (int p = 0; p < TPS_NPROTO; p++) f->nccl_busbw_ref[p] = f->ag.busbw_gbps[p];
  /* points: replicated column, then split column */
  f->npts = 2 * d->n;
  for (size_t s = 0; s < 2; s++)
    for (size_t i = 0; i < d->n; i++) {
      tps_fit_point *pt = &f->pt[s * d->n + i];
      pt->series = (int)s;
      pt->x = (double)d->tokens[i];
      pt->measured_us = s ? d->split_us[i] : d->replicated_us[i];
    }
  double x0[TPS_FIT_MAXPAR];
  priors pri;
  int prunable[TPS_FT_END];
  memset(&pri, 0, sizeof pri);
  memset(prunable, 0, sizeof prunable);
  gemm_setup(f, d->tokens, d->replicated_us, d->n, d->gpu, x0, &pri, prunable);
  /* gather parameters: which backends do the split points use? */
  size_t ncustom = 0, nnccl = 0;
  for (size_t i = 0; i < d->n; i++) {
    int b = -1;
    gather_of(f, &f->ag, d->tokens[i], &b);
    if (b == TPS_GATHER_CUSTOM) ncustom++; else nnccl++;
  }
  pri.v[TPS_FT_AG_CUSTOM_FLOOR] = f->ag.custom_floor_us;
  pri.v[TPS_FT_AG_CUSTOM_GBPS] = f->ag.custom_gbps;
  pri.v[TPS_FT_AG_NCCL_SCALE] = 1.0;
  prunable[TPS_FT_AG_CUSTOM_FLOOR] = 5;
  prunable[TPS_FT_AG_CUSTOM_GBPS] = 6;
  prunable[TPS_FT_AG_NCCL_SCALE] = 7;
  if (ncustom) {
    add_par(f, TPS_FT_AG_CUSTOM_FLOOR, f->ag.custom_floor_us, x0);
    add_par(f, TPS_FT_AG_CUSTOM_GBPS, f->ag.custom_gbps, x0);
  }
  if (nnccl) add_par(f, TPS_FT_AG_NCCL_SCALE, 1.0, x0);
  return fit_engine(f, x0, &pri, prunable, o, msg, msgsz);
}

int tps_fit_gemm(const tps_gemm_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  init_common(f, TPS_FIT_GEMM);
  int st;
  if (!d || d->n < 1) return fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if ((st = check_shape(&d->shape, d->path, d->sms, msg, msgsz))) return st;
  if (d->n > TPS_FIT_MAXPTS) return fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS);
  for (size_t i = 0; i < d->n; i++)
    if (d->rows[i] < 1 || (i && d->rows[i] <= d->rows[i - 1]))
      return fail(msg, msgsz, TPS_EBADDATA, "rows[%zu] = %ld: rows must be >= 1 and strictly increasing", i, d->rows[i]);
  if ((st = check_times(d->time_us, d->n, "time_us", msg, msgsz))) return st;
  snprintf(f->gpu, sizeof f->gpu, "%s", d->gpu ? d->gpu->name : "generic");
  f->tp = 1;
  f->shape = d->shape;
  f->gemm.path = d->path;
  f->gemm.sms = d->sms;
  f->npts = d->n;
  for (size_t i = 0; i < d->n; i++) {
    f->pt[i].series = 0;
    f->pt[i].x = (double)d->rows[i];
    f->pt[i].measured_us = d->time_us[i];
  }
  double x0[TPS_FIT_MAXPAR];
  priors pri;
  int prunable[TPS_FT_END];
  memset(&pri, 0, sizeof pri);
  memset(prunable, 0, sizeof prunable);
  gemm_setup(f, d->rows, d->time_us, d->n, d->gpu, x0, &pri, prunable);
  return fit_engine(f, x0, &pri, prunable, o, msg, msgsz);
}

/* The fitted NCCL regimes (protocols on) are told apart by their parameters only; name
 * them: sorted by latency (the envelope goes from low latency and bandwidth to high), they
 * are mapped in order onto the protocols (LL, LL128, Simple) so that their parameters are
 * nearest the priors in log space.  Relabelling changes no model value. */
static void name_regimes(tps_fit *f, const priors *pri) {
  int reg[TPS_NPROTO], k = 0;
  for (int p = 0; p < TPS_NPROTO; p++)
    if (f->ag.busbw_gbps[p] > 0) reg[k++] = p;
  for (int a = 1; a < k; a++)
    for (int b = a; b > 0 && f->ag.lat_us[reg[b]] < f->ag.lat_us[reg[b - 1]]; b--) {
      int t = reg[b]; reg[b] = reg[b - 1]; reg[b - 1] = t;
    }
  int best[TPS_NPROTO] = {0, 1, 2};
  double best_d = INFINITY;
  for (int mask = 1; mask < (1 << TPS_NPROTO); mask++) {
    int c[TPS_NPROTO], n = 0;
    for (int p = 0; p < TPS_NPROTO; p++)
      if ((mask >> p) & 1) c[n++] = p;
    if (n != k) continue;
    double d = 0;
    for (int i = 0; i < k; i++) {
      double pl = pri->v[TPS_FT_AG_LAT0 + c[i]], pb = pri->v[TPS_FT_AG_BW0 + c[i]];
      double l = f->ag.lat_us[reg[i]], b = f->ag.busbw_gbps[reg[i]];
      if (pl > 0 && l > 0) d += pow(log(l / pl), 2);
      if (pb > 0 && b > 0) d += pow(log(b / pb), 2);
    }
    if (d < best_d) { best_d = d; memcpy(best, c, sizeof c); }
  }
  tps_ag_model old = f->ag;
  double ref[TPS_NPROTO];
  memcpy(ref, f->nccl_busbw_ref, sizeof ref);
  for (int p = 0; p < TPS_NPROTO; p++) {
    f->ag.busbw_gbps[p] = 0;
    f->ag.lat_us[p] = pri->v[TPS_FT_AG_LAT0 + p];
  }
  for (int i = 0; i < k; i++) {
    f->ag.lat_us[best[i]] = old.lat_us[reg[i]];
    f->ag.busbw_gbps[best[i]] = old.busbw_gbps[reg[i]];
    f->nccl_busbw_ref[best[i]] = ref[reg[i]];
  }
  for (int j = 0; j < f->npar; j++) {
    int t = f->par_target[j];
    for (int i = 0; i < k; i++) {
      if (t == TPS_FT_AG_LAT0 + reg[i]) { f->par_target[j] = TPS_FT_AG_LAT0 + best[i]; break; }
      if (t == TPS_FT_AG_BW0 + reg[i]) { f->par_target[j] = TPS_FT_AG_BW0 + best[i]; break; }
    }
    snprintf(f->par_name[j], sizeof f->par_name[j], "%s", tps_fit_target_name(f->par_target[j]));
  }
  char off[64] = "";
  for (int p = 0; p < TPS_NPROTO; p++)
    if (!(f->ag.busbw_gbps[p] > 0)) {
      size_t len = strlen(off);
      snprintf(off + len, sizeof off - len, "%s%s", len ? ", " : "", tps_proto_names[p]);
    }
  if (off[0]) {
    size_t len = strlen(f->fixed_note);
    snprintf(f->fixed_note + len, sizeof f->fixed_note - len, "%sprotocols off (the BIC-selected fit has %d "
             "regime%s): %s", len ? "; " : "", k, k > 1 ? "s" : "", off);
  }
}

int tps_fit_allgather(const tps_ag_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  init_common(f, TPS_FIT_ALLGATHER);
  int st;
  if (!d || d->n < 1) return fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if (d->ranks < 2) return fail(msg, msgsz, TPS_EBADDATA, "an all-gather needs >= 2 ranks (got %d)", d->ranks);
  if (d->n > TPS_FIT_MAXPTS) return fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS);
  for (size_t i = 0; i < d->n; i++)
    if (!(d->bytes[i] > 0) || !isfinite(d->bytes[i]) || (i && d->bytes[i] <= d->bytes[i - 1]))
      return fail(msg, msgsz, TPS_EBADDATA, "bytes[%zu] = %g: sizes must be > 0 and strictly increasing", i, d->bytes[i]);
  if ((st = check_times(d->time_us, d->n, "time_us", msg, msgsz))) return st;
  tps_gpu gg = d->gpu ? *d->gpu : generic_gpu();
  snprintf(f->gpu, sizeof f->gpu, "%s", gg.name);
  f->tp = d->ranks;
  f->gather = d->backend == TPS_GATHER_CUSTOM ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL;
  tps_ag_from_spec(&f->ag, &gg, d->ranks);
  f->ag.custom_cap_bytes = 1e300; /* a custom table measures the custom kernel at every size */
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  f->npts = d->n;
  for (size_t i = 0; i < d->n; i++) {
    f->pt[i].series = 0;
    f->pt[i].x = d->bytes[i];
    f->pt[i].measured_us = d->time_us[i];
  }
  double x0[TPS_FIT_MAXPAR];
  priors pri;
  int prunable[TPS_FT_END];
  memset(&pri, 0, sizeof pri);
  memset(prunable, 0, sizeof prunable);
  double n = d->ranks, tmin = d->time_us[0];
  for (size_t i = 0; i < d->n; i++)
    if (d->time_us[i] < tmin) tmin = d->time_us[i];
  double big_bus = d->bytes[d->n - 1] * (n - 1) / n / (d->time_us[d->n - 1] * 1e3); /* GB/s */
  if (d->backend == TPS_GATHER_CUSTOM) {
    f->ag.custom_floor_us = 0.8 * tmin;
    f->ag.custom_gbps = big_bus * 1.1;
    add_par(f, TPS_FT_AG_CUSTOM_FLOOR, 0.8 * tmin, x0);
    add_par(f, TPS_FT_AG_CUSTOM_GBPS, big_bus * 1.1, x0);
  } else {
    /* The fastest protocol wins, so a protocol's parameters are seen only by the sizes
     * it wins.  Model selection: every non-empty subset of the protocols is fitted (the
     * others off, busbw 0: never fastest within the measured sizes, the data say nothing
     * about them), a subset counts only when each of its protocols is fastest at two or
     * more sizes and all its parameters are identified; the subset with the lowest BIC,
     * n ln(chi2/n) + p ln n, wins.  Starting values are shaped like the prior (LL ~40%
     * and LL128 ~92% of Simple's bandwidth at lower latency), scaled to the data's ends. */
    double bw0[TPS_NPROTO] = {0.4 * big_bus * 1.1, 0.92 * big_bus * 1.1, big_bus * 1.1};
    double lat0[TPS_NPROTO] = {0.9 * tmin, 1.2 * tmin, 1.6 * tmin};
    for (int p = 0; p < TPS_NPROTO; p++) {
      pri.v[TPS_FT_AG_LAT0 + p] = f->ag.lat_us[p];
      pri.v[TPS_FT_AG_BW0 + p] = f->ag.busbw_gbps[p];
    }
    tps_fit *both = malloc(2 * sizeof *both);
    if (!both) return fail(msg, msgsz, TPS_ENOMEM, "out of memory");
    tps_fit *base = &both[0], *candp = &both[1];
#define cand (*candp)
    *base = *f;
    int best_mask = 0;
    double best_bic = INFINITY;
    tps_fit_opts quick = {0, o ? o->max_iter : 0};
    static const int masks[3] = {4, 5, 7}; /* 1, 2, 3 regimes; named afterwards */
    for (int mi = 0; mi < 3; mi++) {
      int mask = masks[mi];
      cand = *base;
      for (int p = 0; p < TPS_NPROTO; p++) {
        int on = (mask >> p) & 1;
        cand.ag.busbw_gbps[p] = on ? bw0[p] : 0;
        cand.ag.lat_us[p] = lat0[p];
        cand.nccl_busbw_ref[p] = bw0[p];
        if (on) {
          add_par(&cand, TPS_FT_AG_LAT0 + p, lat0[p], x0);
          add_par(&cand, TPS_FT_AG_BW0 + p, bw0[p], x0);
        }
      }
      if (fit_engine(&cand, x0, &pri, prunable, &quick, NULL, 0) != TPS_OK) continue;
      int wins[TPS_NPROTO] = {0, 0, 0}, ok = 1;
      for (size_t i = 0; i < d->n; i++) {
        int pr = -1;
        tps_ag_time_us(&cand.ag, d->bytes[i], d->ranks, TPS_GATHER_NCCL, NULL, &pr);
        if (pr >= 0) wins[pr]++;
      }
      for (int p = 0; p < TPS_NPROTO; p++)
        if (((mask >> p) & 1) && wins[p] < 2) ok = 0;
      for (int j = 0; j < cand.npar; j++)
        if (!(cand.hi95[j] - cand.theta[j] < 0.5 * cand.theta[j])) ok = 0; /* identified within +-50% */
      double nn = (double)cand.npts;
      double bic = nn * log(cand.chi2 / nn + 1e-300) + cand.npar * log(nn);
      if (ok && bic < best_bic) { best_bic = bic; best_mask = mask; }
    }
#undef cand
    free(both);
    if (!best_mask)
      return fail(msg, msgsz, TPS_ENOCONV, "no subset of the NCCL protocols (LL, LL128, Simple) fits these "
                  "data with identified parameters");
    for (int p = 0; p < TPS_NPROTO; p++) {
      int on = (best_mask >> p) & 1;
      f->ag.busbw_gbps[p] = on ? bw0[p] : 0;
      f->ag.lat_us[p] = lat0[p];
      f->nccl_busbw_ref[p] = bw0[p];
      if (on) {
        add_par(f, TPS_FT_AG_LAT0 + p, lat0[p], x0);
        add_par(f, TPS_FT_AG_BW0 + p, bw0[p], x0);
      }
    }
    st = fit_engine(f, x0, &pri, prunable, o, msg, msgsz);
    if (st == TPS_OK) name_regimes(f, &pri);
    return st;
  }
  return fit_engine(f, x0, &pri, prunable, o, msg, msgsz);
}

/* ------------------------------------------------------------------ derived quantities */

typedef double (*eval_fn)(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long tokens, int *backend);

static double eval_rep(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  (void)a; (void)b;
  return tps_gemm_time_us(g, &f->shape, T);
}
static double eval_gather(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  (void)g;
  return gather_of(f, a, T, b);
}
static double eval_split(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  return tps_gemm_time_us(g, &f->shape, rows_per_rank(f, T)) + gather_of(f, a, T, b);
}

/* Value at f's current models; se by the delta method around them (central differences). */
static double delta(const tps_fit *f, eval_fn fn, long T, double *se, int *backend) {
  double v = fn(f, &f->gemm, &f->ag, T, backend);
  if (!se) return v;
  *se = NAN;
  if (!isfinite(v) || f->npar < 1) return v;
  int p = f->npar;
  double th[TPS_FIT_MAXPAR], grad[TPS_FIT_MAXPAR];
  for (int j = 0; j < p; j++) th[j] = target_value(f, f->par_target[j], &f->gemm, &f->ag);
  for (int j = 0; j < p; j++) {
    double h = 1e-5 * (fabs(th[j]) > 1e-3 ? fabs(th[j]) : 1e-3);
    double tp_[TPS_FIT_MAXPAR], tm[TPS_FIT_MAXPAR];
    memcpy(tp_, th, sizeof tp_);
    memcpy(tm, th, sizeof tm);
    tp_[j] += h;
    tm[j] -= h;
    tps_gemm_model g1, g2;
    tps_ag_model a1, a2;
    int okp = apply_theta(f, tp_, &g1, &a1) == 0, okm = apply_theta(f, tm, &g2, &a2) == 0;
    double fp = okp ? fn(f, &g1, &a1, T, NULL) : NAN, fm = okm ? fn(f, &g2, &a2, T, NULL) : NAN;
    if (isfinite(fp) && isfinite(fm)) grad[j] = (fp - fm) / (2 * h);
    else if (isfinite(fp)) grad[j] = (fp - v) / h;
    else if (isfinite(fm)) grad[j] = (v - fm) / h;
    else return v;
  }
  double var = 0;
  for (int a = 0; a < p; a++)
    for (int b = 0; b < p; b++) var += grad[a] * f->cov[a * p + b] * grad[b];
  *se = sqrt(var > 0 ? var : 0);
  return v;
}

double tps_fit_replicated_us(const tps_fit *f, long tokens, double *se_us) {
  return delta(f, eval_rep, tokens, se_us, NULL);
}
double tps_fit_split_us(const tps_fit *f, long tokens, double *se_us, int *backend) {
  if (f->tp < 1) return NAN;
  return delta(f, eval_split, tokens, se_us, backend);
}
double tps_fit_gather_us(const tps_fit *f, long tokens, double *se_us, int *backend) {
  if (f->tp < 1) return NAN;
  return delta(f, eval_gather, tokens, se_us, backend);
}

int tps_fit_sample_theta(const tps_fit *f, const gsl_rng *r, double *theta) {
  size_t p = (size_t)f->npar;
  if (p == 0) return 0;
  gsl_matrix *A = gsl_matrix_alloc(p, p), *V = gsl_matrix_alloc(p, p);
  gsl_vector *ev = gsl_vector_alloc(p);
  gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(p);
  int rc = -1;
  if (A && V && ev && w) {
    for (size_t a = 0; a < p; a++)
      for (size_t b = 0; b < p; b++) gsl_matrix_set(A, a, b, f->cov[a * p + b]);
    if (gsl_eigen_symmv(A, ev, V, w) == GSL_SUCCESS) {
      double lmax = gsl_vector_max(ev);
      rc = 0;
      double z[TPS_FIT_MAXPAR];
      for (size_t k = 0; k < p; k++) {
        double l = gsl_vector_get(ev, k);
        if (l < -1e-9 * (lmax > 0 ? lmax : 1)) rc = -1;
        z[k] = gsl_ran_gaussian(r, 1.0) * sqrt(l > 0 ? l : 0);
      }
      for (size_t a = 0; a < p; a++) {
        double s = f->theta[a];
        for (size_t k = 0; k < p; k++) s += gsl_matrix_get(V, a, k) * z[k];
        theta[a] = s;
      }
    }
  }
  if (w) gsl_eigen_symmv_free(w);
  if (ev) gsl_vector_free(ev);
  if (V) gsl_matrix_free(V);
  if (A) gsl_matrix_free(A);
  return rc;
}

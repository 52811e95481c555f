/* fit_engine.c: the least squares and what follows them: gsl_multifit_nlinear on the
 * relative residuals from several starts, the covariance C = s^2 (J^T J)^-1 and t-intervals,
 * parameters the data cannot identify fixed at their priors and the fit repeated, and the
 * leave-one-out refits (method: fit.h). */
#include "model/fit/fit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>
#include "model/fit/fit_impl.h"

#define BAD_RESID 1e3      /* residual returned outside the parameter domain (a wall) */
#define DEFAULT_MAX_ITER 400

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
  int ok = tps_fit_apply_theta(P->f, th, &P->g, &P->a) == 0;
  for (size_t i = 0; i < P->n; i++) {
    const tps_fit_point *pt = &P->f->pt[P->idx[i]];
    double r = BAD_RESID;
    if (ok) {
      double m = tps_fit_point_model(P->f, &P->g, &P->a, pt);
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
    pt->model_us = tps_fit_point_model(f, &f->gemm, &f->ag, pt);
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
int tps_fit_engine(tps_fit *f, tps_fit_start *start, const tps_fit_opts *o, char *msg, size_t msgsz) {
  double *x0 = start->x0;
  const tps_fit_priors *pri = &start->pri;
  const int *prunable = start->prunable;
  int max_iter = o && o->max_iter > 0 ? o->max_iter : DEFAULT_MAX_ITER;
  size_t idx[TPS_FIT_MAXPTS];
  for (size_t i = 0; i < f->npts; i++) idx[i] = i;
  nls_result best;
  for (;;) {
    if ((int)f->npts <= f->npar)
      return tps_fit_fail(msg, msgsz, TPS_ETOOFEW, "%zu points cannot fit %d parameters (need at least %d)",
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
      return tps_fit_fail(msg, msgsz, TPS_ENOCONV, "the fit did not converge from any of 3 starting points "
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
        return tps_fit_fail(msg, msgsz, TPS_ESINGULAR, "the covariance is singular: these data do not identify "
                    "all %d parameters", f->npar);
      }
      break;
    }
    int t = f->par_target[worst];
    /* keep the fitted values of the others in the models, the prior for this one */
    tps_fit_set_theta(f, best.theta);
    tps_fit_set_target(f, t, pri->v[t]);
    tps_fit_note_fixed(f, f->par_name[worst], pri->v[t], "not identified by these data: fixed at the prior");
    for (int j = 0; j < f->npar; j++) x0[j] = best.theta[j];
    tps_fit_remove_par(f, worst, x0);
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
      if (tps_fit_apply_theta(f, r.theta, &g, &a) != 0) { f->loo_failed++; continue; }
      double pred = tps_fit_point_model(f, &g, &a, &f->pt[k]);
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

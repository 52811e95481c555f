/* uncertainty.c: the parametric bootstrap of a prediction's break-even (see
 * uncertainty.h). */
#include "model/predict/uncertainty.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "model/predict/pred_impl.h"

static int sample_ok(const tps_pred *q, long tmax) {
  double a = tps_pred_split_us(q, 1, NULL) - tps_pred_replicated_us(q, 1);
  double b = tps_pred_split_us(q, tmax, NULL) - tps_pred_replicated_us(q, tmax);
  if (!isfinite(a) || !isfinite(b)) return 0;
  if (!(q->gemm.p[TPS_GP_FLOOR_US] >= 0)) return 0;
  if (q->ag.custom_gbps > 0 && !(q->ag.custom_floor_us >= 0)) return 0;
  for (int i = 0; i < TPS_NPROTO; i++)
    if (q->ag.busbw_gbps[i] > 0 && !(q->ag.lat_us[i] >= 0)) return 0;
  return 1;
}

static void scale_ag_bw(tps_ag_model *a, double f) {
  a->custom_gbps *= f;
  for (int i = 0; i < TPS_NPROTO; i++) a->busbw_gbps[i] *= f;
}

struct tps_pred_draws {
  const tps_pred *p;
  int fit_part, prior_part, np;
  tps_fit *scratch;
  gsl_matrix *L;
  gsl_vector *mu, *x;
  gsl_rng *r;
};

void tps_pred_draws_free(tps_pred_draws *d) {
  if (!d) return;
  free(d->scratch);
  if (d->L) gsl_matrix_free(d->L);
  if (d->mu) gsl_vector_free(d->mu);
  if (d->x) gsl_vector_free(d->x);
  if (d->r) gsl_rng_free(d->r);
  free(d);
}

int tps_pred_draws_alloc(const tps_pred *p, unsigned long seed, tps_pred_draws **out) {
  *out = NULL;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return TPS_NA;
  int fit_part = p->scaling == TPS_SCALING_MODEL && p->fit && p->fit->npar > 0;
  int prior_part = p->compute_rsd > 0 || p->stream_rsd > 0 || p->gather_rsd > 0;
  if (!fit_part && !prior_part) return TPS_NA;
  tps_pred_draws *d = calloc(1, sizeof *d);
  if (!d) return TPS_ENOMEM;
  d->p = p;
  d->fit_part = fit_part;
  d->prior_part = prior_part;
  d->r = gsl_rng_alloc(gsl_rng_mt19937);
  if (!d->r) { tps_pred_draws_free(d); return TPS_ENOMEM; }
  gsl_rng_set(d->r, seed);
  if (fit_part) {
    const int np = d->np = p->fit->npar;
    d->scratch = malloc(sizeof *d->scratch);
    d->L = gsl_matrix_alloc(np, np);
    d->mu = gsl_vector_alloc(np);
    d->x = gsl_vector_alloc(np);
    if (!d->scratch || !d->L || !d->mu || !d->x) { tps_pred_draws_free(d); return TPS_ENOMEM; }
    *d->scratch = *p->fit;
    double dmax = 0;
    for (int i = 0; i < np; i++) {
      gsl_vector_set(d->mu, i, p->fit->theta[i]);
      double v = p->fit->cov[i * np + i];
      if (v > dmax) dmax = v;
    }
    /* Cholesky factor of the covariance; a tiny ridge when it is only semi-definite
     * (a parameter held fixed has zero variance). */
    int ok = 0;
    for (int attempt = 0; attempt < 4 && !ok; attempt++) {
      double ridge = attempt ? dmax * pow(10.0, -12 + 3 * attempt) : 0.0;
      for (int i = 0; i < np; i++)
        for (int j = 0; j < np; j++)
          gsl_matrix_set(d->L, i, j, p->fit->cov[i * np + j] + (i == j ? ridge : 0.0)); /* packed, stride npar (fit.h) */
      ok = gsl_linalg_cholesky_decomp1(d->L) == GSL_SUCCESS;
    }
    if (!ok) {
      /* not a covariance at all: keep the standard errors only */
      gsl_matrix_set_zero(d->L);
      for (int i = 0; i < np; i++) {
        double v = p->fit->cov[i * np + i];
        gsl_matrix_set(d->L, i, i, v > 0 ? sqrt(v) : 0.0);
      }
    }
  }
  *out = d;
  return TPS_OK;
}

int tps_pred_draws_next(tps_pred_draws *d, tps_pred *q) {
  const tps_pred *p = d->p;
  *q = *p;
  q->ref_gemm = q->ref_gather = NULL; /* not owned by the copy (unused in these scalings) */
  if (d->fit_part) {
    gsl_ran_multivariate_gaussian(d->r, d->mu, d->L, d->x);
    if (tps_fit_set_theta(d->scratch, d->x->data) != 0 || tps_pred_build_from_fit(q, d->scratch) != 0) return 1;
  }
  if (d->prior_part) {
    /* throughput and bandwidth factors; a part's time is divided by its factor */
    const double zc = gsl_ran_gaussian(d->r, 1.0);
    double fc = exp(p->compute_rsd * zc);
    double fs = exp(p->stream_rsd * gsl_ran_gaussian(d->r, 1.0));
    double fa = exp(p->gather_rsd * gsl_ran_gaussian(d->r, 1.0));
    q->gemm0.p[TPS_GP_TFLOPS] *= fc;
    q->gemm0.p[TPS_GP_BW_GBPS] *= fs;
    scale_ag_bw(&q->ag0, fa);
    q->gscale = p->gscale / fc;
    q->gscale_out = p->gscale_out / exp(p->compute_rsd_out * zc); /* the same draw: one curve, two spreads */
    q->ascale = p->ascale / fa;
  }
  tps_pred_apply_knobs(q);
  return 0;
}

int tps_pred_interval(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_interval *iv) {
  return tps_pred_analyze(p, tmax, o, NULL, iv);
}

/* The interval and, when asked, the dense crossover *cx or the bisection break-even *be. */
static int analyze(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_crossover *cx, long *be0, tps_interval *iv) {
  memset(iv, 0, sizeof *iv);
  if (be0) *be0 = -1;
  iv->lo = iv->hi = iv->median = NAN;
  if (cx) { memset(cx, 0, sizeof *cx); cx->breakeven = -1; }
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  if (p->scaling == TPS_SCALING_PESSIMISTIC)
    return cx ? tps_pred_crossover(p, tmax, cx) : be0 ? tps_pred_breakeven(p, tmax, be0) : TPS_OK;
  int n = o && o->nsamples > 0 ? o->nsamples : TPS_PRED_DEFAULT_SAMPLES;
  double level = o && o->level > 0 && o->level < 1 ? o->level : TPS_INTERVAL_LEVEL;
  unsigned long seed = o ? o->seed : 0;
  int fit_part = p->scaling == TPS_SCALING_MODEL && p->fit && p->fit->npar > 0;
  int prior_part = p->compute_rsd > 0 || p->stream_rsd > 0 || p->gather_rsd > 0;
  iv->fit_part = fit_part;
  iv->prior_part = prior_part;
  if (!fit_part && !prior_part) {
    tps_crossover c0;
    int rc = tps_pred_crossover(p, tmax, &c0);
    if (cx) *cx = c0;
    if (be0) *be0 = c0.breakeven;
    iv->lo = iv->hi = iv->median = c0.breakeven < 0 ? INFINITY : (double)c0.breakeven;
    return rc;
  }
  double *bes = malloc((size_t)n * sizeof *bes);
  tps_pred_draws *dr = NULL;
  tps_gemmgrid *gs = tps_gemmgrid_build(p, tmax);
  int rc = TPS_ENOMEM;
  if (!bes || !gs || tps_pred_draws_alloc(p, seed, &dr) != TPS_OK) goto out;
  /* Output-tiled paths: GEMM(m) is nondecreasing for any positive parameters (padded
   * rows and waves only grow), so samples need no table when the nominal one is; Marlin's
   * launch structure makes it dip (127 -> 128 rows) and keeps the table. */
  if (cx) {
    rc = tps_pred_crossover_on(p, tmax, cx, gs);
    if (rc) goto out;
    rc = TPS_ENOMEM;
  } else {
    tps_gemmgrid_load(gs, p, 1);
  }
  if (be0 && (rc = tps_pred_breakeven_on(p, tmax, be0, gs)) != TPS_OK) goto out;
  rc = TPS_ENOMEM;
  if (be0) tps_gemmgrid_load(gs, p, 1);
  gs->mono = p->path->slice_rows == 0;
  for (long m = 2; gs->mono && m <= tmax; m++) gs->mono = gs->g[m] >= gs->g[m - 1];
  tps_pred q;
  int got = 0, rejected = 0;
  while (got < n && rejected < 10 * n) {
    if (tps_pred_draws_next(dr, &q) != 0) { rejected++; continue; }
    long be;
    if (!sample_ok(&q, tmax) || tps_pred_breakeven_on(&q, tmax, &be, gs) != 0) { rejected++; continue; }
    if (be < 0) iv->nnever++;
    bes[got++] = be < 0 ? (double)(tmax + 1) : (double)be; /* "never" sorts last */
  }
  iv->nsamples = got;
  iv->nrejected = rejected;
  if (got < 2) { rc = TPS_EINVAL; goto out; }
  gsl_sort(bes, 1, got);
  double a = (1.0 - level) / 2.0;
  double qv[3] = {gsl_stats_quantile_from_sorted_data(bes, 1, got, a),
                  gsl_stats_quantile_from_sorted_data(bes, 1, got, 1.0 - a),
                  gsl_stats_quantile_from_sorted_data(bes, 1, got, 0.5)};
  for (int i = 0; i < 3; i++) qv[i] = qv[i] > (double)tmax ? INFINITY : round(qv[i]);
  iv->lo = qv[0];
  iv->hi = qv[1];
  iv->median = qv[2];
  rc = TPS_OK;
out:
  tps_gemmgrid_free(gs);
  free(bes);
  tps_pred_draws_free(dr);
  return rc;
}

int tps_pred_analyze(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_crossover *cx, tps_interval *iv) {
  return analyze(p, tmax, o, cx, NULL, iv);
}

int tps_pred_analyze_be(const tps_pred *p, long tmax, const tps_unc_opts *o, long *be, tps_interval *iv) {
  return analyze(p, tmax, o, NULL, be, iv);
}

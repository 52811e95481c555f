/* uncertainty.h: the interval of a prediction's break-even.
 *
 * Parametric bootstrap (a TPS_INTERVAL_LEVEL interval by default).  theta ~ N(theta_hat,
 * cov) (gsl_ran_multivariate_gaussian), written back with tps_fit_set_theta, the target
 * rebuilt and its break-even recomputed; for transferred predictions each sample also
 * multiplies the target's compute throughput, streaming bandwidth and gather bandwidths
 * by lognormal factors exp(rsd*z) with the path priors' rsd (compute_eff_rsd,
 * stream_eff_rsd) and TPS_PRED_GATHER_RSD.  Spec-only: the priors' factors alone.
 * Parts: one lognormal factor on the GEMM part's time (compute_rsd) and one on the gather
 * parts' (gather_rsd), the spreads src/ gave each part (model/predict/parts.h: the measured
 * curve's inside its range, the model's calibrated leave-one-GPU-out error outside).
 * Pessimistic: a rule, no interval (NaN). */
#ifndef TPS_UNCERTAINTY_H
#define TPS_UNCERTAINTY_H
#include "model/predict/crossover.h"
#include "model/predict/predict.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Level of every interval and band tpsplit reports (break-even, latency, savings): the
 * central 90% of the draws.  The one place this number is written. */
#define TPS_INTERVAL_LEVEL 0.90
#define TPS_PRED_DEFAULT_SAMPLES 200     /* bootstrap samples of an interval */

typedef struct {
  int nsamples;        /* 0 = TPS_PRED_DEFAULT_SAMPLES */
  unsigned long seed;  /* gsl_rng seed (mt19937) */
  double level;        /* 0 = TPS_INTERVAL_LEVEL */
} tps_unc_opts;

typedef struct {
  double lo, hi, median;  /* quantiles of the break-even; +inf when "never" reaches them;
                           * NaN when there is no uncertainty model (pessimistic) */
  int nsamples;           /* samples used */
  int nnever;             /* samples whose split never wins at tmax */
  int nrejected;          /* draws rejected (unphysical parameters) */
  int fit_part, prior_part; /* which sources were sampled */
} tps_interval;

int tps_pred_interval(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_interval *iv);

/* The draws behind the interval, for other statistics (the 90% bands of `tpsplit plot`):
 * the fit's parameters theta ~ N(theta_hat, cov) (Cholesky of the covariance, a tiny ridge
 * when only semi-definite), and for transferred or spec predictions the GEMM throughput,
 * streaming bandwidth and gather bandwidths times lognormal factors exp(rsd z).
 * tps_pred_draws_alloc: TPS_NA when the context has no uncertainty model
 * (pessimistic, or nothing to sample).  tps_pred_draws_next fills *q with one drawn
 * context (a copy of p: evaluate it, never free it); nonzero when the draw was rejected
 * (unphysical parameters).  The same seed gives the same sequence as tps_pred_analyze. */
typedef struct tps_pred_draws tps_pred_draws;
int tps_pred_draws_alloc(const tps_pred *p, unsigned long seed, tps_pred_draws **d);
int tps_pred_draws_next(tps_pred_draws *d, tps_pred *q);
void tps_pred_draws_free(tps_pred_draws *d);
/* Both at once (one launch table): the dense crossover *cx (may be NULL) and the interval. */
int tps_pred_analyze(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_crossover *cx, tps_interval *iv);
/* The same with the nominal break-even by bisection (tps_pred_breakeven_fast: the same
 * number, no sign changes) instead of the dense crossover: what a grid needs, faster. */
int tps_pred_analyze_be(const tps_pred *p, long tmax, const tps_unc_opts *o, long *be, tps_interval *iv);

#ifdef __cplusplus
}
#endif
#endif

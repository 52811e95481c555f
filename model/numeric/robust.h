/* robust.h (model/numeric: pure numerics, below every model): leave-one-GPU-out evaluation of the cross-GPU models, break-even from measured
 * parts, interval coverage; and the robust fitter the cross-GPU models share.
 *
 * Errors are relative, (predicted - measured) / measured.  The 90% interval of a prediction
 * p is p * exp(+-w): w is calibrated on the TRAINING GPUs only (nested leave-one-out: for a
 * held-out GPU g, each training GPU h is predicted by a fit on the training GPUs other than
 * h; w is the 90% quantile of those |log residuals|), never on g.
 *
 * Break-even of a split (tokens T at which GEMM(ceil(T/TP)) + GATHER(T * out_bytes, TP)
 * becomes faster than GEMM(T) and stays so up to the grid's end), from curves: either
 * measured (monotone Steffen interpolation in log-log of the measured points) or a model.
 */
#ifndef TPS_MODEL_ROBUST_H
#define TPS_MODEL_ROBUST_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The 95% quantile of N(0,1): a 90% interval's half-width in log space is TPS_Z90 x a
 * lognormal spread (rsd), and a half-width / TPS_Z90 is the spread.  The one place it is written. */
#define TPS_Z90 1.6448536269514722

/* Scale of the soft-L1 loss on log residuals (5%: residuals beyond it count linearly). */
#define TPS_LOO_LOSS_SCALE 0.05

/* Residuals of a parameter vector x: fills r[0..n) (log(model/measured)) and w[0..n)
 * (weights >= 0).  Returns 0, or nonzero to abort the fit. */
typedef int (*tps_rf_resid)(const double *x, double *r, double *w, void *ctx);

/* Minimize sum_i w_i rho(r_i), rho the soft-L1 loss of scale c, over x[0..np) (in place),
 * by gsl_multifit_nlinear (trust region, LM, finite differences) on the pseudo-residuals
 * sign(r) sqrt(2 w rho(r)), from x and (nstarts > 1) one deterministic perturbation of it,
 * each run restarted once from its end point; keeps the best.
 * *loss (may be NULL) gets the final loss.  TPS_OK, TPS_ENOMEM or TPS_ENOCONV. */
int tps_robust_fit(double *x, int np, size_t n, tps_rf_resid f, void *ctx, double c, int max_iter, int nstarts,
                   double *loss);

/* Summary of relative errors: median and max of |e| (NaN entries skipped). */
typedef struct { size_t n; double med_abs, max_abs, mean_log; } tps_loo_err;
tps_loo_err tps_loo_summary(const double *rel, size_t n);

/* The q-quantile of |v| (GSL, linear between order statistics), NaN entries skipped, never
 * below floor_value: with v the log residuals of held-out predictions and q = 0.9, the
 * half-width of a 90% interval in log space. */
double tps_loo_quantile_abs(const double *v, size_t n, double q, double floor_value);

/* A curve t(x) for break-even searches: measured points interpolated in log-log (Steffen,
 * monotone, GSL), held flat below the first point and extended with the last two points'
 * log-log slope above the last; or a callback. */
typedef struct tps_loo_curve tps_loo_curve;
/* Measured twins (issue 27 item 8): rows M and M+1 (M >= 64) measured apart from their other
 * neighbours (>= 8 rows away), as AIConfigurator measures every tile boundary (128/129,
 * 4352/4353).  Where M+1 is slower, the pair is a step of the kernel's tiling and both points
 * stay (the curve steps between them); where M+1 is the faster, which one kernel cannot be,
 * the two differ by noise or by the library's choice of another kernel: one point, at their
 * row M (M+1 when they end the table: the measured range kept), time their geometric mean
 * (at M, not M + 1/2: a tile model evaluated between the two would count M+1's extra tile
 * into the shape the curve follows at M), half their
 * |log ratio| a floor of the curve's spread.  x increasing, t > 0; xo, to hold n values; the
 * count kept returned, *spread (may be NULL) the largest half |log ratio| merged (0: none).
 * Of the 9,550 such pairs in data/aic/gemm_*_k5120*.tsv.gz, 3,202 have M+1 faster (median
 * half |log ratio| 0.9%, 90% 4.4%; `sh tools/interp/twin_pairs.sh`). */
size_t tps_twins_merge(const double *x, const double *t, size_t n, double *xo, double *to, double *spread);
tps_loo_curve *tps_loo_curve_measured(const double *x, const double *t, size_t n);
tps_loo_curve *tps_loo_curve_fn(double (*fn)(double x, void *ctx), void *ctx);
double tps_loo_curve_eval(const tps_loo_curve *c, double x);
/* Is x inside the measured range (always 1 for a callback)? */
int tps_loo_curve_covers(const tps_loo_curve *c, double x);
void tps_loo_curve_free(tps_loo_curve *c);

/* Break-even tokens of a split at tp ranks: the smallest integer T in [1, t_max] from which
 * split(T) = gemm(ceil(T/tp)) + gather(T * out_bytes) < gemm(T) holds for every T' >= T up to t_max, on a grid of 64 points per octave.
 * Returns T, or 0 when the split never wins for good below t_max. */
double tps_loo_breakeven(const tps_loo_curve *gemm, const tps_loo_curve *gather, int tp, double out_bytes,
                         double t_max);
/* The decision at T: 1 split, 0 replicate. */
int tps_loo_split_wins(const tps_loo_curve *gemm, const tps_loo_curve *gather, int tp, double out_bytes, double T);

#ifdef __cplusplus
}
#endif
#endif

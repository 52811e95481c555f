/* sensitivity.h: how a prediction's break-even moves with each parameter (+-10%), and the inverse
 * questions: which gather bandwidth or GEMM throughput makes the split pay. */
#ifndef TPS_SENSITIVITY_H
#define TPS_SENSITIVITY_H
#include "model/predict/predict.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int knob;
  long be_minus, be_plus;  /* break-even with the knob at 0.9 and 1.1 (-1 never) */
} tps_sens;
/* Fills s[0..*ns) for the knobs this context uses (at most TPS_PK_N). */
int tps_pred_sensitivity(const tps_pred *p, long tmax, tps_sens *s, int *ns);

enum { TPS_INV_LINK = 0, TPS_INV_GEMM = 1 };
/* The scale x of all gather bandwidths (TPS_INV_LINK) or of the GEMM compute throughput
 * (TPS_INV_GEMM) at which split(T) = replicated(T) (gsl_root_fsolver_brent in log x on
 * [1e-3, 1e3]).  The split pays at T for gather bandwidths >= x times nominal (LINK), or
 * for GEMM throughputs <= x times nominal (GEMM).  Returns TPS_NA when no x in the
 * bracket works (*x = +inf: the floors alone exceed the saving; LINK) or every x works
 * (*x = 0 for LINK, +inf for GEMM). */
int tps_pred_inverse(const tps_pred *p, int what, long tokens, double *x);
/* "From T on": the scale x (same knobs as tps_pred_inverse) beyond which the break-even is
 * at most tokens, i.e. the split wins on every T in [tokens, tmax]: the smallest gather
 * bandwidth scale (LINK) or the largest GEMM throughput scale (GEMM), by bisection in log x
 * on [1e-3, 1e3] to 1e-6.  TPS_NA with *x = +inf or 0 as tps_pred_inverse. */
int tps_pred_inverse_from(const tps_pred *p, int what, long tokens, long tmax, double *x);
/* Set the knobs of p as tps_pred_inverse's x does (then e.g. tps_pred_breakeven tells
 * whether the split pays from those tokens on, not only at them). */
int tps_pred_inverse_apply(tps_pred *p, int what, double x);

#ifdef __cplusplus
}
#endif
#endif

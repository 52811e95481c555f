/* crossover.h: the break-even token count of a prediction context.
 *
 * Break-even: on the integer grid T = 1..tmax, the smallest T0 such that split(T) <
 * replicated(T) for every T in [T0, tmax]; -1 when the split does not win at tmax.
 * Every sign change of replicated - split is listed too.  Threshold: next power of two
 * >= break-even, or the next multiple of a user rounding. */
#ifndef TPS_CROSSOVER_H
#define TPS_CROSSOVER_H
#include <stddef.h>
#include "predict.h"
#include "status.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The TP sizes of the crossover grid by default (crossover, the main job, its figures):
 * TP 2, 4, 8 in one 8-GPU NVLink domain, 16 across two. */
#define TPS_GRID_NTP 4
extern const int tps_grid_tp[TPS_GRID_NTP];

#define TPS_CROSS_MAXCHG 32
typedef struct {
  long tmin, tmax;
  size_t nchg;                     /* sign changes found (may exceed the stored ones) */
  long chg[TPS_CROSS_MAXCHG];      /* first T of the new sign */
  int chg_wins[TPS_CROSS_MAXCHG];  /* 1: split wins from chg[i]; 0: stops winning there */
  long breakeven;                  /* smallest T0 with split winning on [T0, tmax]; -1 never */
} tps_crossover;

/* Generic: diff(T) = split(T) - replicated(T) (< 0: split wins) on T = tmin..tmax.
 * Returns TPS_EINVAL when diff is NaN somewhere or tmin > tmax. */
int tps_crossover_find(double (*diff)(long t, void *arg), void *arg, long tmin, long tmax,
                       tps_crossover *c);
/* The same on a prediction (dense scan, every integer T). */
int tps_pred_crossover(const tps_pred *p, long tmax, tps_crossover *c);
/* Break-even only (the dense scan's).  *be = -1 when never. */
int tps_pred_breakeven(const tps_pred *p, long tmax, long *be);
/* The same break-even by bisection: GEMM(1..tmax) is tabulated (cheaply, see pred_impl.h),
 * each gather backend is nondecreasing in T, so on [a, b] split <= max GEMM over rows
 * <= ceil(b/TP) + gather(b) and replicated >= min GEMM over [a, tmax]; intervals where
 * the bound decides are skipped.  Exact (equal to tps_pred_breakeven), much faster;
 * used by the bootstrap. */
int tps_pred_breakeven_fast(const tps_pred *p, long tmax, long *be);

/* Threshold from a break-even: rounding 0 = next power of two >= be, else the next
 * multiple of rounding.  -1 when be < 1. */
long tps_threshold(long be, long rounding);

#ifdef __cplusplus
}
#endif
#endif

/* xfer.h: transfer accuracy (issue 27 item 6): how close the answer the tool gives for a GPU
 * whose own measurements are removed comes to them.  Pure C, no I/O.
 *
 * The answer is the evidence hierarchy's (model/predict/resolve.h): a measured sibling where
 * one is (GEMM: its time at the same M and N moved to the target by the regime's spec ratio,
 * tps_resolve_sibling_gemm_us; gather: its time at the same size and GPU count as measured),
 * else the cross-GPU model.  Each answer carries its 90% interval, a half-width in log space:
 * the sibling's TPS_Z90 x its spread (tps_resolve_sibling_gemm_rsd, TPS_RESOLVE_SIBLING_GATHER_RSD),
 * else the model's (calibrated on the training GPUs).  Scored per held-out GPU, dtype and
 * (gather) GPU count: the median |answer / measured - 1|, beside the model alone and copying
 * the sibling as it is; coverage: the share of measured points inside their interval.
 *
 * Targets (issue 27 item 6), leaving one GPU out:
 *   GEMM (K 5120, N near 1792, M 1..16384): median <= 8%, and where a sibling was measured no
 *     more than 1 point worse than copying it;
 *   all-gather (2, 4, 8 GPUs, 64 KiB..64 MiB, NVLink GPUs): median <= 10%;
 *   the 90% intervals cover >= 85% of the measured points. */
#ifndef TPS_MODEL_XFER_H
#define TPS_MODEL_XFER_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/path.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_XFER_GEMM_MED 0.08       /* GEMM median |error| */
#define TPS_XFER_GEMM_SIB_SLACK 0.01 /* ... and at most 1 point above copying a measured sibling */
#define TPS_XFER_GATHER_MED 0.10     /* all-gather median |error| (NVLink GPUs) */
#define TPS_XFER_COVER 0.85          /* 90% intervals: share of points inside */

/* The score of answers pred[0..n) against measured meas[0..n), each with the 90% log
 * half-width hw[i] (hw NULL or hw[i] not finite and >= 0: no interval at that point, neither
 * counted in nint nor covered).  A point whose meas or pred is not finite and positive is not
 * scored. */
typedef struct {
  size_t n;       /* points scored */
  double med_abs; /* median |pred / meas - 1| (NaN when n is 0) */
  double max_abs; /* the largest (NaN when n is 0) */
  size_t covered; /* points with |log(pred / meas)| <= hw */
  size_t nint;    /* points scored that have an interval (coverage = covered / nint) */
} tps_xfer_err;
tps_xfer_err tps_xfer_score(const double *meas, const double *pred, const double *hw, size_t n);

/* The hierarchy's GEMM answer at one point of tgt: t_sib_us (> 0: sib's measured time at the
 * same M, N, K, path) moved to tgt, its half-width TPS_Z90 x tps_resolve_sibling_gemm_rsd;
 * else (t_sib_us not > 0 or sib NULL) the model's t_model_us with hw_model.  *hw gets the
 * half-width; *from_sib (may be NULL) 1 when the sibling answered. */
double tps_xfer_gemm_answer(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n, long k,
                            double t_sib_us, double t_model_us, double hw_model, double *hw, int *from_sib);
/* The same for a gather: the sibling's time as measured (same fabric), half-width TPS_Z90 x
 * TPS_RESOLVE_SIBLING_GATHER_RSD; else the model's. */
double tps_xfer_gather_answer(double t_sib_us, double t_model_us, double hw_model, double *hw, int *from_sib);

/* Target verdicts, 1 met.  med_copy: the median of copying the sibling (NaN: no sibling);
 * NaN medians are not met. */
int tps_xfer_gemm_met(double med, double med_copy);
int tps_xfer_gather_met(double med);
int tps_xfer_cover_met(size_t covered, size_t n);

#ifdef __cplusplus
}
#endif
#endif

/* gemm.h: GEMM latency model, Y[M x N] = X[M x K] W[N x K]^T on one kernel path.
 *
 *   t(M) = floor + ( t_stream^q + t_compute^q )^(1/q)                        [us]
 *   t_stream  = (K*N*wb + M*K*ab + M*N*ob) / bw                              (bytes / GB/s)
 *   t_compute = waves(M) * sms * 2*rt*ct*K / tflops                          (flops / TFLOP/s)
 *   waves(M)  = ceil( ceil(M/rt) * ceil(N/ct) / sms )                        (tile quantization)
 *
 * wb, ab: the path's weight and activation bytes per element; ob: output bytes per element;
 * rt, ct: the path's row and column tiles; q > 1 sets how sharply the two bounds combine
 * (q -> inf is the roofline max, q = 1 their sum).  Parameters are in microseconds, GB/s
 * and TFLOP/s so that they are O(1..1000) for the fitter.
 *
 * A second kind, TPS_GEMM_CURVE, interpolates a dense measured table (Steffen, monotone,
 * in log-log) for predictions on the same hardware and shape. */
#ifndef TPS_GEMM_H
#define TPS_GEMM_H
#include <stddef.h>
#include "gpu.h"
#include "path.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long k, n;         /* reduction and output width */
  double out_bytes;  /* bytes per output element: 2 (bf16) or 4 (fp32) */
} tps_gemm_shape;

/* Parameter indices of tps_gemm_model.p. */
enum {
  TPS_GP_FLOOR_US = 0, /* fixed cost, us */
  TPS_GP_BW_GBPS,      /* effective streaming bandwidth, GB/s */
  TPS_GP_TFLOPS,       /* effective compute throughput at full waves, TFLOP/s */
  TPS_GP_SHARP,        /* q, the combination exponent */
  TPS_GEMM_NPAR
};
extern const char *const tps_gemm_par_names[TPS_GEMM_NPAR]; /* "floor_us", "bw_gbps", ... */

enum { TPS_GEMM_PARAMETRIC = 0, TPS_GEMM_CURVE = 1 };

typedef struct tps_gemm_curve tps_gemm_curve; /* opaque; see tps_gemm_curve_alloc */

typedef struct {
  int kind;                 /* TPS_GEMM_PARAMETRIC or TPS_GEMM_CURVE */
  const tps_path *path;
  int sms;                  /* SMs of the GPU the parameters describe */
  double p[TPS_GEMM_NPAR];  /* parameters (PARAMETRIC) */
  tps_gemm_curve *curve;    /* not owned (CURVE) */
} tps_gemm_model;

/* Latency of one GEMM of m rows (m >= 1), us. NaN when the model is unusable. */
double tps_gemm_time_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m);

/* Spec-only model for a path on a GPU: floor, bandwidth and throughput from the GPU's
 * datasheet times the path's priors. Returns 0, or -1 when the path cannot run there. */
int tps_gemm_from_spec(tps_gemm_model *g, const tps_path *path, const tps_gpu *gpu);

/* Transfer a fitted model from the GPU it was measured on to another GPU and/or path:
 * compute term scaled by peak (of the destination path's precision) x efficiency ratio,
 * streaming term by HBM bandwidth, floor kept, sms replaced. */
int tps_gemm_transfer(tps_gemm_model *dst, const tps_gemm_model *src, const tps_gpu *src_gpu,
                      const tps_gpu *dst_gpu, const tps_path *dst_path);

/* Measured-curve mode: monotone interpolation of (m, t_us) in log-log.
 * m strictly increasing, t > 0, n >= 2. Outside the range: linear-in-m extrapolation
 * from the end points' slope. Returns NULL on bad input. */
tps_gemm_curve *tps_gemm_curve_alloc(const long *m, const double *t_us, size_t n);
void tps_gemm_curve_free(tps_gemm_curve *c);

#ifdef __cplusplus
}
#endif
#endif

/* gemm.h: GEMM latency model, Y[M x N] = X[M x K] W[N x K]^T on one kernel path.
 *
 * All times in microseconds, bandwidths in GB/s (1e3 bytes/us), throughputs in TFLOP/s
 * (1e6 flop/us), so every parameter is O(0.1..1000) for the fitter.
 *
 * The GEMM runs as a sequence of launches l = 1..L (L = 1 except on sliced paths, below):
 *
 *   t(M) = floor + sum_l [ launch + ( s_l^q + c_l^q )^(1/q) + red_l ]           [us]
 *   s_l  = (K*N*wb + R_l*K*ab + R_l*N*ob) / bw            streaming (weights once per launch)
 *   c_l  = R_l * 2*K*N / tflops * waves_l                 compute, R_l = padded rows of launch l
 *   red_l = reduce * b_l * max(0, sms / (par_l*ceil(N/ct)) - 1)   serial split-K reduction
 *
 * wb, ab: the path's weight and activation bytes per element; ob: output bytes per element;
 * rt, ct: the path's row and column tiles.  The smooth q-norm combines the streaming and
 * compute bounds (q -> inf: roofline max; q = 1: their sum); q is fixed (4) unless fitted.
 *
 * Output-tiled paths (path->slice_rows == 0: cuBLASLt bf16, native fp8): one launch, rows
 * padded to rt, tiles spread over the SMs in waves; with fewer tiles than SMs the library
 * splits K (s ways, s = min(floor(sms/tiles), floor(K/256)), at least 1) to fill them:
 *   tiles = ceil(M/rt) * ceil(N/ct) * s,  waves = ceil(tiles/sms),
 *   waves_l = waves*sms / tiles  (>= 1: the time of the idle SM slots of the last wave),
 *   and no reduction term.
 *
 * Sliced stream-K paths (path->slice_rows > 0: Marlin): M is padded to blocks of rt = 16 rows
 * and cut into slices of at most slice_rows = 64 rows (4 blocks).  One launch processes par
 * <= max_par full slices (vLLM's marlin host loop: par = (16*blocks_left - pad) / 64); the
 * rows left over after the full slices (fewer than 64) run as a last launch of their own.
 * So 96 rows = one launch of 64 + one of 32: the step that doubles the H20 time from 48 to
 * 96 tokens.  Inside a launch, K is split across the SMs (k-stripes); each output column
 * tile (ceil(N/ct) per slice) is then summed serially by about sms/(par*ceil(N/ct)) blocks,
 * one step per block, each step moving b_l blocks of 16 rows of partial sums (red_l).  With
 * many slices per launch the stripes cover whole columns and the reduction vanishes.
 * waves_l = 1 (stream-K spreads the work evenly).
 *
 * A second kind, TPS_GEMM_CURVE, interpolates a dense measured table (Steffen, monotone,
 * in log-log) for predictions on the same hardware and shape. */
#ifndef TPS_GEMM_H
#define TPS_GEMM_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/path.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long k, n;         /* reduction and output width */
  double out_bytes;  /* bytes per output element: 2 (bf16) or 4 (fp32) */
} tps_gemm_shape;

/* Parameter indices of tps_gemm_model.p. */
enum {
  TPS_GP_FLOOR_US = 0, /* fixed cost of the whole GEMM call, us */
  TPS_GP_BW_GBPS,      /* effective streaming bandwidth, GB/s */
  TPS_GP_TFLOPS,       /* effective compute throughput at full waves, TFLOP/s */
  TPS_GP_SHARP,        /* q, the combination exponent (>= 1) */
  TPS_GP_LAUNCH_US,    /* cost of each launch (pipeline fill and drain), us */
  TPS_GP_REDUCE_US,    /* one serial reduction step of a 16-row block (sliced paths), us */
  TPS_GEMM_NPAR
};
/* "floor_us", "bw_gbps", "tflops", "sharp", "launch_us", "reduce_us" */
extern const char *const tps_gemm_par_names[TPS_GEMM_NPAR];

/* Smallest K slice of a split-K output-tiled GEMM. */
#define TPS_GEMM_SPLITK_MIN_K 256.0

/* Default combination exponent (fixed in fits: the H20 data cannot identify it). */
#define TPS_GEMM_DEFAULT_SHARP 4.0

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

/* The part of tps_gemm_time_us that moves with neither HBM nor the tensor rate: floor + the
 * launches' fixed cost and serial reduction steps (their count set by the SMs).  NaN for
 * curves or bad input. */
double tps_gemm_fixed_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m);

/* The model as a prediction uses it: the running maximum of tps_gemm_time_us over 1..m, so
 * that more rows never take less time than fewer.  The launch model itself is not monotone
 * on sliced paths: vLLM's host loop runs an exact multiple of 64 rows as one launch of
 * several slices but 64j + s rows (0 < s < 64) as that launch plus one of s rows, which
 * streams every weight again and adds its serial reduction (B200: 120 rows 52.5 us, 128
 * rows 18.3 us in the H20 fit moved there).  No Marlin table here measures a row count on
 * both sides of such a step (the H20 table's rows are 6..96 and multiples of 64 above), so a
 * prediction does not credit the cheaper multiples: the plateau it draws instead is the
 * measured step's (48 -> 96 rows: 25.9 -> 49.6 us on the H20).  Fits use tps_gemm_time_us
 * (the measured rows are what they are).  Cost: about m/32 model calls (sliced paths). */
double tps_gemm_time_env_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m);
/* The same on a table t[0..n) of consecutive row counts: raises each value to the largest
 * before it; returns how many were raised. */
size_t tps_gemm_envelope(double *t, size_t n);

/* The launches a sliced path makes for m rows: fills rows[] and par[] (up to cap entries)
 * and returns the number of launches (may exceed cap; then only cap are filled).  For
 * output-tiled paths: one launch of the padded rows, par 1. */
long tps_gemm_launches(const tps_path *path, long m, long *rows, long *par, long cap);

/* The dense tensor peak that bounds a path's compute on a GPU, TFLOP/s: fp8 for paths with
 * fp8_peak, else bf16 (0 when the GPU has none). */
double tps_gemm_peak_tflops(const tps_gpu *gpu, const tps_path *path);

/* Spec-only model for a path on a GPU: floor, bandwidth and throughput from the GPU's
 * datasheet times the path's priors. Returns 0, or -1 when the path cannot run there. */
int tps_gemm_from_spec(tps_gemm_model *g, const tps_path *path, const tps_gpu *gpu);

/* Transfer a fitted model from the GPU it was measured on to another GPU and/or path:
 * compute term scaled by peak (of the destination path's precision) x efficiency ratio,
 * streaming term by HBM bandwidth, floor, launch and reduction step kept (across paths:
 * floor scaled by the paths' prior floors, reduction from the destination path's prior),
 * sms replaced. */
int tps_gemm_transfer(tps_gemm_model *dst, const tps_gemm_model *src, const tps_gpu *src_gpu,
                      const tps_gpu *dst_gpu, const tps_path *dst_path);

/* Measured-curve mode: monotone interpolation of (m, t_us) in log-log.
 * m strictly increasing, t > 0, n >= 2. Below the first point: the first point's time (a
 * floor); above the last: linear in m with the last two points' slope. Returns NULL on bad
 * input. */
tps_gemm_curve *tps_gemm_curve_alloc(const long *m, const double *t_us, size_t n);
void tps_gemm_curve_free(tps_gemm_curve *c);

#ifdef __cplusplus
}
#endif
#endif

/* gemm.h: the GEMM paths on one GPU, C-callable (used by bench gemm, bench split, tests).
 *
 *   Y[M x N] = X[M x K] * W[N x K]^T      X, Y: bf16 row-major on the device; fp32 accumulation.
 *
 * Paths (model/core/path.h ids; names as on the command line):
 *   dense-bf16  cuBLASLt bf16 x bf16 -> bf16.
 *   native-fp8  cuBLASLt FP8 E4M3 x E4M3 -> bf16 (the SM90 stand-in for a native FP8 path).
 *               W quantized once per tensor at plan creation; X quantized per tensor on
 *               every run by our own two small kernels (amax, then scale+convert), which
 *               are part of tps_gemm_run and can be enqueued alone (tps_gemm_run_part).
 *   w8a16       our kernels in the role of Marlin W8A16: FP8 E4M3 weights with one UE8M0
 *               (power-of-two, E8M0 byte) scale per 1x32 block along K, dequantized in
 *               registers, bf16 tensor-core MMA, fp32 accumulation: on SM90 (sm_90a build)
 *               wgmma kernels fed by TMA (gemm_w8a16_sm90.cu), elsewhere mma.sync tiles
 *               (gemm_w8a16.cu); tps_w8_choose picks by M.
 *   w8a16-ref   the simplest correct W8A16 kernel (one thread per output, fp32), kept as the
 *               reference the fast one is checked against.
 *   fp8-block   cuBLASLt FP8 E4M3 x E4M3 -> bf16 with block scales (W8A8 as DeepSeek-V3 runs):
 *               W with one fp32 scale per 128x128 block (quantized at plan creation), X with
 *               one fp32 scale per row and 128 columns, quantized on every run by our kernel
 *               (gemm_fp8block.cu; QUANT and MATMUL parts as native-fp8).  SM90 only: where
 *               cuBLASLt has no algorithm, creation (or the run) returns TPS_SKIP.
 * Shapes: K a multiple of 64 (fp8-block: 128), N a multiple of 16 (all paths); any M >= 0
 * (M = 0 enqueues nothing).
 *
 * Everything returns TPS_OK (0) or TPS_ERR (model/core/status.h) after printing one line, or
 * TPS_SKIP (fp8-block: this GPU's cuBLASLt cannot run the shape).
 * A plan belongs to the device that was current at creation; run it with that device
 * current.  tps_gemm_run only enqueues on the stream: it is CUDA-graph capturable and
 * allocates nothing (all workspace is sized for max_m at creation). */
#ifndef TPS_KERNELS_GEMM_H
#define TPS_KERNELS_GEMM_H
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include "model/core/path.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Paths are the model's (model/core/path.h): tps_path_id, named by tps_path_name; the ones
 * kernels/ can run carry TPS_PATH_F_BENCH (tps_path_find_for(name, TPS_PATH_F_BENCH)). */

/* What the checks may expect of a path's kernel (bench gemm, bench split, tests). */
typedef struct {
  int quant_part;        /* 1: TPS_GEMM_PART_QUANT enqueues work (activation quantization) */
  int rows_independent;  /* 1: with the same configuration (tps_gemm_config id) a row's bits do
                          * not depend on the other rows of the batch: split == replicated bitwise */
  double split_rel_diff; /* split vs replicated relative Frobenius difference allowed */
  int reference;         /* tps_path_id of the kernel this one is checked against, -1: none */
} tps_gemm_traits;

/* The traits of path p; NULL when kernels/ has no kernel for p. */
const tps_gemm_traits *tps_gemm_traits_of(int p);

typedef struct tps_gemm tps_gemm; /* opaque plan: weights on the device, workspace, handles */

/* Create a plan for path p from float weights w_host[N x K] (row-major, host): quantized per
 * the path (bf16; per-tensor E4M3; E4M3 + fp32 per 128x128; E4M3 + E8M0 per 1x32) and
 * uploaded. max_m bounds M. */
int tps_gemm_create(tps_gemm **g, tps_path_id p, int n, int k, int max_m, const float *w_host);
/* Same for the W8A16 paths from already quantized weights: q[N x K] E4M3 bytes, scales
 * s[N x K/32] E8M0 bytes (1x32 layout; see w8quant.h to expand a 32x32 checkpoint). */
int tps_gemm_create_w8(tps_gemm **g, tps_path_id p, int n, int k, int max_m,
                       const uint8_t *q, const uint8_t *s);
void tps_gemm_destroy(tps_gemm *g);

/* Enqueue Y = X W^T for m rows on stream s. x: m x K bf16, y: m x N bf16 (device). */
int tps_gemm_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s);

/* Parts of a run, for timing them separately (native-fp8, fp8-block: QUANT = activation
 * quantization into the plan's buffer, MATMUL = the cuBLASLt FP8 GEMM on that buffer, with
 * fp8-block's copy out of a padded result where it pads; other paths have no QUANT part: it
 * enqueues nothing). TPS_GEMM_PART_ALL = tps_gemm_run. */
enum { TPS_GEMM_PART_QUANT = 1, TPS_GEMM_PART_MATMUL = 2, TPS_GEMM_PART_ALL = 3 };
int tps_gemm_run_part(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts);

/* The weights exactly as the GEMM uses them, dequantized to double: w[N x K] (host). */
int tps_gemm_weights(const tps_gemm *g, double *w);
/* Rows row0..row0+nrows-1 of the activations exactly as the GEMM used them in the last run
 * on x (synchronizes the device): bf16 X for dense/w8a16 (read from x), the dequantized FP8
 * activations for native-fp8 and fp8-block. xd[nrows x K] (host). */
int tps_gemm_activations(const tps_gemm *g, const void *x, int row0, int nrows, double *xd);

/* One line describing the kernel configuration used for m rows (tile, split-K, cuBLASLt
 * algorithm id), and a number that is equal for two m exactly when the configuration is
 * the same (rows are then computed by the same instruction sequence: bitwise identical
 * per row for dense-bf16 (same algo) and the w8a16 paths). */
int tps_gemm_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *config_id);

/* Shape and path of a plan. */
int tps_gemm_n(const tps_gemm *g);
int tps_gemm_k(const tps_gemm *g);
tps_path_id tps_gemm_get_path(const tps_gemm *g);
/* Bytes of weights (incl. scales) the GEMM reads from HBM; FLOPs for m rows = 2 m N K. */
double tps_gemm_weight_bytes(const tps_gemm *g);

/* cuBLASLt version (cublasLtGetVersion), for provenance lines; loads cuBLASLt (its first call
 * costs its initializers, 0.3-0.9 s) and answers 0 where it cannot be loaded. */
size_t tps_gemm_cublaslt_version(void);

#ifdef __cplusplus
}
#endif
#endif

/* gemm_internal.h: the plan behind tps_gemm (kernels/gemm/gemm.h) and the table of operations each
 * kernel path fills (tps_gemm_ops), shared by the kernels/gemm*.cu files only. */
#ifndef TPS_KERNELS_GEMM_INTERNAL_H
#define TPS_KERNELS_GEMM_INTERNAL_H
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#include "kernels/gemm/gemm.h"
#include "model/core/w8plan.h"

/* Fast W8A16 kernel configuration for one M (see gemm_w8a16.cu). */
enum { TPS_W8K_STREAM = 0, TPS_W8K_MMA = 1, TPS_W8K_WGMMA = 2, TPS_W8K_SPLIT = 3, TPS_W8K_SK = 4 }; /* kernel kinds */
typedef struct {
  int kind;                    /* TPS_W8K_*: stream (small M), mma (mma.sync tiles), wgmma (SM90) */
  int bt;                      /* stream: tokens per block (8 * token tiles); wgmma: tokens per tile */
  int bm, bn, stages, threads; /* block tile, pipeline depth, threads per block */
  int splits;                  /* split-K factor (1: no split) */
  int mtiles, ntiles;
  int variant;                 /* index in the kernel table */
  int head;                    /* wgmma: rows run first as whole waves of 256-token tiles; the
                                * m - head rows after them by their own pick (0: one launch) */
  size_t smem_bytes;
} tps_w8_cfg;

enum { TPS_SC_X = 64, TPS_SC_AMAX = 128, TPS_SC_LEN = 192 };
enum { TPS_W8_REC_BYTES = 128 * 64 + 2 * 128 }; /* one packed record (w_rec) */

typedef struct tps_gemm_ops tps_gemm_ops;

/* What the SM90 w8a16 kernels of one plan can run at once on its device, read when the plan is made
 * (kernels/gemm/gemm_w8a16_sm90.cu, tps_w8g_prepare; 0: unknown, or not an SM90 device).  Per plan, not per
 * process: a process with plans on two devices of different SM counts (other GPUs, MIG instances) gives
 * each launch its own device's counts; a stream-K grid sized by another device's could wait forever
 * for blocks that never become resident, and overrun the plan's workspace. */
#define TPS_W8_OCC_MAX 16
typedef struct {
  int s_clusters[TPS_W8_OCC_MAX];  /* 128-row stream form (svariants): clusters of TPS_W8C_SPLITS at once */
  int s3_clusters[TPS_W8_OCC_MAX]; /* 192-row stream form (s3variants) */
  int sp_slots[TPS_W8_OCC_MAX];    /* split kernel (spvariants): blocks at once */
  int sk_slots[TPS_W8_OCC_MAX];    /* stream-K kernel (skvariants): resident blocks */
  int sk2_slots;                   /* the 256-token stream-K kernel: resident blocks */
} tps_w8_occ;

struct tps_gemm {
  tps_path_id path;
  const tps_gemm_ops *ops;      /* the path's operations */
  int n, k, max_m, device, num_sms;
  /* dense-bf16 */
  void *w_bf16;                 /* N x K bf16 */
  /* native-fp8 */
  uint8_t *w_fp8;               /* N x K E4M3, per-tensor scale */
  float w_scale_host;           /* W = w_fp8 * w_scale */
  float *d_scales;              /* [0] w scale, [TPS_SC_X] x scale, [TPS_SC_AMAX] x amax (bits, atomics);
                                   each in its own 256-byte slot (cuBLASLt scale pointer alignment) */
  uint8_t *x_fp8;               /* max_m x K, quantized activations */
  /* w8a16 (both kernels) */
  uint8_t *w_q;                 /* N x K E4M3: plain layout (ref) or k64-permuted (fast) */
  uint8_t *w_s;                 /* ref: N x K/32 ; fast (mma, wgmma): transposed, K/32 x N */
  int wgmma_ok;                 /* the sm_90a kernels (stream, wgmma) can run on this device */
  uint64_t tm_rec[16];          /* SM90 kernels: w_rec as a 3D tensor map (CUtensorMap, 128 bytes) */
  uint8_t *w_rec;               /* SM90 kernels: packed records, one per 128-row block rb and 64-wide
                                   chunk c at (rb * K/64 + c) * TPS_W8_REC_BYTES: the 128 rows' 64
                                   k64-permuted bytes ([128][64]), each 4-byte word in the record
                                   encoding (tps_w8_rec_encode4), then their 2 scale bytes ([2][128]);
                                   rows past N are zeros */
  uint8_t *h_q, *h_s;           /* host copies in the plain 1x32 layout (for tps_gemm_weights) */
  float *part;                  /* split-K partial sums (mma kernel) */
  size_t part_bytes;
  int *counters;                /* split-K arrival counters, one per output tile (zeroed) */
  int ncounters;
  float *sk_ws;                 /* stream-K kernel (SM90): fp32 partials, one 128 x 128 tile per block */
  int *sk_flags;                /* stream-K kernel: a flag per block (zero between launches) */
  int sk_blocks;                /* blocks sk_ws and sk_flags hold */
  tps_w8_occ occ;               /* SM90 w8a16 kernels: what this plan's device runs at once (tps_w8g_prepare) */
  void *priv;                   /* a path's own state beyond these fields (its release frees it) */
  /* cuBLASLt */
  cublasLtHandle_t lt;
  void *lt_ws;
  size_t lt_ws_bytes;
};

/* One kernel path: what kernels/gemm/gemm.cu calls for a plan of that path.  The file of the path
 * defines one and registers it with TPS_GEMM_PATH_OPS; gemm.cu finds it by id.  (The
 * kernels/ objects are linked directly, not from an archive, so every registration runs.) */
struct tps_gemm_ops {
  tps_path_id id;
  tps_gemm_traits traits;
  /* Weights: exactly one of the two.  upload: quantize float w[N x K] per the path and
   * upload; upload_w8: the path takes E4M3 + E8M0 1x32 weights, in g->h_q and g->h_s. */
  int (*upload)(tps_gemm *g, const float *w);
  int (*upload_w8)(tps_gemm *g);
  /* Enqueue the parts (TPS_GEMM_PART_*) of Y = X W^T for 1 <= m <= max_m rows. */
  int (*run)(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts);
  int (*config)(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id);
  /* The weights as used, w[N x K]; NULL: dequantize the 1x32 host copy (upload_w8 paths). */
  int (*weights)(const tps_gemm *g, double *w);
  /* Activations as the last run used them, elements off..off+mk of x (the device is
   * synchronized); NULL: x itself, bf16. */
  int (*activations)(const tps_gemm *g, const void *x, size_t off, size_t mk, double *xd);
  void (*release)(tps_gemm *g); /* frees what upload made beyond the plan's fields; may be NULL */
};

#ifdef __cplusplus
extern "C" {
#endif
/* gemm.cu: make ops the operations of its path (at load time, through TPS_GEMM_PATH_OPS). */
int tps_gemm_register(const tps_gemm_ops *ops);
#define TPS_GEMM_PATH_OPS(ops) \
  static const int ops##_registered_ __attribute__((used)) = tps_gemm_register(&(ops))
/* gemm_cublaslt.cu: the cuBLASLt handle and workspace of a plan (g->lt, g->lt_ws, g->lt_ws_bytes),
 * shared by the cuBLASLt paths (dense-bf16, native-fp8, fp8-block) */
int tps_lt_setup(tps_gemm *g);
void tps_lt_release(tps_gemm *g);
/* D = A op B with the heuristic's first candidate of algo[0..nalgo-1], or the next one where
 * cuBLASLt refuses it at launch (CUBLAS_STATUS_NOT_SUPPORTED); alpha 1, beta 0, C = D. */
cublasStatus_t tps_lt_matmul_first(const tps_gemm *g, cublasLtMatmulDesc_t op, const void *a,
                                   cublasLtMatrixLayout_t la, const void *b, cublasLtMatrixLayout_t lb,
                                   void *d, cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo,
                                   int nalgo, cudaStream_t s);
/* "cuBLASLt algo A tile T stages S split-K K" of an algorithm into buf, and *hash its FNV-1a
 * over the whole opaque struct (continue it with tps_fnv1a for more bytes). */
void tps_lt_algo_describe(const cublasLtMatmulAlgo_t *algo, char *buf, size_t bufsz, uint64_t *hash);
uint64_t tps_fnv1a(uint64_t h, const void *bytes, size_t n);
/* gemm_w8a16.cu */
/* the dispatch rule's view of this plan: its device's occupancy and the TPS_W8_* overrides */
void tps_w8_geom_of(const tps_gemm *g, tps_w8_geom *q);
int tps_w8_choose(const tps_gemm *g, int m, tps_w8_cfg *c);
/* the integer value of environment variable `name` (a tuning override), dflt if unset or not
 * an integer */
int tps_w8_env_int(const char *name, int dflt);
/* gemm_w8a16_sm90.cu */
enum { TPS_W8C_SPLITS = TPS_W8P_STREAM_SPLITS }; /* stream kernel: cluster split-K (one launch per token tile) */
int tps_w8g_prepare(tps_gemm *g); /* sets wgmma_ok (both SM90 kernels can run) */
int tps_w8g_run(tps_gemm *g, const void *x, void *y, int m, int bt, cudaStream_t s);
int tps_w8c_tokens(const tps_gemm *g, int m); /* stream kernel: token tile for m rows (16, 32, 48, 64, 128) */
int tps_w8c_rows(const tps_gemm *g, int t); /* stream kernel: weight rows a block for a t-token tile (128, or 192 where that saves a wave) */
int tps_w8k_slots(const tps_gemm *g, int bt);       /* stream-K kernel: resident blocks of a bt-token tile (0: unknown) */
/* split kernel (mid M): bt tokens (64, 128) x 128 weight rows per block, cluster split-K
 * `splits` (1, 2, 4, 8), every token tile in one launch */
int tps_w8s_run(tps_gemm *g, const void *x, void *y, int m, int bt, int splits, cudaStream_t s);
int tps_w8s_slots(const tps_gemm *g, int bt, int splits); /* blocks of that form that run at once (0: unknown) */
/* stream-K kernel (mid and large M): bt tokens (64, 128) x 128 weight rows per tile, a persistent
 * grid of tps_w8k_grid blocks sharing the (tile, 64-wide chunk) iterations equally */
int tps_w8k_run(tps_gemm *g, const void *x, void *y, int m, int bt, cudaStream_t s);
int tps_w8k_grid(const tps_gemm *g, int m, int bt);
/* stream kernel: how every tile exchanges its split-K partials (TPS_W8_SUM=0|1|4 forces one;
 * default 4, st.async): stored into the owner's shared memory by each thread with plain
 * remote stores and a cluster barrier (push), loaded from the others' (pull), or sent by
 * st.async from the accumulators, completing on the owner's mbarrier (async); the sums are in
 * the same order, so all three give the same bits.  (TPS_W8_SUM=2 and 3 name no form:
 * partials through L2 and by bulk copies are slower, data/h200_gemm_tuning.txt.) */
/* the forms, as indices of the kernel tables; TPS_W8_SUM takes 0, 1 and 4 for them */
enum { TPS_W8C_SUM_PUSH = 0, TPS_W8C_SUM_PULL = 1, TPS_W8C_SUM_ASYNC = 2, TPS_W8C_NSUM = 3 };
extern const char *const tps_w8c_sum_name[TPS_W8C_NSUM]; /* "pushed", "pulled", "by st.async" */
int tps_w8c_sum(void);
int tps_w8c_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s);
/* Developer traces of the stream kernel (tests/unit/kernels/w8trace.c): with buf != NULL, later launches
 * use the traced forms, whose thread 0 of block b stores clock64 at phase boundaries to
 * buf[b * TPS_W8_TR_STRIDE + TPS_W8_TR_*] (cycles; GT0/GT1 %globaltimer ns; 0 = not
 * reached by that form); flags (TPS_W8_SKIP_*) leave phases out.  NULL: production forms. */
enum {
  TPS_W8_TR_GT0 = 0, TPS_W8_TR_C0 = 1, TPS_W8_TR_ISSUED = 2, TPS_W8_TR_SMID = 3,
  TPS_W8_TR_CHUNK = 4, /* + j: chunk j of the block's K range has landed (up to 10) */
  TPS_W8_TR_MMA = 14,  /* every MMA of the block's warp 0 done */
  TPS_W8_TR_RED0 = 15, /* split-K sum starts (after the block / cluster barrier before it) */
  TPS_W8_TR_RED1 = 16, /* partials exchanged (after the cluster barrier) */
  TPS_W8_TR_RED2 = 17, /* sums stored */
  TPS_W8_TR_END = 18,  /* past the last cluster barrier (pull form) */
  TPS_W8_TR_GT1 = 19, TPS_W8_TR_SLOTS = 20, TPS_W8_TR_STRIDE = 32
};
enum { TPS_W8_SKIP_MMA = 1, TPS_W8_SKIP_SUM = 2, TPS_W8_SKIP_X = 4, TPS_W8_SKIP_DEQ = 8 };
void tps_w8c_set_trace(unsigned long long *buf, int flags);
#ifdef __cplusplus
}
#endif
#endif

/* xgemm.h: a GEMM latency model that transfers across GPUs, Y[M x N] = X[M x K] W[N x K]^T.
 *
 * One parameter vector per kernel path (dense bf16, per-tensor fp8 with its activation
 * quantization: the vendor library paths of cuBLASLt / TRT-LLM's torch flow), shared by
 * every GPU; the GPU enters only through its datasheet (tps_gpu: SMs, tensor peak of the
 * path's precision, HBM bandwidth, L2 size, compute capability).  Times in us, bandwidths
 * in GB/s (1e3 B/us), throughputs in TFLOP/s (1e6 flop/us).
 *
 *   t(M) = floor + quant(M) + min over tilings c of [ (s_c^4 + c_c^4)^(1/4) + fixup_c ]
 *
 * Tilings c = (tm, tn, sk): output tiles tm x tn in {16x128, 32x128, 64x64, 64x128, 128x128,
 * 128x256, 256x128} (the small-row ones stand for the libraries' swap-AB / skinny kernels),
 * each with split-K sk in {1, 2, 4, 8} (K/sk >= 256), and, on architectures whose vendor
 * kernels are persistent with a stream-K scheduler (SM90, SM100), a stream-K form.  The
 * library's choice is modelled as the best of them (its heuristic picks one; where it picks
 * worse, the model is too fast, and the leave-one-GPU-out error says by how much).
 *   ctas    = ceil(M/tm) ceil(N/tn) sk
 *   waves   = ceil(ctas / SMs)   (stream-K: max(1, ctas / SMs), no tail wave)
 *   c_c     = waves * (2 tm tn K' / (peak/SMs * eff_max) + (tm + tn) K' ab / feed + tile_us)
 *             K' = K/sk; feed = operand_bytes_clk_sm * clock (operand bytes an SM's MMA can
 *             be fed per us: small tiles reuse less, so they run below eff_max)
 *   s_c     = bytes / (bw * occ),  bytes = W + M K ab + M N ob (+ 2 sk M N 4: fp32 partials)
 *   occ     = min(1, ctas / (sat_frac SMs))    too few CTAs cannot saturate the memory
 *   bw      = stream_eff * HBM; weights resident in L2 (below): max(that, L2 rate),
 *             L2 rate = l2_bytes_clk_sm * SMs * clock
 *   clock   = bf16 peak / (SMs * dense bf16 flop per clock per SM of the architecture:
 *             2048 SM80, 1024 SM86/89/120, 4096 SM90, 8192 SM100; NVIDIA whitepapers)
 *   fixup_c = splitk_us when sk > 1, streamk_us for the stream-K form
 *   quant   = M K quant_bytes / (stream_eff HBM)      (fp8: amax and convert passes over X)
 * W = K N wb; wb/ab/ob bytes per weight/activation/output element (bf16 2/2/2, fp8 1/1/2).
 *
 * Measurement harness (tps_xg_harness).  AIConfigurator (TPS_XG_AIC): mean of CUDA-graph
 * replays, no L2 flush, cycling copies = min(5, ceil(L2/W)) weight copies (its collector):
 * when copies * W <= L2 the weights stay resident.  tpsplit bench (TPS_XG_FLUSHED): L2
 * flushed before every replay (weights from HBM); median of 50 CUPTI spans of one replay;
 * its own fixed cost floor_bench_us, fitted only when such points are in the fit (else the
 * spec-only tps_xg_bench_floor_spec_us: the AIC floor holds the framework's other ops). */
#ifndef TPS_MODEL_XGEMM_H
#define TPS_MODEL_XGEMM_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/harness.h"
#include "model/core/path.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Kernel paths of the cross-GPU model (a path row's xgemm_form, model/core/path.c).  fp8-block
 * and nvfp4 quantize their activations as native-fp8 does (quant_bytes), with the fp8 and the
 * FP4 tensor peak (tps_gpu.fp4_tflops) bounding their compute; their element bytes are their
 * path rows' (scales included). */
typedef enum { TPS_XG_BF16 = 0, TPS_XG_FP8, TPS_XG_FP8BLOCK, TPS_XG_NVFP4, TPS_XG_NPATH } tps_xg_path;
extern const char *const tps_xg_path_names[TPS_XG_NPATH]; /* "dense-bf16", "native-fp8", "fp8-block", "nvfp4" */
/* Does the form quantize its activations (quant term, quant_bytes fitted)? */
int tps_xg_quantizes(tps_xg_path path);
/* The path row a form models (model/core/paths: model TPS_PATH_MODEL_XGEMM, xgemm_form); NULL none. */
const tps_path *tps_xg_path_row(tps_xg_path path);

enum {
  TPS_XG_FLOOR_US = 0, /* fixed cost of the call (AIConfigurator harness) */
  TPS_XG_STREAM_EFF,   /* fraction of HBM bandwidth when streaming at full occupancy */
  TPS_XG_L2_BPC_SM,    /* L2 streaming bytes per clock per SM (weights L2 resident) */
  TPS_XG_SAT_FRAC,     /* fraction of the SMs whose CTAs saturate the memory system */
  TPS_XG_EFF_MAX,      /* fraction of the tensor peak reached by the MMA issue */
  TPS_XG_OPERAND_BPC,  /* operand feed per SM, bytes per clock (shared memory / L2 to MMA) */
  TPS_XG_TILE_US,      /* fixed cost per wave of tiles (prologue, epilogue), us */
  TPS_XG_SPLITK_US,    /* split-K reduction cost, us */
  TPS_XG_STREAMK_US,   /* stream-K fix-up cost (persistent-scheduler architectures), us */
  TPS_XG_QUANT_BYTES,  /* fp8: bytes moved per activation element by the quantization */
  TPS_XG_FLOOR_BENCH_US, /* fixed cost under tpsplit bench (CUPTI span of one replay) */
  TPS_XG_NPAR
};
extern const char *const tps_xg_par_names[TPS_XG_NPAR];

/* native-fp8 under tpsplit bench: our per-tensor activation quantization runs as extra graph
 * nodes before the GEMM (kernels/gemm/gemm_cublaslt.cu quantize: a 4-byte memset, amax, scale and
 * convert), none of which an AIConfigurator table has (its fp8 Linear has its own ops, in its
 * floor).  Their fixed cost is modelled from the code, not fitted: each node a graph launch gap
 * plus a short kernel (TPS_XG_NODE_US, assumed).  It enters floor_bench_us when no tpsplit bench
 * point is in the fit (otherwise the fit measures it); the bytes they move per activation
 * element are the quant_bytes term (prior 5: bf16 read twice, E4M3 written once). */
#define TPS_XG_BENCH_QUANT_NODES 3
#define TPS_XG_NODE_US 1.0
/* The GEMM kernel's own fixed cost (the bf16 prior: the brief's >= 2.5 us per cuBLAS GEMM in a
 * graph plus the pipeline fill). */
#define TPS_XG_KERNEL_FLOOR_US 4.0
/* floor_bench_us when no tpsplit bench point is fitted: the kernel floor, plus the
 * quantization nodes for native-fp8 (spec-only, from the code). */
double tps_xg_bench_floor_spec_us(tps_xg_path path);

typedef struct {
  tps_xg_path path;
  double p[TPS_XG_NPAR];
  double sharp;          /* q of the stream/compute combination (fixed) */
} tps_xg_model;

/* The model's harness kinds are model/core/harness.h's ids. */
enum { TPS_XG_AIC = TPS_HARNESS_AIC, TPS_XG_FLUSHED = TPS_HARNESS_BENCH };
typedef struct {
  int kind;              /* TPS_XG_AIC (no flush, weight copies cycled) or TPS_XG_FLUSHED */
} tps_xg_harness;

/* Prior parameter values of a path (the starting point of fits; sources in xgemm.c). */
void tps_xg_prior(tps_xg_model *m, tps_xg_path path);
/* Which parameters a fit of the path adjusts (quant_bytes only for fp8). */
int tps_xg_par_free(tps_xg_path path, int j);

/* Latency of one GEMM of m rows, us; NaN when the GPU lacks the path's peak or input is
 * invalid.  best (may be NULL) receives the index of the winning tiling. */
double tps_xg_time_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, long rows, long n,
                      long k, int *best);
/* The same with the search started from *hint (-1: none; the index a previous call left there,
 * updated here): the same value, faster when consecutive calls ask nearby rows. */
double tps_xg_time_hint_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, long rows, long n, long k,
                           int *hint);
/* tps_xg_time_us at rows[0..nrows-1] into t[]: the GPU's rates set up once, each row's search
 * started from the previous row's best tiling (the same values, faster in increasing rows). */
void tps_xg_times_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, const long *rows, size_t nrows,
                     long n, long k, double *t);
/* The tiling of an index: tile rows, tile columns, split-K parts.  -1 when out of range. */
int tps_xg_tiling(int idx, int *tm, int *tn, int *sk);
/* The SM clock implied by the bf16 peak, GHz (NaN for an unknown architecture). */
double tps_xg_clock_ghz(const tps_gpu *gpu);
/* Can the GPU run the path (tensor peak of its precision known)? */
int tps_xg_supported(const tps_gpu *gpu, tps_xg_path path);

/* One measured point of a fit. */
typedef struct {
  const tps_gpu *gpu;
  tps_xg_harness harness;
  long m, n, k;
  double t_us;
  double weight;         /* relative weight in the loss (e.g. 1 / points of its GPU) */
} tps_xg_point;

/* Fit the free parameters of m (starting from m's values) to the points: robust loss
 * (soft-L1 on log(model/measured), scale 0.05, plus a weak pull of each log parameter
 * towards its prior) by gsl_multifit_nlinear (tps_robust_fit: nstarts 1 or 2).
 * Deterministic.  Returns TPS_OK, TPS_ETOOFEW, TPS_ENOCONV or TPS_EBADDATA. */
int tps_xg_fit(tps_xg_model *m, const tps_xg_point *pts, size_t npts, int max_iter, int nstarts);

/* ------------------------------------------------------------------ our W8A16 kernels
 *
 * The w8a16 path (kernels/gemm/gemm_w8a16*.cu) on SM90 follows the kernels' own dispatch rule
 * (model/core/w8plan.h, asked with the GPU's SM count): for m rows the rule picks one launch, or
 * whole 256-token waves first and a second launch for the rows left, and models each launch's
 * time from per-chunk costs measured on an H100.  This model prices the launches it picks:
 *  - the stream kernel (M <= 64, and 65..128 where the rule picks it): token tile bt (16, 32,
 *    48, 64, 128), L = ceil(M/bt) launches, each over all the weights (split-K cluster of 8):
 *      t = L * (stream_us + qnorm4(W / stream_gbps, 2 bt N K / stream_tflops))
 *  - the split, stream-K and 256-token wgmma launches: t = launch_us + plan_scale * (the rule's
 *    modelled time of the launch: waves x chunks x us per chunk + its fixed terms)
 * summed over the launches.  W = K N (1 + 1/32) bytes (FP8 E4M3 and one E8M0 scale per 32).
 * Fitted to data/h100_w8a16_grid_5120x1792_w8a16.tsv (the dispatch of issue 28, lent H100);
 * another SM90 GPU: stream_gbps by HBM, stream_tflops by the bf16 peak, plan_scale by the
 * per-SM bf16 rate (model/predict/parts.c, tps_xw8_transfer). */
enum {
  TPS_XW8_STREAM_US = 0, /* per stream launch */
  TPS_XW8_STREAM_GBPS,   /* weight streaming rate of a stream launch */
  TPS_XW8_STREAM_TFLOPS, /* compute rate of a stream launch */
  TPS_XW8_LAUNCH_US,     /* per split, stream-K or wgmma launch, beside the rule's own terms */
  TPS_XW8_PLAN_SCALE,    /* the rule's modelled time of such a launch -> this GPU's (1: the H100 it was measured on) */
  TPS_XW8_NPAR
};
extern const char *const tps_xw8_par_names[TPS_XW8_NPAR];

typedef struct { double p[TPS_XW8_NPAR]; } tps_xw8_model;

void tps_xw8_prior(tps_xw8_model *m, const tps_gpu *gpu);
/* Latency of the w8a16 path for m rows, us (NaN when invalid).  kind (may be NULL): the
 * rule's kernel of the (first) launch, a tps_w8p_kind (model/core/w8plan.h). */
double tps_xw8_time_us(const tps_xw8_model *m, const tps_gpu *gpu, long rows, long n, long k, int *kind);
/* The regime of m rows: rows of one regime run the same launches (kernel, tile, split-K or
 * grid, waves, head), so their modelled time is one value; a key, equal for the same regime. */
long tps_xw8_regime(const tps_gpu *gpu, long rows, long n, long k);
/* Fit to measured (rows[i], t_us[i]) of one GPU and shape; skip (>= 0) leaves that point
 * out (leave-one-M-out).  TPS_OK, TPS_ETOOFEW, TPS_EBADDATA, TPS_ENOCONV. */
int tps_xw8_fit(tps_xw8_model *m, const tps_gpu *gpu, long n, long k, const long *rows, const double *t_us,
                size_t npts, long skip);

#ifdef __cplusplus
}
#endif
#endif

/* gemm_fp8block.cu: the fp8-block path, W8A8 FP8 with block scales as engines run
 * DeepSeek-V3-style checkpoints, through cuBLASLt's block-scaled FP8 GEMM (SM90).
 *
 *   Y[M x N] = X[M x K] W[N x K]^T, bf16 in and out, fp32 accumulation, where
 *   W = Wq * sw: E4M3 Wq with one fp32 scale per 128x128 block, quantized at plan creation;
 *   X = Xq * sx: E4M3 Xq with one fp32 scale per row and 128 columns (1x128), quantized on
 *       every run by fb_quant_kernel (TPS_GEMM_PART_QUANT), then the FP8 GEMM
 *       (TPS_GEMM_PART_MATMUL).
 * A block's scale is amax / 448 in fp32 (448: the largest E4M3 value; not rounded to a power
 * of two), at least FLT_MIN (an all-zero block stays zero); E4M3 = round to nearest even,
 * saturating.  K must be a multiple of 128; N partial blocks are fine (ceil(N/128) rows of
 * weight blocks).
 *
 * cuBLASLt's operands (column-major, the "TN" layout of the other cuBLASLt paths):
 *   A = Wq seen as K x N (ld K), transa = T, scale mode BLK128x128_32F: one scale per 128x128
 *       block, K blocks contiguous, each row of blocks padded to wld = roundup(K/128, 4) floats:
 *       sw[nb * wld + kb] for weight rows 128 nb.., columns 128 kb..;
 *   B = Xq^T seen as K x M (ld K), transb = N, scale mode VEC128_32F: K/128 x M scales with M
 *       contiguous (the outer dimension fastest): sx[kb * M + m] for row m, columns 128 kb..;
 *   D = Y^T, N x M (ld N), bf16.  Scales are fp32 device arrays from cudaMalloc (aligned).
 * (These are the layouts NVIDIA's cuBLASLt samples size, getScaleTensorSize, and PyTorch's
 * _scaled_mm checks: 1x128 scales (M, K/128) with strides (1, M); 128x128 scales
 * (N/128, K/128) with strides (roundup(K/128, 4), 1).)  The scale of an activation row
 * depends only on that row, so a row's quantized values do not depend on the batch.
 *
 * Padding: where cuBLASLt's heuristic has no algorithm for the exact M (the tokens, B's outer
 * dimension) or N, the run tries M rounded up to a multiple of 4, then N rounded up to a
 * multiple of 128 (the weights are stored with zero rows up to that; activation rows past M
 * are quantized as zeros), then both; the GEMM then writes the plan's own buffer and a
 * cudaMemcpy2DAsync (part of MATMUL) copies the M x N result into Y.  tps_gemm_config says
 * which form runs.  TPS_FP8B_PAD (read when the plan is created): 0 = never pad (TPS_SKIP
 * where the exact shape is refused), 1 = always pad where M % 4 or N % 128 (the padded form,
 * for the tests), unset = as above.  Where no form has an algorithm (cuBLASLt has these scale
 * modes on SM90 only), plan creation or the run returns TPS_SKIP after one line naming the
 * shape and cuBLASLt's answer. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include "kernels/common/check.h"
#include "kernels/gemm/cublaslt_load.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/w8quant.h"

typedef __nv_bfloat16 bf16;

enum { FB = 128, FB_THREADS = 256 }; /* block edge; threads per quantization block */

/* The path's state (tps_gemm.priv).  Also used: g->w_fp8 (np x K E4M3 weights, rows past N
 * zero), g->h_q (host copy, N x K), g->x_fp8 (roundup(max_m, 4) x K quantized activations). */
typedef struct {
  float *w_s;          /* device: weight scales, BLK128x128_32F layout (nb x wld) */
  float *h_ws;         /* host copy (padding entries 1) */
  float *x_s;          /* device: activation scales of the last quantization, kb x last_ld */
  bf16 *y_pad;         /* device: roundup(max_m, 4) x np output of a padded GEMM (NULL: pad = 0) */
  int kb, wld, nb, np; /* K/128, roundup(kb, 4), ceil(N/128), 128 nb */
  int pad;             /* TPS_FP8B_PAD: -1 as needed, 0 never, 1 always */
  int cc_major, cc_minor;
  int last_m, last_ld; /* rows and scale stride (the GEMM's M) of the last quantization enqueued */
} fb_state;

/* ---- activation quantization: one half-warp per (row, 128-column block) ----
 * Each of the 16 lanes loads 8 bf16 (16 bytes), the half-warp reduces the block's amax by
 * shuffles, each lane stores its 8 E4M3 bytes and lane 0 the scale at sx[b * mm + r].  Rows
 * m..mm-1 (padding) are written as zeros with scale 1.  Consecutive half-warps take
 * consecutive blocks of a row: coalesced 256-byte reads and 128-byte writes. */
__global__ void __launch_bounds__(FB_THREADS)
fb_quant_kernel(const bf16 *__restrict__ x, int m, int mm, int k, uint8_t *__restrict__ xq, float *__restrict__ xs) {
  const int kb = k / FB, lane = threadIdx.x & 15;
  const unsigned half = 0xFFFFu << (threadIdx.x & 16); /* this half-warp's lanes */
  const size_t pairs = (size_t)mm * kb, step = ((size_t)gridDim.x * blockDim.x) >> 4;
  for (size_t p = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 4; p < pairs; p += step) {
    const int r = (int)(p / kb), b = (int)(p - (size_t)r * kb); /* the same in all 16 lanes */
    const size_t off = (size_t)r * k + (size_t)b * FB + lane * 8;
    uint2 out = make_uint2(0u, 0u);
    float sc = 1.f;
    if (r < m) {
      const uint4 v = *reinterpret_cast<const uint4 *>(x + off);
      const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&v);
      float f[8], amax = 0.f;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const float2 t = __bfloat1622float2(h[j]);
        f[2 * j] = t.x;
        f[2 * j + 1] = t.y;
        amax = fmaxf(amax, fmaxf(fabsf(t.x), fabsf(t.y)));
      }
#pragma unroll
      for (int o = 8; o; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(half, amax, o));
      sc = fmaxf(amax / 448.f, FLT_MIN);
      uint32_t w[2] = {0u, 0u};
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const uint32_t q = __nv_cvt_float_to_fp8(f[j] / sc, __NV_SATFINITE, __NV_E4M3);
        w[j >> 2] |= q << (8 * (j & 3)); /* byte j of the 8 (little-endian) */
      }
      out = make_uint2(w[0], w[1]);
    }
    *reinterpret_cast<uint2 *>(xq + off) = out;
    if (lane == 0) xs[(size_t)b * mm + r] = sc;
  }
}

/* ---- cuBLASLt ---- */
typedef struct {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulAlgo_t algo[8]; /* the heuristic's candidates, best first */
  int nalgo, mm, nn;            /* the GEMM's tokens (>= M) and weight rows (>= N) */
} fb_plan;

static void fb_free(fb_plan *p) {
  if (p->op) tps_lt_fn.cublasLtMatmulDescDestroy(p->op);
  if (p->a) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->a);
  if (p->b) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->b);
  if (p->d) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->d);
  memset(p, 0, sizeof *p);
}

/* a cuBLASLt call inside fb_try: on failure one line, the plan freed, TPS_ERR */
#define FB_LT(call)                                                                                    \
  do {                                                                                                 \
    cublasStatus_t s_ = (call);                                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                 \
      fprintf(stderr, "tpsplit: %s:%d: %s failed: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      fb_free(p);                                                                                      \
      return TPS_ERR;                                                                                  \
    }                                                                                                  \
  } while (0)

/* Descriptors and algorithms of an mm x nn block-scaled GEMM (mm tokens, nn weight rows):
 * TPS_OK; TPS_SKIP when the heuristic has none (*hst: its status; p freed); TPS_ERR. */
static int fb_try(const tps_gemm *g, int mm, int nn, fb_plan *p, cublasStatus_t *hst) {
  memset(p, 0, sizeof *p);
  const fb_state *st = (const fb_state *)g->priv;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const int32_t amode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F; /* A = W */
  const int32_t bmode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;     /* B = X */
  const float *sa = st->w_s, *sb = st->x_s;
  FB_LT(tps_lt_fn.cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &amode, sizeof amode));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &bmode, sizeof bmode));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
  FB_LT(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  FB_LT(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->a, CUDA_R_8F_E4M3, g->k, nn, g->k));
  FB_LT(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->b, CUDA_R_8F_E4M3, g->k, mm, g->k));
  FB_LT(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->d, CUDA_R_16BF, nn, mm, nn));
  cublasLtMatmulPreference_t pref;
  FB_LT(tps_lt_fn.cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = g->lt_ws_bytes;
  cublasStatus_t s = tps_lt_fn.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res[8];
  int nres = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = tps_lt_fn.cublasLtMatmulAlgoGetHeuristic(g->lt, p->op, p->a, p->b, p->d, p->d, pref, 8, res, &nres);
  tps_lt_fn.cublasLtMatmulPreferenceDestroy(pref);
  *hst = s;
  if (s != CUBLAS_STATUS_SUCCESS || nres == 0) {
    fb_free(p);
    return TPS_SKIP;
  }
  for (int i = 0; i < nres; i++) p->algo[i] = res[i].algo;
  p->nalgo = nres;
  p->mm = mm;
  p->nn = nn;
  return TPS_OK;
}

/* The form that runs m rows (see the top of this file): TPS_OK with p made, or TPS_SKIP
 * after one line, or TPS_ERR. */
static int fb_choose(const tps_gemm *g, int m, fb_plan *p) {
  const fb_state *st = (const fb_state *)g->priv;
  const int m4 = (m + 3) & ~3, n = g->n, np = st->np;
  int cand[4][2], nc = 0;
  if (st->pad == 1) {
    cand[nc][0] = m4; cand[nc++][1] = np;
  } else {
    cand[nc][0] = m; cand[nc++][1] = n;
    if (st->pad < 0) {
      if (m4 != m) { cand[nc][0] = m4; cand[nc++][1] = n; }
      if (np != n) { cand[nc][0] = m; cand[nc++][1] = np; }
      if (m4 != m && np != n) { cand[nc][0] = m4; cand[nc++][1] = np; }
    }
  }
  cublasStatus_t hst = CUBLAS_STATUS_SUCCESS;
  for (int i = 0; i < nc; i++) {
    const int rc = fb_try(g, cand[i][0], cand[i][1], p, &hst);
    if (rc != TPS_SKIP) return rc;
  }
  fprintf(stderr,
          "tpsplit: gemm: fp8-block: cuBLASLt %zu has no algorithm for E4M3 x E4M3 -> bf16 with block scales "
          "(A = W: BLK128x128_32F, B = X: VEC128_32F) at M=%d N=%d K=%d%s on this GPU (compute capability %d.%d; "
          "heuristic status %d, %s): skipped\n",
          tps_lt_fn.cublasLtGetVersion(), m, n, g->k, nc > 1 ? " (nor padded: M to a multiple of 4, N of 128)" : "",
          st->cc_major, st->cc_minor, (int)hst, st->pad == 0 ? "TPS_FP8B_PAD=0" : "padding allowed");
  return TPS_SKIP;
}

static int fb_quantize(tps_gemm *g, const void *x, int m, int mm, cudaStream_t s) {
  fb_state *st = (fb_state *)g->priv;
  const size_t threads = (size_t)mm * st->kb * 16;
  const size_t want = (threads + FB_THREADS - 1) / FB_THREADS, cap = (size_t)g->num_sms * 16;
  const int blocks = (int)(want < cap ? want : cap);
  fb_quant_kernel<<<blocks, FB_THREADS, 0, s>>>((const bf16 *)x, m, mm, g->k, g->x_fp8, st->x_s);
  CUDA_LAUNCH_CHECK();
  st->last_m = m;
  st->last_ld = mm;
  return TPS_OK;
}

static int fb_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  fb_state *st = (fb_state *)g->priv;
  if ((uintptr_t)x & 15) {
    fprintf(stderr, "tpsplit: gemm: fp8-block needs X 16-byte aligned\n");
    return TPS_ERR;
  }
  fb_plan p;
  TPS_TRY(fb_choose(g, m, &p)); /* QUANT needs the GEMM's M too: the scales' stride */
  if (parts & TPS_GEMM_PART_QUANT) {
    const int rc = fb_quantize(g, x, m, p.mm, s);
    if (rc != TPS_OK) { fb_free(&p); return rc; }
  }
  if (!(parts & TPS_GEMM_PART_MATMUL)) { fb_free(&p); return TPS_OK; }
  const int direct = p.mm == m && p.nn == g->n;
  void *d = direct ? y : (void *)st->y_pad;
  const cublasStatus_t cs = tps_lt_matmul_first(g, p.op, g->w_fp8, p.a, g->x_fp8, p.b, d, p.d, p.algo, p.nalgo, s);
  const int nn = p.nn;
  fb_free(&p);
  CUBLAS_TRY(cs);
  CUDA_LAUNCH_CHECK();
  if (!direct) /* rows 0..m-1, columns 0..N-1 of the padded result */
    CUDA_TRY(cudaMemcpy2DAsync(y, (size_t)g->n * sizeof(bf16), st->y_pad, (size_t)nn * sizeof(bf16),
                               (size_t)g->n * sizeof(bf16), (size_t)m, cudaMemcpyDeviceToDevice, s));
  return TPS_OK;
}

static int fb_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  fb_plan p;
  TPS_TRY(fb_choose(g, m, &p));
  char algo[160];
  uint64_t h;
  tps_lt_algo_describe(&p.algo[0], algo, sizeof algo, &h);
  char pad[64] = "";
  if (p.mm != m || p.nn != g->n) snprintf(pad, sizeof pad, "; padded to M=%d N=%d (+ copy)", p.mm, p.nn);
  snprintf(buf, bufsz, "%s; W BLK128x128_32F, X VEC128_32F%s", algo, pad);
  /* the hash covers the padded shape too */
  const int dims[2] = {p.mm - m, p.nn - g->n};
  *id = tps_fnv1a(h, dims, sizeof dims);
  fb_free(&p);
  return TPS_OK;
}

/* ---- weights ---- */
static int fb_pad_env(int *pad) {
  const char *e = getenv("TPS_FP8B_PAD");
  *pad = -1;
  if (!e || !*e) return TPS_OK;
  if (!strcmp(e, "0") || !strcmp(e, "1")) { *pad = *e - '0'; return TPS_OK; }
  fprintf(stderr, "tpsplit: gemm: TPS_FP8B_PAD=%s: 0 (never pad) or 1 (always pad), or unset\n", e);
  return TPS_ERR;
}

static int fb_upload(tps_gemm *g, const float *w) {
  const int n = g->n, k = g->k;
  if (k % FB) {
    fprintf(stderr, "tpsplit: gemm: fp8-block: K=%d must be a multiple of 128 (1x128 and 128x128 scale blocks)\n", k);
    return TPS_ERR;
  }
  fb_state *st = (fb_state *)calloc(1, sizeof *st);
  if (!st) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  g->priv = st;
  TPS_TRY(fb_pad_env(&st->pad));
  CUDA_TRY(cudaDeviceGetAttribute(&st->cc_major, cudaDevAttrComputeCapabilityMajor, g->device));
  CUDA_TRY(cudaDeviceGetAttribute(&st->cc_minor, cudaDevAttrComputeCapabilityMinor, g->device));
  st->kb = k / FB;
  st->wld = (st->kb + 3) & ~3;
  st->nb = (n + FB - 1) / FB;
  st->np = st->nb * FB;
  const size_t nsc = (size_t)st->nb * st->wld, npk = (size_t)st->np * k;
  g->h_q = (uint8_t *)calloc(npk, 1); /* rows past N: E4M3 +0 */
  st->h_ws = (float *)malloc(nsc * sizeof *st->h_ws);
  if (!g->h_q || !st->h_ws) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  for (size_t i = 0; i < nsc; i++) st->h_ws[i] = 1.f; /* the padding of each row of blocks */
  for (int rb = 0; rb < st->nb; rb++) {
    const int r1 = (rb + 1) * FB < n ? (rb + 1) * FB : n;
    for (int cb = 0; cb < st->kb; cb++) {
      float amax = 0.f;
      for (int r = rb * FB; r < r1; r++)
        for (int c = cb * FB; c < cb * FB + FB; c++) amax = fmaxf(amax, fabsf(w[(size_t)r * k + c]));
      const float sc = fmaxf(amax / 448.f, FLT_MIN);
      st->h_ws[(size_t)rb * st->wld + cb] = sc;
      for (int r = rb * FB; r < r1; r++)
        for (int c = cb * FB; c < cb * FB + FB; c++) g->h_q[(size_t)r * k + c] = tps_e4m3_from_float(w[(size_t)r * k + c] / sc);
    }
  }
  const size_t m4 = ((size_t)g->max_m + 3) & ~(size_t)3;
  CUDA_TRY(cudaMalloc(&g->w_fp8, npk));
  CUDA_TRY(cudaMemcpy(g->w_fp8, g->h_q, npk, cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMalloc(&st->w_s, nsc * sizeof(float)));
  CUDA_TRY(cudaMemcpy(st->w_s, st->h_ws, nsc * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMalloc(&g->x_fp8, m4 * k));
  CUDA_TRY(cudaMalloc(&st->x_s, m4 * st->kb * sizeof(float)));
  if (st->pad != 0) CUDA_TRY(cudaMalloc(&st->y_pad, m4 * st->np * sizeof(bf16)));
  TPS_TRY(tps_lt_setup(g));
  /* can cuBLASLt run this shape at all?  the smallest and largest M (TPS_SKIP, said once) */
  fb_plan p;
  TPS_TRY(fb_choose(g, 1, &p));
  fb_free(&p);
  if (g->max_m > 1) {
    TPS_TRY(fb_choose(g, g->max_m, &p));
    fb_free(&p);
  }
  return TPS_OK;
}

static void fb_release(tps_gemm *g) {
  fb_state *st = (fb_state *)g->priv;
  if (st) {
    cudaFree(st->w_s);
    cudaFree(st->x_s);
    cudaFree(st->y_pad);
    free(st->h_ws);
    free(st);
    g->priv = NULL;
  }
  tps_lt_release(g);
}

static int fb_weights(const tps_gemm *g, double *w) {
  const fb_state *st = (const fb_state *)g->priv;
  const int n = g->n, k = g->k;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < k; c++)
      w[(size_t)r * k + c] = tps_e4m3_to_double(g->h_q[(size_t)r * k + c]) *
                             (double)st->h_ws[(size_t)(r / FB) * st->wld + c / FB];
  return TPS_OK;
}

/* The activations of the last quantization, elements off..off+mk (whole rows), dequantized
 * with their 1x128 scales. */
static int fb_activations(const tps_gemm *g, const void *x, size_t off, size_t mk, double *xd) {
  (void)x;
  const fb_state *st = (const fb_state *)g->priv;
  const int k = g->k, kb = st->kb, r0 = (int)(off / k), nr = (int)(mk / k);
  if (st->last_ld == 0 || off % k || mk % k || r0 + nr > st->last_m) {
    fprintf(stderr, "tpsplit: gemm: fp8-block: rows %d..%d are not rows of the last quantization (%d rows)\n", r0,
            r0 + nr - 1, st->last_m);
    return TPS_ERR;
  }
  uint8_t *h = (uint8_t *)malloc(mk);
  float *sc = (float *)malloc((size_t)kb * nr * sizeof *sc);
  if (!h || !sc) { free(h); free(sc); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  cudaError_t e = cudaMemcpy(h, g->x_fp8 + off, mk, cudaMemcpyDeviceToHost);
  /* scale column b: nr consecutive floats from sx[b * last_ld + r0] */
  if (e == cudaSuccess)
    e = cudaMemcpy2D(sc, (size_t)nr * sizeof *sc, st->x_s + r0, (size_t)st->last_ld * sizeof *sc, (size_t)nr * sizeof *sc,
                     (size_t)kb, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(h); free(sc); CUDA_TRY(e); }
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < k; j++)
      xd[(size_t)i * k + j] = tps_e4m3_to_double(h[(size_t)i * k + j]) * (double)sc[(size_t)(j / FB) * nr + i];
  free(h);
  free(sc);
  return TPS_OK;
}

/* rows_independent 0: each row's quantization is its own, but cuBLASLt's algorithm may differ
 * with M (as dense-bf16); the split differs from the replicated result by accumulation order
 * only: 1e-2 as dense-bf16. */
static const tps_gemm_ops fb_ops = {
    TPS_PATH_FP8_BLOCK, {1, 0, 1e-2, -1},
    fb_upload, NULL, fb_run, fb_config, fb_weights, fb_activations, fb_release};
TPS_GEMM_PATH_OPS(fb_ops);

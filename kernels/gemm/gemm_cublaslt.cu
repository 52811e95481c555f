/* gemm_cublaslt.cu: the dense-bf16 and native-fp8 paths through cuBLASLt (their weight
 * upload, runs and tps_gemm_ops), and our activation quantization for native-fp8.
 *
 * Row-major Y[M x N] = X[M x K] W[N x K]^T is, in cuBLASLt's column-major terms,
 * Y^T (N x M, ld N) = op(A) B with A = W seen as K x N (ld K), op = T, and B = X^T seen as
 * K x M (ld K), op = N: the "TN" layout that FP8 on SM90 requires.
 *
 * native-fp8: D = scale_a * scale_b * (Aq Bq) with Aq = E4M3(W / scale_a) (per tensor, at plan
 * creation) and Bq = E4M3(X / scale_b), scale_b = amax(|X|) / 448 computed on the device by
 * two kernels per run: (1) amax (after a 4-byte memset), (2) scale and convert (saturating,
 * round to nearest even).  Both are captured with the GEMM, so graph replays include them;
 * TPS_GEMM_PART_QUANT / _MATMUL enqueue one side only, for timing them separately.
 * Per-tensor scaling makes the result depend on the other rows of the batch (a split's
 * shards see other amax values): bench gemm reports the size of that effect. */
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

enum { LT_WS_BYTES = 32 << 20 };

/* 0 where cuBLASLt cannot be loaded (the plans that need it say why) */
extern "C" size_t tps_gemm_cublaslt_version(void) {
  const char *why;
  return tps_lt_load(&why) == TPS_OK ? tps_lt_fn.cublasLtGetVersion() : 0;
}

/* cuBLASLt is loaded here, by the first plan of a cuBLASLt path (kernels/gemm/cublaslt_load.h) */
extern "C" int tps_lt_setup(tps_gemm *g) {
  const char *why;
  if (tps_lt_load(&why) != TPS_OK) {
    fprintf(stderr, "tpsplit: gemm: %s: cannot load cuBLASLt: %s\n", tps_path_name(g->path), why);
    return TPS_ERR;
  }
  CUBLAS_TRY(tps_lt_fn.cublasLtCreate(&g->lt));
  g->lt_ws_bytes = LT_WS_BYTES;
  CUDA_TRY(cudaMalloc(&g->lt_ws, g->lt_ws_bytes));
  return TPS_OK;
}

extern "C" void tps_lt_release(tps_gemm *g) {
  if (g->lt) tps_lt_fn.cublasLtDestroy(g->lt);
  cudaFree(g->lt_ws);
  g->lt = NULL; g->lt_ws = NULL;
}

/* Descriptors and the heuristic's first algorithm for m rows. */
typedef struct {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo[8]; /* the heuristic's candidates, best first */
  int nalgo;
} lt_plan;

static void lt_free(lt_plan *p) {
  if (p->op) tps_lt_fn.cublasLtMatmulDescDestroy(p->op);
  if (p->a) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->a);
  if (p->b) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->b);
  if (p->c) tps_lt_fn.cublasLtMatrixLayoutDestroy(p->c);
}

static int lt_make(const tps_gemm *g, int m, lt_plan *p) {
  memset(p, 0, sizeof *p);
  const int fp8 = tps_path_get(g->path)->fp8_peak; /* the path row: fp8 operands */
  cudaDataType_t ab = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CUBLAS_TRY(tps_lt_fn.cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CUBLAS_TRY(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_TRY(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (fp8) {
    const float *sa = g->d_scales, *sb = g->d_scales + TPS_SC_X;
    CUBLAS_TRY(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    CUBLAS_TRY(tps_lt_fn.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  }
  CUBLAS_TRY(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->a, ab, g->k, g->n, g->k));
  CUBLAS_TRY(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->b, ab, g->k, m, g->k));
  CUBLAS_TRY(tps_lt_fn.cublasLtMatrixLayoutCreate(&p->c, CUDA_R_16BF, g->n, m, g->n));
  cublasLtMatmulPreference_t pref;
  CUBLAS_TRY(tps_lt_fn.cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = g->lt_ws_bytes;
  tps_lt_fn.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res[8];
  int nres = 0;
  cublasStatus_t st = tps_lt_fn.cublasLtMatmulAlgoGetHeuristic(g->lt, p->op, p->a, p->b, p->c, p->c, pref, 8, res, &nres);
  tps_lt_fn.cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || nres == 0) {
    fprintf(stderr, "tpsplit: gemm: cuBLASLt has no algorithm for %s M=%d N=%d K=%d (status %d)\n",
            tps_path_name(g->path), m, g->n, g->k, (int)st);
    lt_free(p);
    return TPS_ERR;
  }
  for (int i = 0; i < nres; i++) p->algo[i] = res[i].algo;
  p->nalgo = nres;
  return TPS_OK;
}

/* ---- activation quantization (native-fp8) ---- */
__global__ void amax_kernel(const __nv_bfloat16 *__restrict__ x, size_t n8, float *amax) {
  float m = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = reinterpret_cast<const uint4 *>(x)[i];
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&v);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float2 f = __bfloat1622float2(h[j]);
      m = fmaxf(m, fmaxf(fabsf(f.x), fabsf(f.y)));
    }
  }
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  /* non-negative floats order like their bit patterns as ints */
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<int *>(amax), __float_as_int(m));
}

__global__ void quant_kernel(const __nv_bfloat16 *__restrict__ x, size_t n8, float *scales,
                             uint8_t *__restrict__ xq) {
  float amax = scales[TPS_SC_AMAX];
  float sc = amax > 0.f ? amax / 448.f : 1.f;
  if (blockIdx.x == 0 && threadIdx.x == 0) scales[TPS_SC_X] = sc;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = reinterpret_cast<const uint4 *>(x)[i];
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&v);
    uint32_t out[2] = {0, 0};
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float2 f = __bfloat1622float2(h[j]);
      uint32_t b0 = __nv_cvt_float_to_fp8(f.x / sc, __NV_SATFINITE, __NV_E4M3);
      uint32_t b1 = __nv_cvt_float_to_fp8(f.y / sc, __NV_SATFINITE, __NV_E4M3);
      out[j >> 1] |= (b0 | (b1 << 8)) << (16 * (j & 1));
    }
    reinterpret_cast<uint2 *>(xq)[i] = make_uint2(out[0], out[1]);
  }
}

static int quantize(tps_gemm *g, const void *x, int m, cudaStream_t s) {
  size_t n8 = (size_t)m * g->k / 8;
  int threads = 256;
  size_t want = (n8 + threads - 1) / threads;
  int blocks = (int)(want < (size_t)g->num_sms * 8 ? want : (size_t)g->num_sms * 8);
  CUDA_TRY(cudaMemsetAsync(g->d_scales + TPS_SC_AMAX, 0, sizeof(float), s));
  amax_kernel<<<blocks, threads, 0, s>>>((const __nv_bfloat16 *)x, n8, g->d_scales + TPS_SC_AMAX);
  CUDA_LAUNCH_CHECK();
  quant_kernel<<<blocks, threads, 0, s>>>((const __nv_bfloat16 *)x, n8, g->d_scales, g->x_fp8);
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

static int lt_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  const int fp8 = tps_path_get(g->path)->fp8_peak; /* the path row: fp8 operands */
  if (fp8 && (parts & TPS_GEMM_PART_QUANT)) TPS_TRY(quantize(g, x, m, s));
  if (!(parts & TPS_GEMM_PART_MATMUL)) return TPS_OK;
  lt_plan p;
  TPS_TRY(lt_make(g, m, &p));
  const void *a = fp8 ? (const void *)g->w_fp8 : g->w_bf16;
  const void *b = fp8 ? (const void *)g->x_fp8 : x;
  cublasStatus_t st = tps_lt_matmul_first(g, p.op, a, p.a, b, p.b, y, p.c, p.algo, p.nalgo, s);
  lt_free(&p);
  CUBLAS_TRY(st);
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

static int lt_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  lt_plan p;
  TPS_TRY(lt_make(g, m, &p));
  tps_lt_algo_describe(&p.algo[0], buf, bufsz, id);
  lt_free(&p);
  return TPS_OK;
}

cublasStatus_t tps_lt_matmul_first(const tps_gemm *g, cublasLtMatmulDesc_t op, const void *a,
                                   cublasLtMatrixLayout_t la, const void *b, cublasLtMatrixLayout_t lb,
                                   void *d, cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo,
                                   int nalgo, cudaStream_t s) {
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
  for (int i = 0; i < nalgo && st == CUBLAS_STATUS_NOT_SUPPORTED; i++)
    st = tps_lt_fn.cublasLtMatmul(g->lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &algo[i], g->lt_ws, g->lt_ws_bytes, s);
  return st;
}

uint64_t tps_fnv1a(uint64_t h, const void *bytes, size_t n) {
  const unsigned char *b = (const unsigned char *)bytes;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

void tps_lt_algo_describe(const cublasLtMatmulAlgo_t *algo, char *buf, size_t bufsz, uint64_t *hash) {
  int algo_id = -1, tile = -1, splitk = -1, stages = -1;
  size_t w;
  tps_lt_fn.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof algo_id, &w);
  tps_lt_fn.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  tps_lt_fn.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  tps_lt_fn.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  snprintf(buf, bufsz, "cuBLASLt algo %d tile %d stages %d split-K %d", algo_id, tile, stages, splitk);
  *hash = tps_fnv1a(1469598103934665603ull, algo, sizeof *algo);
}

/* ---- weights ---- */
static int upload(void **dst, const void *src, size_t bytes) {
  cudaError_t e = cudaMalloc(dst, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    fprintf(stderr, "tpsplit: gemm: weight upload: %s\n", cudaGetErrorString(e));
    return TPS_ERR;
  }
  return TPS_OK;
}

static int dense_upload(tps_gemm *g, const float *w) {
  const size_t nk = (size_t)g->n * g->k;
  __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(nk * sizeof *h);
  if (!h) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  for (size_t i = 0; i < nk; i++) h[i] = __float2bfloat16_rn(w[i]);
  int rc = upload(&g->w_bf16, h, nk * sizeof *h);
  free(h);
  return rc == TPS_OK ? tps_lt_setup(g) : rc;
}

static int dense_weights(const tps_gemm *g, double *w) {
  const size_t nk = (size_t)g->n * g->k;
  __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(nk * sizeof *h);
  if (!h) return TPS_ERR;
  cudaError_t e = cudaMemcpy(h, g->w_bf16, nk * sizeof *h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
  for (size_t i = 0; i < nk; i++) w[i] = (double)__bfloat162float(h[i]);
  free(h);
  return TPS_OK;
}

/* native-fp8: one scale for the whole tensor, amax / 448 (the largest E4M3 value) */
static int fp8_upload(tps_gemm *g, const float *w) {
  const size_t nk = (size_t)g->n * g->k;
  double amax = 0;
  for (size_t i = 0; i < nk; i++) if (fabs((double)w[i]) > amax) amax = fabs((double)w[i]);
  g->w_scale_host = amax > 0 ? (float)(amax / 448.0) : 1.0f;
  g->h_q = (uint8_t *)malloc(nk); /* kept for tps_gemm_weights */
  if (!g->h_q) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  for (size_t i = 0; i < nk; i++) g->h_q[i] = tps_e4m3_from_float(w[i] / g->w_scale_host);
  float sc[TPS_SC_LEN] = {0};
  sc[0] = g->w_scale_host;
  sc[TPS_SC_X] = 1.0f;
  TPS_TRY(upload((void **)&g->w_fp8, g->h_q, nk));
  TPS_TRY(upload((void **)&g->d_scales, sc, sizeof sc));
  CUDA_TRY(cudaMalloc(&g->x_fp8, (size_t)g->max_m * g->k));
  return tps_lt_setup(g);
}

static int fp8_weights(const tps_gemm *g, double *w) {
  const size_t nk = (size_t)g->n * g->k;
  for (size_t i = 0; i < nk; i++) w[i] = tps_e4m3_to_double(g->h_q[i]) * (double)g->w_scale_host;
  return TPS_OK;
}

/* the FP8 activations of the last run, dequantized with their per-tensor scale */
static int fp8_activations(const tps_gemm *g, const void *x, size_t off, size_t mk, double *xd) {
  (void)x;
  uint8_t *h = (uint8_t *)malloc(mk);
  float sc;
  if (!h) return TPS_ERR;
  cudaError_t e = cudaMemcpy(h, g->x_fp8 + off, mk, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&sc, g->d_scales + TPS_SC_X, sizeof sc, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
  for (size_t i = 0; i < mk; i++) xd[i] = tps_e4m3_to_double(h[i]) * (double)sc;
  free(h);
  return TPS_OK;
}

/* dense-bf16: the same algorithm gives the same row bits, but the split check does not ask
 * for it (cuBLASLt's choice may depend on M); native-fp8: the activation scale is the batch's
 * amax, so a shard's rows differ from the whole batch's by up to an E4M3 step (1e-1). */
static const tps_gemm_ops dense_ops = {
    TPS_PATH_DENSE_BF16, {0, 0, 1e-2, -1},
    dense_upload, NULL, lt_run, lt_config, dense_weights, NULL, tps_lt_release};
static const tps_gemm_ops fp8_ops = {
    TPS_PATH_NATIVE_FP8, {1, 0, 1e-1, -1},
    fp8_upload, NULL, lt_run, lt_config, fp8_weights, fp8_activations, tps_lt_release};
TPS_GEMM_PATH_OPS(dense_ops);
TPS_GEMM_PATH_OPS(fp8_ops);

/* gemm.cu: the tps_gemm plan (kernels/gemm.h): weight preparation and upload per path,
 * dispatch to cuBLASLt (gemm_cublaslt.cu) or our W8A16 kernels (gemm_w8a16*.cu), and the
 * host-side views of the exact weights/activations used (for the float64 CPU reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cuda_bf16.h>
#include "check.h"
#include "gemm_internal.h"
#include "w8quant.h"

static const char *const path_names[TPS_GEMM_NPATHS] = {"dense-bf16", "native-fp8", "w8a16",
                                                         "w8a16-ref"};

extern "C" const char *tps_gemm_path_name(tps_gemm_path p) {
  return (unsigned)p < TPS_GEMM_NPATHS ? path_names[p] : "?";
}

extern "C" int tps_gemm_path_parse(const char *s, tps_gemm_path *p) {
  for (int i = 0; i < TPS_GEMM_NPATHS; i++)
    if (!strcasecmp(s, path_names[i])) { *p = (tps_gemm_path)i; return 0; }
  if (!strcasecmp(s, "bf16")) { *p = TPS_GEMM_DENSE_BF16; return 0; }
  if (!strcasecmp(s, "fp8")) { *p = TPS_GEMM_NATIVE_FP8; return 0; }
  if (!strcasecmp(s, "marlin-w8a16") || !strcasecmp(s, "marlin")) { *p = TPS_GEMM_W8A16; return 0; }
  return -1;
}

static int check_shape(int n, int k, int max_m) {
  if (n <= 0 || k <= 0 || n % 64 || k % 64 || max_m < 1) {
    fprintf(stderr, "tpsplit: gemm: N=%d and K=%d must be positive multiples of 64, max M=%d >= 1\n",
            n, k, max_m);
    return TPS_K_ERR;
  }
  return TPS_K_OK;
}

static int plan_alloc(tps_gemm **out, tps_gemm_path p, int n, int k, int max_m) {
  *out = NULL;
  TPS_TRY(check_shape(n, k, max_m));
  tps_gemm *g = (tps_gemm *)calloc(1, sizeof *g);
  if (!g) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_K_ERR; }
  g->path = p; g->n = n; g->k = k; g->max_m = max_m;
  CUDA_TRY(cudaGetDevice(&g->device));
  CUDA_TRY(cudaDeviceGetAttribute(&g->num_sms, cudaDevAttrMultiProcessorCount, g->device));
  *out = g;
  return TPS_K_OK;
}

/* W8A16 paths: keep the plain 1x32 host copy, then upload for the kernel. */
static int w8_finish(tps_gemm *g) {
  size_t nk = (size_t)g->n * g->k, ns = nk / 32;
  if (g->path == TPS_GEMM_W8A16_REF) {
    CUDA_TRY(cudaMalloc(&g->w_q, nk));
    CUDA_TRY(cudaMalloc(&g->w_s, ns));
    CUDA_TRY(cudaMemcpy(g->w_q, g->h_q, nk, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(g->w_s, g->h_s, ns, cudaMemcpyHostToDevice));
    return TPS_K_OK;
  }
  return tps_w8_prepare(g);
}

extern "C" int tps_gemm_create_w8(tps_gemm **out, tps_gemm_path p, int n, int k, int max_m,
                                  const uint8_t *q, const uint8_t *s) {
  if (p != TPS_GEMM_W8A16 && p != TPS_GEMM_W8A16_REF) {
    fprintf(stderr, "tpsplit: gemm: quantized W8 weights need a w8a16 path, not %s\n", tps_gemm_path_name(p));
    return TPS_K_ERR;
  }
  tps_gemm *g;
  TPS_TRY(plan_alloc(&g, p, n, k, max_m));
  size_t nk = (size_t)n * k;
  g->h_q = (uint8_t *)malloc(nk);
  g->h_s = (uint8_t *)malloc(nk / 32);
  if (!g->h_q || !g->h_s) { tps_gemm_destroy(g); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_K_ERR; }
  memcpy(g->h_q, q, nk);
  memcpy(g->h_s, s, nk / 32);
  int rc = w8_finish(g);
  if (rc) { tps_gemm_destroy(g); return rc; }
  *out = g;
  return TPS_K_OK;
}

extern "C" int tps_gemm_create(tps_gemm **out, tps_gemm_path p, int n, int k, int max_m,
                               const float *w) {
  *out = NULL;
  if ((unsigned)p >= TPS_GEMM_NPATHS) { fprintf(stderr, "tpsplit: gemm: bad path %d\n", (int)p); return TPS_K_ERR; }
  if (p == TPS_GEMM_W8A16 || p == TPS_GEMM_W8A16_REF) {
    TPS_TRY(check_shape(n, k, max_m));
    size_t nk = (size_t)n * k;
    uint8_t *q = (uint8_t *)malloc(nk), *s = (uint8_t *)malloc(nk / 32);
    if (!q || !s) { free(q); free(s); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_K_ERR; }
    tps_w8_quantize_1x32(w, n, k, q, s);
    int rc = tps_gemm_create_w8(out, p, n, k, max_m, q, s);
    free(q); free(s);
    return rc;
  }
  tps_gemm *g;
  TPS_TRY(plan_alloc(&g, p, n, k, max_m));
  size_t nk = (size_t)n * k;
  int rc = TPS_K_OK;
  if (p == TPS_GEMM_DENSE_BF16) {
    __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(nk * sizeof *h);
    if (!h) rc = TPS_K_ERR;
    else {
      for (size_t i = 0; i < nk; i++) h[i] = __float2bfloat16_rn(w[i]);
      cudaError_t e = cudaMalloc(&g->w_bf16, nk * sizeof *h);
      if (e == cudaSuccess) e = cudaMemcpy(g->w_bf16, h, nk * sizeof *h, cudaMemcpyHostToDevice);
      if (e != cudaSuccess) { fprintf(stderr, "tpsplit: gemm: weight upload: %s\n", cudaGetErrorString(e)); rc = TPS_K_ERR; }
      free(h);
    }
  } else { /* native-fp8: per-tensor scale amax/448 */
    double amax = 0;
    for (size_t i = 0; i < nk; i++) if (fabs((double)w[i]) > amax) amax = fabs((double)w[i]);
    g->w_scale_host = amax > 0 ? (float)(amax / 448.0) : 1.0f;
    uint8_t *h = (uint8_t *)malloc(nk);
    if (!h) rc = TPS_K_ERR;
    else {
      for (size_t i = 0; i < nk; i++) h[i] = tps_e4m3_from_float(w[i] / g->w_scale_host);
      g->h_q = h; /* kept for tps_gemm_weights */
      cudaError_t e = cudaMalloc(&g->w_fp8, nk);
      if (e == cudaSuccess) e = cudaMemcpy(g->w_fp8, h, nk, cudaMemcpyHostToDevice);
      if (e == cudaSuccess) e = cudaMalloc(&g->x_fp8, (size_t)max_m * k);
      if (e == cudaSuccess) e = cudaMalloc(&g->d_scales, TPS_SC_LEN * sizeof(float));
      float sc[TPS_SC_LEN] = {0};
      sc[0] = g->w_scale_host;
      sc[TPS_SC_X] = 1.0f;
      if (e == cudaSuccess) e = cudaMemcpy(g->d_scales, sc, sizeof sc, cudaMemcpyHostToDevice);
      if (e != cudaSuccess) { fprintf(stderr, "tpsplit: gemm: weight upload: %s\n", cudaGetErrorString(e)); rc = TPS_K_ERR; }
    }
  }
  if (rc == TPS_K_OK) rc = tps_lt_setup(g);
  if (rc) { tps_gemm_destroy(g); return rc; }
  *out = g;
  return TPS_K_OK;
}

extern "C" void tps_gemm_destroy(tps_gemm *g) {
  if (!g) return;
  tps_lt_teardown(g);
  cudaFree(g->w_bf16); cudaFree(g->w_fp8); cudaFree(g->d_scales); cudaFree(g->x_fp8);
  cudaFree(g->w_q); cudaFree(g->w_s); cudaFree(g->w_rec); cudaFree(g->part); cudaFree(g->counters);
  free(g->h_q); free(g->h_s);
  free(g);
}

extern "C" int tps_gemm_run_part(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  if (m < 0 || m > g->max_m) {
    fprintf(stderr, "tpsplit: gemm: M=%d outside 0..%d of this plan\n", m, g->max_m);
    return TPS_K_ERR;
  }
  if (m == 0) return TPS_K_OK;
  switch (g->path) {
  case TPS_GEMM_DENSE_BF16:
  case TPS_GEMM_NATIVE_FP8: return tps_lt_run(g, x, y, m, s, parts);
  case TPS_GEMM_W8A16: return (parts & TPS_GEMM_PART_MATMUL) ? tps_w8_run(g, x, y, m, s) : TPS_K_OK;
  case TPS_GEMM_W8A16_REF: return (parts & TPS_GEMM_PART_MATMUL) ? tps_w8ref_run(g, x, y, m, s) : TPS_K_OK;
  }
  return TPS_K_ERR;
}

extern "C" int tps_gemm_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s) {
  return tps_gemm_run_part(g, x, y, m, s, TPS_GEMM_PART_ALL);
}

extern "C" int tps_gemm_weights(const tps_gemm *g, double *w) {
  size_t nk = (size_t)g->n * g->k;
  switch (g->path) {
  case TPS_GEMM_DENSE_BF16: {
    __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(nk * sizeof *h);
    if (!h) return TPS_K_ERR;
    cudaError_t e = cudaMemcpy(h, g->w_bf16, nk * sizeof *h, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
    for (size_t i = 0; i < nk; i++) w[i] = (double)__bfloat162float(h[i]);
    free(h);
    return TPS_K_OK;
  }
  case TPS_GEMM_NATIVE_FP8:
    for (size_t i = 0; i < nk; i++) w[i] = tps_e4m3_to_double(g->h_q[i]) * (double)g->w_scale_host;
    return TPS_K_OK;
  default:
    tps_w8_dequant_1x32(g->h_q, g->h_s, g->n, g->k, w);
    return TPS_K_OK;
  }
}

extern "C" int tps_gemm_activations(const tps_gemm *g, const void *x, int row0, int nrows, double *xd) {
  size_t mk = (size_t)nrows * g->k, off = (size_t)row0 * g->k;
  if (nrows <= 0) return TPS_K_OK;
  CUDA_TRY(cudaDeviceSynchronize());
  if (g->path == TPS_GEMM_NATIVE_FP8) {
    uint8_t *h = (uint8_t *)malloc(mk);
    float sc;
    if (!h) return TPS_K_ERR;
    cudaError_t e = cudaMemcpy(h, g->x_fp8 + off, mk, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(&sc, g->d_scales + TPS_SC_X, sizeof sc, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
    for (size_t i = 0; i < mk; i++) xd[i] = tps_e4m3_to_double(h[i]) * (double)sc;
    free(h);
    return TPS_K_OK;
  }
  __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(mk * sizeof *h);
  if (!h) return TPS_K_ERR;
  cudaError_t e = cudaMemcpy(h, (const __nv_bfloat16 *)x + off, mk * sizeof *h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
  for (size_t i = 0; i < mk; i++) xd[i] = (double)__bfloat162float(h[i]);
  free(h);
  return TPS_K_OK;
}

extern "C" int tps_gemm_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  switch (g->path) {
  case TPS_GEMM_DENSE_BF16:
  case TPS_GEMM_NATIVE_FP8: return tps_lt_config(g, m, buf, bufsz, id);
  case TPS_GEMM_W8A16_REF:
    snprintf(buf, bufsz, "w8a16-ref: 1 thread per output, 16x16 blocks");
    *id = 1;
    return TPS_K_OK;
  case TPS_GEMM_W8A16: {
    tps_w8_cfg c;
    TPS_TRY(tps_w8_choose(g, m, &c));
    if (c.kind == TPS_W8K_STREAM) {
      snprintf(buf, bufsz, "w8a16 stream: 128 weight rows x %d tokens per block, cluster split-K %d (partials %s), grid %dx%d",
               c.bt, c.splits, tps_w8c_sum_name[tps_w8c_sum()], c.ntiles, c.splits);
      *id = ((uint64_t)TPS_W8K_STREAM << 40) | ((uint64_t)c.bt << 32) | (uint64_t)c.splits;
    } else if (c.kind == TPS_W8K_WGMMA) {
      snprintf(buf, bufsz, "w8a16 wgmma: tile 128 weight rows x %d tokens, %d stages, grid %dx%d", c.bt, c.stages,
               c.ntiles, c.mtiles);
      *id = ((uint64_t)TPS_W8K_WGMMA << 40) | ((uint64_t)c.bt << 32);
    } else {
      snprintf(buf, bufsz, "w8a16 mma: tile %dx%d, %d stages, %d threads, split-K %d, grid %dx%dx%d", c.bm, c.bn,
               c.stages, c.threads, c.splits, c.ntiles, c.mtiles, c.splits);
      *id = ((uint64_t)TPS_W8K_MMA << 40) | ((uint64_t)c.variant << 32) | (uint64_t)c.splits;
    }
    return TPS_K_OK;
  }
  }
  return TPS_K_ERR;
}

extern "C" int tps_gemm_n(const tps_gemm *g) { return g->n; }
extern "C" int tps_gemm_k(const tps_gemm *g) { return g->k; }
extern "C" tps_gemm_path tps_gemm_get_path(const tps_gemm *g) { return g->path; }
extern "C" double tps_gemm_weight_bytes(const tps_gemm *g) {
  double nk = (double)g->n * g->k;
  switch (g->path) {
  case TPS_GEMM_DENSE_BF16: return 2 * nk;
  case TPS_GEMM_NATIVE_FP8: return nk;
  default: return nk + nk / 32;
  }
}

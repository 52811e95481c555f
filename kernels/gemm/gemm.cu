/* gemm.cu: the tps_gemm plan (kernels/gemm/gemm.h): shape checks, the registry of kernel paths
 * (tps_gemm_ops, one per path, each in its own file: gemm_cublaslt.cu for dense-bf16 and
 * native-fp8, gemm_fp8block.cu, gemm_w8a16.cu, gemm_w8a16_ref.cu), dispatch to them, and the host-side views
 * of the exact weights/activations used (for the float64 CPU reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include "kernels/common/check.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/w8quant.h"

static const tps_gemm_ops *registry[TPS_NPATHS]; /* zero before any registration runs */

extern "C" int tps_gemm_register(const tps_gemm_ops *ops) {
  if ((unsigned)ops->id < TPS_NPATHS) registry[ops->id] = ops;
  return (int)ops->id;
}

static const tps_gemm_ops *ops_of(int p) { return (unsigned)p < TPS_NPATHS ? registry[p] : NULL; }

extern "C" const tps_gemm_traits *tps_gemm_traits_of(int p) {
  const tps_gemm_ops *o = ops_of(p);
  return o ? &o->traits : NULL;
}

/* Every path: K a multiple of 64 (the W8A16 kernels' k chunk), N a multiple of 16 (the mma
 * kernel's 16-byte scale loads; the SM90 W8A16 kernels and cuBLASLt bound their stores by N,
 * so N = 32 runs).  A path may ask for more (fp8-block: K a multiple of 128). */
static int check_shape(int n, int k, int max_m) {
  if (n <= 0 || k <= 0 || n % 16 || k % 64 || max_m < 1) {
    fprintf(stderr, "tpsplit: gemm: N=%d must be a positive multiple of 16, K=%d of 64, max M=%d >= 1\n",
            n, k, max_m);
    return TPS_ERR;
  }
  return TPS_OK;
}

static int plan_alloc(tps_gemm **out, const tps_gemm_ops *ops, int n, int k, int max_m) {
  *out = NULL;
  TPS_TRY(check_shape(n, k, max_m));
  tps_gemm *g = (tps_gemm *)calloc(1, sizeof *g);
  if (!g) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  g->path = ops->id; g->ops = ops; g->n = n; g->k = k; g->max_m = max_m;
  *out = g;
  CUDA_TRY(cudaGetDevice(&g->device));
  CUDA_TRY(cudaDeviceGetAttribute(&g->num_sms, cudaDevAttrMultiProcessorCount, g->device));
  return TPS_OK;
}

static const tps_gemm_ops *ops_or_say(int p) {
  const tps_gemm_ops *o = ops_of(p);
  if (!o) fprintf(stderr, "tpsplit: gemm: no kernel for path %s\n", tps_path_name(p));
  return o;
}

extern "C" int tps_gemm_create_w8(tps_gemm **out, tps_path_id p, int n, int k, int max_m,
                                  const uint8_t *q, const uint8_t *s) {
  *out = NULL;
  const tps_gemm_ops *ops = ops_or_say(p);
  if (!ops) return TPS_ERR;
  if (!ops->upload_w8) {
    fprintf(stderr, "tpsplit: gemm: quantized W8 weights need a w8a16 path, not %s\n", tps_path_name(p));
    return TPS_ERR;
  }
  tps_gemm *g;
  int rc = plan_alloc(&g, ops, n, k, max_m);
  const size_t nk = (size_t)n * k;
  if (rc == TPS_OK) {
    g->h_q = (uint8_t *)malloc(nk);
    g->h_s = (uint8_t *)malloc(nk / 32);
    if (!g->h_q || !g->h_s) { fprintf(stderr, "tpsplit: gemm: out of memory\n"); rc = TPS_ERR; }
  }
  if (rc == TPS_OK) {
    memcpy(g->h_q, q, nk);
    memcpy(g->h_s, s, nk / 32);
    rc = ops->upload_w8(g);
  }
  if (rc != TPS_OK) { tps_gemm_destroy(g); return rc; }
  *out = g;
  return TPS_OK;
}

extern "C" int tps_gemm_create(tps_gemm **out, tps_path_id p, int n, int k, int max_m,
                               const float *w) {
  *out = NULL;
  const tps_gemm_ops *ops = ops_or_say(p);
  if (!ops) return TPS_ERR;
  if (ops->upload_w8) { /* quantize to E4M3 + E8M0 per 1x32 here, then as tps_gemm_create_w8 */
    TPS_TRY(check_shape(n, k, max_m));
    size_t nk = (size_t)n * k;
    uint8_t *q = (uint8_t *)malloc(nk), *s = (uint8_t *)malloc(nk / 32);
    if (!q || !s) { free(q); free(s); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
    tps_w8_quantize_1x32(w, n, k, q, s);
    int rc = tps_gemm_create_w8(out, p, n, k, max_m, q, s);
    free(q); free(s);
    return rc;
  }
  tps_gemm *g;
  int rc = plan_alloc(&g, ops, n, k, max_m);
  if (rc == TPS_OK) rc = ops->upload(g, w);
  if (rc != TPS_OK) { tps_gemm_destroy(g); return rc; }
  *out = g;
  return TPS_OK;
}

extern "C" void tps_gemm_destroy(tps_gemm *g) {
  if (!g) return;
  if (g->ops && g->ops->release) g->ops->release(g);
  cudaFree(g->w_bf16); cudaFree(g->w_fp8); cudaFree(g->d_scales); cudaFree(g->x_fp8);
  cudaFree(g->w_q); cudaFree(g->w_s); cudaFree(g->w_rec); cudaFree(g->part); cudaFree(g->counters);
  cudaFree(g->sk_ws); cudaFree(g->sk_flags);
  free(g->h_q); free(g->h_s);
  free(g);
}

extern "C" int tps_gemm_run_part(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  if (m < 0 || m > g->max_m) {
    fprintf(stderr, "tpsplit: gemm: M=%d outside 0..%d of this plan\n", m, g->max_m);
    return TPS_ERR;
  }
  if (m == 0) return TPS_OK;
  return g->ops->run(g, x, y, m, s, parts);
}

extern "C" int tps_gemm_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s) {
  return tps_gemm_run_part(g, x, y, m, s, TPS_GEMM_PART_ALL);
}

extern "C" int tps_gemm_weights(const tps_gemm *g, double *w) {
  if (g->ops->weights) return g->ops->weights(g, w);
  tps_w8_dequant_1x32(g->h_q, g->h_s, g->n, g->k, w);
  return TPS_OK;
}

extern "C" int tps_gemm_activations(const tps_gemm *g, const void *x, int row0, int nrows, double *xd) {
  size_t mk = (size_t)nrows * g->k, off = (size_t)row0 * g->k;
  if (nrows <= 0) return TPS_OK;
  CUDA_TRY(cudaDeviceSynchronize());
  if (g->ops->activations) return g->ops->activations(g, x, off, mk, xd);
  __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(mk * sizeof *h);
  if (!h) return TPS_ERR;
  cudaError_t e = cudaMemcpy(h, (const __nv_bfloat16 *)x + off, mk * sizeof *h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(h); CUDA_TRY(e); }
  for (size_t i = 0; i < mk; i++) xd[i] = (double)__bfloat162float(h[i]);
  free(h);
  return TPS_OK;
}

extern "C" int tps_gemm_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  return g->ops->config(g, m, buf, bufsz, id);
}

extern "C" int tps_gemm_n(const tps_gemm *g) { return g->n; }
extern "C" int tps_gemm_k(const tps_gemm *g) { return g->k; }
extern "C" tps_path_id tps_gemm_get_path(const tps_gemm *g) { return g->path; }
extern "C" double tps_gemm_weight_bytes(const tps_gemm *g) {
  return (double)g->n * g->k * tps_path_get(g->ops->id)->weight_bytes; /* the path row's one value */
}

/* gemm_w8a16_ref.cu: the simplest correct W8A16 GEMM, kept as the reference for the fast one.
 *
 *   Y[m][n] = bf16( sum_k float(X[m][k]) * (E4M3(W[n][k]) * 2^(S[n][k/32] - 127)) )
 *
 * One thread per output element, a plain fp32 loop over k (in order), weights in the plain
 * layout (q: N x K E4M3 bytes, s: N x K/32 E8M0 bytes).  The E4M3 decode is cuda_fp8.h's
 * conversion and the scale is ldexpf: independent of the fast kernel's bit tricks. */
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include "kernels/common/check.h"
#include "kernels/gemm/gemm_internal.h"

__global__ void w8a16_ref_kernel(const __nv_bfloat16 *__restrict__ x, const uint8_t *__restrict__ q,
                                 const uint8_t *__restrict__ sc, __nv_bfloat16 *__restrict__ y,
                                 int m, int n, int k) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  const __nv_bfloat16 *xr = x + (size_t)row * k;
  const uint8_t *qr = q + (size_t)col * k, *sr = sc + (size_t)col * (k / 32);
  float acc = 0.f;
  for (int kb = 0; kb < k / 32; kb++) {
    float scale = ldexpf(1.f, (int)sr[kb] - 127);
    for (int j = kb * 32; j < kb * 32 + 32; j++) {
      __nv_fp8_e4m3 w;
      w.__x = qr[j];
      acc += __bfloat162float(xr[j]) * ((float)w * scale);
    }
  }
  y[(size_t)row * n + col] = __float2bfloat16_rn(acc);
}

static int ref_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  if (!(parts & TPS_GEMM_PART_MATMUL)) return TPS_OK;
  dim3 block(16, 16), grid((g->n + 15) / 16, (m + 15) / 16);
  w8a16_ref_kernel<<<grid, block, 0, s>>>((const __nv_bfloat16 *)x, g->w_q, g->w_s,
                                          (__nv_bfloat16 *)y, m, g->n, g->k);
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

/* the plain 1x32 layout, as given */
static int ref_upload_w8(tps_gemm *g) {
  const size_t nk = (size_t)g->n * g->k, ns = nk / 32;
  CUDA_TRY(cudaMalloc(&g->w_q, nk));
  CUDA_TRY(cudaMalloc(&g->w_s, ns));
  CUDA_TRY(cudaMemcpy(g->w_q, g->h_q, nk, cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(g->w_s, g->h_s, ns, cudaMemcpyHostToDevice));
  return TPS_OK;
}

static int ref_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  (void)g; (void)m;
  snprintf(buf, bufsz, "w8a16-ref: 1 thread per output, 16x16 blocks");
  *id = 1;
  return TPS_OK;
}

/* one thread per output, in k order: every row's bits are independent of the batch */
static const tps_gemm_ops ref_ops = {
    TPS_PATH_W8A16_REF, {0, 1, 1e-2, -1},
    NULL, ref_upload_w8, ref_run, ref_config, NULL, NULL, NULL};
TPS_GEMM_PATH_OPS(ref_ops);

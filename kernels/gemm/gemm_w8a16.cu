/* gemm_w8a16.cu: the fast W8A16 GEMM (the Marlin role): Y = X W^T with X bf16 (M x K),
 * W FP8 E4M3 (N x K) with one E8M0 scale per 1x32 block along K, Y bf16, fp32 accumulation.
 * Four kernels share one weight layout and one dequantization (w8_device.cuh);
 * tps_w8_choose picks by M and GPU:
 *  - stream (M <= 64, and up to 128 where the split pick gives its geometry; SM90): split-K over
 *    a thread-block cluster, one launch per token tile (gemm_w8a16_sm90.cu);
 *  - split (65..1024, SM90; issue 28): 64 or 128 (256 with TPS_W8_S256=1) tokens x 128 weight rows per block, cluster
 *    split-K 1/2/4/8 chosen by the split pick's model (model/core/w8plan.c), every token tile in one launch (same file);
 *  - wgmma (M > 1024, or mid M where its 256-token pass models faster; SM90): warpgroup MMA,
 *    weights dequantized into registers (same file);
 *  - sk (stream-K, SM90; issue 28): a persistent grid sharing the (tile, 64-wide chunk)
 *    iterations, 64 or 128 tokens a tile up to 2048 rows; 256 tokens (w8k2_kernel, the wgmma
 *    pass's loop) at any M where modelled fastest, whole waves of tiles first (same file);
 *  - mma (every M on other GPUs; this file): block tile BM x BN, K step 64, STAGES-deep
 *    cp.async pipeline; X tile in shared memory with a 16-byte-chunk XOR swizzle read by
 *    ldmatrix.x4; W as the B operand (bytes, rows of 64), one 16-byte shared load per thread
 *    per row and k step; small M: split-K over gridDim.z (deterministic: each split writes
 *    fp32 partials, the last block to arrive at a tile sums them in split order 0..S-1).
 *
 * Weight layout (made once at plan creation, like Marlin's repack): "k64-permuted": inside
 * every 64-wide chunk of a row, bytes 16q..16q+15 are the 16 bytes lane q = lane % 4 needs:
 * byte 16q + 4j + e holds k = 16j + {2q, 2q+1, 2q+8, 2q+9}[e] (the m16n8k16 fragment
 * order, A and B alike), so a thread gets a whole chunk of one row in one 16-byte load.
 * Scales: N x K/32 (stream) and transposed K/32 x N (mma, wgmma: a chunk's scales for a
 * block of rows are two contiguous rows of bytes).
 *
 * Rows are independent: for one configuration (kernel, tile, split-K) every output row is
 * computed by the same sequence of operations whatever M is, so the split check can require
 * bitwise equality when the configuration of the shard and of the whole batch agree. */
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include "kernels/common/check.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/w8_device.cuh"
#include "kernels/gemm/w8quant.h"

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

typedef __nv_bfloat16 bf16;

/* Split-K arrival: every block of a tile calls it after writing its fp32 partials; returns
 * true in the last block to arrive (which then sums the tile) and resets the tile's
 * counter for the next launch. */
__device__ __forceinline__ bool splitk_last(int *counters, int tile, int S, int *s_last) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    int prev = atomicAdd(&counters[tile], 1);
    *s_last = prev == S - 1;
    if (*s_last) counters[tile] = 0;
  }
  __syncthreads();
  if (!*s_last) return false;
  __threadfence();
  return true;
}

/* The last block sums rows r0..r0+rows-1, columns c0..c0+cols-1 (cols % 4 == 0) of the S
 * partial planes (M x N each), 4 columns per thread and step (coalesced 16-byte loads, four
 * splits in flight), always in the order z = 0, 1, ..., S-1, and writes bf16. */
__device__ void splitk_reduce(const float *part, bf16 *Y, int r0, int rows, int c0, int cols, int M, int N,
                              int S, int tid, int nthreads) {
  const size_t plane = (size_t)M * N;
  const int q4 = cols / 4;
  for (int q = tid; q < rows * q4; q += nthreads) {
    int r = r0 + q / q4, c = c0 + (q % q4) * 4;
    const float *p0 = part + (size_t)r * N + c;
    float4 sum = __ldcg(reinterpret_cast<const float4 *>(p0));
    int zz = 1;
    for (; zz + 3 < S; zz += 4) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; u++) v[u] = __ldcg(reinterpret_cast<const float4 *>(p0 + (zz + u) * plane));
#pragma unroll
      for (int u = 0; u < 4; u++) { sum.x += v[u].x; sum.y += v[u].y; sum.z += v[u].z; sum.w += v[u].w; }
    }
    for (; zz < S; zz++) {
      float4 v = __ldcg(reinterpret_cast<const float4 *>(p0 + zz * plane));
      sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
    }
    __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x, sum.y), hi = __floats2bfloat162_rn(sum.z, sum.w);
    uint2 out;
    out.x = *reinterpret_cast<uint32_t *>(&lo);
    out.y = *reinterpret_cast<uint32_t *>(&hi);
    *reinterpret_cast<uint2 *>(Y + (size_t)r * N + c) = out;
  }
}

template <int BM, int BN, int WM, int WN, int STAGES>
struct W8Shape {
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int A_BYTES = BM * 128; /* BM x 64 bf16 */
  static constexpr int B_STRIDE = 64;      /* 16-byte reads of 8 lanes = 2 rows = 128 bytes: conflict-free */
  static constexpr int B_BYTES = BN * B_STRIDE;
  static constexpr int S_BYTES = 2 * BN;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES + S_BYTES;
  static constexpr int SMEM = STAGES * STAGE_BYTES;
  static_assert(STAGE_BYTES % 16 == 0, "stage alignment");
  static_assert(BN % 16 == 0 && WM % 16 == 0 && WN % 8 == 0, "tile shape");
};

template <int BM, int BN, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(W8Shape<BM, BN, WM, WN, STAGES>::THREADS)
w8a16_kernel(const bf16 *__restrict__ X, const uint8_t *__restrict__ Wq, const uint8_t *__restrict__ St,
             bf16 *__restrict__ Y, float *__restrict__ part, int *__restrict__ counters, int M, int N,
             int K) {
  typedef W8Shape<BM, BN, WM, WN, STAGES> Sh;
  constexpr int MT = WM / 16, NT = WN / 8;
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ int s_last;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / Sh::WARPS_N, wn = warp % Sh::WARPS_N;
  const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
  const int S = gridDim.z, z = blockIdx.z;
  const int KT = K / 64;
  const int kt0 = (int)((long long)KT * z / S), kt1 = (int)((long long)KT * (z + 1) / S);
  const int nkt = kt1 - kt0;
  const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem);

  /* Loader.  Thread tid copies A chunks (row tid/8 + it*THREADS/8, 16-byte column tid%8)
   * and B chunks (row tid/4 + it*THREADS/4, column tid%4): all source pointers, shared
   * offsets and row-validity bits are computed once, so a k step only adds kt*64. */
  constexpr int A_IT = (BM * 8 + Sh::THREADS - 1) / Sh::THREADS, A_RSTEP = Sh::THREADS / 8;
  constexpr int B_IT = (BN * 4 + Sh::THREADS - 1) / Sh::THREADS, B_RSTEP = Sh::THREADS / 4;
  static_assert(A_RSTEP % 8 == 0, "A rows per step keep the swizzle phase");
  const int a_r0 = tid >> 3, a_c = tid & 7, b_r0 = tid >> 2, b_c = tid & 3;
  const bf16 *a_src = X + (size_t)(m0 + a_r0) * K + a_c * 8;
  const uint8_t *b_src = Wq + (size_t)(n0 + b_r0) * K + b_c * 16;
  const size_t a_step = (size_t)A_RSTEP * K, b_step = (size_t)B_RSTEP * K;
  const uint32_t a_dst = a_r0 * 128 + ((a_c ^ (a_r0 & 7)) << 4), b_dst = b_r0 * Sh::B_STRIDE + b_c * 16;
  uint32_t a_ok = 0, b_ok = 0;
#pragma unroll
  for (int it = 0; it < A_IT; it++)
    if (it * Sh::THREADS + tid < BM * 8 && m0 + a_r0 + it * A_RSTEP < M) a_ok |= 1u << it;
#pragma unroll
  for (int it = 0; it < B_IT; it++)
    if (it * Sh::THREADS + tid < BN * 4 && n0 + b_r0 + it * B_RSTEP < N) b_ok |= 1u << it;
  const int s_r = tid / (BN / 16), s_c = tid % (BN / 16);
  const bool s_do = tid < 2 * (BN / 16), s_ok = s_do && n0 + s_c * 16 < N;
  const uint8_t *s_src = St + (size_t)s_r * N + n0 + s_c * 16;
  const uint32_t s_dst = s_r * BN + s_c * 16;

  auto load = [&](int stage, int kt) {
    const uint32_t sa = sbase + stage * Sh::STAGE_BYTES, sb = sa + Sh::A_BYTES, ss = sb + Sh::B_BYTES;
#pragma unroll
      for (int it = 0; it < A_IT; it++) {
        if (it * Sh::THREADS + tid >= BM * 8) break;
        bool v = (a_ok >> it) & 1u;
        const bf16 *src = v ? a_src + it * a_step + kt * 64 : X;
        cp_async16(sa + a_dst + it * A_RSTEP * 128, src, v ? 16 : 0);
      }
#pragma unroll
      for (int it = 0; it < B_IT; it++) {
        if (it * Sh::THREADS + tid >= BN * 4) break;
        bool v = (b_ok >> it) & 1u;
        const uint8_t *src = v ? b_src + it * b_step + kt * 64 : Wq;
        cp_async16(sb + b_dst + it * B_RSTEP * Sh::B_STRIDE, src, v ? 16 : 0);
      }
    if (s_do) cp_async16(ss + s_dst, s_ok ? s_src + (size_t)kt * 2 * N : St, s_ok ? 16 : 0);
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int v = 0; v < 4; v++) acc[i][j][v] = 0.f;

  /* per-thread fragment offsets (rows of a warp's A fragments share r & 7 = lane & 7) */
  const uint32_t a_frag = (wm * WM + (lane & 15)) * 128;
  uint32_t a_col[4];
#pragma unroll
  for (int kk = 0; kk < 4; kk++) a_col[kk] = ((kk * 2 + (lane >> 4)) ^ (lane & 7)) << 4;
  const int b_frag = (wn * WN + (lane >> 2)) * Sh::B_STRIDE + (lane & 3) * 16;
  const int s_frag = wn * WN + (lane >> 2);

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < nkt) load(s, kt0 + s);
    cp_async_commit();
  }
  for (int it = 0; it < nkt; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    {
      int nxt = it + STAGES - 1;
      if (nxt < nkt) load(nxt % STAGES, kt0 + nxt);
      cp_async_commit();
    }
    const int stage = it % STAGES;
    const uint32_t sa = sbase + stage * Sh::STAGE_BYTES;
    const uint8_t *sbp = smem + stage * Sh::STAGE_BYTES + Sh::A_BYTES + b_frag;
    const uint8_t *ssp = smem + stage * Sh::STAGE_BYTES + Sh::A_BYTES + Sh::B_BYTES + s_frag;
    uint32_t mul[NT][2];
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        mul[j][h] = e8m0_mul((uint32_t)ssp[h * BN + j * 8]);
      }
    uint4 wv[NT]; /* this lane's 16 bytes of each of its NT weight rows: all four k16 steps */
#pragma unroll
    for (int j = 0; j < NT; j++) wv[j] = *reinterpret_cast<const uint4 *>(sbp + j * 8 * Sh::B_STRIDE);
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
      uint32_t a[MT][4];
#pragma unroll
      for (int i = 0; i < MT; i++) ldmatrix_x4(a[i], sa + a_frag + i * 16 * 128 + a_col[kk]);
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const uint32_t w = kk == 0 ? wv[j].x : kk == 1 ? wv[j].y : kk == 2 ? wv[j].z : wv[j].w;
        uint32_t b[2];
        dequant4(w, mul[j][kk >> 1], b);
#pragma unroll
        for (int i = 0; i < MT; i++) mma_bf16(acc[i][j], a[i], b);
      }
    }
  }
  cp_async_wait<0>();

  const int rb = m0 + wm * WM + (lane >> 2), cb = n0 + wn * WN + (lane & 3) * 2;
  if (S == 1) {
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NT; j++) {
        int r = rb + i * 16, c = cb + j * 8;
        if (c >= N) continue;
        if (r < M)
          *reinterpret_cast<__nv_bfloat162 *>(Y + (size_t)r * N + c) = __floats2bfloat162_rn(acc[i][j][0], acc[i][j][1]);
        if (r + 8 < M)
          *reinterpret_cast<__nv_bfloat162 *>(Y + (size_t)(r + 8) * N + c) = __floats2bfloat162_rn(acc[i][j][2], acc[i][j][3]);
      }
    return;
  }
  /* split-K: partials, then the last block of the tile reduces in split order */
  const size_t plane = (size_t)M * N;
  float *P = part + (size_t)z * plane;
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) {
      int r = rb + i * 16, c = cb + j * 8;
      if (c >= N) continue;
      if (r < M) *reinterpret_cast<float2 *>(P + (size_t)r * N + c) = make_float2(acc[i][j][0], acc[i][j][1]);
      if (r + 8 < M) *reinterpret_cast<float2 *>(P + (size_t)(r + 8) * N + c) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  if (!splitk_last(counters, blockIdx.y * gridDim.x + blockIdx.x, S, &s_last)) return;
  const int rows = M - m0 < BM ? M - m0 : BM, cols = N - n0 < BN ? N - n0 : BN;
  splitk_reduce(part, Y, m0, rows, n0, cols, M, N, S, tid, Sh::THREADS);
}

/* ---- configurations ---- */
typedef void (*w8_kernel_fn)(const bf16 *, const uint8_t *, const uint8_t *, bf16 *, float *, int *, int,
                             int, int);
typedef struct {
  int bm, bn, threads, stages, smem;
  w8_kernel_fn fn;
} w8_variant;

#define W8V(BM, BN, WM, WN, ST)                                                                      \
  { BM, BN, W8Shape<BM, BN, WM, WN, ST>::THREADS, ST, W8Shape<BM, BN, WM, WN, ST>::SMEM,              \
    w8a16_kernel<BM, BN, WM, WN, ST> }
static const w8_variant variants[] = {
    W8V(16, 64, 16, 16, 8),    /* 0: M <= 16, weight streaming (the stream kernel's predecessor) */
    W8V(32, 64, 32, 16, 8),    /* 1: M <= 32 */
    W8V(64, 64, 64, 16, 6),    /* 2: M <= 64 */
    W8V(64, 128, 64, 32, 4),   /* 3: M <= 256 */
    W8V(128, 128, 64, 32, 4),  /* 4: large M, 8 warps */
    W8V(128, 256, 64, 64, 3),  /* 5: large M, 8 warps, 64x64 warp tiles */
    W8V(128, 128, 64, 64, 4),  /* 6: large M, 4 warps, 64x64 warp tiles */
    W8V(256, 128, 64, 64, 3),  /* 7: large M, 8 warps (4x2), 64x64 warp tiles */
    W8V(128, 128, 32, 64, 4),  /* 8: large M, 8 warps (4x2), 32x64 warp tiles */
};
enum { NVARIANTS = sizeof variants / sizeof variants[0] };
static_assert((int)NVARIANTS == (int)TPS_W8_MMA_VARIANTS, "w8quant.h's count of the mma variants (the overrides' range)");
static int occ_blocks[NVARIANTS]; /* resident blocks per SM, per variant (filled at prepare) */

extern "C" int tps_w8_env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  char *end;
  long v = strtol(s, &end, 10);
  return *end ? dflt : (int)v;
}

/* The mma kernel's configuration for m rows (variant by M, split-K to fill the SMs). */
static void choose_mma(const tps_gemm *g, int m, tps_w8_cfg *c) {
  memset(c, 0, sizeof *c);
  c->kind = TPS_W8K_MMA;
  int large = tps_w8_env_int("TPS_W8_LARGE", 4);
  if (large < 0 || large >= NVARIANTS) large = 4;
  int v = m <= 16 ? 0 : m <= 32 ? 1 : m <= 64 ? 2 : m <= 256 ? 3 : large;
  int ov = tps_w8_env_int("TPS_W8_VARIANT", -1);
  if (ov >= 0 && ov < NVARIANTS) v = ov;
  const w8_variant *w = &variants[v];
  c->variant = v;
  c->bm = w->bm; c->bn = w->bn; c->stages = w->stages; c->threads = w->threads;
  c->smem_bytes = (size_t)w->smem;
  c->mtiles = (m + w->bm - 1) / w->bm;
  c->ntiles = (g->n + w->bn - 1) / w->bn;
  int tiles = c->mtiles * c->ntiles, kt = g->k / 64;
  /* split-K when the tiles leave SMs idle: as many splits as fit in one wave of resident
   * blocks (no tail wave), at most 12 (M <= 32) or 8 (larger M): the H200 sweep (README) */
  int s = 1;
  if (tiles < g->num_sms) {
    int cap = (occ_blocks[v] > 0 ? occ_blocks[v] : 1) * g->num_sms;
    s = cap / tiles;
    int smax = m <= 32 ? 12 : 8;
    if (s > smax) s = smax;
    if (s < 1) s = 1;
  }
  int os = tps_w8_env_int("TPS_W8_SPLITK", 0);
  if (os > 0) s = os;
  if (s > kt / 2) s = kt / 2 > 0 ? kt / 2 : 1;
  if (s > 64) s = 64;
  c->splits = s;
}

/* Configuration for m rows.  The default on SM90 (an sm_90a build) is model/core/w8plan.h's
 * rule (tps_w8_pick_default: the stream kernel up to 64 rows, then the least modelled of the
 * split, stream-K and 256-token wgmma forms, whole waves first past one wave), asked with this
 * device's occupancy; other GPUs: the mma kernel.  Environment overrides for tuning sweeps:
 * TPS_W8_KERNEL=stream|mma|wgmma|split|sk (each only where it can run), TPS_W8_STREAM_MAX
 * (largest M for the stream kernel), TPS_W8_BT (wgmma tile; split and sk tile when forced),
 * TPS_W8_SPLIT (forced split kernel's split-K), TPS_W8_S256, TPS_W8_SMALL_SPLIT, TPS_W8_HEAD,
 * TPS_W8_SKG, TPS_W8_SKEVEN, TPS_W8_SKRS, TPS_W8_SKTAIL, TPS_W8_SBT (w8plan.h's fields), TPS_W8_VARIANT / TPS_W8_LARGE / TPS_W8_SPLITK (mma
 * kernel); registered in w8quant.c. */
extern "C" void tps_w8_geom_of(const tps_gemm *g, tps_w8_geom *q) {
  static const int bts[] = {64, 128, 256};
  tps_w8_geom_default(q, g->num_sms, g->n, g->k);
  for (int b = 0; b < 3; b++)
    for (int s = 0; s < 4; s++) q->split_slots[b][s] = tps_w8s_slots(g, bts[b], 1 << s); /* 0: unknown, the SMs */
  q->sk_slots[0] = tps_w8k_slots(g, 64);
  q->sk_slots[1] = tps_w8k_slots(g, 128);
  q->sk_slots[2] = tps_w8k_slots(g, 256);
  q->sk256 = tps_w8k_slots(g, 256) > 0 && tps_w8_env_int("TPS_W8_SK256", TPS_W8P_SK256_DEFAULT) == 1;
  q->sk2fit = tps_w8_env_int("TPS_W8_SK2FIT", TPS_W8P_SK2FIT_DEFAULT) == 1;
  q->sk_dpw = tps_w8_env_int("TPS_W8_SKDP", -1);
  q->sk_even = tps_w8_env_int("TPS_W8_SKEVEN", TPS_W8P_SKEVEN_DEFAULT) == 1;
  q->sk_rs = tps_w8_env_int("TPS_W8_SKRS", TPS_W8P_SKRS_DEFAULT); /* 0, 1, 2 (an experiment: the slices staged by cp.async) */
  q->sk_tail = tps_w8_env_int("TPS_W8_SKTAIL", 0);
  q->sk_blocks = g->sk_ws ? g->sk_blocks : 0;
  q->sk_grid_max = tps_w8_env_int("TPS_W8_SKG", 0);
  q->stream_max = tps_w8_env_int("TPS_W8_STREAM_MAX", 64);
  q->stream_bt = tps_w8_env_int("TPS_W8_SBT", 0);
  q->small_split = tps_w8_env_int("TPS_W8_SMALL_SPLIT", 0) == 1;
  q->s256 = tps_w8_env_int("TPS_W8_S256", 0) == 1;
  q->head = tps_w8_env_int("TPS_W8_HEAD", -1);
}

extern "C" int tps_w8_choose(const tps_gemm *g, int m, tps_w8_cfg *c) {
  const char *ks = getenv("TPS_W8_KERNEL");
  tps_w8_geom q;
  tps_w8_geom_of(g, &q);
  tps_w8_pick p = {TPS_W8P_WGMMA, 256, 1, 0, 0.0};
  int kind;
  if (ks && !strcmp(ks, "mma")) kind = TPS_W8K_MMA;
  else if (ks && !strcmp(ks, "stream") && g->wgmma_ok) kind = TPS_W8K_STREAM;
  else if (ks && !strcmp(ks, "wgmma") && g->wgmma_ok) kind = TPS_W8K_WGMMA;
  else if (ks && !strcmp(ks, "split") && g->wgmma_ok) kind = TPS_W8K_SPLIT;
  else if (ks && !strcmp(ks, "sk") && g->wgmma_ok && g->sk_ws) kind = TPS_W8K_SK;
  else if (!g->wgmma_ok) kind = TPS_W8K_MMA;
  else {
    ks = NULL; /* the default: w8plan.h's rule */
    if (tps_w8_pick_default(&q, m, &p) != 0) return TPS_ERR;
    static const int kinds[TPS_W8P_NKIND] = {TPS_W8K_STREAM, TPS_W8K_SPLIT, TPS_W8K_SK, TPS_W8K_WGMMA};
    kind = kinds[p.kind];
  }
  if (kind == TPS_W8K_MMA) { choose_mma(g, m, c); return TPS_OK; }
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->bn = 128; c->threads = 256; c->ntiles = (g->n + 127) / 128;
  if (kind == TPS_W8K_SPLIT) {
    if (ks) { /* forced: TPS_W8_BT and TPS_W8_SPLIT override the pick */
      tps_w8_split_pick(&q, m, &c->bt, &c->splits);
      const int bt = tps_w8_env_int("TPS_W8_BT", c->bt), sp = tps_w8_env_int("TPS_W8_SPLIT", c->splits);
      c->bt = bt <= 64 ? 64 : bt <= 128 ? 128 : 256;
      c->splits = sp >= 8 ? 8 : sp >= 4 ? 4 : sp >= 2 ? 2 : 1;
    } else {
      c->bt = p.bt;
      c->splits = p.splits;
    }
    c->bm = c->bt;
    c->threads = c->bt == 256 ? 384 : 288;
    c->mtiles = (m + c->bt - 1) / c->bt;
    c->stages = c->bt == 256 ? 5 : c->splits == 1 ? 8 : c->bt == 64 ? 10 : 6;
  } else if (kind == TPS_W8K_SK) {
    c->bt = p.bt;
    if (ks) {
      tps_w8_sk_pick(&q, m, &c->bt);
      const int bt = tps_w8_env_int("TPS_W8_BT", c->bt);
      c->bt = bt <= 64 ? 64 : bt <= 128 || tps_w8k_slots(g, 256) <= 0 ? 128 : 256;
    }
    c->bm = c->bt;
    c->threads = c->bt == 256 ? 384 : 288;
    c->mtiles = (m + c->bt - 1) / c->bt;
    c->splits = tps_w8_sk_grid(&q, m, c->bt); /* the grid */
    c->stages = c->bt == 64 ? 12 : c->bt == 128 ? 8 : 5;
    c->head = c->bt == 256 ? tps_w8_sk_dpw(&q, m, c->splits) : 0; /* whole waves first */
  } else if (kind == TPS_W8K_STREAM) {
    c->bt = c->bm = tps_w8_stream_tile(&q, m); /* wgmma N */
    c->splits = tps_w8_env_int("TPS_W8_SCL", 0) == 4 && c->bt <= 64 ? 4 : TPS_W8C_SPLITS; /* tps_w8c_run's clusters */
    c->mtiles = (m + c->bt - 1) / c->bt; /* launches */
    c->stages = c->bt == 128 ? 5 : 10; /* svariants in gemm_w8a16_sm90.cu */
    if (tps_w8c_rows(g, c->bt) == 192) { /* w8t3_kernel (s3variants): where 128-row clusters need two waves */
      c->bn = 192; c->threads = 384; c->ntiles = (g->n + 191) / 192; c->splits = TPS_W8C_SPLITS;
      c->stages = c->bt == 64 ? 8 : c->bt == 48 ? 9 : 10;
    }
  } else {
    const int head = ks ? 0 : p.head;
    int bt = head > 0 ? 256 : tps_w8_env_int("TPS_W8_BT", m <= 1024 && ks ? 128 : 256);
    c->bt = c->bm = bt <= 64 ? 64 : bt <= 128 ? 128 : 256;
    c->splits = 1;
    c->head = head;
    c->mtiles = ((head > 0 ? head : m) + c->bt - 1) / c->bt;
    c->stages = c->bt == 256 ? 5 : 8;
  }
  return TPS_OK;
}

/* bytes of split-K partials and tiles (counters) the mma kernel needs for m rows */
static void w8_workspace(const tps_gemm *g, int m, size_t *part, int *tiles) {
  tps_w8_cfg c;
  choose_mma(g, m, &c);
  *part = 0; *tiles = 0;
  if (c.splits <= 1) return;
  *part = (size_t)c.splits * m * g->n * sizeof(float);
  *tiles = c.mtiles * c.ntiles;
}

static int w8_upload_w8(tps_gemm *g) {
  {
    char why[256];
    if (tps_w8_check_env(why, sizeof why)) {
      fprintf(stderr, "tpsplit: gemm: %s\n", why);
      return TPS_ERR;
    }
  }
  const int n = g->n, k = g->k, kb = k / 32;
  size_t nk = (size_t)n * k;
  uint8_t *pq = (uint8_t *)malloc(nk), *ps = (uint8_t *)malloc(nk / 32);
  if (!pq || !ps) { free(pq); free(ps); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  /* k64 permutation: byte 16q + 4j + e of a chunk holds k = 16j + {2q, 2q+1, 2q+8, 2q+9}[e] */
  for (int r = 0; r < n; r++)
    for (int c64 = 0; c64 < k; c64 += 64)
      for (int q = 0; q < 4; q++)
        for (int j = 0; j < 4; j++) {
          const int src[4] = {2 * q, 2 * q + 1, 2 * q + 8, 2 * q + 9};
          for (int e = 0; e < 4; e++)
            pq[(size_t)r * k + c64 + 16 * q + 4 * j + e] = g->h_q[(size_t)r * k + c64 + 16 * j + src[e]];
        }
  for (int r = 0; r < n; r++)
    for (int b = 0; b < kb; b++) ps[(size_t)b * n + r] = g->h_s[(size_t)r * kb + b];
  /* packed records for the SM90 kernels: every chunk's weights and scales contiguous, in the
   * order a block reads them (rows past N: zero bytes, which dequantize to 0) */
  const int nrb = (n + 127) / 128, kc = k / 64;
  const size_t rec_bytes = (size_t)nrb * kc * TPS_W8_REC_BYTES;
  uint8_t *pr = (uint8_t *)calloc(rec_bytes, 1);
  if (!pr) { free(pq); free(ps); fprintf(stderr, "tpsplit: gemm: out of memory\n"); return TPS_ERR; }
  for (int rb = 0; rb < nrb; rb++)
    for (int c = 0; c < kc; c++) {
      uint8_t *rec = pr + ((size_t)rb * kc + c) * TPS_W8_REC_BYTES;
      for (int rl = 0; rl < 128 && rb * 128 + rl < n; rl++) {
        const int r = rb * 128 + rl;
        /* each 4-byte word of the k64-permuted bytes in the record encoding (w8quant.h) */
        for (int w4 = 0; w4 < 16; w4++) {
          const uint32_t e = tps_w8_rec_encode4(pq + (size_t)r * k + c * 64 + 4 * w4);
          memcpy(rec + rl * 64 + 4 * w4, &e, 4); /* little-endian, as the kernels load it */
        }
        rec[128 * 64 + rl] = ps[(size_t)(2 * c) * n + r];
        rec[128 * 64 + 128 + rl] = ps[(size_t)(2 * c + 1) * n + r];
      }
    }
  cudaError_t e = cudaMalloc(&g->w_q, nk);
  if (e == cudaSuccess) e = cudaMalloc(&g->w_s, nk / 32);
  if (e == cudaSuccess) e = cudaMemcpy(g->w_q, pq, nk, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(g->w_s, ps, nk / 32, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMalloc(&g->w_rec, rec_bytes);
  if (e == cudaSuccess) e = cudaMemcpy(g->w_rec, pr, rec_bytes, cudaMemcpyHostToDevice);
  free(pq); free(ps); free(pr);
  CUDA_TRY(e);
  for (int v = 0; v < NVARIANTS; v++) {
    CUDA_TRY(cudaFuncSetAttribute(variants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, variants[v].smem));
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_blocks[v], variants[v].fn, variants[v].threads,
                                                           (size_t)variants[v].smem));
  }
  TPS_TRY(tps_w8g_prepare(g));
  /* workspace for the mma kernel's largest split-K use over M = 1..max_m (sized whichever
   * kernel the default choice makes, so that TPS_W8_KERNEL=mma always works) */
  size_t part = 0;
  int ntile_max = 0;
  for (int m = 1; m <= g->max_m; m++) {
    size_t b;
    int t;
    w8_workspace(g, m, &b, &t);
    if (b > part) part = b;
    if (t > ntile_max) ntile_max = t;
  }
  g->part_bytes = part;
  g->ncounters = ntile_max;
  if (part) CUDA_TRY(cudaMalloc(&g->part, part));
  if (ntile_max) {
    CUDA_TRY(cudaMalloc(&g->counters, (size_t)ntile_max * sizeof(int)));
    CUDA_TRY(cudaMemset(g->counters, 0, (size_t)ntile_max * sizeof(int)));
  }
  return TPS_OK;
}

static int w8_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  if (!(parts & TPS_GEMM_PART_MATMUL)) return TPS_OK;
  if (((uintptr_t)x & 15) || ((uintptr_t)y & 7)) {
    fprintf(stderr, "tpsplit: gemm: w8a16 needs X 16-byte and Y 8-byte aligned\n");
    return TPS_ERR;
  }
  tps_w8_cfg c;
  TPS_TRY(tps_w8_choose(g, m, &c));
  size_t need;
  int tiles;
  w8_workspace(g, m, &need, &tiles);
  if (need > g->part_bytes || tiles > g->ncounters) {
    fprintf(stderr, "tpsplit: gemm: w8a16 split-K workspace too small for M=%d (plan made for %d)\n", m, g->max_m);
    return TPS_ERR;
  }
  if (c.kind == TPS_W8K_WGMMA && c.head > 0) { /* whole waves, then the rows left by their own pick */
    TPS_TRY(tps_w8g_run(g, x, y, c.head, c.bt, s));
    return w8_run(g, (const uint16_t *)x + (size_t)c.head * g->k, (uint16_t *)y + (size_t)c.head * g->n, m - c.head, s, parts);
  }
  if (c.kind == TPS_W8K_WGMMA) return tps_w8g_run(g, x, y, m, c.bt, s);
  if (c.kind == TPS_W8K_SPLIT) return tps_w8s_run(g, x, y, m, c.bt, c.splits, s);
  if (c.kind == TPS_W8K_SK) return tps_w8k_run(g, x, y, m, c.bt, s);
  if (c.kind == TPS_W8K_STREAM) return tps_w8c_run(g, x, y, m, s);
  const w8_variant *w = &variants[c.variant];
  dim3 grid(c.ntiles, c.mtiles, c.splits);
  w->fn<<<grid, w->threads, w->smem, s>>>((const bf16 *)x, g->w_q, g->w_s, (bf16 *)y, g->part, g->counters, m,
                                          g->n, g->k);
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

static int w8_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  tps_w8_cfg c;
  TPS_TRY(tps_w8_choose(g, m, &c));
  if (c.kind == TPS_W8K_STREAM) {
    snprintf(buf, bufsz, "w8a16 stream: %d weight rows x %d tokens per block, cluster split-K %d (partials %s), grid %dx%d",
             c.bn, c.bt, c.splits, c.bn == 192 ? "by st.async" : tps_w8c_sum_name[tps_w8c_sum()], c.ntiles, c.splits);
    *id = ((uint64_t)TPS_W8K_STREAM << 40) | ((uint64_t)c.bt << 32) | (uint64_t)c.splits | ((uint64_t)(c.bn == 192) << 48);
  } else if (c.kind == TPS_W8K_SPLIT) {
    snprintf(buf, bufsz, "w8a16 split: 128 weight rows x %d tokens per block, cluster split-K %d, %d stages, grid %dx%dx%d",
             c.bt, c.splits, c.stages, c.ntiles, c.mtiles, c.splits);
    *id = ((uint64_t)TPS_W8K_SPLIT << 40) | ((uint64_t)c.bt << 32) | (uint64_t)c.splits;
  } else if (c.kind == TPS_W8K_SK) {
    /* the sums' order follows the iterations' partition: the same only for the same tiles and grid */
    const int at = snprintf(buf, bufsz, "w8a16 sk: 128 weight rows x %d tokens per tile, %dx%d tiles x %d chunks over a persistent grid of %d, %d stages",
                            c.bt, c.ntiles, c.mtiles, g->k / 64, c.splits, c.stages);
    tps_w8_geom q;
    tps_w8_geom_of(g, &q);
    /* the pieces of a cut tile (an even grid, or an even tail after c.head whole waves) and who sums them */
    const int cut = c.bt == 256 ? tps_w8_sk_cut(&q, m, c.splits, c.head) : 0, tail = cut > 0 && c.head > 0;
    const int rsum = cut > 1 && q.sk_rs >= 1;
    if (c.bt == 256 && at > 0 && (size_t)at < bufsz) {
      const int at2 = snprintf(buf + at, bufsz - (size_t)at, ", %d whole waves first", c.head);
      const size_t at3 = at2 > 0 ? (size_t)(at + at2) : bufsz;
      if (at3 < bufsz && (cut > 1 || tail))
        snprintf(buf + at3, bufsz - at3, ", %s%d pieces a tile%s%s", tail ? "the rest in " : "", cut, cut > 1 ? ", summed by " : "",
                 cut < 2 ? "" : rsum ? (q.sk_rs == 2 ? "reduce-scatter (cp.async)" : "reduce-scatter") : "the owner");
    }
    *id = ((uint64_t)TPS_W8K_SK << 40) | ((uint64_t)c.bt << 32) | ((uint64_t)c.mtiles << 16) | (uint64_t)c.splits |
          ((uint64_t)c.head << 48) | ((uint64_t)(tail ? cut : 0) << 56) | ((uint64_t)(rsum ? q.sk_rs : 0) << 62); /* tail p <= 63 (w8quant.c) */
  } else if (c.kind == TPS_W8K_WGMMA && c.head > 0) {
    const int at = snprintf(buf, bufsz, "w8a16 wgmma: tile 128 weight rows x %d tokens, %d stages, grid %dx%d (%d rows); then %d rows: ",
                            c.bt, c.stages, c.ntiles, c.mtiles, c.head, m - c.head);
    uint64_t rest = 0;
    if (at > 0 && (size_t)at < bufsz) TPS_TRY(w8_config(g, m - c.head, buf + at, bufsz - (size_t)at, &rest));
    const uint64_t mine = ((uint64_t)TPS_W8K_WGMMA << 40) | ((uint64_t)c.bt << 32) | (uint64_t)c.head;
    *id = tps_fnv1a(mine, &rest, sizeof rest);
  } else if (c.kind == TPS_W8K_WGMMA) {
    snprintf(buf, bufsz, "w8a16 wgmma: tile 128 weight rows x %d tokens, %d stages, grid %dx%d", c.bt, c.stages,
             c.ntiles, c.mtiles);
    *id = ((uint64_t)TPS_W8K_WGMMA << 40) | ((uint64_t)c.bt << 32);
  } else {
    snprintf(buf, bufsz, "w8a16 mma: tile %dx%d, %d stages, %d threads, split-K %d, grid %dx%dx%d", c.bm, c.bn,
             c.stages, c.threads, c.splits, c.ntiles, c.mtiles, c.splits);
    *id = ((uint64_t)TPS_W8K_MMA << 40) | ((uint64_t)c.variant << 32) | (uint64_t)c.splits;
  }
  return TPS_OK;
}

/* rows are independent (see the top of this file); checked against the reference kernel */
static const tps_gemm_ops w8_ops = {
    TPS_PATH_W8A16, {0, 1, 1e-2, TPS_PATH_W8A16_REF},
    NULL, w8_upload_w8, w8_run, w8_config, NULL, NULL, NULL};
TPS_GEMM_PATH_OPS(w8_ops);

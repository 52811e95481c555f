/* gemm_w8a16_sm90.cu: the W8A16 kernels that need SM90 (H100/H200/H20), built for sm_90a.
 *
 *   Y[M x N] = X[M x K] W[N x K]^T, X bf16, W FP8 E4M3 + one E8M0 scale per 1x32 block (k),
 *   fp32 accumulation, Y bf16.  Weights in the k64-permuted layout (tps_w8_prepare); the
 *   dequantization is w8_device.cuh's.  Every kernel computes Y^T = W X^T: the weights are
 *   the MMA's A operand (16 rows per warp, from registers), the tokens its N dimension.
 *
 * w8t_kernel (the default): wgmma fed by TMA.  2 warpgroups = 128 weight rows x BT tokens.
 *   Per 64-wide k chunk a stage holds the X tile (BT rows of 128 bytes, 128B swizzle: the
 *   layout of wgmma's K-major descriptor), the 128 rows' fragment bytes and their scales;
 *   an mbarrier per stage counts the bytes in ("full"), another counts the warps out
 *   ("empty"); thread 0 issues the copies.  Chunk c+1 is dequantized into the second A
 *   register buffer while chunk c's four wgmma run.  Large M: no split-K, results staged
 *   through shared memory for coalesced stores.  Small M (SPLIT = 8, the "stream" kind):
 *   the K range is split over a (1, 1, 8) cluster, every chunk of a block's range is
 *   resident (10 stages for K = 5120) and its MMAs are issued as soon as it lands; the 8
 *   fp32 partials are summed through distributed shared memory in rank order.
 * w8g_kernel: the same MMA loop fed by per-thread cp.async (TPS_W8_TMA=0; kept to compare).
 * w8c_kernel / w8b_kernel: mma.sync stream forms (weights straight to registers / by bulk
 *   copies; TPS_W8_STREAM=reg|bulk; kept to compare: 1.17x dense-bf16 at best at M = 1).
 *
 * Elsewhere (no sm_90a code) the kernels are empty stubs and tps_w8g_prepare leaves
 * wgmma_ok = 0 (a probe kernel reports which body was built). */
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cuda.h> /* CUtensorMap (types only: the encoder comes from cudaGetDriverEntryPointByVersion) */
#include "check.h"
#include "gemm_internal.h"
#include "w8_device.cuh"

typedef __nv_bfloat16 bf16;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TPS_SM90 1
#endif

__global__ void w8g_probe(int *out) {
#ifdef TPS_SM90
  *out = 1;
#else
  *out = 0;
#endif
}

#ifdef TPS_SM90
/* D[64 x 16] += A[64 x 16] (registers) * B[16 x 16] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n16(float (&d)[8], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7}, "
      "{%8,%9,%10,%11}, %12, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}
/* D[64 x 32] += A[64 x 16] (registers) * B[16 x 32] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n32(float (&d)[16], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "
      "{%16,%17,%18,%19}, %20, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), 
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}
/* D[64 x 64] += A[64 x 16] (registers) * B[16 x 64] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
      "{%32,%33,%34,%35}, %36, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}
/* D[64 x 128] += A[64 x 16] (registers) * B[16 x 128] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
      "{%64,%65,%66,%67}, %68, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}
/* D[64 x 256] += A[64 x 16] (registers) * B[16 x 256] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n256(float (&d)[128], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
      "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
      "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
      "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
      "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, "
      "{%128,%129,%130,%131}, %132, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* pin the accumulators: the compiler may not move or read them across this point (a
 * non-wgmma access while MMAs are in flight makes ptxas serialize every wgmma) */
template <int N> __device__ __forceinline__ void wg_pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}
template <int BT> struct WgOp;
template <> struct WgOp<16> { static __device__ __forceinline__ void mma(float (&d)[8], const uint32_t (&a)[4], uint64_t b) { wgmma_n16(d, a, b); } };
template <> struct WgOp<32> { static __device__ __forceinline__ void mma(float (&d)[16], const uint32_t (&a)[4], uint64_t b) { wgmma_n32(d, a, b); } };
template <> struct WgOp<64> { static __device__ __forceinline__ void mma(float (&d)[32], const uint32_t (&a)[4], uint64_t b) { wgmma_n64(d, a, b); } };
template <> struct WgOp<128> { static __device__ __forceinline__ void mma(float (&d)[64], const uint32_t (&a)[4], uint64_t b) { wgmma_n128(d, a, b); } };
template <> struct WgOp<256> { static __device__ __forceinline__ void mma(float (&d)[128], const uint32_t (&a)[4], uint64_t b) { wgmma_n256(d, a, b); } };
#endif

/* ------------------------------------------------------------------ wgmma kernel */
template <int BT, int STAGES>
struct WgShape {
  static constexpr int X_BYTES = BT * 128;                    /* BT tokens x 64 bf16, swizzled */
  static constexpr int W_BYTES = 128 * 64;                    /* 128 rows x 64 fragment bytes */
  static constexpr int S_BYTES = 2 * 128;                     /* 2 scale blocks x 128 rows */
  static constexpr int STAGE_BYTES = (X_BYTES + W_BYTES + S_BYTES + 1023) / 1024 * 1024;
  static constexpr int YS = 128 + 8;                          /* staged Y row: 128 outputs + pad (bf16) */
  static constexpr int MAIN = STAGES * STAGE_BYTES;
  static constexpr int EPI = BT * YS * 2;
  static constexpr int SMEM = (MAIN > EPI ? MAIN : EPI) + 1024; /* + alignment slack */
};

template <int BT, int STAGES>
__global__ void __launch_bounds__(256, 1)
w8g_kernel(const bf16 *__restrict__ X, const uint8_t *__restrict__ Wq, const uint8_t *__restrict__ St,
           bf16 *__restrict__ Y, int M, int N, int K) {
#ifdef TPS_SM90
  typedef WgShape<BT, STAGES> Sh;
  /* chunks requested ahead: a pair of chunks it, it+1 refills the stages of chunks it-2 and
   * it-1 (free once every thread has finished the previous pair) with chunks it+D, it+D+1 */
  constexpr int D = STAGES - 2;
  static_assert(D >= 3, "a pair starts with chunks it..it+2 landed");
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int n0 = blockIdx.x * 128, t0 = blockIdx.y * BT;
  const int nch = K / 64;
  const int rl = warp * 16 + g; /* this thread's rows in the block: rl and rl + 8 */

  /* Loader: every source pointer, shared offset and validity bit is computed once; a chunk
   * only adds its k offset (ncu on the first version: the per-chunk index arithmetic made
   * the kernel issue-bound).  X: rows xr0 + 32i (i < BT/32), piece tid & 7; W: rows
   * (tid >> 2) + 64i (i < 2), piece tid & 3; scales: threads 0..15, block tid >> 3, piece tid & 7. */
  constexpr int XI = BT / 32;
  const int xr0 = tid >> 3, xp = tid & 7;
  const bf16 *x_src = X + (size_t)(t0 + xr0) * K + xp * 8;
  const size_t x_step = (size_t)32 * K;
  const uint32_t x_dst = xr0 * 128 + ((xp ^ (xr0 & 7)) << 4);
  uint32_t x_ok = 0;
#pragma unroll
  for (int i = 0; i < XI; i++) x_ok |= (uint32_t)(t0 + xr0 + 32 * i < M) << i;
  const int wr0 = tid >> 2, wp = tid & 3;
  const uint8_t *w_src = Wq + (size_t)(n0 + wr0) * K + wp * 16;
  const size_t w_step = (size_t)64 * K;
  const uint32_t w_dst = Sh::X_BYTES + wr0 * 64 + wp * 16;
  const bool w_ok0 = n0 + wr0 < N, w_ok1 = n0 + wr0 + 64 < N;
  const int sh = tid >> 3, sp = tid & 7;
  const bool s_do = tid < 16, s_ok = s_do && n0 + sp * 16 < N;
  const uint8_t *s_src = St + (size_t)sh * N + n0 + sp * 16;
  const uint32_t s_dst = Sh::X_BYTES + Sh::W_BYTES + sh * 128 + sp * 16;

  auto load = [&](int chunk, int stage) {
    const uint32_t st = sbase + stage * Sh::STAGE_BYTES;
    const bf16 *xs = x_src + (size_t)chunk * 64;
#pragma unroll
    for (int i = 0; i < XI; i++) {
      const bool v = (x_ok >> i) & 1u;
      cp_async16(st + x_dst + i * 4096, v ? xs + i * x_step : X, v ? 16 : 0);
    }
    const uint8_t *ws = w_src + (size_t)chunk * 64;
    cp_async16(st + w_dst, w_ok0 ? ws : Wq, w_ok0 ? 16 : 0);
    cp_async16(st + w_dst + 64 * 64, w_ok1 ? ws + w_step : Wq, w_ok1 ? 16 : 0);
    if (s_do) cp_async16(st + s_dst, s_ok ? s_src + (size_t)chunk * 2 * N : St, s_ok ? 16 : 0);
  };
  uint32_t afr[2][4][4]; /* [buffer = chunk & 1][k16 step][m64k16 A fragment registers] */
  auto dequant = [&](int stage, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint8_t *st = sptr + stage * Sh::STAGE_BYTES + Sh::X_BYTES;
    const uint4 qa = *reinterpret_cast<const uint4 *>(st + rl * 64 + c * 16);
    const uint4 qb = *reinterpret_cast<const uint4 *>(st + (rl + 8) * 64 + c * 16);
    const uint8_t *ss = st + Sh::W_BYTES;
    const uint32_t ma[2] = {e8m0_mul(ss[rl]), e8m0_mul(ss[128 + rl])};
    const uint32_t mb[2] = {e8m0_mul(ss[rl + 8]), e8m0_mul(ss[128 + rl + 8])};
    const uint32_t wa4[4] = {qa.x, qa.y, qa.z, qa.w}, wb4[4] = {qb.x, qb.y, qb.z, qb.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
      /* fragment: a0 = (row g, k 2c..2c+1), a1 = (row g+8, k 2c..), a2 = (row g, k 2c+8..), a3 = (row g+8, k 2c+8..) */
      uint32_t lo[2], hi[2];
      dequant4(wa4[j], ma[j >> 1], lo);
      dequant4(wb4[j], mb[j >> 1], hi);
      afr[B][j][0] = lo[0]; afr[B][j][1] = hi[0]; afr[B][j][2] = lo[1]; afr[B][j][3] = hi[1];
    }
  };
  using I0 = std::integral_constant<int, 0>;
  using I1 = std::integral_constant<int, 1>;

  float acc[BT / 2];
  /* the four k16 wgmma of the chunk in `stage` with A buffer B */
  auto mma_chunk = [&](int stage, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint32_t st = sbase + stage * Sh::STAGE_BYTES;
    /* K-major B, 128-byte swizzle: start>>4, LBO 16 B (unused), SBO 1024 B (8-row group stride) */
    const uint64_t desc0 = (uint64_t)((st & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
#pragma unroll
    for (int j = 0; j < 4; j++) WgOp<BT>::mma(acc, afr[B][j], desc0 + (uint64_t)(j * 2)); /* +32 bytes per k16 */
  };
#pragma unroll
  for (int i = 0; i < BT / 2; i++) acc[i] = 0.f;

#pragma unroll
  for (int s = 0; s < D; s++) {
    if (s < nch) load(s, s);
    cp_async_commit();
  }
  cp_async_wait<D - 1>();
  __syncthreads();
  dequant(0, I0{});

  /* Pairs of chunks: the MMAs of chunk it run while chunk it+1 is dequantized, those of
   * it+1 while it+2 is, and the tensor pipe drains once per pair (wait_group 0 at the end:
   * keeping MMAs in flight across loop iterations made ptxas serialize every wgmma, C7514).
   * Invariant at the top: A buffer 0 holds chunk it. */
  for (int it = 0; it < nch; it += 2) {
    cp_async_wait<D - 3>(); /* chunks it, it+1, it+2 have landed */
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads(); /* ... for every thread; every thread is done with chunks it-2, it-1 */
    const int s0 = it % STAGES, s1 = (it + 1) % STAGES, s2 = (it + 2) % STAGES;
    wg_pin(acc);
    wg_fence();
    mma_chunk(s0, I0{});
    wg_commit();
    wg_pin(acc);
    if (it + D < nch) load(it + D, (it + D) % STAGES); /* = stage of chunk it-2 */
    cp_async_commit();
    if (it + D + 1 < nch) load(it + D + 1, (it + D + 1) % STAGES); /* = stage of chunk it-1 */
    cp_async_commit();
    if (it + 1 < nch) {
      dequant(s1, I1{});
      wg_fence();
      mma_chunk(s1, I1{});
      wg_commit();
      wg_pin(acc);
      wg_wait<1>(); /* chunk it's MMAs are done: A buffer 0 is free */
    }
    if (it + 2 < nch) dequant(s2, I0{});
    wg_wait<0>();
    wg_pin(acc);
  }
  wg_wait<0>();
  wg_pin(acc);
  cp_async_wait<0>();
  __syncthreads(); /* every thread is done with the ring: reuse it for Y */

  /* accumulators: acc[4i + e] = (row rl, token 8i + 2c + e), acc[4i + 2 + e] = (row rl + 8, same) */
  bf16 *ys = reinterpret_cast<bf16 *>(sptr);
#pragma unroll
  for (int i = 0; i < BT / 8; i++) {
    const int t = 8 * i + 2 * c;
    ys[t * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 0]);
    ys[(t + 1) * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 1]);
    ys[t * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 2]);
    ys[(t + 1) * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 3]);
  }
  __syncthreads();
  for (int i = tid; i < BT * 16; i += 256) {
    const int r = i >> 4, p = i & 15, t = t0 + r, n = n0 + p * 8;
    if (t < M && n < N)
      *reinterpret_cast<uint4 *>(Y + (size_t)t * N + n) = *reinterpret_cast<const uint4 *>(ys + r * Sh::YS + p * 8);
  }
#endif
}

/* ------------------------------------------------------------------ mma.sync stream kernels (comparison forms) */
enum { SC_S = TPS_W8C_SPLITS }; /* K splits = cluster size */
/* register form (TPS_W8_STREAM=reg): each thread loads its 16-byte fragments of up to CH
 * chunks straight into registers; X staged by cp.async; m16n8k16 with tokens as n8 */
template <int NT> struct ScShape {
  static constexpr int CH = NT >= 16 ? 5 : 10;      /* chunks of 64 k whose weights sit in registers */
  static constexpr int XS = CH * 128 + 16;          /* bytes per staged X row (+16: conflict-free reads) */
  static constexpr int PS = 132;                     /* floats per partial row (128 + 4: conflict-free) */
  static constexpr int XBYTES = 8 * NT * XS, PBYTES = 8 * NT * PS * 4;
  static constexpr int SMEM = XBYTES > PBYTES ? XBYTES : PBYTES;
};

template <int NT> /* token tiles of 8: up to 8 * NT tokens */
__global__ void __launch_bounds__(256, 1)
w8c_kernel(const bf16 *__restrict__ X, const uint8_t *__restrict__ Wq, const uint8_t *__restrict__ Sn,
           bf16 *__restrict__ Y, int M, int N, int K, int cps) {
#ifdef TPS_SM90
  typedef ScShape<NT> Sh;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(128) uint8_t smem_raw[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, c = lane & 3;
  const int n0 = blockIdx.x * 128, z = (int)cluster.block_rank();
  const int nch = K / 64, kb = K / 32;
  const int c0 = z * cps < nch ? z * cps : nch, c1 = c0 + cps < nch ? c0 + cps : nch;
  const int row_a = n0 + warp * 16 + g; /* this thread's weight rows: row_a and row_a + 8 */
  const int ra = row_a < N ? row_a : N - 1, rb = row_a + 8 < N ? row_a + 8 : N - 1;
  const uint8_t *wa = Wq + (size_t)ra * K + c * 16, *wb = Wq + (size_t)rb * K + c * 16;
  const uint16_t *sa = reinterpret_cast<const uint16_t *>(Sn + (size_t)ra * kb);
  const uint16_t *sb = reinterpret_cast<const uint16_t *>(Sn + (size_t)rb * kb);
  const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem_raw);
  float acc[NT][4];
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int v = 0; v < 4; v++) acc[t][v] = 0.f;

  for (int cg0 = c0; cg0 < c1; cg0 += Sh::CH) {
    const int nc = c1 - cg0 < Sh::CH ? c1 - cg0 : Sh::CH;
    if (cg0 != c0) __syncthreads(); /* the previous group's X has been read */
    for (int i = tid; i < 8 * NT * Sh::CH * 8; i += 256) {
      const int r = i / (Sh::CH * 8), p = i % (Sh::CH * 8);
      if (p >= nc * 8) continue;
      const bool v = r < M;
      cp_async16(sbase + r * Sh::XS + p * 16, v ? X + (size_t)r * K + (size_t)cg0 * 64 + p * 8 : X, v ? 16 : 0);
    }
    cp_async_commit();
    uint4 qa[Sh::CH], qb[Sh::CH];
    uint32_t ea[Sh::CH], eb[Sh::CH];
#pragma unroll
    for (int ch = 0; ch < Sh::CH; ch++)
      if (ch < nc) {
        qa[ch] = __ldg(reinterpret_cast<const uint4 *>(wa + (size_t)(cg0 + ch) * 64));
        qb[ch] = __ldg(reinterpret_cast<const uint4 *>(wb + (size_t)(cg0 + ch) * 64));
        ea[ch] = __ldg(sa + cg0 + ch);
        eb[ch] = __ldg(sb + cg0 + ch);
      }
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int ch = 0; ch < Sh::CH; ch++) {
      if (ch < nc) {
        const uint32_t wa4[4] = {qa[ch].x, qa[ch].y, qa[ch].z, qa[ch].w};
        const uint32_t wb4[4] = {qb[ch].x, qb[ch].y, qb[ch].z, qb[ch].w};
        const uint32_t ma[2] = {e8m0_mul(ea[ch] & 0xFFu), e8m0_mul(ea[ch] >> 8)};
        const uint32_t mb[2] = {e8m0_mul(eb[ch] & 0xFFu), e8m0_mul(eb[ch] >> 8)};
#pragma unroll
        for (int j = 0; j < 4; j++) {
          uint32_t lo[2], hi[2], a[4];
          dequant4(wa4[j], ma[j >> 1], lo);
          dequant4(wb4[j], mb[j >> 1], hi);
          a[0] = lo[0]; a[1] = hi[0]; a[2] = lo[1]; a[3] = hi[1];
#pragma unroll
          for (int t = 0; t < NT; t++) {
            const uint32_t *xr = reinterpret_cast<const uint32_t *>(smem_raw + (8 * t + g) * Sh::XS + ch * 128);
            const uint32_t b[2] = {xr[8 * j + c], xr[8 * j + c + 4]};
            mma_bf16(acc[t], a, b);
          }
        }
      }
    }
  }
  /* partial tile (tokens x 128 rows of W) into this block's shared memory */
  __syncthreads(); /* X reads done */
  float *ps = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int v = 0; v < 4; v++) ps[(8 * t + 2 * c + (v & 1)) * Sh::PS + warp * 16 + g + (v >> 1) * 8] = acc[t][v];
  cluster.sync(); /* every block's partial is complete and visible to the cluster */
  /* block z sums columns 16z..16z+15 of the 8 partials, rank order 0..7 */
  const int rows = M < 8 * NT ? M : 8 * NT;
  for (int i = tid; i < rows * 4; i += 256) {
    const int t = i >> 2, col = z * 16 + (i & 3) * 4;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int r = 0; r < SC_S; r++) {
      const float4 v = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(ps, r) + t * Sh::PS + col);
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    if (n0 + col < N) {
      __nv_bfloat162 lo = __floats2bfloat162_rn(s.x, s.y), hi = __floats2bfloat162_rn(s.z, s.w);
      uint2 out;
      out.x = *reinterpret_cast<uint32_t *>(&lo);
      out.y = *reinterpret_cast<uint32_t *>(&hi);
      *reinterpret_cast<uint2 *>(Y + (size_t)t * N + n0 + col) = out;
    }
  }
  cluster.sync(); /* no block leaves while another still reads its shared memory */
#endif
}

/* The stream kernel, mma.sync bulk-copy form (TPS_W8_STREAM=bulk; reg selects the form above):
 * the same blocks, cluster split-K and reduction, but the block's weight rows and token rows
 * arrive by cp.async.bulk (the copy engine, completion counted on an mbarrier) instead of
 * per-thread loads, in two halves with one mbarrier each so the MMAs of the first half run
 * while the second lands.  Shared layout: weights [128 rows][WS bytes] (WS = 64 * chunks,
 * rounded to 64 mod 128: conflict-free 16-byte fragment reads), tokens [8 NT rows][XS].
 * Token rows past M are not loaded: their (garbage) columns only reach outputs not stored. */
enum { SB_G = 10 }; /* chunks per group (one group for K = 5120 with 8 splits) */
template <int NT> struct SbShape {
  static constexpr int WS = SB_G * 64 + 64;         /* 704: 64 mod 128 */
  static constexpr int XS = SB_G * 128 + 16;        /* 16 mod 128 */
  static constexpr int PS = 132;
  static constexpr int WBYTES = 128 * WS, XBYTES = 8 * NT * XS, PBYTES = 8 * NT * PS * 4;
  static constexpr int SMEM = (WBYTES + XBYTES > PBYTES ? WBYTES + XBYTES : PBYTES) + 16; /* + 2 mbarriers */
};

__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t mbar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(mbar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t mbar, uint32_t parity) {
  asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               "@!p bra WAIT_%=;\n}\n" ::"r"(mbar), "r"(parity) : "memory");
}

template <int NT>
__global__ void __launch_bounds__(256, 1)
w8b_kernel(const bf16 *__restrict__ X, const uint8_t *__restrict__ Wq, const uint8_t *__restrict__ Sn,
           bf16 *__restrict__ Y, int M, int N, int K, int cps) {
#ifdef TPS_SM90
  typedef SbShape<NT> Sh;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(128) uint8_t smem_raw[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, c = lane & 3;
  const int n0 = blockIdx.x * 128, z = (int)cluster.block_rank();
  const int nch = K / 64, kb = K / 32;
  const int c0 = z * cps < nch ? z * cps : nch, c1 = c0 + cps < nch ? c0 + cps : nch;
  const int rl = warp * 16 + g, row_a = n0 + rl;
  const int ra = row_a < N ? row_a : N - 1, rb = row_a + 8 < N ? row_a + 8 : N - 1;
  const uint16_t *sa = reinterpret_cast<const uint16_t *>(Sn + (size_t)ra * kb);
  const uint16_t *sb = reinterpret_cast<const uint16_t *>(Sn + (size_t)rb * kb);
  const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t xbase = sbase + Sh::WBYTES;
  const int pbar = Sh::WBYTES + Sh::XBYTES > Sh::PBYTES ? Sh::WBYTES + Sh::XBYTES : Sh::PBYTES;
  const uint32_t bar0 = sbase + pbar, bar1 = bar0 + 8;
  const int xrows = M < 8 * NT ? M : 8 * NT;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar0) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  float acc[NT][4];
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int v = 0; v < 4; v++) acc[t][v] = 0.f;

  uint32_t parity = 0;
  for (int cg0 = c0; cg0 < c1; cg0 += SB_G, parity ^= 1u) {
    const int nc = c1 - cg0 < SB_G ? c1 - cg0 : SB_G, h = (nc + 1) / 2; /* halves [0,h), [h,nc) */
    if (cg0 != c0) { /* the previous group's shared data has been read (generic) before the copy engine writes */
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
    }
    if (tid == 0) {
      const uint32_t b0 = 128u * h * 64 + (uint32_t)xrows * h * 128, b1 = 128u * (nc - h) * 64 + (uint32_t)xrows * (nc - h) * 128;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar0), "r"(b0) : "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar1), "r"(b1) : "memory");
    }
    __syncthreads();
    if (tid < 128) { /* weight row tid: two copies (the halves) */
      const int n = n0 + tid < N ? n0 + tid : N - 1;
      const uint8_t *src = Wq + (size_t)n * K + (size_t)cg0 * 64;
      bulk_g2s(sbase + tid * Sh::WS, src, h * 64, bar0);
      if (nc > h) bulk_g2s(sbase + tid * Sh::WS + h * 64, src + h * 64, (nc - h) * 64, bar1);
    } else if (tid - 128 < xrows) { /* token row */
      const int r = tid - 128;
      const bf16 *src = X + (size_t)r * K + (size_t)cg0 * 64;
      bulk_g2s(xbase + r * Sh::XS, src, h * 128, bar0);
      if (nc > h) bulk_g2s(xbase + r * Sh::XS + h * 128, src + h * 64, (nc - h) * 128, bar1);
    }
    uint32_t ea[SB_G], eb[SB_G];
#pragma unroll
    for (int ch = 0; ch < SB_G; ch++)
      if (ch < nc) { ea[ch] = __ldg(sa + cg0 + ch); eb[ch] = __ldg(sb + cg0 + ch); }
#pragma unroll
    for (int ch = 0; ch < SB_G; ch++) {
      if (ch < nc) {
        if (ch == 0) mbar_wait(bar0, parity);
        if (ch == h) mbar_wait(bar1, parity);
        const uint4 qa = *reinterpret_cast<const uint4 *>(smem_raw + rl * Sh::WS + ch * 64 + c * 16);
        const uint4 qb = *reinterpret_cast<const uint4 *>(smem_raw + (rl + 8) * Sh::WS + ch * 64 + c * 16);
        const uint32_t wa4[4] = {qa.x, qa.y, qa.z, qa.w}, wb4[4] = {qb.x, qb.y, qb.z, qb.w};
        const uint32_t ma[2] = {e8m0_mul(ea[ch] & 0xFFu), e8m0_mul(ea[ch] >> 8)};
        const uint32_t mb[2] = {e8m0_mul(eb[ch] & 0xFFu), e8m0_mul(eb[ch] >> 8)};
#pragma unroll
        for (int j = 0; j < 4; j++) {
          uint32_t lo[2], hi[2], a[4];
          dequant4(wa4[j], ma[j >> 1], lo);
          dequant4(wb4[j], mb[j >> 1], hi);
          a[0] = lo[0]; a[1] = hi[0]; a[2] = lo[1]; a[3] = hi[1];
#pragma unroll
          for (int t = 0; t < NT; t++) {
            const uint32_t *xr = reinterpret_cast<const uint32_t *>(smem_raw + Sh::WBYTES + (8 * t + g) * Sh::XS + ch * 128);
            const uint32_t b[2] = {xr[8 * j + c], xr[8 * j + c + 4]};
            mma_bf16(acc[t], a, b);
          }
        }
      }
    }
  }
  __syncthreads(); /* shared reads done */
  float *ps = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int v = 0; v < 4; v++) ps[(8 * t + 2 * c + (v & 1)) * Sh::PS + rl + (v >> 1) * 8] = acc[t][v];
  cluster.sync();
  for (int i = tid; i < xrows * 4; i += 256) {
    const int t = i >> 2, col = z * 16 + (i & 3) * 4;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int r = 0; r < SC_S; r++) {
      const float4 v = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(ps, r) + t * Sh::PS + col);
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    if (n0 + col < N) {
      __nv_bfloat162 lo = __floats2bfloat162_rn(s.x, s.y), hi = __floats2bfloat162_rn(s.z, s.w);
      uint2 out;
      out.x = *reinterpret_cast<uint32_t *>(&lo);
      out.y = *reinterpret_cast<uint32_t *>(&hi);
      *reinterpret_cast<uint2 *>(Y + (size_t)t * N + n0 + col) = out;
    }
  }
  cluster.sync();
#endif
}

/* ------------------------------------------------------------------ wgmma kernel, TMA form */
/* The default for large M.  Same tile, fragments and MMA loop as w8g_kernel above, but the
 * stages are filled by the tensor memory accelerator and the blocks work in pairs: a
 * cluster of CL = 2 blocks (neighbouring weight-row blocks, same token tile) shares each X
 * tile, every block loading half of it with a multicast copy into both.  Why: with
 * per-thread cp.async both 128- and 256-token tiles stalled at the same ~5 TB/s of L2 reads
 * (X is re-read by all N/128 row blocks); multicast halves those reads.  Per stage: X (BT
 * rows, 128B swizzle, rows past M filled with zeros), W (128 rows x 64 fragment bytes, rows
 * past N zeros), scales (2 x 128 bytes); a "full" mbarrier per stage counts the bytes in, an
 * "empty" mbarrier per stage counts the 8 warps of both blocks out (a block may refill a
 * stage only when its partner has finished with it too, since the refill writes into both).
 * Thread 0 of each block issues the copies. */
__device__ __forceinline__ void mb_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mb_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
/* arrive on the mbarrier at the same shared offset in block `rank` of the cluster.  Default
 * (.release.cta) semantics, as CUTLASS's consumer release: the .release.cluster form made
 * every arrival a memory barrier (ncu: 39% of warp stalls on membar, ~1 us per chunk). */
__device__ __forceinline__ void mb_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ void mb_arrive_local(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void tma2d(uint32_t dst, const CUtensorMap *map, int x, int y, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}
__device__ __forceinline__ void tma2d_mc(uint32_t dst, const CUtensorMap *map, int x, int y, uint32_t bar, uint16_t mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask) : "memory");
}

template <int BT, int STAGES, int CL, int SPLIT, int NACC>
__global__ void __launch_bounds__(256, 1)
w8t_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmw,
           const __grid_constant__ CUtensorMap tms, bf16 *__restrict__ Y, int M, int N, int K) {
#ifdef TPS_SM90
  typedef WgShape<BT, STAGES> Sh;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES, empty0 = full0 + 8 * STAGES;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int n0 = blockIdx.x * 128, t0 = blockIdx.y * BT;
  const int rl = warp * 16 + g;
  uint32_t rank = 0;
  if (CL > 1 || SPLIT > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  /* split-K (SPLIT > 1, small M): block `rank` of the (1, 1, SPLIT) cluster takes chunks
   * kc0 .. kc0 + nch - 1; the loop below counts chunks from 0 */
  const int kall = K / 64, kper = (kall + SPLIT - 1) / SPLIT;
  const int kc0 = SPLIT > 1 ? (int)rank * kper < kall ? (int)rank * kper : kall : 0;
  const int nch = SPLIT > 1 ? (kc0 + kper < kall ? kper : kall - kc0) : kall;
  if (tid == 0) {
    /* fetch the three tensor maps while the barriers are set up */
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmw)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tms)) : "memory");
    for (int s = 0; s < STAGES; s++) {
      mb_init(full0 + 8 * s, 1);
      mb_init(empty0 + 8 * s, 8 * CL);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  /* the multicast writes into the partner's stages and arrives on its barriers: both blocks
   * must have initialized theirs.  Split-K blocks touch each other only after the
   * cluster.sync before the partial sums, so a block barrier is enough for them. */
  if (CL > 1) {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  } else {
    __syncthreads();
  }
  /* thread 0: fill chunk `chunk` into its stage (waiting until both blocks released it) */
  auto produce = [&](int chunk) {
    const int s = chunk % STAGES, round = chunk / STAGES;
    const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
    if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
    mb_expect(full, Sh::X_BYTES + Sh::W_BYTES + Sh::S_BYTES);
    if (CL > 1)
      tma2d_mc(st + rank * (BT / CL) * 128, &tmx, chunk * 64, t0 + (int)rank * (BT / CL), full, (uint16_t)((1u << CL) - 1));
    else
      tma2d(st, &tmx, (kc0 + chunk) * 64, t0, full);
    tma2d(st + Sh::X_BYTES, &tmw, (kc0 + chunk) * 64, n0, full);
    tma2d(st + Sh::X_BYTES + Sh::W_BYTES, &tms, n0, 2 * (kc0 + chunk), full);
  };
  /* every warp: done with chunk `chunk`'s stage, in this block and its partner */
  auto release = [&](int chunk) {
    __syncwarp();
    if (lane == 0) {
      const uint32_t e = empty0 + 8 * (chunk % STAGES);
      if (CL == 1) mb_arrive_local(e);
      else
#pragma unroll
        for (int r = 0; r < CL; r++) mb_arrive_cluster(e, (uint32_t)r);
    }
  };
  auto wait_full = [&](int chunk) { mbar_wait(full0 + 8 * (chunk % STAGES), (uint32_t)(chunk / STAGES) & 1u); };

  uint32_t afr[2][4][4];
  auto dequant = [&](int chunk, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint8_t *st = sptr + (chunk % STAGES) * Sh::STAGE_BYTES + Sh::X_BYTES;
    const uint4 qa = *reinterpret_cast<const uint4 *>(st + rl * 64 + c * 16);
    const uint4 qb = *reinterpret_cast<const uint4 *>(st + (rl + 8) * 64 + c * 16);
    const uint8_t *ss = st + Sh::W_BYTES;
    const uint32_t ma[2] = {e8m0_mul(ss[rl]), e8m0_mul(ss[128 + rl])};
    const uint32_t mb[2] = {e8m0_mul(ss[rl + 8]), e8m0_mul(ss[128 + rl + 8])};
    const uint32_t wa4[4] = {qa.x, qa.y, qa.z, qa.w}, wb4[4] = {qb.x, qb.y, qb.z, qb.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
      uint32_t lo[2], hi[2];
      dequant4(wa4[j], ma[j >> 1], lo);
      dequant4(wb4[j], mb[j >> 1], hi);
      afr[B][j][0] = lo[0]; afr[B][j][1] = hi[0]; afr[B][j][2] = lo[1]; afr[B][j][3] = hi[1];
    }
  };
  using I0 = std::integral_constant<int, 0>;
  using I1 = std::integral_constant<int, 1>;
  /* NACC independent accumulator sets: k16 step j of every chunk adds into set j % NACC, so
   * the MMAs of a chunk are not one dependent chain (with few tokens the loop was bound by
   * that chain's latency: ~0.56 us per chunk whatever the tile); the sets are summed in
   * order 0..NACC-1 at the end */
  float accs[NACC][BT / 2];
#pragma unroll
  for (int q = 0; q < NACC; q++)
#pragma unroll
    for (int i = 0; i < BT / 2; i++) accs[q][i] = 0.f;
  float (&acc)[BT / 2] = accs[0];
  auto pin_all = [&]() {
#pragma unroll
    for (int q = 0; q < NACC; q++) wg_pin(accs[q]);
  };
  auto mma_chunk = [&](int chunk, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint32_t st = sbase + (chunk % STAGES) * Sh::STAGE_BYTES;
    const uint64_t desc0 = (uint64_t)((st & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
#pragma unroll
    for (int j = 0; j < 4; j++) WgOp<BT>::mma(accs[j % NACC], afr[B][j], desc0 + (uint64_t)(j * 2));
  };

  if (tid == 0)
    for (int ch = 0; ch < STAGES && ch < nch; ch++) produce(ch);
  if (SPLIT > 1 && nch <= STAGES) {
    /* split-K with every chunk resident: each chunk is dequantized into its own registers
     * and its MMAs issued at once, up to 4 chunks of MMAs in flight (waiting per chunk made
     * the loop latency-bound: ~0.56 us per chunk with few tokens) */
    uint32_t afs[STAGES][4][4];
#pragma unroll
    for (int j = 0; j < STAGES; j++) {
      if (j < nch) {
        wait_full(j);
        const uint8_t *st = sptr + j * Sh::STAGE_BYTES + Sh::X_BYTES;
        const uint4 qa = *reinterpret_cast<const uint4 *>(st + rl * 64 + c * 16);
        const uint4 qb = *reinterpret_cast<const uint4 *>(st + (rl + 8) * 64 + c * 16);
        const uint8_t *ss = st + Sh::W_BYTES;
        const uint32_t ma[2] = {e8m0_mul(ss[rl]), e8m0_mul(ss[128 + rl])};
        const uint32_t mb[2] = {e8m0_mul(ss[rl + 8]), e8m0_mul(ss[128 + rl + 8])};
        const uint32_t wa4[4] = {qa.x, qa.y, qa.z, qa.w}, wb4[4] = {qb.x, qb.y, qb.z, qb.w};
#pragma unroll
        for (int q = 0; q < 4; q++) {
          uint32_t lo[2], hi[2];
          dequant4(wa4[q], ma[q >> 1], lo);
          dequant4(wb4[q], mb[q >> 1], hi);
          afs[j][q][0] = lo[0]; afs[j][q][1] = hi[0]; afs[j][q][2] = lo[1]; afs[j][q][3] = hi[1];
        }
        const uint32_t sx = sbase + j * Sh::STAGE_BYTES;
        const uint64_t desc0 = (uint64_t)((sx & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
        pin_all();
        wg_fence();
#pragma unroll
        for (int q = 0; q < 4; q++) WgOp<BT>::mma(accs[q % NACC], afs[j][q], desc0 + (uint64_t)(q * 2));
        wg_commit();
        pin_all();
        if (j >= 3) wg_wait<3>();
      }
    }
    wg_wait<0>();
    pin_all();
  } else {
  if (nch > 0) {
    wait_full(0);
    dequant(0, I0{});
  }
  /* pairs, as in w8g_kernel; thread 0 refills the stages of chunks it-2 and it-1 */
  for (int it = 0; it < nch; it += 2) {
    if (tid == 0 && it >= 2) {
      if (it - 2 + STAGES < nch) produce(it - 2 + STAGES);
      if (it - 1 + STAGES < nch) produce(it - 1 + STAGES);
    }
    pin_all();
    wg_fence();
    mma_chunk(it, I0{});
    wg_commit();
    pin_all();
    if (it + 1 < nch) {
      wait_full(it + 1);
      dequant(it + 1, I1{});
      wg_fence();
      mma_chunk(it + 1, I1{});
      wg_commit();
      pin_all();
      wg_wait<1>();
      release(it);
    }
    if (it + 2 < nch) {
      wait_full(it + 2);
      dequant(it + 2, I0{});
    }
    wg_wait<0>();
    pin_all();
    release(it + 1 < nch ? it + 1 : it);
  }
  }
#pragma unroll
  for (int q = 1; q < NACC; q++)
#pragma unroll
    for (int i = 0; i < BT / 2; i++) acc[i] += accs[q][i];
  __syncthreads(); /* every warp is past its last MMA: reuse the stages */
  if (SPLIT > 1) {
    /* fp32 partial tile [BT tokens][128 rows (+4 pad)] in this block's shared memory; block
     * r sums tokens r*BT/SPLIT .. of all SPLIT partials in rank order 0..SPLIT-1 */
    constexpr int PS = 132;
    float *ps = reinterpret_cast<float *>(sptr);
#pragma unroll
    for (int i = 0; i < BT / 8; i++)
#pragma unroll
      for (int v = 0; v < 4; v++) ps[(8 * i + 2 * c + (v & 1)) * PS + rl + (v >> 1) * 8] = acc[4 * i + v];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    cluster.sync();
    constexpr int TPR = BT / SPLIT; /* tokens per rank */
    for (int i = tid; i < TPR * 32; i += 256) {
      const int tl = (int)rank * TPR + (i >> 5), col = (i & 31) * 4, t = t0 + tl, n = n0 + col;
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int r = 0; r < SPLIT; r++) {
        const float4 v = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(ps, r) + tl * PS + col);
        sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
      }
      if (t < M && n < N) {
        __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x, sum.y), hi = __floats2bfloat162_rn(sum.z, sum.w);
        uint2 out;
        out.x = *reinterpret_cast<uint32_t *>(&lo);
        out.y = *reinterpret_cast<uint32_t *>(&hi);
        *reinterpret_cast<uint2 *>(Y + (size_t)t * N + n) = out;
      }
    }
    cluster.sync(); /* no block leaves while another reads its shared memory */
    return;
  }
  bf16 *ys = reinterpret_cast<bf16 *>(sptr);
#pragma unroll
  for (int i = 0; i < BT / 8; i++) {
    const int t = 8 * i + 2 * c;
    ys[t * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 0]);
    ys[(t + 1) * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 1]);
    ys[t * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 2]);
    ys[(t + 1) * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 3]);
  }
  __syncthreads();
  for (int i = tid; i < BT * 16; i += 256) {
    const int r = i >> 4, p = i & 15, t = t0 + r, n = n0 + p * 8;
    if (t < M && n < N)
      *reinterpret_cast<uint4 *>(Y + (size_t)t * N + n) = *reinterpret_cast<const uint4 *>(ys + r * Sh::YS + p * 8);
  }
  /* the partner may still arrive on this block's barriers: leave together */
  if (CL > 1) asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

/* ------------------------------------------------------------------ host side */
typedef void (*w8g_fn)(const bf16 *, const uint8_t *, const uint8_t *, bf16 *, int, int, int);
typedef struct { int bt, stages, smem; w8g_fn fn; } w8g_variant;
#define W8G(BT, ST) { BT, ST, WgShape<BT, ST>::SMEM, w8g_kernel<BT, ST> }
static const w8g_variant gvariants[] = {W8G(64, 8), W8G(128, 8), W8G(256, 5)};
enum { NGVARIANTS = sizeof gvariants / sizeof gvariants[0] };

typedef void (*w8t_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, bf16 *, int, int, int);
typedef struct { int bt, stages, cl, smem; w8t_fn fn; } w8t_variant;
#define W8T(BT, ST, CL, SP, NA) { BT, ST, CL, WgShape<BT, ST>::SMEM + 256, w8t_kernel<BT, ST, CL, SP, NA> }
/* accumulator sets: 4 for 64-token tiles; 1 for 128 (2 sets measured 12% slower) and 256 */
static const w8t_variant tvariants[] = {W8T(64, 8, 1, 1, 4), W8T(128, 8, 1, 1, 1), W8T(256, 5, 1, 1, 1),
                                        W8T(64, 8, 2, 1, 4), W8T(128, 8, 2, 1, 1), W8T(256, 5, 2, 1, 1)};
/* split-K over a cluster of TPS_W8C_SPLITS blocks, for small M: 16, 32, 64 tokens */
static const w8t_variant svariants[] = {W8T(16, 10, 1, TPS_W8C_SPLITS, 1), W8T(32, 10, 1, TPS_W8C_SPLITS, 1),
                                        W8T(64, 10, 1, TPS_W8C_SPLITS, 1)};
enum { NSVARIANTS = sizeof svariants / sizeof svariants[0] };
enum { NTVARIANTS = sizeof tvariants / sizeof tvariants[0] };

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static encode_fn encode_tiled;

/* a 2D tensor map: inner dimension d0 (contiguous), outer d1 with a row pitch of pitch bytes */
static int make_map(CUtensorMap *m, CUtensorMapDataType dt, const void *base, uint64_t d0, uint64_t d1,
                    uint64_t pitch, uint32_t b0, uint32_t b1, CUtensorMapSwizzle sw) {
  const cuuint64_t dim[2] = {d0, d1}, stride[1] = {pitch};
  const cuuint32_t box[2] = {b0, b1}, es[2] = {1, 1};
  CUresult r = encode_tiled(m, dt, 2, (void *)base, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "tpsplit: gemm: cuTensorMapEncodeTiled failed (%d)\n", (int)r);
    return TPS_K_ERR;
  }
  return TPS_K_OK;
}

typedef void (*w8c_fn)(const bf16 *, const uint8_t *, const uint8_t *, bf16 *, int, int, int, int);
typedef struct { int nt, smem; w8c_fn fn; } w8c_variant;
#define W8C(NT) { NT, ScShape<NT>::SMEM, w8c_kernel<NT> }
static const w8c_variant cvariants[] = {W8C(1), W8C(2), W8C(4), W8C(8), W8C(16)};
#define W8B(NT) { NT, SbShape<NT>::SMEM, w8b_kernel<NT> }
static const w8c_variant bvariants[] = {W8B(1), W8B(2), W8B(4), W8B(8), W8B(8)}; /* NT 16 runs as 2 x 8 */
enum { NCVARIANTS = sizeof cvariants / sizeof cvariants[0] };

extern "C" int tps_w8g_prepare(tps_gemm *g) {
  g->wgmma_ok = 0;
  int major = 0, minor = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, g->device));
  CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, g->device));
  if (major != 9 || minor != 0) return TPS_K_OK;
  int *d, h = 0;
  CUDA_TRY(cudaMalloc(&d, sizeof *d));
  w8g_probe<<<1, 1>>>(d);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) { cudaGetLastError(); return TPS_K_OK; }
  CUDA_TRY(e);
  if (!h) return TPS_K_OK; /* built without sm_90a */
  for (int v = 0; v < NGVARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(gvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, gvariants[v].smem));
  for (int v = 0; v < NCVARIANTS; v++) {
    CUDA_TRY(cudaFuncSetAttribute(cvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cvariants[v].smem));
    CUDA_TRY(cudaFuncSetAttribute(bvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bvariants[v].smem));
  }
  for (int v = 0; v < NTVARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(tvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, tvariants[v].smem));
  for (int v = 0; v < NSVARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(svariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, svariants[v].smem));
  if (!encode_tiled) {
    cudaDriverEntryPointQueryResult q;
    void *fn = NULL;
#if CUDART_VERSION >= 12050
    CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
#else
    CUDA_TRY(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q));
#endif
    if (q != cudaDriverEntryPointSuccess || !fn) {
      fprintf(stderr, "tpsplit: gemm: the driver has no cuTensorMapEncodeTiled\n");
      return TPS_K_ERR;
    }
    encode_tiled = (encode_fn)fn;
  }
  /* weight and scale maps (fixed for the plan): W [N rows][K bytes], box 128 x 64 bytes;
   * scales St [K/32 rows][N bytes], box 2 x 128 */
  CUtensorMap mw, ms;
  TPS_TRY(make_map(&mw, CU_TENSOR_MAP_DATA_TYPE_UINT8, g->w_q, (uint64_t)g->k, (uint64_t)g->n, (uint64_t)g->k, 64, 128,
                   CU_TENSOR_MAP_SWIZZLE_NONE));
  TPS_TRY(make_map(&ms, CU_TENSOR_MAP_DATA_TYPE_UINT8, g->w_s, (uint64_t)g->n, (uint64_t)g->k / 32, (uint64_t)g->n, 128, 2,
                   CU_TENSOR_MAP_SWIZZLE_NONE));
  memcpy(g->tm_w, &mw, sizeof mw);
  memcpy(g->tm_s, &ms, sizeof ms);
  g->wgmma_ok = 1;
  return TPS_K_OK;
}

extern "C" int tps_w8g_run(tps_gemm *g, const void *x, void *y, int m, int bt, cudaStream_t s) {
  const int v = bt <= 64 ? 0 : bt <= 128 ? 1 : 2;
  if (!g->wgmma_ok) {
    fprintf(stderr, "tpsplit: gemm: the SM90 W8A16 kernels need a compute capability 9.0 GPU and a build for sm_90a\n");
    return TPS_K_ERR;
  }
  if (((uintptr_t)x & 15) || ((uintptr_t)y & 15)) {
    fprintf(stderr, "tpsplit: gemm: w8a16 (wgmma) needs X and Y 16-byte aligned\n");
    return TPS_K_ERR;
  }
  const char *tma = getenv("TPS_W8_TMA");
  if (tma && !strcmp(tma, "0")) { /* the cp.async form */
    const w8g_variant *w = &gvariants[v];
    dim3 grid((g->n + 127) / 128, (m + w->bt - 1) / w->bt);
    w->fn<<<grid, 256, w->smem, s>>>((const bf16 *)x, g->w_q, g->w_s, (bf16 *)y, m, g->n, g->k);
    CUDA_LAUNCH_CHECK();
    return TPS_K_OK;
  }
  /* TMA form; TPS_W8_CLUSTER=2 pairs row blocks to share X by multicast (measured slower on
   * the H200: 133.8 vs 132.5 us at M=4096, so off by default) */
  const int nblk = (g->n + 127) / 128, tb = gvariants[v].bt;
  const char *cls = getenv("TPS_W8_CLUSTER");
  const int cl = nblk % 2 == 0 && cls && !strcmp(cls, "2") ? 2 : 1;
  const w8t_variant *w = &tvariants[v + (cl == 2 ? 3 : 0)];
  CUtensorMap mx, mw, ms;
  TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)m, (uint64_t)g->k * 2, 64,
                   (uint32_t)(tb / cl), CU_TENSOR_MAP_SWIZZLE_128B));
  memcpy(&mw, g->tm_w, sizeof mw);
  memcpy(&ms, g->tm_s, sizeof ms);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)cl;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3((unsigned)nblk, (unsigned)((m + tb - 1) / tb), 1);
  cfg.blockDim = dim3(256, 1, 1);
  cfg.dynamicSmemBytes = (size_t)w->smem;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_TRY(cudaLaunchKernelEx(&cfg, w->fn, mx, mw, ms, (bf16 *)y, m, g->n, g->k));
  CUDA_LAUNCH_CHECK();
  return TPS_K_OK;
}

extern "C" int tps_w8c_tokens(int m) {
  int rows = m < TPS_W8C_MAXTOK ? m : TPS_W8C_MAXTOK, nt = 1;
  while (8 * nt < rows) nt *= 2;
  return 8 * nt;
}

extern "C" int tps_w8c_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s) {
  if (!g->wgmma_ok) {
    fprintf(stderr, "tpsplit: gemm: the SM90 W8A16 kernels need a compute capability 9.0 GPU and a build for sm_90a\n");
    return TPS_K_ERR;
  }
  if (((uintptr_t)x & 15) || ((uintptr_t)y & 7)) {
    fprintf(stderr, "tpsplit: gemm: w8a16 (stream) needs X 16-byte and Y 8-byte aligned\n");
    return TPS_K_ERR;
  }
  const int nch = g->k / 64, cps = (nch + SC_S - 1) / SC_S;
  const char *form = getenv("TPS_W8_STREAM");
  if (!form || !strcmp(form, "wgmma")) { /* default: the TMA wgmma kernel with cluster split-K */
    for (int r0 = 0; r0 < m; r0 += 64) {
      /* token tile by M (not by the rows of this launch): every row of a call goes through
       * the same tile, as tps_gemm_config says */
      const int rows = m - r0 < 64 ? m - r0 : 64, v = m <= 16 ? 0 : m <= 32 ? 1 : 2;
      const w8t_variant *w = &svariants[v];
      const bf16 *xr = (const bf16 *)x + (size_t)r0 * g->k;
      CUtensorMap mx, mw, ms;
      TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, xr, (uint64_t)g->k, (uint64_t)rows, (uint64_t)g->k * 2, 64,
                       (uint32_t)w->bt, CU_TENSOR_MAP_SWIZZLE_128B));
      memcpy(&mw, g->tm_w, sizeof mw);
      memcpy(&ms, g->tm_s, sizeof ms);
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 1;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = TPS_W8C_SPLITS;
      cfg.gridDim = dim3((unsigned)((g->n + 127) / 128), 1, TPS_W8C_SPLITS);
      cfg.blockDim = dim3(256, 1, 1);
      cfg.dynamicSmemBytes = (size_t)w->smem;
      cfg.stream = s;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      CUDA_TRY(cudaLaunchKernelEx(&cfg, w->fn, mx, mw, ms, (bf16 *)y + (size_t)r0 * g->n, rows, g->n, g->k));
      CUDA_LAUNCH_CHECK();
    }
    return TPS_K_OK;
  }
  const int reg = !strcmp(form, "reg"), maxtok = reg ? TPS_W8C_MAXTOK : 64;
  /* at most 64 (bulk form) or 128 (register form) tokens per launch; more only when forced
   * by TPS_W8_KERNEL=stream */
  for (int r0 = 0; r0 < m; r0 += maxtok) {
    const int rows = m - r0 < maxtok ? m - r0 : maxtok, nt = tps_w8c_tokens(rows) / 8;
    int v = 0;
    while (cvariants[v].nt != nt) v++;
    const w8c_variant *kv = reg ? &cvariants[v] : &bvariants[v];
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = SC_S;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((g->n + 127) / 128, SC_S, 1);
    cfg.blockDim = dim3(256, 1, 1);
    cfg.dynamicSmemBytes = (size_t)kv->smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kv->fn, (const bf16 *)x + (size_t)r0 * g->k, (const uint8_t *)g->w_q,
                                (const uint8_t *)g->w_sn, (bf16 *)y + (size_t)r0 * g->n, rows, g->n, g->k, cps));
    CUDA_LAUNCH_CHECK();
  }
  return TPS_K_OK;
}

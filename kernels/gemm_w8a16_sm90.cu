/* gemm_w8a16_sm90.cu: the W8A16 kernels that need SM90 (H100/H200/H20), built for sm_90a.
 *
 *   Y[M x N] = X[M x K] W[N x K]^T, X bf16, W FP8 E4M3 + one E8M0 scale per 1x32 block (k),
 *   fp32 accumulation, Y bf16.  Weights in the k64-permuted layout (tps_w8_prepare); the
 *   dequantization is w8_device.cuh's.  Both kernels compute Y^T = W X^T: the weights are
 *   the MMA's A operand (16 rows per warp), the tokens its N dimension.
 *
 * stream (small M, up to 128 tokens per launch): weight streaming with a deterministic
 *   split-K inside a thread-block cluster.  Grid: N/128 row blocks x 8 K splits, cluster
 *   (1, 8, 1).  A block (8 warps, 128 rows, one K range) issues every 16-byte weight load
 *   of its range (up to 10 chunks of 64 k) straight into registers at once, stages its
 *   tokens' X of that range in shared memory (cp.async), and multiplies with m16n8k16
 *   (tokens as the n8 columns; every weight dequantized once).  Each block leaves its fp32
 *   partial tile in its own shared memory; after a cluster barrier block r sums columns
 *   16r..16r+15 of the 8 partials through distributed shared memory, in rank order 0..7,
 *   and writes bf16.  No global workspace, no atomics, no second kernel; the result of a
 *   row does not depend on M.
 *
 * wgmma (larger M): 2 warpgroups (256 threads) = 128 weight rows x BT tokens (BT = 64,
 *   128 or 256).  Warpgroup w owns rows 64w..64w+63, its warp j rows 16j..16j+15 (the
 *   m64 A fragment, from registers).  K loop over 64-wide chunks with a STAGES-deep
 *   cp.async ring holding, per chunk, the X tile (BT rows of 128 bytes, 16-byte pieces
 *   XOR-swizzled by (row & 7) in 1024-byte atoms: the layout of wgmma's 128B-swizzle
 *   K-major descriptor), the 128 weight rows' fragment bytes and their scales.  While
 *   chunk c's four wgmma (k16 each) run asynchronously, the threads dequantize chunk c+1
 *   from shared memory into the other A register buffer, then wait for the MMAs
 *   (wait_group 0: see the note in the loop).  Epilogue: accumulators -> bf16 -> shared memory (Y's
 *   row-major order) -> 16-byte coalesced stores.  No split-K.
 *
 * Elsewhere (no sm_90a code) the kernels are empty stubs and tps_w8g_prepare leaves
 * wgmma_ok = 0 (a probe kernel reports which body was built). */
#include <stdlib.h>
#include <type_traits>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
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

/* ------------------------------------------------------------------ stream kernel */
enum { SC_S = TPS_W8C_SPLITS }; /* K splits = cluster size */
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

/* ------------------------------------------------------------------ host side */
typedef void (*w8g_fn)(const bf16 *, const uint8_t *, const uint8_t *, bf16 *, int, int, int);
typedef struct { int bt, stages, smem; w8g_fn fn; } w8g_variant;
#define W8G(BT, ST) { BT, ST, WgShape<BT, ST>::SMEM, w8g_kernel<BT, ST> }
static const w8g_variant gvariants[] = {W8G(64, 8), W8G(128, 8), W8G(256, 5)};
enum { NGVARIANTS = sizeof gvariants / sizeof gvariants[0] };

typedef void (*w8c_fn)(const bf16 *, const uint8_t *, const uint8_t *, bf16 *, int, int, int, int);
typedef struct { int nt, smem; w8c_fn fn; } w8c_variant;
#define W8C(NT) { NT, ScShape<NT>::SMEM, w8c_kernel<NT> }
static const w8c_variant cvariants[] = {W8C(1), W8C(2), W8C(4), W8C(8), W8C(16)};
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
  for (int v = 0; v < NCVARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(cvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cvariants[v].smem));
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
  const w8g_variant *w = &gvariants[v];
  dim3 grid((g->n + 127) / 128, (m + w->bt - 1) / w->bt);
  w->fn<<<grid, 256, w->smem, s>>>((const bf16 *)x, g->w_q, g->w_s, (bf16 *)y, m, g->n, g->k);
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
  /* at most TPS_W8C_MAXTOK tokens per launch (more only when forced by TPS_W8_KERNEL=stream) */
  for (int r0 = 0; r0 < m; r0 += TPS_W8C_MAXTOK) {
    const int rows = m - r0 < TPS_W8C_MAXTOK ? m - r0 : TPS_W8C_MAXTOK, nt = tps_w8c_tokens(rows) / 8;
    int v = 0;
    while (cvariants[v].nt != nt) v++;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = SC_S;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((g->n + 127) / 128, SC_S, 1);
    cfg.blockDim = dim3(256, 1, 1);
    cfg.dynamicSmemBytes = (size_t)cvariants[v].smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, cvariants[v].fn, (const bf16 *)x + (size_t)r0 * g->k, (const uint8_t *)g->w_q,
                                (const uint8_t *)g->w_sn, (bf16 *)y + (size_t)r0 * g->n, rows, g->n, g->k, cps));
    CUDA_LAUNCH_CHECK();
  }
  return TPS_K_OK;
}

/* gemm_w8a16_sm90.cu: the W8A16 kernels that need SM90 (H100/H200/H20), built for sm_90a.
 *
 *   Y[M x N] = X[M x K] W[N x K]^T, X bf16, W FP8 E4M3 + one E8M0 scale per 1x32 block (k),
 *   fp32 accumulation, Y bf16.  Weights in the k64-permuted layout (made at plan creation by
 *   gemm_w8a16.cu); the dequantization is w8_device.cuh's.  Every kernel computes Y^T = W X^T: the weights are
 *   the MMA's A operand (16 rows per warp, from registers), the tokens its N dimension.
 *
 * w8t_kernel (the default): wgmma fed by TMA.  2 warpgroups = 128 weight rows x BT tokens.
 *   Per 64-wide k chunk a stage holds the X tile (BT rows of 128 bytes, 128B swizzle: the
 *   layout of wgmma's K-major descriptor), then the 128 rows' fragment bytes and their
 *   scales, one packed 8448-byte record (tps_gemm.w_rec) brought by one TMA copy of a 3D
 *   tensor map; an mbarrier per stage counts the bytes in ("full"), another counts the warps
 *   out ("empty"); thread 0 issues the copies.  Chunk c+1 is dequantized into the second A
 *   register buffer while chunk c's four wgmma run.  Large M: no split-K, results staged
 *   through shared memory for coalesced stores.  Small M (SPLIT = 8, the "stream" kind):
 *   the K range is split over a (1, 1, 8) cluster; with token tiles of up to 64 every
 *   chunk of a block's range is resident (10 stages for K = 5120) and its MMAs are issued as
 *   soon as it lands (the 128-token tile, 65..256 rows, runs the 5-stage ring); the 8
 *   fp32 partials are summed through distributed shared memory in rank order (sent to
 *   each token's owner block by st.async, straight from the accumulators: tps_w8c_sum).
 *   Weights come from the packed records in a bit-permuted encoding (tps_w8_rec_encode4,
 *   w8_decode4: four integer operations and two bf16x2 multiplies per four weights).
 * Why these forms (data/h200_gemm_tuning.txt measures the alternatives): the same MMA loop
 * fed by per-thread cp.async is 1.21x slower at M = 4096 (160.1 vs 132.5 us); mma.sync
 * stream kernels with weights loaded straight into registers or by bulk copies reach 1.17x
 * dense-bf16 at best at M = 1; in the stream kernel, X tiles by every thread's cp.async
 * instead of the TMA unit are 0.8-1.7 us slower, records and X tiles issued by two threads
 * slower, split-K partials through L2 or by bulk copies of staged tiles slower than st.async.
 *
 * w8s_kernel (mid M, issue 28): the split kernel; w8k_kernel and w8k2_kernel (issue 28): stream-K
 * over 64/128- and 256-token tiles; each described where it is defined below.
 *
 * Elsewhere (no sm_90a code) the kernels are empty stubs and tps_w8g_prepare leaves
 * wgmma_ok = 0 (a probe kernel reports which body was built). */
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cuda.h> /* CUtensorMap (types only: the encoder comes from cudaGetDriverEntryPointByVersion) */
#include "kernels/common/check.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/w8_device.cuh"

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
/* D[64 x 48] += A[64 x 16] (registers) * B[16 x 48] (shared memory, descriptor) */
__device__ __forceinline__ void wgmma_n48(float (&d)[24], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23}, "
      "{%24,%25,%26,%27}, %28, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]),"+f"(d[1]),"+f"(d[2]),"+f"(d[3]),"+f"(d[4]),"+f"(d[5]),"+f"(d[6]),"+f"(d[7]),"+f"(d[8]),"+f"(d[9]),"+f"(d[10]),"+f"(d[11]),"+f"(d[12]),"+f"(d[13]),"+f"(d[14]),"+f"(d[15]),"+f"(d[16]),"+f"(d[17]),"+f"(d[18]),"+f"(d[19]),"+f"(d[20]),"+f"(d[21]),"+f"(d[22]),"+f"(d[23])
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
template <> struct WgOp<48> { static __device__ __forceinline__ void mma(float (&d)[24], const uint32_t (&a)[4], uint64_t b) { wgmma_n48(d, a, b); } };
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

__device__ __forceinline__ void mbar_wait(uint32_t mbar, uint32_t parity) {
  asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               "@!p bra WAIT_%=;\n}\n" ::"r"(mbar), "r"(parity) : "memory");
}

/* ------------------------------------------------------------------ wgmma kernel, TMA form */
/* Per stage: X (BT rows, 128B swizzle, rows past M filled with zeros by the TMA unit), W (128
 * rows x 64 fragment bytes, rows past N zeros), scales (2 x 128 bytes); a "full" mbarrier per
 * stage counts the bytes in, an "empty" mbarrier per stage counts the 8 warps out; thread 0
 * issues the copies.  (A form in which two blocks shared each X tile by multicast, against
 * L2 traffic, measured no faster once the arrivals stopped being memory barriers: dropped.) */
__device__ __forceinline__ void mb_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* A ring's barriers, by one thread before the block barrier: STAGES "full" barriers at full0
 * (one arrival, the producer's expect_tx; the copies' bytes complete the phase) and STAGES
 * "empty" barriers at empty0 (one arrival per consumer warp), 8 bytes apart.  The caller
 * initializes any other barrier and then fences (fence.mbarrier_init) once. */
template <int STAGES>
__device__ __forceinline__ void ring_init(uint32_t full0, uint32_t empty0, uint32_t consumer_warps) {
  for (int s = 0; s < STAGES; s++) {
    mb_init(full0 + 8 * s, 1);
    mb_init(empty0 + 8 * s, consumer_warps);
  }
}
__device__ __forceinline__ void mb_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
/* Default (.release.cta) semantics, as CUTLASS's consumer release: a .release.cluster arrival
 * made every release a memory barrier (ncu: 39% of warp stalls on membar, ~1 us per chunk). */
__device__ __forceinline__ void mb_arrive_local(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void tma2d(uint32_t dst, const CUtensorMap *map, int x, int y, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

/* The m64k16 A fragments of one 64-wide chunk for this thread's rows rl and rl + 8 (lane
 * quad c), from the stage's weight bytes w ([128 rows][64]) and scales w + wbytes
 * ([2 blocks][128 rows]): a[j] = {(rl, k 2c..), (rl+8, k 2c..), (rl, k 2c+8..), (rl+8, k 2c+8..)}
 * for k16 step j. */
/* dequant_chunk (below) is dequant_rows(w, rl, w + wbytes, rl); the general form reads weight
 * rows rw, rw + 8 of w ([rows][64]) and scales ss[rs], ss[128 + rs] (rs + 8 likewise): a half
 * record's weights beside its record's whole scale row (w8t3_kernel). */
__device__ __forceinline__ void dequant_rows(const uint8_t *w, int rw, const uint8_t *ss, int rs, int c, uint32_t (&a)[4][4]) {
  const uint4 qa = *reinterpret_cast<const uint4 *>(w + rw * 64 + c * 16);
  const uint4 qb = *reinterpret_cast<const uint4 *>(w + (rw + 8) * 64 + c * 16);
  const uint32_t ma[2] = {e8m0_mul(ss[rs]), e8m0_mul(ss[128 + rs])};
  const uint32_t mb[2] = {e8m0_mul(ss[rs + 8]), e8m0_mul(ss[128 + rs + 8])};
  const uint32_t wa4[4] = {qa.x, qa.y, qa.z, qa.w}, wb4[4] = {qb.x, qb.y, qb.z, qb.w};
#pragma unroll
  for (int j = 0; j < 4; j++) {
    uint32_t lo[2], hi[2];
    w8_decode4(wa4[j], ma[j >> 1], lo);
    w8_decode4(wb4[j], mb[j >> 1], hi);
    a[j][0] = lo[0]; a[j][1] = hi[0]; a[j][2] = lo[1]; a[j][3] = hi[1];
  }
}
__device__ __forceinline__ void dequant_chunk(const uint8_t *w, int wbytes, int rl, int c, uint32_t (&a)[4][4]) {
  dequant_rows(w, rl, w + wbytes, rl, c, a);
}

__device__ __forceinline__ void tma3d(uint32_t dst, const CUtensorMap *map, int x, int y, int z, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar) : "memory");
}
/* one bulk copy (no tensor map) of `bytes` contiguous bytes, completing on mbarrier bar */
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

/* The stream forms' split-K partials by st.async (w8t_kernel's PUSH = 4, w8t3_kernel), with
 * NW consumer warps and TPR = BT / SPLIT tokens a rank: a thread's 4 values of index i (tokens
 * 8i+2c, +1 of rows rl, rl+8) belong to owner o = (8i+2c)/TPR; they go as one 16-byte st.async
 * to position p of o's receive buffer [source rank][NW * 8 * TPR/2][float4] (plain st.shared
 * for this block's own tokens), completing on o's receive barrier rbar. */
template <int BT, int TPR, int NW>
__device__ __forceinline__ void push_partials(const float (&acc)[BT / 2], float4 *recv, int warp, int g, int c, uint32_t rank,
                                              uint32_t rbar) {
  constexpr int HP = TPR / 2, POS = NW * 8 * HP;
#pragma unroll
  for (int i = 0; i < BT / 8; i++) {
    const int t = 8 * i + 2 * c, o = t / TPR;
    const int p = (warp * 8 + g) * HP + (t % TPR) / 2;
    float4 *dst = recv + rank * POS + p;
    if (o == (int)rank) {
      *dst = make_float4(acc[4 * i + 0], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
    } else {
      uint32_t a = (uint32_t)__cvta_generic_to_shared(dst), bar = rbar;
      asm volatile("mapa.shared::cluster.u32 %0, %0, %1;\n" : "+r"(a) : "r"(o));
      asm volatile("mapa.shared::cluster.u32 %0, %0, %1;\n" : "+r"(bar) : "r"(o));
      asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
                   ::"r"(a), "f"(acc[4 * i + 0]), "f"(acc[4 * i + 1]), "f"(acc[4 * i + 2]), "f"(acc[4 * i + 3]), "r"(bar)
                   : "memory");
    }
  }
}

/* The owner's side: position q = q0, q0 + NW * 32, ... of its receive buffer summed over the
 * SPLIT sources in rank order (the same bits as the other forms), mapped back to its two
 * tokens (from t0 + rank * TPR) and two rows (from n0) and stored as bf16. */
template <int SPLIT, int TPR, int NW>
__device__ __forceinline__ void sum_partials(const float4 *recv, int q0, int t0, int n0, uint32_t rank, bf16 *__restrict__ Y, int M,
                                             int N) {
  constexpr int HP = TPR / 2, POS = NW * 8 * HP;
  for (int q = q0; q < POS; q += NW * 32) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int r = 0; r < SPLIT; r++) {
      const float4 v = recv[r * POS + q];
      sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
    }
    const int wg = q / HP, j = q % HP, t = t0 + (int)rank * TPR + 2 * j, n = n0 + (wg >> 3) * 16 + (wg & 7);
    const float vals[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int v = 0; v < 4; v++) {
      const int tt = t + (v & 1), nn = n + (v >> 1) * 8;
      if (tt < M && nn < N) Y[(size_t)tt * N + nn] = __float2bfloat16_rn(vals[v]);
    }
  }
}

/* The weights and scales of a chunk come from the packed records (tps_gemm.w_rec: one
 * contiguous 8448-byte record per 128-row block and 64-wide chunk, in the stage's own layout)
 * in one TMA copy of a 3D tensor map over the records (tmr), or with rec_bulk in one plain
 * bulk copy of the same bytes.  (Two TMA boxes of the row-major layouts, 64 bytes of each of
 * 128 rows 5120 bytes apart and 2 x 128 scale bytes, are 0.2-0.3 us slower at M <= 64,
 * data/h200_gemm_tuning.txt.)
 * Split-K partial sums (SPLIT > 1): PUSH = 1, each block stores its fp32 partials straight
 * from registers into the owner block's receive buffer (distributed shared memory), one
 * cluster barrier, then every owner sums its tokens' SPLIT partials from its own shared memory
 * in rank order; PUSH = 0: partials to local shared memory, a cluster
 * barrier, the owners read them remotely, a second cluster barrier.  Same sums, same order:
 * bitwise the same results. */
template <int BT, int STAGES, int SPLIT, int NACC, int PUSH, int TRACE>
__global__ void __launch_bounds__(256, 1)
w8t_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmr,
           const uint8_t *__restrict__ wrec, int rec_bulk, bf16 *__restrict__ Y, int M, int N, int K,
           unsigned long long *__restrict__ trace, int tflags) {
#ifdef TPS_SM90
  /* TRACE = 1 (developer forms, tps_w8c_set_trace): thread 0 of every block records clock64
   * at the phase boundaries below and stores them to trace[block * 32 ..] (TPS_W8_TR_*);
   * TRACE = 2 the same without the MMAs (TPS_W8_SKIP_MMA); tflags leave more phases out, to
   * time them by difference (results are then wrong): TPS_W8_SKIP_SUM (the partial-sum
   * exchange, barriers kept), _X (no X copy), _DEQ (fragments from the raw bytes).
   * TRACE = 0: all of it compiles away. */
  unsigned long long tr[TPS_W8_TR_SLOTS];
  if (TRACE) {
#pragma unroll
    for (int i = 0; i < TPS_W8_TR_SLOTS; i++) tr[i] = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(tr[TPS_W8_TR_GT0]));
    tr[TPS_W8_TR_C0] = clock64();
  }
  constexpr bool skip_mma = TRACE == 2; /* compile time: a branch around the wgmma serializes them */
  const bool skip_sum = TRACE && (tflags & TPS_W8_SKIP_SUM);
  const bool skip_x = TRACE && (tflags & TPS_W8_SKIP_X), skip_deq = TRACE && (tflags & TPS_W8_SKIP_DEQ);
  auto stamp = [&](int i) { if (TRACE) tr[i] = clock64(); };
  auto trace_out = [&]() {
    if (TRACE && threadIdx.x == 0) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(tr[TPS_W8_TR_GT1]));
      uint32_t smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      tr[TPS_W8_TR_SMID] = smid;
      const size_t b = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
#pragma unroll
      for (int i = 0; i < TPS_W8_TR_SLOTS; i++) trace[b * TPS_W8_TR_STRIDE + i] = tr[i];
    }
  };
  typedef WgShape<BT, STAGES> Sh;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES, empty0 = full0 + 8 * STAGES;
  const uint32_t rbar = full0 + 16 * STAGES; /* PUSH = 4: receive barrier */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int n0 = blockIdx.x * 128, t0 = blockIdx.y * BT;
  const int rl = warp * 16 + g;
  uint32_t rank = 0;
  if (SPLIT > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  /* split-K (SPLIT > 1, small M): block `rank` of the (1, 1, SPLIT) cluster takes chunks
   * kc0 .. kc0 + nch - 1; the loop below counts chunks from 0 */
  const int kall = K / 64, kper = (kall + SPLIT - 1) / SPLIT;
  const int kc0 = SPLIT > 1 ? (int)rank * kper < kall ? (int)rank * kper : kall : 0;
  const int nch = SPLIT > 1 ? (kc0 + kper < kall ? kper : kall - kc0) : kall;
  /* X rows a stage receives: split-K launches take one token tile of M <= BT rows and the
   * host makes the X box M rows high (launch_w8t); the others a BT-row box (rows past M
   * zero-filled by the TMA unit).  Rows xrows..BT-1 of a split-K stage are left as they are:
   * they feed only the MMA columns of tokens >= M, whose sums are never stored (columns of
   * an MMA do not mix).  Measured (data/h200_gemm_tuning.txt): the
   * out-of-bounds BT-row box and, with the exact box, zeroing those rows in shared memory
   * (plus the proxy fence the MMAs then need) each cost 0.2-0.6 us at M = 1, 24, 40, 56. */
  const int xrows = SPLIT > 1 && M < BT ? M : BT;
  const uint32_t xbytes = skip_x ? 0u : (uint32_t)xrows * 128u;
  /* thread 0: fill chunk `chunk` into its stage (waiting until every warp released it) */
  auto produce = [&](int chunk) {
    const int s = chunk % STAGES, round = chunk / STAGES;
    const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
    if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
    mb_expect(full, xbytes + Sh::W_BYTES + Sh::S_BYTES);
    if (xbytes) tma2d(st, &tmx, (kc0 + chunk) * 64, t0, full);
    const int rec = (int)blockIdx.x * kall + kc0 + chunk;
    if (rec_bulk)
      bulk_copy(st + Sh::X_BYTES, wrec + (size_t)rec * (Sh::W_BYTES + Sh::S_BYTES), Sh::W_BYTES + Sh::S_BYTES, full);
    else
      tma3d(st + Sh::X_BYTES, &tmr, 0, 0, rec, full);
  };
  if (SPLIT > 1 && PUSH == 1) /* phase 1 of the cluster barrier: this block has started (waited for
                            before the first store into another block's shared memory) */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  if (tid == 0) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
    if (!rec_bulk) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmr)) : "memory");
    ring_init<STAGES>(full0, empty0, 8);
    if (SPLIT > 1 && PUSH == 4) { /* the receive barrier: one arrival (here) and the bytes of
                                     the SPLIT - 1 other blocks' slices */
      mb_init(rbar, 1);
      mb_expect(rbar, (SPLIT - 1) * BT / SPLIT * 128 * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    /* the first stages' copies go out before the block barrier (only this thread has used
     * the barriers so far; the others wait on them after it) */
    for (int ch = 0; ch < STAGES && ch < nch; ch++) produce(ch);
  }
  __syncthreads();
  if (SPLIT > 1 && PUSH == 4) /* phase 1 of the cluster barrier, after the barrier inits (their
                                 fence releases them to the cluster) */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  stamp(TPS_W8_TR_ISSUED);
  /* every warp: done with chunk `chunk`'s stage */
  auto release = [&](int chunk) {
    __syncwarp();
    if (lane == 0) mb_arrive_local(empty0 + 8 * (chunk % STAGES));
  };
  auto wait_full = [&](int chunk) { mbar_wait(full0 + 8 * (chunk % STAGES), (uint32_t)(chunk / STAGES) & 1u); };

  uint32_t afr[2][4][4];
  auto dequant = [&](int chunk, auto buf) {
    constexpr int B = decltype(buf)::value;
    dequant_chunk(sptr + (chunk % STAGES) * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afr[B]);
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

  if (SPLIT > 1 && nch <= STAGES) {
    /* split-K with every chunk resident: each chunk is dequantized into its own registers
     * and its MMAs issued at once, up to 4 chunks of MMAs in flight (waiting per chunk made
     * the loop latency-bound: ~0.56 us per chunk with few tokens) */
    uint32_t afs[STAGES][4][4];
#pragma unroll
    for (int j = 0; j < STAGES; j++) {
      if (j < nch) {
        wait_full(j);
        stamp(TPS_W8_TR_CHUNK + j);
        if (skip_deq) {
          const uint4 *raw = reinterpret_cast<const uint4 *>(sptr + j * Sh::STAGE_BYTES + Sh::X_BYTES + rl * 64);
#pragma unroll
          for (int q = 0; q < 4; q++) {
            const uint4 v = raw[q];
            afs[j][q][0] = v.x; afs[j][q][1] = v.y; afs[j][q][2] = v.z; afs[j][q][3] = v.w;
          }
        } else
          dequant_chunk(sptr + j * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afs[j]);
        const uint32_t sx = sbase + j * Sh::STAGE_BYTES;
        const uint64_t desc0 = (uint64_t)((sx & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
        pin_all();
        wg_fence();
        if constexpr (!skip_mma) {
#pragma unroll
          for (int q = 0; q < 4; q++) WgOp<BT>::mma(accs[q % NACC], afs[j][q], desc0 + (uint64_t)(q * 2));
        }
        wg_commit();
        pin_all();
        if (j >= 3) wg_wait<3>();
      }
    }
    wg_wait<0>();
    pin_all();
    stamp(TPS_W8_TR_MMA);
  } else {
  if (nch > 0) {
    wait_full(0);
    dequant(0, I0{});
  }
  /* Pairs of chunks: the MMAs of chunk it run while chunk it+1 is dequantized, those of
   * it+1 while it+2 is, and the tensor pipe drains once per pair (wait_group 0 at the end:
   * keeping MMAs in flight across loop iterations made ptxas serialize every wgmma, C7514).
   * A buffer 0 holds chunk it at the top.  Thread 0 refills the stages of chunks it-2, it-1. */
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
  if (SPLIT > 1 && PUSH == 4) {
    /* partials by st.async straight from the accumulators: a thread's 4 values of index i
     * (tokens 8i+2c, +1 of rows rl, rl+8) belong to owner o = (8i+2c)/TPR; they go as one
     * 16-byte st.async to position p of o's receive buffer [source rank][32 TPR][float4]
     * (plain st.shared for this block's own tokens), completing on o's receive barrier.
     * The owner sums position q over the SPLIT sources in rank order (same bits as the
     * other forms) and maps q back to its two tokens and two rows.  Cluster barrier:
     * arrived at after the barrier inits, waited for before the first st.async (every
     * receive barrier is initialized); arrived at again once this block has received
     * everything, waited for at the end.
     * Why st.async (data/h200_gemm_tuning.txt, M = 64): 6.88 us, against 8.03 pulled, 7.54
     * through L2 and 7.14 by bulk copies (the last two are not kept). */
    static_assert(16 * STAGES + 8 <= 256, "receive barrier before the receive buffer");
    constexpr int TPR = BT / SPLIT;
    float4 *recv = reinterpret_cast<float4 *>(sptr + STAGES * Sh::STAGE_BYTES + 256);
    stamp(TPS_W8_TR_RED0);
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    if (!skip_sum) {
      push_partials<BT, TPR, 8>(acc, recv, warp, g, c, rank, rbar);
      mbar_wait(rbar, 0);
    }
    __syncthreads(); /* this block's own slice, written by its threads */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
    stamp(TPS_W8_TR_RED1);
    sum_partials<SPLIT, TPR, 8>(recv, skip_sum ? 32 * TPR : tid, t0, n0, rank, Y, M, N);
    stamp(TPS_W8_TR_RED2);
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    stamp(TPS_W8_TR_END);
    trace_out();
    return;
  }
  if (SPLIT > 1 && PUSH == 1) {
    /* receive buffer after the stages and barriers: [source rank][128 rows][TPR tokens] fp32 */
    constexpr int TPR = BT / SPLIT; /* tokens per rank: even, so a thread's token pair has one owner */
    static_assert(TPR % 2 == 0 && 16 * STAGES <= 256, "token pairs per owner; barriers fit before the buffer");
    float *recv = reinterpret_cast<float *>(sptr + STAGES * Sh::STAGE_BYTES + 256);
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); /* every block has started */
    stamp(TPS_W8_TR_RED0);
#pragma unroll
    for (int i = 0; i < BT / 8; i++) {
      const int t = 8 * i + 2 * c, owner = t / TPR, tl = t % TPR;
      float *dst = cluster.map_shared_rank(recv, owner) + ((int)rank * 128 + rl) * TPR + tl;
      if (skip_sum) continue;
      *reinterpret_cast<float2 *>(dst) = make_float2(acc[4 * i + 0], acc[4 * i + 1]);
      *reinterpret_cast<float2 *>(dst + 8 * TPR) = make_float2(acc[4 * i + 2], acc[4 * i + 3]);
    }
    cluster.sync(); /* every partial is in place; no remote access follows */
    stamp(TPS_W8_TR_RED1);
    for (int i = skip_sum ? TPR * 32 : tid; i < TPR * 32; i += 256) {
      const int tl = i >> 5, col = (i & 31) * 4, t = t0 + (int)rank * TPR + tl, n = n0 + col;
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int r = 0; r < SPLIT; r++)
#pragma unroll
        for (int q = 0; q < 4; q++) sum[q] += recv[(r * 128 + col + q) * TPR + tl];
      if (t < M && n < N) {
        __nv_bfloat162 lo = __floats2bfloat162_rn(sum[0], sum[1]), hi = __floats2bfloat162_rn(sum[2], sum[3]);
        uint2 out;
        out.x = *reinterpret_cast<uint32_t *>(&lo);
        out.y = *reinterpret_cast<uint32_t *>(&hi);
        *reinterpret_cast<uint2 *>(Y + (size_t)t * N + n) = out;
      }
    }
    stamp(TPS_W8_TR_RED2);
    trace_out();
    return;
  }
  __syncthreads(); /* every warp is past its last MMA: reuse the stages */
  stamp(TPS_W8_TR_RED0);
  if (SPLIT > 1) {
    /* fp32 partial tile [BT tokens][128 rows (+4 pad)] in this block's shared memory; block
     * r sums tokens r*BT/SPLIT .. of all SPLIT partials in rank order 0..SPLIT-1 */
    constexpr int PS = 132;
    float *ps = reinterpret_cast<float *>(sptr);
#pragma unroll
    for (int i = 0; i < BT / 8; i++)
#pragma unroll
      for (int v = 0; v < 4; v++)
        if (!skip_sum) ps[(8 * i + 2 * c + (v & 1)) * PS + rl + (v >> 1) * 8] = acc[4 * i + v];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    cluster.sync();
    stamp(TPS_W8_TR_RED1);
    constexpr int TPR = BT / SPLIT; /* tokens per rank */
    for (int i = skip_sum ? TPR * 32 : tid; i < TPR * 32; i += 256) {
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
    stamp(TPS_W8_TR_RED2);
    cluster.sync(); /* no block leaves while another reads its shared memory */
    stamp(TPS_W8_TR_END);
    trace_out();
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
#endif
}

/* ------------------------------------------------------------------ stream kernel, 192 rows (w8t3) */
/* The stream kernel with 192 weight rows a block (issue 28, opt-in: TPS_W8_SROWS=192): three
 * consumer warpgroups, 384 threads, the K range split over a (1, 1, 8) cluster as w8t_kernel's
 * stream forms.  Why: on an H100 at most 15 clusters of 8 run at once (ncu, Max Active
 * Clusters), so at N 2112 the 17 row blocks of 128 run their clusters in two waves (K 7168,
 * M <= 64: 14.3-16.2 us, against 8.1-9.2 us at N 1664..1920, data/h100_w8a16_default.txt);
 * 192-row blocks make 11 clusters, one wave, with the 14 chunks a block of the 128-row form.
 * A 192-row block x covers one whole 128-row record and half of another: x even, record
 * 3x/2 (rows 0..127 of the block) and the first half of record 3x/2 + 1 (rows 128..191); x
 * odd, the second half of record (3x - 1)/2 (rows 0..63) and record (3x + 1)/2 (rows 64..191).
 * A stage holds the X tile, the whole record (one TMA box, as w8t_kernel) and the half:
 * its 64 rows' weights (a 4096-byte box of the record map) and the record's 256-byte scale
 * row (a second box).  The host runs it only where every such record exists (tps_w8c_rows).
 * Loop: w8t_kernel's pair loop (chunk it+1 dequantized while chunk it's MMAs run), thread 0
 * issues the copies, 12 warps release a stage; partials by st.async to their tokens' owner,
 * summed in rank order (the 128-row form's order: the same bits). */
template <int BT, int STAGES>
struct W3Shape {
  static constexpr int X_BYTES = BT * 128;               /* BT tokens x 64 bf16, swizzled */
  static constexpr int REC = TPS_W8_REC_BYTES;           /* the whole record */
  static constexpr int HALF_W = 64 * 64;                 /* the half record's weights */
  static constexpr int HALF = HALF_W + 256;              /* + its record's scale row */
  static constexpr int STAGE_BYTES = (X_BYTES + REC + HALF + 1023) / 1024 * 1024;
  static constexpr int BAR = 256;                        /* full, empty, receive barriers */
  static constexpr int RECV = BT * 192 * 4;              /* fp32 partials: SPLIT sources x the owned tokens */
  static constexpr int SMEM = STAGES * STAGE_BYTES + BAR + RECV + 1024;
  static_assert(16 * STAGES + 8 <= BAR, "barriers fit");
  static_assert(SMEM <= 227 * 1024, "fits the SM90 shared memory a block may take");
};

template <int BT, int STAGES>
__global__ void __launch_bounds__(384, 1)
w8t3_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmr,
            const __grid_constant__ CUtensorMap tmh, const __grid_constant__ CUtensorMap tms,
            bf16 *__restrict__ Y, int M, int N, int K) {
#ifdef TPS_SM90
  constexpr int SPLIT = TPS_W8C_SPLITS, NW = 12; /* cluster size; consumer warps */
  typedef W3Shape<BT, STAGES> Sh;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES, empty0 = full0 + 8 * STAGES, rbar = full0 + 16 * STAGES;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int bx = (int)blockIdx.x, n0 = bx * 192, odd = bx & 1;
  const int rb_full = odd ? (3 * bx + 1) / 2 : 3 * bx / 2, rb_half = odd ? (3 * bx - 1) / 2 : rb_full + 1;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  const int kall = K / 64, kper = (kall + SPLIT - 1) / SPLIT;
  const int kc0 = (int)rank * kper < kall ? (int)rank * kper : kall;
  const int nch = kc0 + kper < kall ? kper : kall - kc0;
  /* one token tile a launch, M <= BT rows: the host made the X box exactly M rows high */
  const uint32_t xbytes = (uint32_t)(M < BT ? M : BT) * 128u;
  auto produce = [&](int chunk) {
    const int s = chunk % STAGES, round = chunk / STAGES;
    const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
    if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
    mb_expect(full, xbytes + Sh::REC + Sh::HALF);
    tma2d(st, &tmx, (kc0 + chunk) * 64, 0, full);
    tma3d(st + Sh::X_BYTES, &tmr, 0, 0, rb_full * kall + kc0 + chunk, full);
    tma3d(st + Sh::X_BYTES + Sh::REC, &tmh, 0, 16 * odd, rb_half * kall + kc0 + chunk, full);
    tma3d(st + Sh::X_BYTES + Sh::REC + Sh::HALF_W, &tms, 0, TPS_W8_REC_BYTES / 256 - 1, rb_half * kall + kc0 + chunk, full);
  };
  if (tid == 0) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmr)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmh)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tms)) : "memory");
    ring_init<STAGES>(full0, empty0, NW);
    /* the receive barrier: one arrival (here) and the bytes of the SPLIT - 1 other blocks' slices */
    mb_init(rbar, 1);
    mb_expect(rbar, (SPLIT - 1) * (BT / SPLIT) * 192 * 4);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    for (int ch = 0; ch < STAGES && ch < nch; ch++) produce(ch);
  }
  __syncthreads();
  /* phase 1 of the cluster barrier, after the barrier inits (their fence releases them to the cluster) */
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  /* this warp's 16 rows (rl, rl + 8 its thread's): in the whole record or in the half */
  const bool in_half = odd ? warp < 4 : warp >= 8;
  const int rw = (in_half ? (odd ? warp : warp - 8) : (odd ? warp - 4 : warp)) * 16 + g;
  const int rs = in_half ? 64 * odd + rw : rw;
  const int woff = Sh::X_BYTES + (in_half ? Sh::REC : 0);
  const int soff = in_half ? Sh::X_BYTES + Sh::REC + Sh::HALF_W : Sh::X_BYTES + 128 * 64;
  auto release = [&](int chunk) {
    __syncwarp();
    if (lane == 0) mb_arrive_local(empty0 + 8 * (chunk % STAGES));
  };
  auto wait_full = [&](int chunk) { mbar_wait(full0 + 8 * (chunk % STAGES), (uint32_t)(chunk / STAGES) & 1u); };
  uint32_t afr[2][4][4];
  auto dequant = [&](int chunk, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint8_t *st = sptr + (chunk % STAGES) * Sh::STAGE_BYTES;
    dequant_rows(st + woff, rw, st + soff, rs, c, afr[B]);
  };
  using I0 = std::integral_constant<int, 0>;
  using I1 = std::integral_constant<int, 1>;
  float acc[BT / 2];
#pragma unroll
  for (int i = 0; i < BT / 2; i++) acc[i] = 0.f;
  auto mma_chunk = [&](int chunk, auto buf) {
    constexpr int B = decltype(buf)::value;
    const uint32_t st = sbase + (chunk % STAGES) * Sh::STAGE_BYTES;
    const uint64_t desc0 = (uint64_t)((st & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
#pragma unroll
    for (int j = 0; j < 4; j++) WgOp<BT>::mma(acc, afr[B][j], desc0 + (uint64_t)(j * 2));
  };
  if (nch > 0) {
    wait_full(0);
    dequant(0, I0{});
  }
  /* w8t_kernel's pair loop (its comment says why pairs) */
  for (int it = 0; it < nch; it += 2) {
    if (tid == 0 && it >= 2) {
      if (it - 2 + STAGES < nch) produce(it - 2 + STAGES);
      if (it - 1 + STAGES < nch) produce(it - 1 + STAGES);
    }
    wg_pin(acc);
    wg_fence();
    mma_chunk(it, I0{});
    wg_commit();
    wg_pin(acc);
    if (it + 1 < nch) {
      wait_full(it + 1);
      dequant(it + 1, I1{});
      wg_fence();
      mma_chunk(it + 1, I1{});
      wg_commit();
      wg_pin(acc);
      wg_wait<1>();
      release(it);
    }
    if (it + 2 < nch) {
      wait_full(it + 2);
      dequant(it + 2, I0{});
    }
    wg_wait<0>();
    wg_pin(acc);
    release(it + 1 < nch ? it + 1 : it);
  }
  /* partials by st.async (w8t_kernel's PUSH = 4 form with 12 warps) */
  constexpr int TPR = BT / SPLIT;
  static_assert(TPR % 2 == 0, "token pairs per owner");
  float4 *recv = reinterpret_cast<float4 *>(sptr + STAGES * Sh::STAGE_BYTES + Sh::BAR);
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
  push_partials<BT, TPR, NW>(acc, recv, warp, g, c, rank, rbar);
  mbar_wait(rbar, 0);
  __syncthreads(); /* this block's own slice, written by its threads */
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  sum_partials<SPLIT, TPR, NW>(recv, tid, 0, n0, rank, Y, M, N);
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
#endif
}

/* ------------------------------------------------------------------ split kernel (w8s) */
/* The mid-M kernel (issue 28): 128 weight rows x BT tokens per block, K split over a
 * (1, 1, SPLIT) cluster, every token tile of the call in the same launch (grid: row blocks x
 * token tiles x SPLIT), so that the host can size the grid to the SMs.  Warp-specialized: warp 8
 * (one lane) only issues the TMA copies of the block's chunks into a STAGES-deep ring (full /
 * empty mbarriers as the wgmma kernel's); warps 0-7 (two warpgroups) dequantize each chunk
 * into its own A fragment registers and issue its MMAs at once, with up to three chunks of
 * MMAs in flight (the chunk loop is unrolled G chunks at a time, so no MMA stays in flight
 * across a loop back edge: that made ptxas serialize every wgmma, C7514).  Partial sums as the
 * stream kernel's st.async form: each block sends its fp32 partials to the block that owns
 * their tokens, which sums the SPLIT partials in rank order (deterministic).  SPLIT = 1: the
 * results are staged through shared memory for coalesced stores. */
template <int BT, int STAGES, int SPLIT>
struct WsShape {
  typedef WgShape<BT, STAGES> Sh;
  static constexpr int BAR = 256;                               /* full, empty, receive barriers */
  /* 256-token tiles: the receive buffer (128 KB) and the owner's staged bf16 tokens live in
   * the stages, idle once every block of the cluster is past its main loop */
  static constexpr bool ALIAS = SPLIT > 1 && BT == 256;
  static constexpr int RECV = SPLIT > 1 && !ALIAS ? BT * 128 * 4 : 0; /* fp32 partials of the owned tokens x SPLIT */
  static constexpr int SMEM = STAGES * Sh::STAGE_BYTES + BAR + RECV + 1024;
  static_assert(STAGES * Sh::STAGE_BYTES >= Sh::EPI, "the staged Y tile fits in the stages");
  static_assert(!ALIAS || BT * 128 * 4 + BT / SPLIT * Sh::YS * 2 <= STAGES * Sh::STAGE_BYTES, "receive buffer and staged tokens fit in the stages");
  static constexpr bool POW2 = (STAGES & (STAGES - 1)) == 0;
  /* threads: two consumer warpgroups and the producer warp; with 256-token tiles a whole
   * producer warpgroup, so that setmaxnreg can move its registers to the consumers (40 and
   * 232: 128 accumulators + 32 fragment registers a thread; at the 168 the compiler gives
   * each of 288 or 384 threads it serializes the wgmma, C7512) */
  static constexpr int THREADS = BT == 256 ? 384 : 288;
};
template <int BT, int STAGES, int SPLIT, int G, int PP>
__global__ void __launch_bounds__(WsShape<BT, STAGES, SPLIT>::THREADS, 1)
w8s_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmr,
           bf16 *__restrict__ Y, int M, int N, int K) {
#ifdef TPS_SM90
  typedef WgShape<BT, STAGES> Sh;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES, empty0 = full0 + 8 * STAGES;
  const uint32_t rbar = full0 + 16 * STAGES;
  static_assert(16 * STAGES + 8 <= WsShape<BT, STAGES, SPLIT>::BAR, "barriers fit");
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int n0 = blockIdx.x * 128, t0 = blockIdx.y * BT;
  uint32_t rank = 0;
  if (SPLIT > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  const int kall = K / 64, kper = (kall + SPLIT - 1) / SPLIT;
  const int kc0 = (int)rank * kper < kall ? (int)rank * kper : kall;
  const int nch = kc0 + kper < kall ? kper : kall - kc0;
  /* one token tile of fewer than BT rows: the host made the X box exactly M rows high (rows
   * M..BT-1 of a stage feed only MMA columns of tokens >= M, never stored); otherwise BT-row
   * boxes, rows past M zero-filled by the TMA unit (and counted in the bytes) */
  const uint32_t xbytes = (uint32_t)(M < BT ? M : BT) * 128u;
  if (tid == 0) {
    ring_init<STAGES>(full0, empty0, 8);
    if (SPLIT > 1) {
      mb_init(rbar, 1);
      mb_expect(rbar, (SPLIT - 1) * BT / SPLIT * 128 * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  typedef WsShape<BT, STAGES, SPLIT> Ws;
  /* phase 1 of the cluster barrier: at the start (the barrier inits are released to the
   * cluster); with the receive buffer in the stages (ALIAS), the consumers arrive only once
   * past their main loop, so that no partial lands in a stage still in use */
  if (SPLIT > 1 && (!Ws::ALIAS || warp >= 8)) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  if (warp >= 8) {
    /* producer (lane 0 of warp 8) */
    if (Ws::THREADS == 384) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (warp == 8 && lane == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmr)) : "memory");
      /* the ring position: a mask and a shift where STAGES is a power of two, else kept
       * incrementally (no division by a STAGES of 5, 6 or 10; with 8 stages the increments
       * measured 1.4-2.3 us slower than the mask, data/h100_w8a16_tuning.txt call 9) */
      int s = 0, round = 0;
      for (int j = 0; j < nch; j++) {
        if (Ws::POW2) { s = j & (STAGES - 1); round = j / STAGES; }
        const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
        if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
        mb_expect(full, xbytes + Sh::W_BYTES + Sh::S_BYTES);
        tma2d(st, &tmx, (kc0 + j) * 64, t0, full);
        tma3d(st + Sh::X_BYTES, &tmr, 0, 0, (int)blockIdx.x * kall + kc0 + j, full);
        if (!Ws::POW2 && ++s == STAGES) { s = 0; round++; }
      }
    }
    __syncwarp();
    if (SPLIT > 1) {
      asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
      asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
      asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    }
    return;
  }
  if (Ws::THREADS == 384) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const int g = lane >> 2, c = lane & 3;
  const int rl = warp * 16 + g, wgi = warp >> 2;
  float acc[BT / 2];
#pragma unroll
  for (int i = 0; i < BT / 2; i++) acc[i] = 0.f;
  uint32_t afs[4][4][4]; /* fragment buffers of up to 4 chunks (3 in flight) */
  int sw = 0, ph = 0, sr = 0; /* the ring: next stage to wait for, its phase, next to release */
  int nrel = 0;               /* stages released so far (POW2: sr = nrel mod STAGES) */
  auto release_next = [&]() {
    if (lane == 0) mb_arrive_local(empty0 + 8 * (Ws::POW2 ? nrel & (STAGES - 1) : sr));
    nrel++;
    if (!Ws::POW2 && ++sr == STAGES) sr = 0;
  };
  for (int j0 = 0; j0 < nch; j0 += G) {
#pragma unroll
    for (int jj = 0; jj < G; jj++) {
      const int j = j0 + jj;
      if (j < nch) {
        const int s = Ws::POW2 ? j & (STAGES - 1) : sw;
        mbar_wait(full0 + 8 * s, Ws::POW2 ? (uint32_t)(j / STAGES) & 1u : (uint32_t)ph);
        if (!Ws::POW2 && ++sw == STAGES) { sw = 0; ph ^= 1; }
        dequant_chunk(sptr + s * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afs[jj % 4]);
        const uint32_t sx = sbase + s * Sh::STAGE_BYTES;
        const uint64_t desc0 = (uint64_t)((sx & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
        /* PP: the two warpgroups take turns at the tensor cores (warpgroup 1 issues chunk j
         * after warpgroup 0 has, warpgroup 0 issues chunk j after warpgroup 1 issued j - 1),
         * so that one dequantizes while the other's MMAs run */
        if (PP && wgi == 1) asm volatile("bar.sync 2, 256;\n" ::: "memory");
        if (PP && wgi == 0 && j > 0) asm volatile("bar.sync 3, 256;\n" ::: "memory");
        wg_pin(acc);
        wg_fence();
#pragma unroll
        for (int q = 0; q < 4; q++) WgOp<BT>::mma(acc, afs[jj % 4][q], desc0 + (uint64_t)(q * 2));
        wg_commit();
        wg_pin(acc);
        if (PP && wgi == 0) asm volatile("bar.arrive 2, 256;\n" ::: "memory");
        if (PP && wgi == 1 && j + 1 < nch) asm volatile("bar.arrive 3, 256;\n" ::: "memory");
        if (jj >= 2) {
          wg_wait<2>();
          wg_pin(acc);
          __syncwarp();
          release_next();
        }
      }
    }
    /* drain the group: its last two chunks (or fewer) */
    wg_wait<0>();
    wg_pin(acc);
    __syncwarp();
    const int jl = j0 + G < nch ? j0 + G : nch; /* one past the group's last chunk */
    for (int j = (jl - 2 > j0 ? jl - 2 : j0); j < jl; j++) release_next();
  }
  if (SPLIT > 1) {
    constexpr int TPR = BT / SPLIT, HP = TPR / 2;
    static_assert(TPR % 2 == 0, "token pairs per owner");
    float4 *recv = reinterpret_cast<float4 *>(Ws::ALIAS ? sptr : sptr + STAGES * Sh::STAGE_BYTES + Ws::BAR);
    /* ALIAS: phase 1 completes once every block of the cluster is past its main loop (its
     * MMAs done, every copy into its stages landed); release / acquire order those reads
     * before the partials' writes */
    if (Ws::ALIAS) asm volatile("barrier.cluster.arrive.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    push_partials<BT, TPR, 8>(acc, recv, warp, g, c, rank, rbar);
    mbar_wait(rbar, 0);
    asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* this block's own slice, written by its consumer threads */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
    /* the owner's sums, rounded to bf16, staged in the (idle) stages as [TPR tokens][128 rows]
     * and stored as whole 16-byte row pieces: storing each value where it lies in the
     * fragments (2-byte stores 2N bytes apart) took as long as the MMAs at M = 512 (ncu) */
    bf16 *ys = reinterpret_cast<bf16 *>(Ws::ALIAS ? sptr + BT * 128 * 4 : sptr);
    for (int q = tid; q < 32 * TPR; q += 256) {
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int r = 0; r < SPLIT; r++) {
        const float4 v = recv[r * 32 * TPR + q];
        sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
      }
      const int wg = q / HP, tl = 2 * (q % HP), row = (wg >> 3) * 16 + (wg & 7);
      ys[tl * Sh::YS + row] = __float2bfloat16_rn(sum.x);
      ys[(tl + 1) * Sh::YS + row] = __float2bfloat16_rn(sum.y);
      ys[tl * Sh::YS + row + 8] = __float2bfloat16_rn(sum.z);
      ys[(tl + 1) * Sh::YS + row + 8] = __float2bfloat16_rn(sum.w);
    }
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    for (int i = tid; i < TPR * 16; i += 256) {
      const int r = i >> 4, p = i & 15, t = t0 + (int)rank * TPR + r, n = n0 + p * 8;
      if (t < M && n < N)
        *reinterpret_cast<uint4 *>(Y + (size_t)t * N + n) = *reinterpret_cast<const uint4 *>(ys + r * Sh::YS + p * 8);
    }
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    return;
  }
  asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* every consumer warp is past its last MMA: reuse the stages */
  bf16 *ys = reinterpret_cast<bf16 *>(sptr);
#pragma unroll
  for (int i = 0; i < BT / 8; i++) {
    const int t = 8 * i + 2 * c;
    ys[t * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 0]);
    ys[(t + 1) * Sh::YS + rl] = __float2bfloat16_rn(acc[4 * i + 1]);
    ys[t * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 2]);
    ys[(t + 1) * Sh::YS + rl + 8] = __float2bfloat16_rn(acc[4 * i + 3]);
  }
  asm volatile("bar.sync 1, 256;\n" ::: "memory");
  for (int i = tid; i < BT * 16; i += 256) {
    const int r = i >> 4, p = i & 15, t = t0 + r, n = n0 + p * 8;
    if (t < M && n < N)
      *reinterpret_cast<uint4 *>(Y + (size_t)t * N + n) = *reinterpret_cast<const uint4 *>(ys + r * Sh::YS + p * 8);
  }
#endif
}

/* ------------------------------------------------------------------ stream-K kernel (w8k) */
/* The persistent form of the split kernel (issue 28, run E): a grid of G <= (resident blocks)
 * blocks, one per SM, shares the I = tiles x K/64 (tile, chunk) iterations equally: block b
 * runs iterations [b I / G, (b + 1) I / G) in order (tile-major, the 128-row weight blocks
 * of one token tile consecutive, as the other kernels' grids run: the blocks working at once
 * share their X tiles; with the token tiles of one weight block consecutive instead, K 7168
 * N 2112 at 4096 rows took 415 us, X read again per weight block, run 3), so no SM idles for a partial wave and a tile's K range may
 * span several blocks.  The producer warp and the consumer warpgroups are the split
 * kernel's (one ring that runs on across tiles: the next tile's chunks are fetched during an
 * epilogue).  Fix-up, deterministic: a block whose range starts inside a tile (k > 0) writes
 * that segment's fp32 partials, in the accumulators' own order (coalesced: thread-major per
 * fragment quad), to its slot ws[b] and raises flags[b] (release); the block that runs the
 * tile's first chunk (its "owner": that segment is the last of its range, so the others
 * started theirs first) waits for the flags of blocks b + 1, ... that cover the rest of the
 * tile (acquire), adds their partials in k order to its accumulators, clears the flags for
 * the next launch and stores the tile as bf16 (staged in its own shared memory: the stages
 * stay busy with the next tile).  Waiting is safe because every block of the grid is
 * resident (G <= occupancy x SMs) and a block waits only for higher-numbered ones. */
template <int BT, int STAGES>
struct WkShape {
  typedef WgShape<BT, STAGES> Sh;
  static constexpr int BAR = 256;
  static constexpr int ET = BT < 64 ? BT : 64;                 /* tokens staged per epilogue pass */
  static constexpr int EPI = ET * Sh::YS * 2;
  static constexpr int SMEM = STAGES * Sh::STAGE_BYTES + EPI + BAR + 1024;
};
__device__ __forceinline__ int ld_acquire(const int *p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(int *p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
/* one epilogue pass: accumulator quads i0 .. i0 + NI - 1 (tokens 8 i0 .. 8 (i0 + NI) - 1 of the
 * tile, ET of them) as bf16 into ys [ET][YS], then stored from ys as 16-byte row pieces
 * (i0 is 0 or NI; both branches are unrolled with constant indices, so acc stays in registers) */
template <int NI, int ET, int YS, int NA>
__device__ __forceinline__ void wk_store(const float (&acc)[NA], int i0, bf16 *ys, bf16 *__restrict__ Y, int rl,
                                         int c, int tid, int t0, int n0, int M, int N) {
  asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* the last pass's stores have read ys */
#pragma unroll
  for (int i = 0; i < NI; i++) {
    const int tk = 8 * i + 2 * c;
    const float a0 = i0 ? acc[4 * (NI + i) % NA] : acc[4 * i], a1 = i0 ? acc[(4 * (NI + i) + 1) % NA] : acc[4 * i + 1];
    const float a2 = i0 ? acc[(4 * (NI + i) + 2) % NA] : acc[4 * i + 2], a3 = i0 ? acc[(4 * (NI + i) + 3) % NA] : acc[4 * i + 3];
    ys[tk * YS + rl] = __float2bfloat16_rn(a0);
    ys[(tk + 1) * YS + rl] = __float2bfloat16_rn(a1);
    ys[tk * YS + rl + 8] = __float2bfloat16_rn(a2);
    ys[(tk + 1) * YS + rl + 8] = __float2bfloat16_rn(a3);
  }
  asm volatile("bar.sync 1, 256;\n" ::: "memory");
  for (int i = tid; i < ET * 16; i += 256) {
    const int r = i >> 4, p = i & 15, tk = t0 + r, n = n0 + p * 8;
    if (tk < M && n < N)
      *reinterpret_cast<uint4 *>(Y + (size_t)tk * N + n) = *reinterpret_cast<const uint4 *>(ys + r * YS + p * 8);
  }
}
template <int BT, int STAGES, int G>
__global__ void __launch_bounds__(288, 1)
w8k_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmr,
           bf16 *__restrict__ Y, float *__restrict__ ws, int *__restrict__ flags, int M, int N, int K) {
#ifdef TPS_SM90
  typedef WgShape<BT, STAGES> Sh;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  typedef WkShape<BT, STAGES> Ks;
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES + Ks::EPI, empty0 = full0 + 8 * STAGES;
  static_assert(16 * STAGES <= Ks::BAR, "barriers fit");
  bf16 *ys = reinterpret_cast<bf16 *>(sptr + STAGES * Sh::STAGE_BYTES);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int C = K / 64, ntt = (M + BT - 1) / BT;
  /* iteration indices fit an int (tiles x chunks < 2^31 for every shape bench gemm takes);
   * the products b x I are taken in 64 bits */
  const int nrb = (N + 127) / 128, I = nrb * ntt * C, nb = (int)gridDim.x, b = (int)blockIdx.x;
  const int it0 = (int)((long long)b * I / nb), it1 = (int)((long long)(b + 1) * I / nb);
  const uint32_t xbytes = (uint32_t)(M < BT ? M : BT) * 128u;
  if (tid == 0) {
    ring_init<STAGES>(full0, empty0, 8);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp == 8) {
    if (lane == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmr)) : "memory");
      /* the ring's position kept incrementally: a division by a STAGES that is no power of
       * two in every chunk cost ~10% of the consumers' instructions (ncu, run 2) */
      int s = 0, round = 0;
      for (int it = it0; it < it1;) {
        const int t = it / C, kx = it % C;
        const int ke = it1 - it < C - kx ? kx + (it1 - it) : C;
        const int rb = t % nrb, tt = t / nrb;
        for (int j = kx; j < ke; j++) {
          const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
          if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
          mb_expect(full, xbytes + Sh::W_BYTES + Sh::S_BYTES);
          tma2d(st, &tmx, j * 64, tt * BT, full);
          tma3d(st + Sh::X_BYTES, &tmr, 0, 0, rb * C + j, full);
          if (++s == STAGES) { s = 0; round++; }
        }
        it += ke - kx;
      }
    }
    return;
  }
  const int g = lane >> 2, c = lane & 3;
  const int rl = warp * 16 + g;
  float acc[BT / 2];
  uint32_t afs[4][4][4];
  int sw = 0, ph = 0, sr = 0; /* the ring: next stage to wait for, its phase, next stage to release */
  for (int it = it0; it < it1;) {
    const int t = it / C, kx = it % C;
    const int ke = it1 - it < C - kx ? kx + (it1 - it) : C, nch = ke - kx;
    const int rb = t % nrb, tt = t / nrb;
#pragma unroll
    for (int i = 0; i < BT / 2; i++) acc[i] = 0.f;
    for (int j0 = 0; j0 < nch; j0 += G) {
#pragma unroll
      for (int jj = 0; jj < G; jj++) {
        const int j = j0 + jj;
        if (j < nch) {
          const int s = sw;
          mbar_wait(full0 + 8 * s, (uint32_t)ph);
          if (++sw == STAGES) { sw = 0; ph ^= 1; }
          dequant_chunk(sptr + s * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afs[jj % 4]);
          const uint32_t sx = sbase + s * Sh::STAGE_BYTES;
          const uint64_t desc0 = (uint64_t)((sx & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
          wg_pin(acc);
          wg_fence();
#pragma unroll
          for (int q = 0; q < 4; q++) WgOp<BT>::mma(acc, afs[jj % 4][q], desc0 + (uint64_t)(q * 2));
          wg_commit();
          wg_pin(acc);
          if (jj >= 2) {
            wg_wait<2>();
            wg_pin(acc);
            __syncwarp();
            if (lane == 0) mb_arrive_local(empty0 + 8 * sr);
            if (++sr == STAGES) sr = 0;
          }
        }
      }
      wg_wait<0>();
      wg_pin(acc);
      __syncwarp();
      const int jl = j0 + G < nch ? j0 + G : nch;
      for (int j = (jl - 2 > j0 ? jl - 2 : j0); j < jl; j++) {
        if (lane == 0) mb_arrive_local(empty0 + 8 * sr);
        if (++sr == STAGES) sr = 0;
      }
    }
    it += nch;
    float4 *wsb = reinterpret_cast<float4 *>(ws);
    if (kx > 0) { /* not the tile's first chunk: partials to this block's slot, then the flag */
#pragma unroll
      for (int i = 0; i < BT / 8; i++)
        __stcg(wsb + ((size_t)b * (BT / 8) + i) * 256 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
      asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* every thread's stores before thread 0's release (cumulative) */
      if (tid == 0) { __threadfence(); st_release(flags + b, 1); }
      continue;
    }
    if (ke < C) { /* the owner: the rest of the tile from blocks b + 1, ..., in k order */
      /* the blocks b + 1 .. bl cover the rest: thread 0 waits for all their flags (and
       * clears them for the next launch: no one else reads them in this one), then every
       * thread adds the partials in block order */
      const int tend = (t + 1) * C;
      int bl = b + 1;
      while ((long long)(bl + 1) * I / nb < tend) bl++;
      if (tid == 0)
        for (int bb = b + 1; bb <= bl; bb++) {
          while (ld_acquire(flags + bb) == 0) __nanosleep(32);
          flags[bb] = 0;
        }
      asm volatile("bar.sync 1, 256;\n" ::: "memory");
      for (int bb = b + 1; bb <= bl; bb++) {
#pragma unroll
        for (int h = 0; h < BT / 8; h += 8) { /* 8 loads in flight, then their adds */
          float4 v[8];
#pragma unroll
          for (int i = 0; i < 8; i++) v[i] = __ldcg(wsb + ((size_t)bb * (BT / 8) + h + i) * 256 + tid);
#pragma unroll
          for (int i = 0; i < 8; i++) {
            acc[4 * (h + i)] += v[i].x; acc[4 * (h + i) + 1] += v[i].y; acc[4 * (h + i) + 2] += v[i].z; acc[4 * (h + i) + 3] += v[i].w;
          }
        }
      }
    }
    /* the tile as bf16, staged ET tokens at a time as [ET tokens][128 rows] (a buffer of
     * its own: the stages hold the next tile's chunks) and stored as 16-byte row pieces */
    const int n0 = rb * 128, t0 = tt * BT;
    wk_store<Ks::ET / 8, Ks::ET, Sh::YS>(acc, 0, ys, Y, rl, c, tid, t0, n0, M, N);
    if (BT > Ks::ET) wk_store<Ks::ET / 8, Ks::ET, Sh::YS>(acc, Ks::ET / 8, ys, Y, rl, c, tid, t0 + Ks::ET, n0, M, N);
  }
#endif
}

/* ------------------------------------------------------------------ stream-K over 256-token tiles (w8k2) */
/* The 256-token wgmma pass (w8t_kernel<256, 5>: 0.72-0.81 us a 64-wide chunk, the fastest per
 * chunk of our kernels) in a persistent grid of G blocks (issue 28, past one wave): the last
 * wave's idle SMs (K 5120 N 1792 at 4096 rows: 224 tiles = 1.70 waves of 132) get work.  Tiles
 * (128 weight rows x 256 tokens) numbered tile-major as the other kernels' grids (the weight
 * blocks of one token tile consecutive).  Schedule, per block b: first DPW data-parallel waves
 * (block b runs whole tiles w G + b, w < DPW: every block at the same k at once, so each X chunk
 * is read from DRAM once and shared through L2 by the row blocks of its token tile), then the
 * (tile, chunk) iterations of the tiles left shared equally as the stream-K kernel's (block b:
 * [b I / G, (b + 1) I / G) of them), with its deterministic fix-up (a block whose range starts
 * inside a tile writes its fp32 partials to ws[b] and raises flags[b]; the tile's owner, the
 * block that runs its first chunk, adds the partials of b + 1, ... in k order).  The stream-K
 * part is kept to the tiles past the whole waves, at least half a wave (host: tps_w8_sk_dpw):
 * shared over all of K, the blocks run a token tile's row blocks at different k, so X stays
 * live in L2 for the whole stream-K part.  On an even grid (no whole waves, tiles x p blocks,
 * 1/p of a tile each; host: tps_w8_sk_even) or an even tail (TPS_W8_SKTAIL, after the waves) the
 * argument rs = p > 1 sums a cut tile by reduce-scatter instead (the default, TPS_W8_SKRS=1): each
 * of its p blocks adds the others' partials of its own 1/p of the tile and stores that slice;
 * RSA = 1 (TPS_W8_SKRS=2, an experiment) stages those partials by cp.async first.
 * 384 threads: a producer warpgroup (lane 0 of warp 8 issues the copies of every block's
 * chunks in order into a 5-stage ring that runs on across tiles) that gives its registers back
 * (setmaxnreg 40), two consumer warpgroups at 232 registers (128 accumulators, two fragment
 * buffers): each chunk's fragments are dequantized while the previous chunk's MMAs run (the
 * w8t_kernel loop, pairs of chunks, the tensor pipe drained once a pair).  The bf16 tile is
 * staged 64 tokens at a time in a buffer of its own (the stages hold the next tile's chunks). */
template <int STAGES>
struct Wk2Shape {
  typedef WgShape<256, STAGES> Sh;
  static constexpr int BAR = 256;
  static constexpr int ET = 64;
  static constexpr int EPI = ET * Sh::YS * 2;
  static constexpr int SMEM = STAGES * Sh::STAGE_BYTES + EPI + BAR + 1024;
  static_assert(SMEM <= 227 * 1024, "fits the opt-in shared memory");
};
/* epilogue pass P of 4: accumulator quads 8P .. 8P + 7 (tokens 64P .. 64P + 63 of the tile) */
/* (lo, hi: only accumulator quads 8P + lo .. 8P + hi - 1, tokens 64P + 8 lo .. 64P + 8 hi - 1: the slice of
 * a tile a block of the reduce-scatter fix-up stores) */
template <int P, int YS>
__device__ __forceinline__ void wk2_store(const float (&acc)[128], bf16 *ys, bf16 *__restrict__ Y, int rl, int c,
                                          int tid, int t0, int n0, int M, int N, int lo = 0, int hi = 8) {
  asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* the last pass's stores have read ys */
#pragma unroll
  for (int i = 0; i < 8; i++) {
    if (i < lo || i >= hi) continue;
    const int tk = 8 * i + 2 * c, q = 4 * (8 * P + i);
    ys[tk * YS + rl] = __float2bfloat16_rn(acc[q]);
    ys[(tk + 1) * YS + rl] = __float2bfloat16_rn(acc[q + 1]);
    ys[tk * YS + rl + 8] = __float2bfloat16_rn(acc[q + 2]);
    ys[(tk + 1) * YS + rl + 8] = __float2bfloat16_rn(acc[q + 3]);
  }
  asm volatile("bar.sync 1, 256;\n" ::: "memory");
  for (int i = tid + 128 * lo; i < 128 * hi; i += 256) {
    const int r = i >> 4, p = i & 15, tk = t0 + 64 * P + r, n = n0 + p * 8;
    if (tk < M && n < N)
      *reinterpret_cast<uint4 *>(Y + (size_t)tk * N + n) = *reinterpret_cast<const uint4 *>(ys + r * YS + p * 8);
  }
}
/* the stream-K ranges (host: tps_w8_sk2_bounds, weighted so that the blocks end together):
 * block b's stream-K iterations [b[blk], b[blk + 1]) */
struct Wk2Bounds { int b[TPS_W8_SK2_MAXG + 1]; };
/* block b's work, in order: segment w < dpw is whole tile w G + b; then its stream-K range */
struct Wk2Sched {
  int C, nb, b, dpw; /* iterations fit an int (the host checks tiles x chunks < 2^31) */
  const int *bnd;
  __device__ __forceinline__ void range(int w, int &lo, int &hi) const {
    if (w < dpw) { lo = (w * nb + b) * C; hi = lo + C; }
    else { lo = bnd[b]; hi = bnd[b + 1]; }
  }
  /* the last block whose stream-K range starts before iteration tend (b's successors that
   * cover the rest of the tile ending there) */
  __device__ __forceinline__ int owner_end(int tend) const {
    int bl = b + 1;
    while (bnd[bl + 1] < tend) bl++;
    return bl;
  }
};
template <int STAGES, int RSA>
__global__ void __launch_bounds__(384, 1)
w8k2_kernel(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmxt,
            const __grid_constant__ CUtensorMap tmr, bf16 *__restrict__ Y, float *__restrict__ ws, int *__restrict__ flags,
            int M, int N, int K, int dpw, int rs, const __grid_constant__ Wk2Bounds bounds) {
#ifdef TPS_SM90
  typedef WgShape<256, STAGES> Sh;
  typedef Wk2Shape<STAGES> Ks;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t sbase = (sraw + 1023u) & ~1023u;
  uint8_t *sptr = smem_raw + (sbase - sraw);
  const uint32_t full0 = sbase + STAGES * Sh::STAGE_BYTES + Ks::EPI, empty0 = full0 + 8 * STAGES;
  static_assert(16 * STAGES <= Ks::BAR, "barriers fit");
  bf16 *ys = reinterpret_cast<bf16 *>(sptr + STAGES * Sh::STAGE_BYTES);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  Wk2Sched sc;
  sc.C = K / 64;
  sc.nb = (int)gridDim.x;
  sc.b = (int)blockIdx.x;
  sc.dpw = dpw;
  sc.bnd = bounds.b;
  const int C = sc.C, nrb = (N + 127) / 128;
  /* X boxes: 256 rows, or exactly M rows for one tile of fewer; the last token tile of a
   * partial one (M > 256, M % 256 > 0) through tmxt, a box of exactly its rows: an out-of-bounds
   * box (rows past M zero-filled by the TMA unit) measured slow (K 5120 N 1792: 57.2 us at 1152
   * rows against 47.4 at 1536, data/h100_w8a16_sk256.txt call 1).  Rows past M of a stage then
   * hold an earlier chunk's X: they feed only the MMA columns of tokens >= M, never stored. */
  const uint32_t xbytes = (uint32_t)(M < 256 ? M : 256) * 128u, xtail = (uint32_t)(M % 256) * 128u;
  const int ttail = M > 256 && M % 256 ? M / 256 : -1; /* the token tile read through tmxt */
  if (tid == 0) {
    ring_init<STAGES>(full0, empty0, 8);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp >= 8) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (warp == 9 && rs <= 1 && sc.bnd[sc.b] % C != 0) {
      /* this block's stream-K range starts inside a tile: once the consumers have stored its
       * partials (bar 2: 256 arrivals, then this warp), the fence and the flag, off the
       * consumers' path (thread 0 of a consumer warp held its warpgroup's next MMAs) */
      asm volatile("bar.sync 2, 288;\n" ::: "memory");
      if (lane == 0) { __threadfence(); st_release(flags + sc.b, 1); }
    }
    if (warp == 8 && lane == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmx)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmr)) : "memory");
      if (ttail >= 0) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tmxt)) : "memory");
      int s = 0, round = 0;
      for (int w = 0; w <= sc.dpw; w++) {
        int it, hi;
        sc.range(w, it, hi);
        for (; it < hi; it++) {
          const int t = it / C, j = it - t * C, rb = t % nrb, tt = t / nrb;
          const uint32_t st = sbase + s * Sh::STAGE_BYTES, full = full0 + 8 * s;
          if (round > 0) mbar_wait(empty0 + 8 * s, (uint32_t)(round - 1) & 1u);
          mb_expect(full, (tt == ttail ? xtail : xbytes) + Sh::W_BYTES + Sh::S_BYTES);
          tma2d(st, tt == ttail ? &tmxt : &tmx, j * 64, tt * 256, full);
          tma3d(st + Sh::X_BYTES, &tmr, 0, 0, rb * C + j, full);
          if (++s == STAGES) { s = 0; round++; }
        }
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const int g = lane >> 2, c = lane & 3;
  const int rl = warp * 16 + g, wgi = warp >> 2;
  float acc[128];
  uint32_t afr[2][4][4];
  int sw = 0, ph = 0, sr = 0; /* the ring: next stage to wait for, its phase, next stage to release */
  auto next_full = [&]() {
    const int s = sw;
    mbar_wait(full0 + 8 * s, (uint32_t)ph);
    if (++sw == STAGES) { sw = 0; ph ^= 1; }
    return s;
  };
  auto release = [&]() {
    __syncwarp();
    if (lane == 0) mb_arrive_local(empty0 + 8 * sr);
    if (++sr == STAGES) sr = 0;
  };
  auto mma = [&](int s, const uint32_t (&a)[4][4]) {
    const uint32_t sx = sbase + s * Sh::STAGE_BYTES;
    const uint64_t desc0 = (uint64_t)((sx & 0x3FFFFu) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
#pragma unroll
    for (int q = 0; q < 4; q++) wgmma_n256(acc, a[q], desc0 + (uint64_t)(q * 2));
  };
  float4 *wsb = reinterpret_cast<float4 *>(ws);
  for (int w = 0; w <= sc.dpw; w++) {
    int lo, hi;
    sc.range(w, lo, hi);
    for (int it = lo; it < hi;) {
      const int t = it / C, kx = it - t * C;
      const int ke = hi - it < C - kx ? kx + (hi - it) : C, nch = ke - kx;
      const int rb = t % nrb, tt = t / nrb;
#pragma unroll
      for (int i = 0; i < 128; i++) acc[i] = 0.f;
      if (wgi == 1 && rb * 128 + 64 >= N) {
        /* rows 64..127 of this tile are past N (N 2112: the 17th weight block): this
         * warpgroup idles, releasing each stage once it has landed (arriving earlier would
         * count toward the stage's previous round); its zero sums are stored nowhere */
        for (int j = 0; j < nch; j++) {
          next_full();
          release();
        }
      } else {
      /* the w8t_kernel loop: buffer 0 holds chunk j at the top; the MMAs of j run while j + 1
       * is dequantized, those of j + 1 while j + 2 is; drained once a pair */
      int sa = next_full();
      dequant_chunk(sptr + sa * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afr[0]);
      for (int j = 0; j < nch; j += 2) {
        wg_pin(acc);
        wg_fence();
        mma(sa, afr[0]);
        wg_commit();
        wg_pin(acc);
        if (j + 1 < nch) {
          const int sb = next_full();
          dequant_chunk(sptr + sb * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afr[1]);
          wg_fence();
          mma(sb, afr[1]);
          wg_commit();
          wg_pin(acc);
          wg_wait<1>();
          release();
        }
        if (j + 2 < nch) {
          sa = next_full();
          dequant_chunk(sptr + sa * Sh::STAGE_BYTES + Sh::X_BYTES, Sh::W_BYTES, rl, c, afr[0]);
        }
        wg_wait<0>();
        wg_pin(acc);
        release();
      }
      }
      it += nch;
      const int n0 = rb * 128, t0 = tt * 256;
      if (rs > 1 && w == sc.dpw) {
        /* the reduce-scatter fix-up of an even grid (rs pieces a tile, blocks b0 .. b0 + rs - 1, piece q):
         * every block writes the quads outside its slice (quads [32q/rs, 32(q+1)/rs), tokens 8x as many)
         * to its slot, counts itself in at flags[b0] and waits for the others; then adds the others'
         * partials of its slice to its own, in piece order past its own, and stores that slice; the last
         * block through flags[b0 + 1] zeroes both for the next launch.  Each block reads (rs - 1) / rs of a
         * tile and stores 1 / rs of it, where the owner's fix-up reads rs - 1 tiles and stores one. */
        const int q = sc.b % rs, b0 = sc.b - q, i0 = 32 * q / rs, i1 = 32 * (q + 1) / rs;
#pragma unroll
        for (int i = 0; i < 32; i++)
          if (i < i0 || i >= i1)
            __stcg(wsb + ((size_t)sc.b * 32 + i) * 256 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
        __threadfence();
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
        if (tid == 0) {
          atomicAdd(flags + b0, 1);
          while (ld_acquire(flags + b0) < rs) __nanosleep(32);
        }
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
        if (RSA) {
          /* (TPS_W8_SKRS=2, an experiment) the others' slices staged in this block's pipeline stages (free: its last
           * segment, every MMA done at the barrier above) by cp.async, every copy in flight at once; each thread
           * reads back only what it copied (no barrier), then adds them in the same order as below */
          const int nq = i1 - i0;
          float4 *stg = reinterpret_cast<float4 *>(sptr);
          for (int j = 0, jj = 0; j < rs; j++) {
            if (j == q) continue;
            const float4 *src = wsb + (size_t)(b0 + j) * 32 * 256 + tid;
            for (int ii = 0; ii < nq; ii++) {
              const uint32_t dst = (uint32_t)__cvta_generic_to_shared(stg + (size_t)(jj * nq + ii) * 256 + tid);
              asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + (size_t)(i0 + ii) * 256) : "memory");
            }
            jj++;
          }
          asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
          for (int j = 0, jj = 0; j < rs; j++) {
            if (j == q) continue;
            const float4 *sl = stg + (size_t)jj * nq * 256 + tid;
#pragma unroll
            for (int i = 0; i < 32; i++)
              if (i >= i0 && i < i1) {
                const float4 v = sl[(i - i0) * 256];
                acc[4 * i] += v.x; acc[4 * i + 1] += v.y; acc[4 * i + 2] += v.z; acc[4 * i + 3] += v.w;
              }
            jj++;
          }
        }
        for (int j = 0; j < rs && !RSA; j++) {
          if (j == q) continue;
          const float4 *src = wsb + (size_t)(b0 + j) * 32 * 256 + tid;
#pragma unroll
          for (int h = 0; h < 32; h += 16) { /* 16 loads in flight, then their adds */
            float4 v[16];
#pragma unroll
            for (int i = 0; i < 16; i++) v[i] = h + i >= i0 && h + i < i1 ? __ldcg(src + (h + i) * 256) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int i = 0; i < 16; i++)
              if (h + i >= i0 && h + i < i1) {
                acc[4 * (h + i)] += v[i].x; acc[4 * (h + i) + 1] += v[i].y; acc[4 * (h + i) + 2] += v[i].z; acc[4 * (h + i) + 3] += v[i].w;
              }
          }
        }
        asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* every read of the slots done */
        if (tid == 0 && atomicAdd(flags + b0 + 1, 1) == rs - 1) { flags[b0] = 0; flags[b0 + 1] = 0; }
#define WK2_SLICE(P) if (i0 < 8 * (P) + 8 && i1 > 8 * (P)) \
          wk2_store<P, Sh::YS>(acc, ys, Y, rl, c, tid, t0, n0, M, N, i0 > 8 * (P) ? i0 - 8 * (P) : 0, i1 < 8 * (P) + 8 ? i1 - 8 * (P) : 8)
        WK2_SLICE(0); WK2_SLICE(1); WK2_SLICE(2); WK2_SLICE(3);
#undef WK2_SLICE
        continue;
      }
      if (kx > 0) { /* not the tile's first chunk (only a block's first stream-K segment): partials, then the flag */
#pragma unroll
        for (int i = 0; i < 32; i++)
          __stcg(wsb + ((size_t)sc.b * 32 + i) * 256 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
        asm volatile("bar.arrive 2, 288;\n" ::: "memory"); /* warp 9 fences (cumulative) and raises the flag */
        continue;
      }
      if (ke < C) { /* the owner (its last segment): the rest of the tile from blocks b + 1, ..., bl in k order */
        const int bl = sc.owner_end((t + 1) * C);
        if (tid == 0)
          for (int bb = sc.b + 1; bb <= bl; bb++) {
            while (ld_acquire(flags + bb) == 0) __nanosleep(32);
            flags[bb] = 0;
          }
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
        for (int bb = sc.b + 1; bb <= bl; bb++) {
#pragma unroll
          for (int h = 0; h < 32; h += 16) { /* 16 loads in flight (the fragment registers are free), then their adds */
            float4 v[16];
#pragma unroll
            for (int i = 0; i < 16; i++) v[i] = __ldcg(wsb + ((size_t)bb * 32 + h + i) * 256 + tid);
#pragma unroll
            for (int i = 0; i < 16; i++) {
              acc[4 * (h + i)] += v[i].x; acc[4 * (h + i) + 1] += v[i].y; acc[4 * (h + i) + 2] += v[i].z; acc[4 * (h + i) + 3] += v[i].w;
            }
          }
        }
      }
      wk2_store<0, Sh::YS>(acc, ys, Y, rl, c, tid, t0, n0, M, N);
      wk2_store<1, Sh::YS>(acc, ys, Y, rl, c, tid, t0, n0, M, N);
      wk2_store<2, Sh::YS>(acc, ys, Y, rl, c, tid, t0, n0, M, N);
      wk2_store<3, Sh::YS>(acc, ys, Y, rl, c, tid, t0, n0, M, N);
    }
  }
#endif
}

/* ------------------------------------------------------------------ host side */

typedef void (*w8t_fn)(const CUtensorMap, const CUtensorMap, const uint8_t *, int, bf16 *, int, int, int,
                       unsigned long long *, int);
/* fn: the forms by partial-sum exchange, indexed by TPS_W8C_SUM_* (push, pull, st.async); tr, tr_nomma: traced forms (with and without MMAs), indexed the same way */
typedef struct { int bt, stages, smem; w8t_fn fn[TPS_W8C_NSUM], tr[TPS_W8C_NSUM], tr_nomma[TPS_W8C_NSUM]; } w8t_variant;
/* no split-K */
#define W8T(BT, ST, NA) { BT, ST, WgShape<BT, ST>::SMEM + 256, {w8t_kernel<BT, ST, 1, NA, 0, 0>, NULL, NULL}, {NULL}, {NULL} }
/* split-K stream forms (kernel PUSH: 1 push, 0 pull, 4 st.async); + the receive buffer
 * (BT x 128 fp32) of the push and st.async forms */
#define W8K(BT, ST, P, T) w8t_kernel<BT, ST, TPS_W8C_SPLITS, 1, P, T>
#define W8S(BT, ST) \
  { BT, ST, WgShape<BT, ST>::SMEM + 256 + BT * 128 * 4, \
    {W8K(BT, ST, 1, 0), W8K(BT, ST, 0, 0), W8K(BT, ST, 4, 0)}, \
    {W8K(BT, ST, 1, 1), W8K(BT, ST, 0, 1), W8K(BT, ST, 4, 1)}, \
    {W8K(BT, ST, 1, 2), W8K(BT, ST, 0, 2), W8K(BT, ST, 4, 2)} }
/* accumulator sets: 4 for 64-token tiles; 1 for 128 (2 sets measured 12% slower) and 256 */
static const w8t_variant tvariants[] = {W8T(64, 8, 4), W8T(128, 8, 1), W8T(256, 5, 1)};
/* split-K over a cluster of TPS_W8C_SPLITS blocks, for small M: 16, 32, 48, 64 tokens with
 * every chunk of a block's K range resident (10 stages), one accumulator set (2 sets, k16
 * steps alternating, are no faster at any tile: data/h200_gemm_tuning.txt); 128 tokens
 * (65..256 rows) through a 5-stage ring (the resident form would need 64 accumulator and 160
 * fragment registers per thread) */
static const w8t_variant svariants[] = {W8S(16, 10), W8S(32, 10), W8S(48, 10), W8S(64, 10), W8S(128, 5)};
enum { NSVARIANTS = sizeof svariants / sizeof svariants[0] };
/* the same stream forms over clusters of 4 (issue 28, an experiment: TPS_W8_SCL=4): at most 15
 * clusters of 8 run at once on an H100 (ncu, data/h100_w8a16_default.txt), so N 2112 (17 row
 * blocks) runs its clusters of 8 in two waves; clusters of 4 take twice the chunks a block.  No
 * traced forms (the trace pointers are the untraced kernels). */
#define W8K4(BT, ST, P) w8t_kernel<BT, ST, 4, 1, P, 0>
#define W8S4(BT, ST) \
  { BT, ST, WgShape<BT, ST>::SMEM + 256 + BT * 128 * 4, \
    {W8K4(BT, ST, 1), W8K4(BT, ST, 0), W8K4(BT, ST, 4)}, \
    {W8K4(BT, ST, 1), W8K4(BT, ST, 0), W8K4(BT, ST, 4)}, \
    {W8K4(BT, ST, 1), W8K4(BT, ST, 0), W8K4(BT, ST, 4)} }
static const w8t_variant svariants4[] = {W8S4(16, 10), W8S4(32, 10), W8S4(48, 10), W8S4(64, 10)};
enum { NSVARIANTS4 = sizeof svariants4 / sizeof svariants4[0] };
/* the 192-row stream forms (w8t3_kernel, TPS_W8_SROWS=192): stages as many as fit beside the
 * receive buffer (BT x 192 fp32), at most 10 */
typedef void (*w8t3_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap, bf16 *, int, int, int);
typedef struct { int bt, stages, smem; w8t3_fn fn; } w8t3_variant;
#define W8S3(BT, ST) { BT, ST, W3Shape<BT, ST>::SMEM, w8t3_kernel<BT, ST> }
static const w8t3_variant s3variants[] = {W8S3(16, 10), W8S3(32, 10), W8S3(48, 9), W8S3(64, 8),
                                          /* deeper rings (the default; TPS_W8_SDEEP=0 the forms above): at K 7168
                                             the 16-token tile holds all 14 chunks of a block, the 32-token 11 */
                                          W8S3(16, 14), W8S3(32, 11)};
enum { NS3VARIANTS = sizeof s3variants / sizeof s3variants[0] };
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
    return TPS_ERR;
  }
  return TPS_OK;
}

/* a launch of grid x threads with smem bytes in clusters of (cx, 1, cz) on stream s (attr: its one attribute) */
static void cluster_cfg(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr, dim3 grid, unsigned threads, size_t smem,
                        unsigned cx, unsigned cz, cudaStream_t s) {
  *cfg = cudaLaunchConfig_t{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cx;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = cz;
  cfg->gridDim = grid;
  cfg->blockDim = dim3(threads, 1, 1);
  cfg->dynamicSmemBytes = smem;
  cfg->stream = s;
  cfg->attrs = attr;
  cfg->numAttrs = 1;
}
/* clusters of (1, 1, cz) blocks of fn that can run at once (*nc) */
static int max_clusters(const void *fn, unsigned threads, size_t smem, unsigned cz, int *nc) {
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr[1];
  cluster_cfg(&cfg, attr, dim3(1, 1, cz), threads, smem, 1, cz, 0);
  CUDA_TRY(cudaOccupancyMaxActiveClusters(nc, fn, &cfg));
  return TPS_OK;
}

extern "C" int tps_w8s_prepare(tps_gemm *g);
extern "C" int tps_w8k_prepare(tps_gemm *g);
static int stream_clusters_prepare(tps_gemm *g);
extern "C" int tps_w8g_prepare(tps_gemm *g) {
  g->wgmma_ok = 0;
  int major = 0, minor = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, g->device));
  CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, g->device));
  if (major != 9 || minor != 0) return TPS_OK;
  int *d, h = 0;
  CUDA_TRY(cudaMalloc(&d, sizeof *d));
  w8g_probe<<<1, 1>>>(d);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) { cudaGetLastError(); return TPS_OK; }
  CUDA_TRY(e);
  if (!h) return TPS_OK; /* built without sm_90a */
  for (int v = 0; v < NTVARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(tvariants[v].fn[0], cudaFuncAttributeMaxDynamicSharedMemorySize, tvariants[v].smem));
  for (int v = 0; v < NSVARIANTS4; v++)
    for (int i = 0; i < TPS_W8C_NSUM; i++)
      CUDA_TRY(cudaFuncSetAttribute(svariants4[v].fn[i], cudaFuncAttributeMaxDynamicSharedMemorySize, svariants4[v].smem));
  for (int v = 0; v < NS3VARIANTS; v++)
    CUDA_TRY(cudaFuncSetAttribute(s3variants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, s3variants[v].smem));
  for (int v = 0; v < NSVARIANTS; v++)
    for (int i = 0; i < TPS_W8C_NSUM; i++) {
      CUDA_TRY(cudaFuncSetAttribute(svariants[v].fn[i], cudaFuncAttributeMaxDynamicSharedMemorySize, svariants[v].smem));
      CUDA_TRY(cudaFuncSetAttribute(svariants[v].tr[i], cudaFuncAttributeMaxDynamicSharedMemorySize, svariants[v].smem));
      CUDA_TRY(cudaFuncSetAttribute(svariants[v].tr_nomma[i], cudaFuncAttributeMaxDynamicSharedMemorySize, svariants[v].smem));
    }
  TPS_TRY(stream_clusters_prepare(g));
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
      return TPS_ERR;
    }
    encode_tiled = (encode_fn)fn;
  }
  /* the packed records as a 3D tensor map: 256 bytes x 33 rows (one 8448-byte record) x the
   * records; box = one record, which lands contiguous in shared memory as a bulk copy would */
  {
    const int nrec = (g->n + 127) / 128 * (g->k / 64);
    const cuuint64_t dim[3] = {256, TPS_W8_REC_BYTES / 256, (cuuint64_t)nrec}, stride[2] = {256, TPS_W8_REC_BYTES};
    const cuuint32_t box[3] = {256, TPS_W8_REC_BYTES / 256, 1}, es[3] = {1, 1, 1};
    CUtensorMap mr;
    CUresult r = encode_tiled(&mr, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, g->w_rec, dim, stride, box, es,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      fprintf(stderr, "tpsplit: gemm: cuTensorMapEncodeTiled (records) failed (%d)\n", (int)r);
      return TPS_ERR;
    }
    memcpy(g->tm_rec, &mr, sizeof mr);
  }
  TPS_TRY(tps_w8s_prepare(g));
  TPS_TRY(tps_w8k_prepare(g));
  g->wgmma_ok = 1;
  return TPS_OK;
}

/* developer traces (tps_w8c_set_trace) */
static unsigned long long *trace_buf;
static int trace_flags;
extern "C" void tps_w8c_set_trace(unsigned long long *buf, int flags) {
  trace_buf = buf;
  trace_flags = flags;
}

/* Launch variant w on rows of x (tensor map made here: it names the activation pointer) with
 * grid (N/128, gy, gz) and cluster dims (cx, 1, cz). */
static int launch_w8t(tps_gemm *g, const w8t_variant *w, const void *x, void *y, int rows, unsigned gy, unsigned gz,
                      unsigned cx, unsigned cz, cudaStream_t s) {
  CUtensorMap mx;
  /* split-K launches (one token tile, rows <= bt): a box of exactly `rows` rows (the kernel
   * expects that many bytes; an out-of-bounds box, zero-filled by the TMA unit, is up to
   * 0.6 us slower at M = 56, data/h200_gemm_tuning.txt) */
  const uint32_t box_rows = gz > 1 && rows < w->bt ? (uint32_t)rows : (uint32_t)w->bt;
  TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)rows, (uint64_t)g->k * 2, 64,
                   box_rows, CU_TENSOR_MAP_SWIZZLE_128B));
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr[1];
  cluster_cfg(&cfg, attr, dim3((unsigned)((g->n + 127) / 128), gy, gz), 256, (size_t)w->smem, cx, cz, s);
  /* split-K stream kernel: partial sums by st.async for every tile (tps_w8c_sum: the fastest
   * form, data/h200_gemm_tuning.txt); TPS_W8_SUM=0|1|4 forces one */
  const int sum = w->fn[1] ? tps_w8c_sum() : 0; /* the wgmma kernel has one form */
  w8t_fn fn = w->fn[sum];
  if (trace_buf && w->tr[sum]) fn = trace_flags & TPS_W8_SKIP_MMA ? w->tr_nomma[sum] : w->tr[sum];
  /* records by the 3D tensor map (default) or, with TPS_W8_RECBULK=1, by a plain bulk copy
   * (same bytes, same barrier; compute-sanitizer racecheck reports its writes as racing with
   * the reads that wait on that barrier) */
  CUtensorMap mr;
  memcpy(&mr, g->tm_rec, sizeof mr);
  const int rec_bulk = tps_w8_env_int("TPS_W8_RECBULK", 0) == 1;
  CUDA_TRY(cudaLaunchKernelEx(&cfg, fn, mx, mr, (const uint8_t *)g->w_rec, rec_bulk, (bf16 *)y, rows, g->n, g->k,
                              trace_buf, trace_flags));
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

static int check_run(const tps_gemm *g, const void *x, const void *y) {
  if (!g->wgmma_ok) {
    fprintf(stderr, "tpsplit: gemm: the SM90 W8A16 kernels need a compute capability 9.0 GPU and a build for sm_90a\n");
    return TPS_ERR;
  }
  if (((uintptr_t)x & 15) || ((uintptr_t)y & 15)) {
    fprintf(stderr, "tpsplit: gemm: the SM90 w8a16 kernels need X and Y 16-byte aligned\n");
    return TPS_ERR;
  }
  return TPS_OK;
}

extern "C" int tps_w8g_run(tps_gemm *g, const void *x, void *y, int m, int bt, cudaStream_t s) {
  TPS_TRY(check_run(g, x, y));
  const w8t_variant *w = &tvariants[bt <= 64 ? 0 : bt <= 128 ? 1 : 2];
  return launch_w8t(g, w, x, y, m, (unsigned)((m + w->bt - 1) / w->bt), 1, 1, 1, s);
}

/* token tile by M; TPS_W8_SBT (16, 32, 48, 64, 128) forces one for sweeps */
extern "C" int tps_w8c_tokens(const tps_gemm *g, int m) {
  tps_w8_geom q;
  tps_w8_geom_of(g, &q);
  return tps_w8_stream_tile(&q, m);
}

extern "C" const char *const tps_w8c_sum_name[TPS_W8C_NSUM] = {"pushed", "pulled", "by st.async"};

extern "C" int tps_w8c_sum(void) {
  const int o = tps_w8_env_int("TPS_W8_SUM", 4);
  return o == 0 ? TPS_W8C_SUM_PUSH : o == 1 ? TPS_W8C_SUM_PULL : TPS_W8C_SUM_ASYNC;
}

static const w8t_variant *stream_variant(int t) {
  for (int v = 0; v < NSVARIANTS; v++)
    if (svariants[v].bt == t) return &svariants[v];
  return NULL;
}

/* clusters of TPS_W8C_SPLITS that can run at once on the plan's device, per token tile of the 128-row stream
 * form (its summing form of tps_w8c_sum) and of the 192-row form (s3variants' order): g->occ */
static_assert(NSVARIANTS <= TPS_W8_OCC_MAX && NS3VARIANTS <= TPS_W8_OCC_MAX, "tps_w8_occ holds every stream form");
static int stream_clusters_prepare(tps_gemm *g) {
  for (int v = 0; v < NSVARIANTS; v++)
    TPS_TRY(max_clusters((const void *)svariants[v].fn[tps_w8c_sum()], 256, (size_t)svariants[v].smem, TPS_W8C_SPLITS,
                         &g->occ.s_clusters[v]));
  for (int v = 0; v < NS3VARIANTS; v++)
    TPS_TRY(max_clusters((const void *)s3variants[v].fn, 384, (size_t)s3variants[v].smem, TPS_W8C_SPLITS, &g->occ.s3_clusters[v]));
  return TPS_OK;
}
/* the 192-row form's variant for a t-token tile: the deepest ring (default; TPS_W8_SDEEP=0: the first, the
 * form before data/h100_w8a16_s24.txt), NULL where there is none */
static const w8t3_variant *s3_variant(int t, int *index) {
  const int deep = tps_w8_env_int("TPS_W8_SDEEP", 1) == 1;
  int best = -1;
  for (int v = 0; v < NS3VARIANTS; v++)
    if (s3variants[v].bt == t && (best < 0 || (deep && s3variants[v].stages > s3variants[best].stages))) best = v;
  if (index) *index = best;
  return best < 0 ? NULL : &s3variants[best];
}

/* weight rows a stream block takes for a t-token tile (t <= 64): 192 (w8t3_kernel) where every record its
 * blocks read exists (the last 192-row block's whole and half records inside the (N + 127) / 128 of the
 * plan) and the 128-row form's clusters of 8 do not all run at once while the 192-row form's do (N 2112 on
 * an H100: 17 clusters where 15 run at once, against 11: one wave instead of two, data/h100_w8a16_s30.txt,
 * data/h100_w8a16_s24.txt); else 128.  TPS_W8_SROWS=128 or 192 forces one (192 still only where the records
 * exist). */
extern "C" int tps_w8c_rows(const tps_gemm *g, int t) {
  const int force = tps_w8_env_int("TPS_W8_SROWS", 0);
  if (force == 128 || t > 64) return 128;
  const int last = (g->n + 191) / 192 - 1, nrb = (g->n + 127) / 128;
  const int need = last & 1 ? (3 * last + 1) / 2 : 3 * last / 2 + 1; /* the highest record read */
  if (need > nrb - 1) return 128;
  if (force == 192) return 192;
  const w8t_variant *w = stream_variant(t);
  int i3 = -1;
  if (!w || !s3_variant(t, &i3)) return 128;
  const int c128 = g->occ.s_clusters[w - svariants], c192 = g->occ.s3_clusters[i3];
  return nrb > c128 && last + 1 <= c192 ? 192 : 128;
}

/* one launch of the 192-row stream form on `rows` (<= w->bt) rows of x */
static int launch_w8t3(tps_gemm *g, const w8t3_variant *w, const void *x, void *y, int rows, cudaStream_t s) {
  CUtensorMap mx, mr, mh, ms;
  TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)rows, (uint64_t)g->k * 2, 64,
                   (uint32_t)rows, CU_TENSOR_MAP_SWIZZLE_128B));
  memcpy(&mr, g->tm_rec, sizeof mr);
  /* the records as tps_w8g_prepare's 3D map (256 bytes x 33 rows x records), boxes of 16 rows
   * (a half record's 64 weight rows) and of 1 row (the scale row) */
  {
    const int nrec = (g->n + 127) / 128 * (g->k / 64);
    const cuuint64_t dim[3] = {256, TPS_W8_REC_BYTES / 256, (cuuint64_t)nrec}, stride[2] = {256, TPS_W8_REC_BYTES};
    const cuuint32_t es[3] = {1, 1, 1}, boxh[3] = {256, 16, 1}, boxs[3] = {256, 1, 1};
    CUresult r = encode_tiled(&mh, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, g->w_rec, dim, stride, boxh, es,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS)
      r = encode_tiled(&ms, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, g->w_rec, dim, stride, boxs, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      fprintf(stderr, "tpsplit: gemm: cuTensorMapEncodeTiled (half records) failed (%d)\n", (int)r);
      return TPS_ERR;
    }
  }
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr[1];
  cluster_cfg(&cfg, attr, dim3((unsigned)((g->n + 191) / 192), 1, TPS_W8C_SPLITS), 384, (size_t)w->smem, 1, TPS_W8C_SPLITS, s);
  CUDA_TRY(cudaLaunchKernelEx(&cfg, w->fn, mx, mr, mh, ms, (bf16 *)y, rows, g->n, g->k));
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

extern "C" int tps_w8c_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s) {
  TPS_TRY(check_run(g, x, y));
  if (tps_w8c_rows(g, tps_w8c_tokens(g, m)) == 192) {
    const int t = tps_w8c_tokens(g, m);
    const w8t3_variant *w3 = s3_variant(t, NULL);
    if (!w3) {
      fprintf(stderr, "tpsplit: gemm: no 192-row stream kernel for a %d-token tile\n", t);
      return TPS_ERR;
    }
    for (int r0 = 0; r0 < m; r0 += t)
      TPS_TRY(launch_w8t3(g, w3, (const bf16 *)x + (size_t)r0 * g->k, (bf16 *)y + (size_t)r0 * g->n,
                          m - r0 < t ? m - r0 : t, s));
    return TPS_OK;
  }
  /* launches of one token tile each (16, 32, 48, 64 or 128 tokens); the tile by M (not by the rows
   * of a launch), so that every row of a call goes through the same tile, as
   * tps_gemm_config says */
  const int t = tps_w8c_tokens(g, m);
  const w8t_variant *w = stream_variant(t);
  if (!w) {
    fprintf(stderr, "tpsplit: gemm: no stream kernel for a %d-token tile\n", t);
    return TPS_ERR;
  }
  unsigned cl = TPS_W8C_SPLITS;
  if (tps_w8_env_int("TPS_W8_SCL", 0) == 4 && t <= 64) { /* experiment: clusters of 4 */
    for (int v = 0; v < NSVARIANTS4; v++)
      if (svariants4[v].bt == t) { w = &svariants4[v]; cl = 4; }
  }
  for (int r0 = 0; r0 < m; r0 += t) {
    const int rows = m - r0 < t ? m - r0 : t;
    TPS_TRY(launch_w8t(g, w, (const bf16 *)x + (size_t)r0 * g->k, (bf16 *)y + (size_t)r0 * g->n, rows, 1,
                       cl, 1, cl, s));
  }
  return TPS_OK;
}

/* ------------------------------------------------------------------ split kernel: host */
typedef void (*w8s_fn)(const CUtensorMap, const CUtensorMap, bf16 *, int, int, int);
typedef struct { int bt, stages, splits, smem, threads; w8s_fn fn[3]; } w8s_variant; /* fn[pp]; fn[2]: other G */
#define W8SPL(BT, ST, S) { BT, ST, S, WsShape<BT, ST, S>::SMEM, WsShape<BT, ST, S>::THREADS, {w8s_kernel<BT, ST, S, 4, 0>, w8s_kernel<BT, ST, S, 4, 1>, NULL} }
/* stages: as many as fit next to the receive buffer (227 KB).  Chunks unrolled 4 at a time:
 * with 5 or more ptxas serializes the wgmma (C7511, register resources), likewise for a
 * 256-token tile at 4 (its accumulators alone take 128 registers), so there is none. */
/* 256-token tiles (issue 28): the dequantization of a chunk feeds twice the MMAs; chunks two
 * at a time (the accumulators take 128 registers), 5 stages of 41 KB, the receive buffer in
 * the stages (WsShape::ALIAS); no turn-taking form (fn[1] is fn[0]) */
#define W8SPL2(BT, ST, S, G) { BT, ST, S, WsShape<BT, ST, S>::SMEM, WsShape<BT, ST, S>::THREADS, {w8s_kernel<BT, ST, S, G, 0>, w8s_kernel<BT, ST, S, G, 0>, w8s_kernel<BT, ST, S, 4, 0>} }
static const w8s_variant spvariants[] = {
    W8SPL(64, 8, 1), W8SPL(64, 10, 2), W8SPL(64, 10, 4), W8SPL(64, 10, 8),
    W8SPL(128, 8, 1), W8SPL(128, 6, 2), W8SPL(128, 6, 4), W8SPL(128, 6, 8),
    W8SPL2(256, 5, 1, 2), W8SPL2(256, 5, 2, 2), W8SPL2(256, 5, 4, 2), W8SPL2(256, 5, 8, 2)};
enum { NSPVARIANTS = sizeof spvariants / sizeof spvariants[0] };

static const w8s_variant *split_variant(int bt, int splits) {
  for (int v = 0; v < NSPVARIANTS; v++)
    if (spvariants[v].bt == bt && spvariants[v].splits == splits) return &spvariants[v];
  return NULL;
}

/* blocks of each variant that can run at once on the plan's device (clusters of `splits` blocks, one block
 * per SM, placed inside a GPC: cudaOccupancyMaxActiveClusters x splits): g->occ.sp_slots */
static_assert(NSPVARIANTS <= TPS_W8_OCC_MAX, "tps_w8_occ holds every split form");

extern "C" int tps_w8s_prepare(tps_gemm *g) {
  for (int v = 0; v < NSPVARIANTS; v++) {
    for (int pp = 0; pp < 3; pp++)
      if (spvariants[v].fn[pp])
        CUDA_TRY(cudaFuncSetAttribute(spvariants[v].fn[pp], cudaFuncAttributeMaxDynamicSharedMemorySize, spvariants[v].smem));
    int nc = 0;
    TPS_TRY(max_clusters((const void *)spvariants[v].fn[0], (unsigned)spvariants[v].threads, (size_t)spvariants[v].smem,
                         (unsigned)spvariants[v].splits, &nc));
    g->occ.sp_slots[v] = nc * spvariants[v].splits;
  }
  return TPS_OK;
}

extern "C" int tps_w8s_slots(const tps_gemm *g, int bt, int splits) {
  for (int v = 0; v < NSPVARIANTS; v++)
    if (spvariants[v].bt == bt && spvariants[v].splits == splits) return g->occ.sp_slots[v];
  return 0;
}

extern "C" int tps_w8s_run(tps_gemm *g, const void *x, void *y, int m, int bt, int splits, cudaStream_t s) {
  TPS_TRY(check_run(g, x, y));
  const w8s_variant *w = split_variant(bt, splits);
  if (!w) {
    fprintf(stderr, "tpsplit: gemm: no split kernel for a %d-token tile and split-K %d\n", bt, splits);
    return TPS_ERR;
  }
  CUtensorMap mx, mr;
  /* one tile of fewer than bt rows: a box of exactly m rows (the kernel expects that many bytes) */
  TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)m, (uint64_t)g->k * 2, 64,
                   (uint32_t)(m < bt ? m : bt), CU_TENSOR_MAP_SWIZZLE_128B));
  memcpy(&mr, g->tm_rec, sizeof mr);
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr[1];
  cluster_cfg(&cfg, attr, dim3((unsigned)((g->n + 127) / 128), (unsigned)((m + bt - 1) / bt), (unsigned)splits),
              (unsigned)w->threads, (size_t)w->smem, 1, (unsigned)splits, s);
  /* TPS_W8_PP=0|1: the warpgroups issue their MMAs freely (0, default) or in turn (1: no
   * faster, 0-4 us slower at 128..1024 rows on an H100, kernels/run_w8a16.sh sweep) */
  /* TPS_W8_SG=4: the 256-token tile with chunks four at a time (developer form, for sweeps) */
  const int fi = w->fn[2] && tps_w8_env_int("TPS_W8_SG", 0) == 4 ? 2 : tps_w8_env_int("TPS_W8_PP", 0) == 1 ? 1 : 0;
  CUDA_TRY(cudaLaunchKernelEx(&cfg, w->fn[fi], mx, mr, (bf16 *)y, m, g->n, g->k));
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

/* ------------------------------------------------------------------ stream-K kernel: host */
typedef void (*w8k_fn)(const CUtensorMap, const CUtensorMap, bf16 *, float *, int *, int, int, int);
typedef struct { int bt, stages, smem; w8k_fn fn; } w8k_variant;
#define W8KV(BT, ST) { BT, ST, WkShape<BT, ST>::SMEM, w8k_kernel<BT, ST, 4> }
/* stages: as many as fit next to the epilogue's own staging buffer (227 KB) */
static const w8k_variant skvariants[] = {W8KV(64, 12), W8KV(128, 8)};
enum { NSKVARIANTS = sizeof skvariants / sizeof skvariants[0] };
static_assert(NSKVARIANTS <= TPS_W8_OCC_MAX, "tps_w8_occ holds every stream-K form");
/* the 256-token form (w8k2_kernel: 384 threads, 5 stages, whole waves first) */
typedef void (*w8k2_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, bf16 *, float *, int *, int, int, int, int,
                        int, const Wk2Bounds);
/* [1]: the reduce-scatter fix-up's slices staged by cp.async (TPS_W8_SKRS=2, an experiment; its own instance, so
 * that the default's registers are not the experiment's) */
static const w8k2_fn sk2_fns[2] = {w8k2_kernel<5, 0>, w8k2_kernel<5, 1>};
static const w8k2_fn sk2_fn = sk2_fns[0];
static const int sk2_smem = Wk2Shape<5>::SMEM;

static const w8k_variant *sk_variant(int bt) {
  for (int v = 0; v < NSKVARIANTS; v++)
    if (skvariants[v].bt == bt) return &skvariants[v];
  return NULL;
}

/* resident blocks (the largest grid a stream-K launch may have: its blocks wait for each
 * other), and the fix-up workspace: one fp32 tile of the largest token tile per block, one
 * flag per block (zero between launches: each owner clears the flags it consumed) */
extern "C" int tps_w8k_prepare(tps_gemm *g) {
  int most = 0;
  for (int v = 0; v < NSKVARIANTS; v++) {
    CUDA_TRY(cudaFuncSetAttribute(skvariants[v].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, skvariants[v].smem));
    int per_sm = 0;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, skvariants[v].fn, 288, (size_t)skvariants[v].smem));
    g->occ.sk_slots[v] = per_sm * g->num_sms;
    if (g->occ.sk_slots[v] > most) most = g->occ.sk_slots[v];
  }
  {
    CUDA_TRY(cudaFuncSetAttribute(sk2_fns[0], cudaFuncAttributeMaxDynamicSharedMemorySize, sk2_smem));
    CUDA_TRY(cudaFuncSetAttribute(sk2_fns[1], cudaFuncAttributeMaxDynamicSharedMemorySize, sk2_smem));
    int per_sm = 0;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sk2_fn, 384, (size_t)sk2_smem));
    g->occ.sk2_slots = per_sm * g->num_sms;
    if (g->occ.sk2_slots > most) most = g->occ.sk2_slots;
  }
  if (most <= 0) return TPS_OK;
  if (!g->sk_ws) {
    /* one fp32 tile of the largest token tile (256 where its form can run) per block */
    CUDA_TRY(cudaMalloc(&g->sk_ws, (size_t)most * (g->occ.sk2_slots > 0 ? 256 : 128) * 128 * sizeof(float)));
    CUDA_TRY(cudaMalloc(&g->sk_flags, (size_t)most * sizeof(int)));
    CUDA_TRY(cudaMemset(g->sk_flags, 0, (size_t)most * sizeof(int)));
    g->sk_blocks = most;
  }
  return TPS_OK;
}

/* the grid of a stream-K launch for m rows: every resident block, at most one per iteration;
 * TPS_W8_SKG (1..resident) forces fewer */
extern "C" int tps_w8k_slots(const tps_gemm *g, int bt) {
  if (bt == 256) return g->occ.sk2_slots;
  for (int v = 0; v < NSKVARIANTS; v++)
    if (skvariants[v].bt == bt) return g->occ.sk_slots[v];
  return 0;
}

extern "C" int tps_w8k_grid(const tps_gemm *g, int m, int bt) {
  tps_w8_geom q;
  tps_w8_geom_of(g, &q);
  return tps_w8_sk_grid(&q, m, bt);
}

extern "C" int tps_w8k_run(tps_gemm *g, const void *x, void *y, int m, int bt, cudaStream_t s) {
  TPS_TRY(check_run(g, x, y));
  const w8k_variant *w = sk_variant(bt);
  const long long iters = (long long)((g->n + 127) / 128) * ((m + bt - 1) / bt) * (g->k / 64);
  if (bt == 256 && g->occ.sk2_slots > 0 && g->sk_ws && iters <= 0x7fffffffLL) {
    CUtensorMap mx, mxt, mr;
    TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)m, (uint64_t)g->k * 2, 64,
                     (uint32_t)(m < 256 ? m : 256), CU_TENSOR_MAP_SWIZZLE_128B));
    /* the last token tile of a partial one: a box of exactly its rows */
    if (m > 256 && m % 256)
      TPS_TRY(make_map(&mxt, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)m, (uint64_t)g->k * 2, 64,
                       (uint32_t)(m % 256), CU_TENSOR_MAP_SWIZZLE_128B));
    else
      mxt = mx;
    memcpy(&mr, g->tm_rec, sizeof mr);
    tps_w8_geom q;
    tps_w8_geom_of(g, &q);
    const int grid = tps_w8_sk_grid(&q, m, 256), dpw = tps_w8_sk_dpw(&q, m, grid);
    Wk2Bounds bnd;
    if (tps_w8_sk2_bounds(&q, m, grid, dpw, bnd.b) < 0) {
      fprintf(stderr, "tpsplit: gemm: no 256-token stream-K partition for M=%d on %d blocks\n", m, grid);
      return TPS_ERR;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)grid, 1, 1);
    cfg.blockDim = dim3(384, 1, 1);
    cfg.dynamicSmemBytes = (size_t)sk2_smem;
    cfg.stream = s;
    /* the fix-up of an even grid or an even tail: reduce-scatter where sk_rs (rs pieces a tile), else the owner's */
    const int rs = q.sk_rs >= 1 ? tps_w8_sk_cut(&q, m, grid, dpw) : 0;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, sk2_fns[q.sk_rs == 2], mx, mxt, mr, (bf16 *)y, g->sk_ws, g->sk_flags, m, g->n, g->k, dpw, rs, bnd));
    CUDA_LAUNCH_CHECK();
    return TPS_OK;
  }
  if (!w || !g->sk_ws || iters > 0x7fffffffLL) {
    fprintf(stderr, "tpsplit: gemm: no stream-K kernel for a %d-token tile\n", bt);
    return TPS_ERR;
  }
  CUtensorMap mx, mr;
  TPS_TRY(make_map(&mx, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, (uint64_t)g->k, (uint64_t)m, (uint64_t)g->k * 2, 64,
                   (uint32_t)(m < bt ? m : bt), CU_TENSOR_MAP_SWIZZLE_128B));
  memcpy(&mr, g->tm_rec, sizeof mr);
  const int grid = tps_w8k_grid(g, m, bt);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)grid, 1, 1);
  cfg.blockDim = dim3(288, 1, 1);
  cfg.dynamicSmemBytes = (size_t)w->smem;
  cfg.stream = s;
  CUDA_TRY(cudaLaunchKernelEx(&cfg, w->fn, mx, mr, (bf16 *)y, g->sk_ws, g->sk_flags, m, g->n, g->k));
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

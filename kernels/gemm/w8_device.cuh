/* w8_device.cuh: device helpers shared by the W8A16 kernels (gemm_w8a16.cu, gemm_w8a16_sm90.cu):
 * cp.async, the m16n8k16 bf16 MMA, and the E4M3 -> bf16 dequantization.
 *
 * Dequantization: an E4M3 byte's 7 low bits shifted left by 4 and its sign by 8 form a bf16
 * whose value is the E4M3 value times 2^-120 (normal and subnormal codes alike); one bf16x2
 * multiply by 2^(e - 127 + 120) (E8M0 byte e: exponent field e + 120) applies the bias
 * correction and the block scale at once.  Both factors are powers of two, so the result is
 * exact (needs e <= 134, i.e. scales <= 2^7). */
#ifndef TPS_KERNELS_W8_DEVICE_CUH
#define TPS_KERNELS_W8_DEVICE_CUH
#include <stdint.h>
#include <cuda_bf16.h>

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void mma_bf16(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ uint32_t bf16x2_mul(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
/* bf16x2 multiplier 2^(e-7) for an E8M0 byte e */
__device__ __forceinline__ uint32_t e8m0_mul(uint32_t e) {
  uint32_t b = (e + 120u) << 7;
  return b | (b << 16);
}
/* Four E4M3 bytes [b0 b1 b2 b3] -> {bf16x2(b0,b1), bf16x2(b2,b3)} times 2^(e-127), mul = e8m0_mul(e).
 * With the k64-permuted layout (tps_w8_prepare) these are k = {2q, 2q+1} and {2q+8, 2q+9}. */
__device__ __forceinline__ void dequant4(uint32_t w, uint32_t mul, uint32_t out[2]) {
  uint32_t lo = __byte_perm(w, 0u, 0x4140); /* [b0, 0, b1, 0] */
  uint32_t hi = __byte_perm(w, 0u, 0x4342); /* [b2, 0, b3, 0] */
  lo = ((lo & 0x007F007Fu) << 4) | ((lo & 0x00800080u) << 8);
  hi = ((hi & 0x007F007Fu) << 4) | ((hi & 0x00800080u) << 8);
  out[0] = bf16x2_mul(lo, mul);
  out[1] = bf16x2_mul(hi, mul);
}
/* One word of the SM90 records (tps_w8_rec_encode4 of bytes [b0 b1 b2 b3]) -> the same two
 * bf16x2 as dequant4: four integer operations instead of seven (the bytes were permuted on
 * the host so that b0, b1 already sit in their bf16 places and b2, b3 are one shift away) */
__device__ __forceinline__ void w8_decode4(uint32_t e, uint32_t mul, uint32_t out[2]) {
  const uint32_t lo = e & 0x87F087F0u;
  const uint32_t hi = ((e << 4) & 0x80F080F0u) | ((e >> 4) & 0x07000700u);
  out[0] = bf16x2_mul(lo, mul);
  out[1] = bf16x2_mul(hi, mul);
}
#endif

/* w8quant.h: FP8 E4M3 and E8M0 (UE8M0) encodings and the W8A16 weight layouts, host C.
 *
 * E4M3 (OCP FP8, "fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7F and
 * 0xFF are NaN; largest finite 448 = 1.75 * 2^8; subnormals m/8 * 2^-6 (smallest 2^-9).
 * E8M0: one unsigned exponent byte e, value 2^(e-127); 0xFF is NaN.
 *
 * Weight layouts (W is N x K, K contiguous):
 *  - 1x32 (what our kernels take, "MXFP8"): scale s[n][k/32], one per row and 32 columns;
 *  - 32x32 (the checkpoint, weight_block_size [32,32], scale_fmt ue8m0): one scale per 32x32
 *    block, sb[n/32][k/32].  Expanding 32x32 to 1x32 repeats each block's scale on its 32 rows;
 *    the dequantized weights are identical.
 * Quantization of a block: scale = 2^ceil(log2(amax / 448)) (the smallest power of two that
 * keeps every |w|/scale <= 448), q = round-to-nearest-even E4M3(w / scale); an all-zero block
 * gets scale 2^0. */
#ifndef TPS_KERNELS_W8QUANT_H
#define TPS_KERNELS_W8QUANT_H
#include <stdint.h>
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Nearest E4M3 (ties to even), saturating to +-448; NaN in -> 0x7F. */
uint8_t tps_e4m3_from_float(float x);
/* Exact value of an E4M3 byte (NaN for 0x7F/0xFF). */
double tps_e4m3_to_double(uint8_t b);
/* 2^(e-127) (NaN for 0xFF). */
double tps_e8m0_to_double(uint8_t e);
/* E8M0 byte of a power of two x (a checkpoint stores UE8M0 scales as float32 powers of
 * two). 0 ok, -1 when x is not a positive power of two in [2^-127, 2^127]. */
int tps_e8m0_from_pow2(double x, uint8_t *e);

/* Quantize w[N x K] with 1x32 blocks: q[N x K], s[N x K/32]. K multiple of 32. */
void tps_w8_quantize_1x32(const float *w, int n, int k, uint8_t *q, uint8_t *s);
/* Quantize with 32x32 blocks (the checkpoint layout): q[N x K], sb[ceil(N/32) x K/32]. */
void tps_w8_quantize_32x32(const float *w, int n, int k, uint8_t *q, uint8_t *sb);
/* The loader: expand 32x32 block scales sb[ceil(N/32) x K/32] to 1x32 scales s[N x K/32]. */
void tps_w8_expand_32x32(const uint8_t *sb, int n, int k, uint8_t *s);
/* Dequantize q with 1x32 scales s to double w[N x K] (the exact weights of the GEMM). */
void tps_w8_dequant_1x32(const uint8_t *q, const uint8_t *s, int n, int k, double *w);

/* The "bf16 placement" of an E4M3 byte b: the 16 bits (b & 0x80) << 8 | (b & 0x7F) << 4, a
 * bf16 whose value is the E4M3 value times 2^-120 (normal and subnormal codes alike); the
 * kernels multiply it by a power of two to apply the bias and the block scale, exactly. */
uint16_t tps_e4m3_bf16_place(uint8_t b);
/* The SM90 kernels' record encoding of four E4M3 bytes b[0..3] (one 32-bit word, the order
 * of the k64-permuted layout): a bit permutation chosen so that two bf16x2 words of
 * placements come out of it in four integer operations (w8_device.cuh, w8_decode4):
 *   lo = E & 0x87F087F0                                  = {place(b0), place(b1)}
 *   hi = ((E << 4) & 0x80F080F0) | ((E >> 4) & 0x07000700) = {place(b2), place(b3)}
 * (the plain bytes need seven: two byte permutes and five shifts and masks per pair). */
uint32_t tps_w8_rec_encode4(const uint8_t b[4]);

/* The W8A16 kernels' developer overrides (environment variables TPS_W8_*, README "GEMM
 * paths"): 0 when every TPS_W8_* variable set is a known one with an allowed value; else -1
 * and a one-line reason in msg (an unknown name, such as TPS_W8_PULL, or a value not
 * allowed, such as TPS_W8_SUM=2: no such form), so that a sweep never runs the default
 * while its table records the override.  Checked by bench gemm before any GPU work and
 * when a W8A16 plan is created. */
enum { TPS_W8_MMA_VARIANTS = 9 }; /* mma.sync tile variants (TPS_W8_VARIANT, TPS_W8_LARGE) */
int tps_w8_check_env(char *msg, size_t msgsz);
/* The names of those overrides, i = 0, 1, ...; NULL past the last (bench gemm records the
 * ones that are set). */
const char *tps_w8_override_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif

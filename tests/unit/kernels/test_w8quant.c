/* test_w8quant.c: E4M3 / E8M0 encodings and the W8A16 weight layouts (kernels/gemm/w8quant.h),
 * no GPU needed.  Expected values are worked out by hand in the comments. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/gemm/w8quant.h"

#include "tests/unit/expect.h"

int main(void) {
  /* decode: 0x38 = 0 0111 000 -> 2^(7-7) = 1; 0x7E = 0 1111 110 -> 1.75 * 2^8 = 448;
   * 0x01 = subnormal 1/8 * 2^-6 = 2^-9; 0xC0 = 1 1000 000 -> -2^(8-7) = -2; 0x7F NaN */
  EXPECT(tps_e4m3_to_double(0x00) == 0.0, "0x00");
  EXPECT(tps_e4m3_to_double(0x38) == 1.0, "0x38");
  EXPECT(tps_e4m3_to_double(0x7E) == 448.0, "0x7E");
  EXPECT(tps_e4m3_to_double(0x01) == ldexp(1, -9), "0x01");
  EXPECT(tps_e4m3_to_double(0x08) == ldexp(1, -6), "0x08 smallest normal 2^-6");
  EXPECT(tps_e4m3_to_double(0xC0) == -2.0, "0xC0");
  EXPECT(isnan(tps_e4m3_to_double(0x7F)) && isnan(tps_e4m3_to_double(0xFF)), "NaN codes");
  /* encode: exact values, saturation, ties to even: 1.0625 lies halfway between 1.0 (0x38,
   * even) and 1.125 (0x39) -> 0x38; 1.1875 halfway between 1.125 (0x39) and 1.25 (0x3A) -> 0x3A;
   * 2^-10 halfway between 0 and 2^-9 -> 0x00; 1.07 is nearer 1.125 -> 0x39. */
  EXPECT(tps_e4m3_from_float(1.0f) == 0x38, "1.0");
  EXPECT(tps_e4m3_from_float(448.0f) == 0x7E, "448");
  EXPECT(tps_e4m3_from_float(1000.0f) == 0x7E, "saturate");
  EXPECT(tps_e4m3_from_float(-1000.0f) == 0xFE, "saturate negative");
  EXPECT(tps_e4m3_from_float(-2.0f) == 0xC0, "-2");
  EXPECT(tps_e4m3_from_float(1.0625f) == 0x38, "tie to even down");
  EXPECT(tps_e4m3_from_float(1.1875f) == 0x3A, "tie to even up");
  EXPECT(tps_e4m3_from_float(0.0009765625f) == 0x00, "2^-10 tie to zero");
  EXPECT(tps_e4m3_from_float(1.07f) == 0x39, "nearest");
  /* every finite code round-trips */
  for (int b = 0; b < 256; b++) {
    if ((b & 0x7F) == 0x7F) continue;
    uint8_t r = tps_e4m3_from_float((float)tps_e4m3_to_double((uint8_t)b));
    EXPECT(r == b, "round trip of 0x%02X gave 0x%02X", b, r);
  }
  /* E8M0 */
  uint8_t e = 0;
  EXPECT(tps_e8m0_to_double(127) == 1.0 && tps_e8m0_to_double(119) == ldexp(1, -8), "e8m0 decode");
  EXPECT(tps_e8m0_from_pow2(1.0, &e) == 0 && e == 127, "e8m0 1.0");
  EXPECT(tps_e8m0_from_pow2(0.25, &e) == 0 && e == 125, "e8m0 0.25");
  EXPECT(tps_e8m0_from_pow2(3.0, &e) == -1, "e8m0 rejects 3");
  EXPECT(tps_e8m0_from_pow2(0.0, &e) == -1, "e8m0 rejects 0");

  /* 1x32 block quantization: amax 1.0 -> scale 2^ceil(log2(1/448)) = 2^ceil(-8.81) = 2^-8,
   * byte 127-8 = 119; 1.0 / 2^-8 = 256 = 2^8 -> E4M3 exponent field 15, mantissa 0: 0x78.
   * Second block amax 1.75 = 448 * 2^-8 exactly -> also 2^-8 (448 fits); third block amax
   * 1.76 -> needs 2^-7 (byte 120).  Fourth block all zero -> scale 2^0 (127). */
  {
    float w[128] = {0};
    w[0] = 1.0f; w[1] = -0.5f;
    w[32] = 1.75f; w[33] = 0.001f;
    w[64] = 1.76f;
    uint8_t q[128], s[4];
    tps_w8_quantize_1x32(w, 1, 128, q, s);
    EXPECT(s[0] == 119 && s[1] == 119 && s[2] == 120 && s[3] == 127, "scales %u %u %u %u", s[0], s[1], s[2], s[3]);
    EXPECT(q[0] == 0x78, "q[0] = 0x%02X", q[0]);
    EXPECT(q[1] == 0xF0, "q[1] = 0x%02X (-128 = -2^7: 1 1110 000)", q[1]);
    EXPECT(q[32] == 0x7E, "q[32] = 0x%02X (448)", q[32]);
    /* 1.76 / 2^-7 = 225.28 -> between 224 (1.75*2^7, 0x76) and 240 (0x77): nearer 224 */
    EXPECT(q[64] == 0x76, "q[64] = 0x%02X", q[64]);
    double d[128];
    tps_w8_dequant_1x32(q, s, 1, 128, d);
    EXPECT(d[0] == 1.0 && d[1] == -0.5 && d[32] == 1.75 && d[64] == 1.75, "dequant");
  }
  /* the loader: 32x32 block scales of a 64 x 64 matrix, sb = [[10, 11], [12, 13]] ->
   * rows 0..31 get (10, 11), rows 32..63 get (12, 13) */
  {
    uint8_t sb[4] = {10, 11, 12, 13}, s[64 * 2];
    tps_w8_expand_32x32(sb, 64, 64, s);
    int ok = 1;
    for (int r = 0; r < 64; r++) ok &= s[r * 2] == (r < 32 ? 10 : 12) && s[r * 2 + 1] == (r < 32 ? 11 : 13);
    EXPECT(ok, "expand 32x32");
  }
  /* 32x32 quantization + expansion reproduces w within E4M3 rounding: |deq - w| <= 2^-4 |w|
   * (half an ulp of a 3-bit mantissa) + 2^-10 * scale (half the smallest subnormal step) */
  {
    enum { N = 96, K = 128 };
    static float w[N * K];
    static uint8_t q[N * K], sb[3 * 4], s[N * 4];
    static double d[N * K];
    srand(7);
    for (int i = 0; i < N * K; i++) w[i] = (float)((rand() / (double)RAND_MAX - 0.5) * ldexp(1, i / K % 5));
    tps_w8_quantize_32x32(w, N, K, q, sb);
    tps_w8_expand_32x32(sb, N, K, s);
    tps_w8_dequant_1x32(q, s, N, K, d);
    int bad = 0;
    for (int i = 0; i < N * K; i++) {
      double sc = tps_e8m0_to_double(s[(i / K) * 4 + (i % K) / 32]);
      if (fabs(d[i] - w[i]) > ldexp(fabs(w[i]), -4) + ldexp(sc, -10)) bad++;
    }
    EXPECT(bad == 0, "%d elements outside the E4M3 rounding bound", bad);
  }
  /* bf16 placement: a bf16 (the top half of a float) worth the E4M3 value times 2^-120, for
   * every finite code (0x38 = 1.0 -> 0x0380: exponent field 7, 2^(7-127)) */
  EXPECT(tps_e4m3_bf16_place(0x38) == 0x0380, "place(0x38) = 0x%04X", tps_e4m3_bf16_place(0x38));
  EXPECT(tps_e4m3_bf16_place(0xC0) == 0x8400, "place(0xC0) = 0x%04X", tps_e4m3_bf16_place(0xC0));
  for (int b = 0; b < 256; b++) {
    if ((b & 0x7F) == 0x7F) continue;
    const uint32_t bits = (uint32_t)tps_e4m3_bf16_place((uint8_t)b) << 16;
    float f;
    memcpy(&f, &bits, 4);
    EXPECT((double)f == ldexp(tps_e4m3_to_double((uint8_t)b), -120), "place(0x%02X) is %g", b, (double)f);
  }
  /* record encoding: the device's four operations (w8_device.cuh) give back the placements
   * of all four bytes, for every byte value in every position (others random) */
  {
    int bad = 0;
    srand(11);
    for (int pos = 0; pos < 4; pos++)
      for (int v = 0; v < 256; v++)
        for (int rep = 0; rep < 8; rep++) {
          uint8_t b[4];
          for (int i = 0; i < 4; i++) b[i] = (uint8_t)(rand() & 0xFF);
          b[pos] = (uint8_t)v;
          const uint32_t e = tps_w8_rec_encode4(b);
          const uint32_t lo = e & 0x87F087F0u, hi = ((e << 4) & 0x80F080F0u) | ((e >> 4) & 0x07000700u);
          const uint32_t want_lo = tps_e4m3_bf16_place(b[0]) | (uint32_t)tps_e4m3_bf16_place(b[1]) << 16;
          const uint32_t want_hi = tps_e4m3_bf16_place(b[2]) | (uint32_t)tps_e4m3_bf16_place(b[3]) << 16;
          bad += lo != want_lo || hi != want_hi;
        }
    EXPECT(bad == 0, "record encoding: %d of 8192 words decode wrongly", bad);
    /* and it is a permutation of the 32 bits: distinct words stay distinct (each single bit
     * of the input maps to a single bit) */
    uint32_t seen = 0;
    for (int bit = 0; bit < 32; bit++) {
      uint8_t b[4] = {0, 0, 0, 0};
      b[bit / 8] = (uint8_t)(1u << (bit % 8));
      const uint32_t e = tps_w8_rec_encode4(b);
      EXPECT(e && !(e & (e - 1)) && !(e & seen), "input bit %d -> 0x%08X", bit, e);
      seen |= e;
    }
    EXPECT(seen == 0xFFFFFFFFu, "the encoding covers 0x%08X", seen);
  }
  /* developer overrides: known names with allowed values pass, the rest fail with a reason
   * that names the variable */
  {
    static const char *const all[] = {"TPS_W8_KERNEL", "TPS_W8_BT", "TPS_W8_SBT", "TPS_W8_SUM", "TPS_W8_RECBULK",
                                      "TPS_W8_STREAM_MAX", "TPS_W8_VARIANT", "TPS_W8_LARGE", "TPS_W8_SPLITK", "TPS_W8_SPLIT",
                                      "TPS_W8_PP", "TPS_W8_SKG", "TPS_W8_S256", "TPS_W8_SMALL_SPLIT", "TPS_W8_HEAD", "TPS_W8_SK256", "TPS_W8_SKDP",
                                      "TPS_W8_SCL", "TPS_W8_SROWS", "TPS_W8_SDEEP", "TPS_W8_SK2FIT", "TPS_W8_SKEVEN", "TPS_W8_SKRS", "TPS_W8_SKTAIL", "TPS_W8_PULL"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) unsetenv(all[i]);
    /* the name list bench gemm records: the twenty-four known ones, in order, then NULL */
    for (size_t i = 0; i < 24; i++)
      EXPECT(tps_w8_override_name(i) && !strcmp(tps_w8_override_name(i), all[i]), "override name %zu", i);
    EXPECT(tps_w8_override_name(24) == NULL, "override names end after twenty-four");
    char why[256] = "";
    EXPECT(tps_w8_check_env(why, sizeof why) == 0, "no override: %s", why);
    static const struct { const char *name, *value; int ok; const char *says; } cases[] = {
        {"TPS_W8_SUM", "4", 1, ""},          {"TPS_W8_SUM", "2", 0, "TPS_W8_SUM=2: not one of 0|1|4"},
        {"TPS_W8_SUM", "", 0, "TPS_W8_SUM="}, {"TPS_W8_KERNEL", "wgmma", 1, ""},
        {"TPS_W8_KERNEL", "cublas", 0, "TPS_W8_KERNEL=cublas"}, {"TPS_W8_SBT", "48", 1, ""},
        {"TPS_W8_SBT", "40", 0, "TPS_W8_SBT=40"}, {"TPS_W8_SPLITK", "8", 1, ""},
        {"TPS_W8_SPLITK", "65", 0, "not an integer in 0..64"}, {"TPS_W8_SPLITK", "8x", 0, "TPS_W8_SPLITK=8x"},
        {"TPS_W8_VARIANT", "8", 1, ""},      {"TPS_W8_VARIANT", "9", 0, "TPS_W8_VARIANT=9"},
        {"TPS_W8_KERNEL", "split", 1, ""},   {"TPS_W8_SPLIT", "4", 1, ""},
        {"TPS_W8_SPLIT", "3", 0, "TPS_W8_SPLIT=3"}, {"TPS_W8_PP", "1", 1, ""}, {"TPS_W8_PP", "2", 0, "TPS_W8_PP=2"},
        {"TPS_W8_KERNEL", "sk", 1, ""},      {"TPS_W8_SKG", "7", 1, ""}, {"TPS_W8_SKG", "-1", 0, "TPS_W8_SKG=-1"},
        {"TPS_W8_S256", "1", 1, ""},         {"TPS_W8_HEAD", "256", 1, ""}, {"TPS_W8_HEAD", "-256", 0, "TPS_W8_HEAD=-256"},         {"TPS_W8_SMALL_SPLIT", "2", 0, "TPS_W8_SMALL_SPLIT=2"},
        {"TPS_W8_SK256", "0", 1, ""},        {"TPS_W8_SK256", "2", 0, "TPS_W8_SK256=2: not one of 0|1"},
        {"TPS_W8_SKDP", "1", 1, ""},         {"TPS_W8_SKDP", "-1", 0, "TPS_W8_SKDP=-1"},
        {"TPS_W8_SCL", "4", 1, ""},          {"TPS_W8_SCL", "2", 0, "TPS_W8_SCL=2: not one of 4|8"},
        {"TPS_W8_SROWS", "192", 1, ""},      {"TPS_W8_SROWS", "256", 0, "TPS_W8_SROWS=256: not one of 128|192"},
        {"TPS_W8_SDEEP", "1", 1, ""},
        {"TPS_W8_SK2FIT", "1", 1, ""},        {"TPS_W8_SK2FIT", "2", 0, "TPS_W8_SK2FIT=2: not one of 0|1"},
        {"TPS_W8_SKEVEN", "0", 1, ""},        {"TPS_W8_SKEVEN", "3", 0, "TPS_W8_SKEVEN=3: not one of 0|1"},
        {"TPS_W8_SKRS", "1", 1, ""},          {"TPS_W8_SKRS", "3", 0, "TPS_W8_SKRS=3: not one of 0|1|2"},
        {"TPS_W8_SKTAIL", "16", 1, ""},       {"TPS_W8_SKTAIL", "65", 0, "TPS_W8_SKTAIL=65"},
        {"TPS_W8_SKTAIL", "64", 0, "TPS_W8_SKTAIL=64"},
        {"TPS_W8_PULL", "1", 0, "TPS_W8_PULL: unknown W8A16 override (known: TPS_W8_KERNEL TPS_W8_BT"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      setenv(cases[i].name, cases[i].value, 1);
      why[0] = 0;
      const int rc = tps_w8_check_env(why, sizeof why);
      EXPECT((rc == 0) == cases[i].ok && strstr(why, cases[i].says), "%s=%s: rc %d, '%s'", cases[i].name, cases[i].value, rc, why);
      unsetenv(cases[i].name);
    }
  }
  printf("%s\n", fails ? "test_w8quant: FAILED" : "test_w8quant: ok");
  return fails ? 1 : 0;
}

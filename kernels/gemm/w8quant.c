/* w8quant.c: see w8quant.h.  Pure C, no CUDA: also built into the GPU-free unit test. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "kernels/gemm/w8quant.h"
#include <math.h>

double tps_e4m3_to_double(uint8_t b) {
  int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, e - 7);
  return sign ? -v : v;
}

uint8_t tps_e4m3_from_float(float xf) {
  double x = xf;
  if (isnan(x)) return 0x7F;
  uint8_t sign = signbit(x) ? 0x80 : 0;
  double a = fabs(x);
  /* Walk the 127 non-negative finite codes (0x00..0x7E, increasing in value): find the
   * nearest, ties to the even code (even mantissa = even byte).  Clear, and fast enough
   * for weight preparation (called once per weight element). */
  if (a >= 448.0) return sign | 0x7E;
  int lo = 0, hi = 0x7E;
  while (hi - lo > 1) { /* binary search: largest code with value <= a */
    int mid = (lo + hi) / 2;
    if (tps_e4m3_to_double((uint8_t)mid) <= a) lo = mid; else hi = mid;
  }
  double vlo = tps_e4m3_to_double((uint8_t)lo), vhi = tps_e4m3_to_double((uint8_t)hi);
  int code;
  if (a - vlo < vhi - a) code = lo;
  else if (a - vlo > vhi - a) code = hi;
  else code = (lo & 1) ? hi : lo;
  if (a == vlo) code = lo;
  return (uint8_t)(sign | code);
}

double tps_e8m0_to_double(uint8_t e) { return e == 0xFF ? NAN : ldexp(1.0, (int)e - 127); }

int tps_e8m0_from_pow2(double x, uint8_t *e) {
  if (!(x > 0) || !isfinite(x)) return -1;
  int ex;
  double f = frexp(x, &ex); /* x = f * 2^ex, f in [0.5, 1) */
  if (f != 0.5) return -1;
  int b = ex - 1 + 127;
  if (b < 0 || b > 254) return -1;
  *e = (uint8_t)b;
  return 0;
}

/* Scale exponent byte for a block with largest magnitude amax. */
static uint8_t block_scale(double amax) {
  if (!(amax > 0)) return 127;
  int e = (int)ceil(log2(amax / 448.0));
  /* guard log2 rounding: make sure amax / 2^e <= 448 and amax / 2^(e-1) > 448 */
  while (ldexp(amax, -e) > 448.0) e++;
  while (ldexp(amax, -(e - 1)) <= 448.0) e--;
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return (uint8_t)(e + 127);
}

static void quantize_blocks(const float *w, int n, int k, int rows_per_block, uint8_t *q,
                            uint8_t *sc) {
  int kb = k / 32;
  for (int r0 = 0; r0 < n; r0 += rows_per_block) {
    int r1 = r0 + rows_per_block < n ? r0 + rows_per_block : n;
    for (int b = 0; b < kb; b++) {
      double amax = 0;
      for (int r = r0; r < r1; r++)
        for (int c = b * 32; c < b * 32 + 32; c++) {
          double a = fabs((double)w[(size_t)r * k + c]);
          if (a > amax) amax = a;
        }
      uint8_t e = block_scale(amax);
      double inv = ldexp(1.0, 127 - (int)e);
      for (int r = r0; r < r1; r++)
        for (int c = b * 32; c < b * 32 + 32; c++)
          q[(size_t)r * k + c] = tps_e4m3_from_float((float)(w[(size_t)r * k + c] * inv));
      sc[(size_t)(r0 / rows_per_block) * kb + b] = e;
    }
  }
}

void tps_w8_quantize_1x32(const float *w, int n, int k, uint8_t *q, uint8_t *s) {
  quantize_blocks(w, n, k, 1, q, s);
}

void tps_w8_quantize_32x32(const float *w, int n, int k, uint8_t *q, uint8_t *sb) {
  quantize_blocks(w, n, k, 32, q, sb);
}

void tps_w8_expand_32x32(const uint8_t *sb, int n, int k, uint8_t *s) {
  int kb = k / 32;
  for (int r = 0; r < n; r++)
    for (int b = 0; b < kb; b++) s[(size_t)r * kb + b] = sb[(size_t)(r / 32) * kb + b];
}

void tps_w8_dequant_1x32(const uint8_t *q, const uint8_t *s, int n, int k, double *w) {
  int kb = k / 32;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < k; c++)
      w[(size_t)r * k + c] =
          tps_e4m3_to_double(q[(size_t)r * k + c]) * tps_e8m0_to_double(s[(size_t)r * kb + c / 32]);
}

uint16_t tps_e4m3_bf16_place(uint8_t b) { return (uint16_t)(((b & 0x80u) << 8) | ((b & 0x7Fu) << 4)); }

uint32_t tps_w8_rec_encode4(const uint8_t b[4]) {
  /* lo: b0, b1 already in their bf16 places (bits 15, 10..4 and 31, 26..20) */
  uint32_t e = (uint32_t)tps_e4m3_bf16_place(b[0]) | (uint32_t)tps_e4m3_bf16_place(b[1]) << 16;
  /* hi, in the 16 bits left: b2's sign at 11, exponent bits e3..e1 at 14..12, e0 m2 m1 m0 at
   * 3..0 (E << 4 moves the sign to 15 and the low nibble to 7..4; E >> 4 moves 14..12 to
   * 10..8); b3 likewise 16 bits up */
  for (int i = 0; i < 2; i++) {
    const uint32_t v = b[2 + i], sh = 16u * (uint32_t)i;
    e |= ((v >> 7) & 1u) << (11 + sh) | ((v >> 4) & 7u) << (12 + sh) | (v & 0xFu) << sh;
  }
  return e;
}

/* allowed values: a '|' list of words, or an integer range */
typedef struct { const char *name, *words; long lo, hi; } w8_override;
static const w8_override w8_overrides[] = {
    {"TPS_W8_KERNEL", "stream|wgmma|split|sk|mma", 0, 0},
    {"TPS_W8_BT", "64|128|256", 0, 0},
    {"TPS_W8_SBT", "16|32|48|64|128", 0, 0},
    {"TPS_W8_SUM", "0|1|4", 0, 0},
    {"TPS_W8_RECBULK", "0|1", 0, 0},
    {"TPS_W8_STREAM_MAX", NULL, 0, 1L << 30},
    {"TPS_W8_VARIANT", NULL, 0, TPS_W8_MMA_VARIANTS - 1},
    {"TPS_W8_LARGE", NULL, 0, TPS_W8_MMA_VARIANTS - 1},
    {"TPS_W8_SPLITK", NULL, 0, 64},
    {"TPS_W8_SPLIT", "1|2|4|8", 0, 0},
    {"TPS_W8_PP", "0|1", 0, 0},
    {"TPS_W8_SKG", NULL, 0, 1 << 16},
    {"TPS_W8_S256", "0|1", 0, 0},
    {"TPS_W8_SMALL_SPLIT", "0|1", 0, 0},
    {"TPS_W8_HEAD", NULL, 0, 1L << 30},
    {"TPS_W8_SK256", "0|1", 0, 0},
    {"TPS_W8_SKDP", NULL, 0, 1L << 20},
    {"TPS_W8_SCL", "4|8", 0, 0},
    {"TPS_W8_SROWS", "128|192", 0, 0},
    {"TPS_W8_SDEEP", "0|1", 0, 0},
    {"TPS_W8_SK2FIT", "0|1", 0, 0},
    {"TPS_W8_SKEVEN", "0|1", 0, 0},
    {"TPS_W8_SKRS", "0|1|2", 0, 0},
    {"TPS_W8_SKTAIL", NULL, 0, 63}, /* 6 bits of the configuration id (gemm_w8a16.cu) */
};

static int w8_word_in(const char *v, const char *words) {
  const size_t n = strlen(v);
  for (const char *w = words; *w;) {
    const char *e = strchr(w, '|');
    const size_t len = e ? (size_t)(e - w) : strlen(w);
    if (len == n && !strncmp(w, v, n)) return 1;
    if (!e) break;
    w = e + 1;
  }
  return 0;
}

extern char **environ;

#define W8_NOVERRIDES (sizeof w8_overrides / sizeof *w8_overrides)

const char *tps_w8_override_name(size_t i) { return i < W8_NOVERRIDES ? w8_overrides[i].name : NULL; }

int tps_w8_check_env(char *msg, size_t msgsz) {
  for (char **ep = environ; ep && *ep; ep++) {
    if (strncmp(*ep, "TPS_W8_", 7)) continue;
    const char *eq = strchr(*ep, '=');
    if (!eq) continue;
    const size_t nlen = (size_t)(eq - *ep);
    const char *v = eq + 1;
    const w8_override *o = NULL;
    for (size_t i = 0; i < W8_NOVERRIDES; i++)
      if (strlen(w8_overrides[i].name) == nlen && !strncmp(w8_overrides[i].name, *ep, nlen)) o = &w8_overrides[i];
    if (!o) {
      int at = snprintf(msg, msgsz, "%.*s: unknown W8A16 override (known:", (int)nlen, *ep);
      for (size_t i = 0; i < W8_NOVERRIDES && at > 0 && (size_t)at < msgsz; i++)
        at += snprintf(msg + at, msgsz - (size_t)at, " %s", w8_overrides[i].name);
      if (at > 0 && (size_t)at < msgsz) snprintf(msg + at, msgsz - (size_t)at, ")");
      return -1;
    }
    if (o->words) {
      if (!w8_word_in(v, o->words)) {
        snprintf(msg, msgsz, "%s=%s: not one of %s", o->name, v, o->words);
        return -1;
      }
    } else {
      char *end;
      const long x = strtol(v, &end, 10);
      if (!*v || *end || x < o->lo || x > o->hi) {
        snprintf(msg, msgsz, "%s=%s: not an integer in %ld..%ld", o->name, v, o->lo, o->hi);
        return -1;
      }
    }
  }
  return 0;
}

/* test_gemm_gpu.c: the GEMM paths against a float64 CPU reference on a GPU (kernels/gemm/gemm.h,
 * kernels/bench/harness.h).  Exits 77 (skip) when no GPU can be opened.
 *
 *  1. W8A16 weights covering every finite E4M3 code (incl. subnormals and -0) with varied
 *     E8M0 scales: each fast kernel (stream, mma, wgmma with 64/128/256-token tiles) and the
 *     reference kernel vs the CPU reference, M = 1, 3, 17, 64, 100, 257, 1000 (odd M,
 *     partial tiles, split-K and not), then fast vs reference kernel on the same inputs;
 *     1b. the same on N = 320, K = 1024 (a partial 128-row block);
 *  2. the 32x32 checkpoint loader: quantize 32x32, expand, run: equals the CPU reference;
 *  3. dense-bf16 and native-fp8 (float weights) vs the CPU reference of their quantized data;
 *  4. split vs replicated, bitwise, where the w8a16 configuration is the same (T=12 in two
 *     shards of 6: stream kernel; T=1024 in two of 512: wgmma tile 128
 *     on SM90, mma split-K elsewhere);
 *  5. the harness: 5 samples, 0 < min <= median <= max.
 *  6. fp8-block (W 128x128, X 1x128 block scales) vs the CPU reference of its dequantized
 *     data, block magnitudes varied so that a scale read from the wrong block shows: N = 256,
 *     K = 512 and N = 320 (a partial 128-row block), K = 640 (scale rows padded); the default
 *     form, TPS_FP8B_PAD=1 (padded) and =0 (exact shapes: run or SKIPPED); QUANT then MATMUL
 *     alone give the bits of one run;
 *  7. the shapes of issue 18 (5120x1024, 5120x512, 5120x32, 7168x2112) for dense-bf16,
 *     native-fp8, fp8-block and w8a16 (each W8A16 kernel forced), reference on sampled rows,
 *     every output checked for being written (finite).
 *  0. (before the GPU is opened) the paths with TPS_PATH_F_BENCH are those with a kernel.
 * Inputs: X values (j - 127) / 128 for j uniform in 0..254 (sections 6, 7: times 2^e per row
 * and 128 columns): exact in bf16 (7 fraction bits), so the CPU reference sees exactly the
 * GPU's inputs.  Outputs poisoned (0xFF) before runs.  Where cuBLASLt has no algorithm for
 * fp8-block (TPS_SKIP), the case prints SKIPPED and the count is printed at the end. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "kernels/gemm/gemm.h"  /* not model/latency/gemm.h */
#include "kernels/bench/harness.h"
#include "kernels/gemm/w8quant.h"
#include "kernels/common/gemm_ref.h"

#include "tests/unit/expect.h"
#define OK(call) do { if ((call) != 0) { fails++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #call); return 1; } } while (0)

static uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); } /* exact inputs only */
static double bf2d(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }

enum { MAXM = 4096 };
static uint16_t *hx, *hy, *hy2;
static void *dx, *dy, *dy2;

static void make_x(int m, int k, double *xd) {
  for (size_t i = 0; i < (size_t)m * k; i++) {
    float v = (float)((rand() % 255) - 127) / 128.0f;
    hx[i] = f2bf(v);
    if (xd) xd[i] = v;
  }
}

/* run g on m rows of fresh X; compare with X W^T in double (w: N x K exact weights). */
static int check(tps_gemm *g, int m, const double *w, double tol, const char *what) {
  int n = tps_gemm_n(g), k = tps_gemm_k(g);
  double *xd = malloc((size_t)m * k * sizeof *xd);
  make_x(m, k, NULL);
  if (cudaMemcpy(dx, hx, (size_t)m * k * 2, cudaMemcpyHostToDevice) != cudaSuccess) return 1;
  cudaMemset(dy, 0xFF, (size_t)m * n * 2);
  OK(tps_gemm_run(g, dx, dy, m, 0));
  OK(tps_gemm_activations(g, dx, 0, m, xd)); /* synchronizes */
  OK(cudaMemcpy(hy, dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  size_t nan = 0;
  double *yref = malloc((size_t)m * n * sizeof *yref);
  if (!xd || !yref) { free(xd); free(yref); fails++; printf("FAIL %s:%d: out of memory\n", __FILE__, __LINE__); return 1; }
  tps_gemm_ref(xd, (size_t)m, w, (size_t)n, (size_t)k, yref); /* the float64 reference */
  for (int r = 0; r < m; r++)
    for (int c = 0; c < n; c++) {
      double ref = yref[(size_t)r * n + c];
      double got = bf2d(hy[(size_t)r * n + c]);
      if (!isfinite(got)) nan++;
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  double rel = sqrt(num / den);
  char desc[160];
  uint64_t id;
  if (tps_gemm_config(g, m, desc, sizeof desc, &id)) snprintf(desc, sizeof desc, "?");
  printf("%-10s %-22s M=%-5d rel_err %.3g non-finite %zu  [%s]\n", tps_path_name(tps_gemm_get_path(g)), what, m, rel, nan, desc);
  EXPECT(nan == 0 && rel <= tol, "%s %s M=%d: rel_err %g (tol %g), %zu non-finite", tps_path_name(tps_gemm_get_path(g)), what, m, rel, tol, nan);
  free(xd);
  free(yref);
  return 0;
}

/* shards of c rows of the same X, bitwise equal to the T-row result */
/* the split kernel's token tiles (TPS_W8_BT) */
static const char *const spt[] = {"64", "128", "256"};

static int split_bitwise(tps_gemm *g, int t, int tp) {
  int n = tps_gemm_n(g), k = tps_gemm_k(g), c = (t + tp - 1) / tp;
  make_x(t, k, NULL);
  OK(cudaMemcpy(dx, hx, (size_t)t * k * 2, cudaMemcpyHostToDevice));
  cudaMemset(dy, 0xFF, (size_t)t * n * 2);
  cudaMemset(dy2, 0xFF, (size_t)t * n * 2);
  OK(tps_gemm_run(g, dx, dy, t, 0));
  for (int r = 0; r * c < t; r++) {
    int rows = t - r * c < c ? t - r * c : c;
    OK(tps_gemm_run(g, (const uint16_t *)dx + (size_t)r * c * k, (uint16_t *)dy2 + (size_t)r * c * n, rows, 0));
  }
  OK(cudaDeviceSynchronize());
  OK(cudaMemcpy(hy, dy, (size_t)t * n * 2, cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(hy2, dy2, (size_t)t * n * 2, cudaMemcpyDeviceToHost));
  char d1[160], d2[160];
  uint64_t i1, i2;
  OK(tps_gemm_config(g, t, d1, sizeof d1, &i1));
  OK(tps_gemm_config(g, c, d2, sizeof d2, &i2));
  EXPECT(i1 == i2, "T=%d and %d rows expected to share a configuration: %s / %s", t, c, d1, d2);
  size_t diff = 0, nan = 0;
  for (size_t i = 0; i < (size_t)t * n; i++) { diff += hy[i] != hy2[i]; nan += !isfinite(bf2d(hy[i])); }
  printf("split T=%d TP=%d: %zu of %zu elements differ (%s)\n", t, tp, diff, (size_t)t * n, d1);
  EXPECT(diff == 0 && nan == 0, "split T=%d TP=%d not bitwise identical: %zu differ, %zu non-finite", t, tp, diff, nan);
  return 0;
}

/* force a W8A16 kernel ("" = the default choice) and a wgmma tile ("" = by M) */
static void set_kernel(const char *kind, const char *bt) {
  if (*kind) setenv("TPS_W8_KERNEL", kind, 1); else unsetenv("TPS_W8_KERNEL");
  if (*bt) setenv("TPS_W8_BT", bt, 1); else unsetenv("TPS_W8_BT");
}

/* The 256-token stream-K form (set_kernel("sk", "256") first) forced onto `grid` blocks with `dp` whole waves first
 * and an even tail of `tail` pieces ("": none), its cut tiles summed by reduce-scatter (rs 1) or by their owner (0):
 * m rows checked against the float64 reference `runs` times (a counter left set by a launch fails the next) */
static void check_cut(tps_gemm *g, const double *w, int m, const char *grid, const char *dp, const char *tail, int rs, int runs,
                      const char *what) {
  setenv("TPS_W8_SKG", grid, 1);
  setenv("TPS_W8_SKDP", dp, 1);
  if (*tail) setenv("TPS_W8_SKTAIL", tail, 1); else unsetenv("TPS_W8_SKTAIL");
  setenv("TPS_W8_SKRS", rs ? "1" : "0", 1);
  char lab[160];
  for (int i = 0; i < runs; i++) {
    snprintf(lab, sizeof lab, "%s%s", what, i ? " again" : "");
    check(g, m, w, 1e-2, lab);
  }
  unsetenv("TPS_W8_SKG");
  unsetenv("TPS_W8_SKDP");
  unsetenv("TPS_W8_SKTAIL");
  unsetenv("TPS_W8_SKRS");
}

/* the fast kernel (default choice) against the reference kernel on the same m rows:
 * max relative difference (to the largest |reference| output) at most 2^-7 (bf16 rounding of
 * two fp32 sums taken in different orders) */
static int fast_vs_ref(tps_gemm *fast, tps_gemm *ref, int m) {
  int n = tps_gemm_n(fast), k = tps_gemm_k(fast);
  make_x(m, k, NULL);
  OK(cudaMemcpy(dx, hx, (size_t)m * k * 2, cudaMemcpyHostToDevice));
  cudaMemset(dy, 0xFF, (size_t)m * n * 2);
  cudaMemset(dy2, 0xFF, (size_t)m * n * 2);
  OK(tps_gemm_run(fast, dx, dy, m, 0));
  OK(tps_gemm_run(ref, dx, dy2, m, 0));
  OK(cudaDeviceSynchronize());
  OK(cudaMemcpy(hy, dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(hy2, dy2, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  double big = 0, dmax = 0;
  size_t nan = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) {
    double a = bf2d(hy[i]), b = bf2d(hy2[i]);
    if (!isfinite(a) || !isfinite(b)) { nan++; continue; }
    if (fabs(b) > big) big = fabs(b);
    if (fabs(a - b) > dmax) dmax = fabs(a - b);
  }
  printf("fast vs reference kernel M=%d: max |diff| %.3g, max |ref| %.3g, non-finite %zu\n", m, dmax, big, nan);
  EXPECT(nan == 0 && big > 0 && dmax <= big / 128, "fast vs reference M=%d: max |diff| %g of max %g, %zu non-finite", m, dmax, big, nan);
  return 0;
}

/* two forms of one kernel that must give the same bits: kernel `kind` forced, environment
 * variable `var` set to "0" then to `alt` (partial sums pushed vs pulled or through L2;
 * records by tensor map vs by bulk copy) */
static int same_bits2(tps_gemm *g, int m, const char *kind, const char *var, const char *base, const char *alt);
static int same_bits(tps_gemm *g, int m, const char *kind, const char *var, const char *alt) {
  return same_bits2(g, m, kind, var, "0", alt);
}
/* the same with `var` set to `base` first */
static int same_bits2(tps_gemm *g, int m, const char *kind, const char *var, const char *base, const char *alt) {
  int n = tps_gemm_n(g), k = tps_gemm_k(g);
  make_x(m, k, NULL);
  OK(cudaMemcpy(dx, hx, (size_t)m * k * 2, cudaMemcpyHostToDevice));
  cudaMemset(dy, 0xFF, (size_t)m * n * 2);
  cudaMemset(dy2, 0xFF, (size_t)m * n * 2);
  setenv("TPS_W8_KERNEL", kind, 1);
  setenv(var, base, 1);
  OK(tps_gemm_run(g, dx, dy, m, 0));
  setenv(var, alt, 1);
  OK(tps_gemm_run(g, dx, dy2, m, 0));
  unsetenv(var);
  unsetenv("TPS_W8_KERNEL");
  OK(cudaDeviceSynchronize());
  OK(cudaMemcpy(hy, dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(hy2, dy2, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  size_t diff = 0, nan = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) { diff += hy[i] != hy2[i]; nan += !isfinite(bf2d(hy[i])); }
  printf("%s %s=%s vs %s, M=%d: %zu of %zu elements differ, %zu non-finite\n", kind, var, base, alt, m, diff, (size_t)m * n, nan);
  EXPECT(diff == 0 && nan == 0, "%s %s=%s vs %s M=%d: %zu differ, %zu non-finite", kind, var, base, alt, m, diff, nan);
  return 0;
}

/* a W8A16 plan of n x k random finite E4M3 codes (uniform over the 254) with E8M0 scales in
 * s_lo .. s_lo + s_span - 1; *w: the exact weights (float64, caller frees); NULL on failure */
static tps_gemm *random_w8(int n, int k, int s_lo, int s_span, double **w) {
  uint8_t *q = malloc((size_t)n * k), *sc = malloc((size_t)n * k / 32);
  *w = malloc((size_t)n * k * sizeof **w);
  for (size_t i = 0; i < (size_t)n * k; i++) {
    int c = rand() % 254;
    q[i] = (uint8_t)(c < 127 ? c : c + 1);
  }
  for (size_t i = 0; i < (size_t)n * k / 32; i++) sc[i] = (uint8_t)(s_lo + rand() % s_span);
  tps_w8_dequant_1x32(q, sc, n, k, *w);
  tps_gemm *g = NULL;
  if (tps_gemm_create_w8(&g, TPS_PATH_W8A16, n, k, MAXM, q, sc)) {
    fails++;
    printf("FAIL %s:%d: W8A16 plan %d x %d\n", __FILE__, __LINE__, n, k);
    g = NULL;
  }
  free(q);
  free(sc);
  return g;
}

/* the 192-row stream form (TPS_W8_SROWS=192, issue 28): 192-row blocks both even and odd (N 576:
 * records 0 + half of 1, half of 1 + 2, 3 + half of 4; N 320: the last block's rows past N) and
 * the shape it is for (K 7168, N 2112: 14 chunks a block through 8..10 stages, so the ring
 * refills), each stream token tile forced (TPS_W8_SBT 16..64) at M 1, 37 (launches of the tile
 * and a partial one) and 64 against the float64 reference; then the same bits as the 128-row
 * form (the same k order and rank order of the sums) */
static int check_s192(int quick) {
  static const struct { int n, k; } sh[] = {{576, 3072}, {320, 1024}, {2112, 7168}};
  static const char *const sb[] = {"16", "32", "48", "64"};
  static const int mm[] = {1, 37, 64};
  for (size_t a = 0; a < sizeof sh / sizeof *sh; a++) {
    double *wv;
    tps_gemm *gg = random_w8(sh[a].n, sh[a].k, 112, 10, &wv);
    if (!gg) return 1;
    char desc[160];
    uint64_t id;
    /* unset, the rows by waves: N 576 (5 clusters of 8) fits in one wave of the 128-row form on any SM90 part;
     * N 2112 (17) does not on a 132-SM H100 or H200 (15 clusters of 8 at once), where its 11 of 192 rows do */
    {
      int sms = 0;
      OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      OK(tps_gemm_config(gg, 1, desc, sizeof desc, &id));
      const char *want = sh[a].n == 576 ? "128 weight rows" : sh[a].n == 2112 && sms == 132 ? "192 weight rows" : NULL;
      printf("stream N=%d, rows unforced: %s\n", sh[a].n, desc);
      EXPECT(!want || strstr(desc, want) != NULL, "N=%d on %d SMs: the rows by waves should give '%s': %s", sh[a].n, sms, want, desc);
    }
    set_kernel("stream", "");
    setenv("TPS_W8_SROWS", "192", 1);
    OK(tps_gemm_config(gg, 1, desc, sizeof desc, &id));
    EXPECT(strstr(desc, "192 weight rows") != NULL, "N=%d: TPS_W8_SROWS=192 runs the 192-row form: %s", sh[a].n, desc);
    char what[64];
    snprintf(what, sizeof what, "stream 192, N=%d K=%d", sh[a].n, sh[a].k);
    for (size_t b = 0; b < 4; b++) {
      setenv("TPS_W8_SBT", sb[b], 1);
      for (size_t i = 0; i < 3; i++)
        if (!quick || i != 1) check(gg, mm[i], wv, 1e-2, what);
    }
    /* the 10-stage rings the deeper ones replaced (TPS_W8_SDEEP=0): 16 and 32 tokens */
    setenv("TPS_W8_SDEEP", "0", 1);
    for (size_t b = 0; b < 2; b++) {
      setenv("TPS_W8_SBT", sb[b], 1);
      check(gg, 37, wv, 1e-2, what);
    }
    unsetenv("TPS_W8_SDEEP");
    unsetenv("TPS_W8_SBT");
    same_bits2(gg, 40, "stream", "TPS_W8_SROWS", "128", "192");
    if (!quick) same_bits2(gg, 5, "stream", "TPS_W8_SROWS", "128", "192");
    unsetenv("TPS_W8_SROWS");
    set_kernel("", "");
    tps_gemm_destroy(gg);
    free(wv);
  }
  return 0;
}

static int enqueue(void *ctx, cudaStream_t s) { return tps_gemm_run((tps_gemm *)ctx, dx, dy, 64, s); }

/* ------------------------------------------------------------------ sections 6 and 7 */
/* their own buffers (K up to 7168, N up to 2112) */
typedef struct {
  uint16_t *hx, *hy, *hy2;
  void *dx, *dy;
} bufs;
static int nskipped = 0; /* fp8-block cases cuBLASLt refused (TPS_SKIP) */

static int bufs_alloc(bufs *b, size_t xelems, size_t yelems) {
  b->hx = malloc(xelems * 2);
  b->hy = malloc(yelems * 2);
  b->hy2 = malloc(yelems * 2);
  if (!b->hx || !b->hy || !b->hy2) return 1;
  if (cudaMalloc(&b->dx, xelems * 2) != cudaSuccess || cudaMalloc(&b->dy, yelems * 2) != cudaSuccess) return 1;
  return 0;
}

static void bufs_free(bufs *b) {
  free(b->hx); free(b->hy); free(b->hy2);
  cudaFree(b->dx); cudaFree(b->dy);
}

/* float weights n x k: uniform in (-0.05, 0.05) times 2^e, e in -3..3 per 128x128 block and
 * in -1..0 per row and 32 columns, so that the block scales of every layout (per tensor, 1x32,
 * 128x128) differ; NULL when out of memory */
static float *block_weights(int n, int k) {
  const int nbk = (k + 127) / 128, nbn = (n + 127) / 128;
  float *w = malloc((size_t)n * k * sizeof *w);
  int *e = malloc((size_t)nbn * nbk * sizeof *e);
  if (!w || !e) { free(w); free(e); return NULL; }
  for (int i = 0; i < nbn * nbk; i++) e[i] = rand() % 7 - 3;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < k; c++) {
      const int e32 = -(int)(((unsigned)r * 31u + (unsigned)(c / 32) * 17u) % 2u);
      const double u = (rand() / (double)RAND_MAX - 0.5) * 0.1;
      w[(size_t)r * k + c] = (float)ldexp(u, e[(r / 128) * nbk + c / 128] + e32);
    }
  free(e);
  return w;
}

/* X (m x k, bf16 bits into h): (j - 127) / 128 times 2^e, e in -4..4 per row and 128 columns
 * (exact in bf16) */
static void make_x_blocks(uint16_t *h, int m, int k) {
  for (int r = 0; r < m; r++)
    for (int c0 = 0; c0 < k; c0 += 128) {
      const int e = rand() % 9 - 4;
      for (int c = c0; c < c0 + 128 && c < k; c++)
        h[(size_t)r * k + c] = f2bf((float)ldexp((double)((rand() % 255) - 127) / 128.0, e));
    }
}

/* Run g on m rows of fresh X (outputs poisoned): every output finite (written), and the rows
 * checked against X W^T in double (w: the exact weights) with the activations as g used them:
 * all rows for m <= 16, else the first, the last and 6 random ones. */
static int check_rows(tps_gemm *g, int m, const double *w, const char *what, bufs *b) {
  const int n = tps_gemm_n(g), k = tps_gemm_k(g);
  const char *path = tps_path_name(tps_gemm_get_path(g));
  make_x_blocks(b->hx, m, k);
  OK(cudaMemcpy(b->dx, b->hx, (size_t)m * k * 2, cudaMemcpyHostToDevice));
  OK(cudaMemset(b->dy, 0xFF, (size_t)m * n * 2));
  const int rc = tps_gemm_run(g, b->dx, b->dy, m, 0);
  if (rc == TPS_SKIP) {
    printf("%-10s %-30s M=%-5d SKIPPED (cuBLASLt has no algorithm: the line above)\n", path, what, m);
    nskipped++;
    return 0;
  }
  OK(rc);
  OK(cudaMemcpy(b->hy, b->dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  size_t nan = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) nan += !isfinite(bf2d(b->hy[i]));
  int rows[16], nr = 0;
  if (m <= 16) for (int r = 0; r < m; r++) rows[nr++] = r;
  else {
    rows[nr++] = 0;
    rows[nr++] = m - 1;
    while (nr < 8) rows[nr++] = 1 + rand() % (m - 2);
  }
  double *xd = malloc((size_t)k * sizeof *xd), *yref = malloc((size_t)n * sizeof *yref), num = 0, den = 0;
  if (!xd || !yref) { free(xd); free(yref); fails++; printf("FAIL %s:%d: out of memory\n", __FILE__, __LINE__); return 1; }
  for (int i = 0; i < nr; i++) {
    const int r = rows[i];
    OK(tps_gemm_activations(g, b->dx, r, 1, xd));
    tps_gemm_ref(xd, 1, w, (size_t)n, (size_t)k, yref); /* the float64 reference row */
    for (int c = 0; c < n; c++) {
      const double ref = yref[c];
      const double d = bf2d(b->hy[(size_t)r * n + c]) - ref;
      num += d * d;
      den += ref * ref;
    }
  }
  free(xd);
  free(yref);
  const double rel = sqrt(num / den);
  char desc[160];
  uint64_t id;
  if (tps_gemm_config(g, m, desc, sizeof desc, &id)) snprintf(desc, sizeof desc, "?");
  printf("%-10s %-30s M=%-5d rel_err %.3g (%d rows) non-finite %zu  [%s]\n", path, what, m, rel, nr, nan, desc);
  EXPECT(nan == 0 && rel <= 1e-2, "%s %s M=%d: rel_err %g (tol 1e-2), %zu non-finite", path, what, m, rel, nan);
  return 0;
}

/* TPS_GEMM_PART_QUANT then TPS_GEMM_PART_MATMUL alone give the bits of one whole run */
static int parts_equal(tps_gemm *g, int m, const char *what, bufs *b) {
  const int n = tps_gemm_n(g), k = tps_gemm_k(g);
  make_x_blocks(b->hx, m, k);
  OK(cudaMemcpy(b->dx, b->hx, (size_t)m * k * 2, cudaMemcpyHostToDevice));
  OK(cudaMemset(b->dy, 0xFF, (size_t)m * n * 2));
  const int rc = tps_gemm_run_part(g, b->dx, b->dy, m, 0, TPS_GEMM_PART_ALL);
  if (rc == TPS_SKIP) { nskipped++; return 0; }
  OK(rc);
  OK(cudaMemcpy(b->hy, b->dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  OK(cudaMemset(b->dy, 0xFF, (size_t)m * n * 2));
  OK(tps_gemm_run_part(g, b->dx, b->dy, m, 0, TPS_GEMM_PART_QUANT));
  OK(tps_gemm_run_part(g, b->dx, b->dy, m, 0, TPS_GEMM_PART_MATMUL));
  OK(cudaMemcpy(b->hy2, b->dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  size_t diff = 0, nan = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) { diff += b->hy[i] != b->hy2[i]; nan += !isfinite(bf2d(b->hy[i])); }
  printf("%-10s %-30s M=%-5d QUANT then MATMUL vs one run: %zu of %zu elements differ, %zu non-finite\n",
         tps_path_name(tps_gemm_get_path(g)), what, m, diff, (size_t)m * n, nan);
  EXPECT(diff == 0 && nan == 0, "%s parts M=%d: %zu differ, %zu non-finite", what, m, diff, nan);
  return 0;
}

/* A plan from float weights and its exact weights into w; NULL when skipped (said) or failed
 * (counted) */
static tps_gemm *plan_or_skip(tps_path_id p, int n, int k, int maxm, const float *wf, double *w, const char *what) {
  tps_gemm *g = NULL;
  const int rc = tps_gemm_create(&g, p, n, k, maxm, wf);
  if (rc == TPS_SKIP) {
    printf("%-10s %-30s SKIPPED (cuBLASLt has no algorithm: the line above)\n", tps_path_name(p), what);
    nskipped++;
    return NULL;
  }
  if (rc != TPS_OK || tps_gemm_weights(g, w) != TPS_OK) {
    fails++;
    printf("FAIL %s:%d: %s plan %s\n", __FILE__, __LINE__, tps_path_name(p), what);
    tps_gemm_destroy(g);
    return NULL;
  }
  return g;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* line by line into a pipe: a run cut short under compute-sanitizer shows how far it got */
  /* 0. (no GPU needed) every path the model marks benchable has a kernel (its tps_gemm_ops
   * registered), and no other path has one */
  for (int p = 0; p < TPS_NPATHS; p++) {
    const int bench = (tps_path_get(p)->flags & TPS_PATH_F_BENCH) != 0;
    EXPECT((tps_gemm_traits_of(p) != NULL) == bench, "path %s: kernel %s", tps_path_name(p), bench ? "missing" : "unexpected");
  }
  if (fails) return 1;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("test_gemm_gpu: no GPU can be opened: skipped\n");
    return 77;
  }
  enum { N = 256, K = 512 };
  srand(12345);
  hx = malloc((size_t)MAXM * K * 2);
  hy = malloc((size_t)MAXM * N * 2);
  hy2 = malloc((size_t)MAXM * N * 2);
  OK(cudaMalloc(&dx, (size_t)MAXM * K * 2));
  OK(cudaMalloc(&dy, (size_t)MAXM * N * 2));
  OK(cudaMalloc(&dy2, (size_t)MAXM * N * 2));
  uint8_t *q = malloc((size_t)N * K), *s = malloc((size_t)N * K / 32);
  double *w = malloc((size_t)N * K * sizeof *w);
  /* 1. every finite code: codes 0x00..0x7E and 0x80..0xFE (254), cycled with a stride that
   * is coprime with 254 so every row sees a different sequence; scales 2^-14 .. 2^-2. */
  for (size_t i = 0; i < (size_t)N * K; i++) {
    int c = (int)((i * 37 + i / K) % 254);
    q[i] = (uint8_t)(c < 127 ? c : c + 1);
  }
  for (size_t i = 0; i < (size_t)N * K / 32; i++) s[i] = (uint8_t)(113 + rand() % 13);
  tps_w8_dequant_1x32(q, s, N, K, w);
  tps_gemm *fast, *ref;
  OK(tps_gemm_create_w8(&fast, TPS_PATH_W8A16, N, K, MAXM, q, s));
  OK(tps_gemm_create_w8(&ref, TPS_PATH_W8A16_REF, N, K, MAXM, q, s));
  /* TPS_TEST_QUICK (for compute-sanitizer): fewer M, no harness.  Every W8A16 kernel is
   * forced in turn (TPS_W8_KERNEL; "wgmma" falls back to the default where it cannot run),
   * the wgmma tiles through TPS_W8_BT; the stream kernel forced past 128 rows runs in
   * launches of 128. */
  int quick = getenv("TPS_TEST_QUICK") != NULL;
  /* TPS_TEST_SPLIT_ONLY (for compute-sanitizer on the split kernel alone): its tiles and
   * splits on this shape and on K = 3072 (ring refills), then exit; =64, =128 or =256: that
   * token tile alone */
  /* TPS_TEST_SK_ONLY (compute-sanitizer on the stream-K kernel alone): its three tiles on the
   * default grid and on grids of 1, 3 and 7 blocks (tiles over several blocks, blocks over
   * several tiles; with 256 tokens, whole waves first at 1000 rows on 1 and 3 blocks), on this
   * shape and on K = 3072, then exit; =64, =128 or =256: that token tile alone; with
   * TPS_TEST_QUICK (racecheck's time) the default grid and 3 blocks, 100 and 1000 rows */
  /* TPS_TEST_SK_ONLY=rs: the 256-token form's even grids summed by reduce-scatter alone (1000 rows on 16 and 32
   * blocks, 2 and 4 pieces a tile; 300 rows on 32, 8 pieces), then exit */
  if (getenv("TPS_TEST_SK_ONLY") && !strcmp(getenv("TPS_TEST_SK_ONLY"), "rs")) {
    static const struct { int m; const char *grid; } ev[] = {{1000, "16"}, {1000, "32"}, {300, "32"}};
    set_kernel("sk", "256");
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++) check_cut(fast, w, ev[i].m, ev[i].grid, "0", "", 1, 1, "sk only, even grid, reduce-scatter");
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess, "device error: %s", cudaGetErrorString(e));
    printf("%s\n", fails ? "test_gemm_gpu (reduce-scatter only): FAILED" : "test_gemm_gpu (reduce-scatter only): ok");
    return fails ? 1 : 0;
  }
  if (getenv("TPS_TEST_SK_ONLY")) {
    static const int m0[] = {1, 64, 100, 257, 1000}, mq[] = {100, 1000};
    static const char *const g0[] = {"", "3", "1", "7"};
    const char *only = getenv("TPS_TEST_SK_ONLY");
    double *w3;
    tps_gemm *g3 = random_w8(256, 3072, 112, 10, &w3);
    if (!g3) return 1;
    for (size_t a = 0; a < 3; a++)
      for (size_t b = 0; b < (quick ? 2 : 4); b++) {
        if (strcmp(only, "64") && strcmp(only, "128") && strcmp(only, "256") ? 0 : strcmp(only, spt[a])) continue;
        set_kernel("sk", spt[a]);
        if (*g0[b]) setenv("TPS_W8_SKG", g0[b], 1); else unsetenv("TPS_W8_SKG");
        if (quick) for (size_t i = 0; i < 2; i++) check(fast, mq[i], w, 1e-2, "sk only");
        else for (size_t i = 0; i < (a == 2 ? 5 : 4); i++) check(fast, m0[i], w, 1e-2, "sk only");
        check(g3, m0[2], w3, 1e-2, "sk only, K=3072");
      }
    unsetenv("TPS_W8_SKG");
    set_kernel("", "");
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess, "device error: %s", cudaGetErrorString(e));
    printf("%s\n", fails ? "test_gemm_gpu (sk only): FAILED" : "test_gemm_gpu (sk only): ok");
    return fails ? 1 : 0;
  }
  /* TPS_TEST_S192_ONLY (compute-sanitizer on the 192-row stream form alone): check_s192, then exit */
  if (getenv("TPS_TEST_S192_ONLY")) {
    check_s192(quick);
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess, "device error: %s", cudaGetErrorString(e));
    printf("%s\n", fails ? "test_gemm_gpu (s192 only): FAILED" : "test_gemm_gpu (s192 only): ok");
    return fails ? 1 : 0;
  }
  if (getenv("TPS_TEST_SPLIT_ONLY")) {
    static const int m0[] = {1, 64, 100, 257};
    static const char *const sp0[] = {"1", "2", "4", "8"};
    double *w3;
    tps_gemm *g3 = random_w8(256, 3072, 112, 10, &w3);
    if (!g3) return 1;
    const char *only = getenv("TPS_TEST_SPLIT_ONLY"); /* "64", "128" or "256": that tile alone (racecheck's time) */
    /* a part of the set, so that racecheck's slow forms run as separate processes:
     * TPS_TEST_SPLIT_S=S that split alone (1, 2, 4 or 8), TPS_TEST_SPLIT_M=M that M alone
     * (1, 64, 100 or 257; 3072 = the K=3072 case alone) */
    const char *sonly = getenv("TPS_TEST_SPLIT_S"), *monly = getenv("TPS_TEST_SPLIT_M");
    const int mpick = monly ? atoi(monly) : 0;
    for (size_t a = 0; a < 3; a++)
      for (size_t b = 0; b < 4; b++) {
        if (strcmp(only, "64") && strcmp(only, "128") && strcmp(only, "256") ? 0 : strcmp(only, spt[a])) continue;
        if (sonly && strcmp(sonly, sp0[b])) continue;
        set_kernel("split", spt[a]);
        setenv("TPS_W8_SPLIT", sp0[b], 1);
        for (size_t i = 0; i < 4; i++)
          if (!mpick || mpick == m0[i]) check(fast, m0[i], w, 1e-2, "split only");
        if (!mpick || mpick == 3072) check(g3, m0[2], w3, 1e-2, "split only, K=3072");
      }
    unsetenv("TPS_W8_SPLIT");
    set_kernel("", "");
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess, "device error: %s", cudaGetErrorString(e));
    printf("%s\n", fails ? "test_gemm_gpu (split only): FAILED" : "test_gemm_gpu (split only): ok");
    return fails ? 1 : 0;
  }
  static const int ms[] = {1, 17, 64, 100, 257, 3, 1000};
  size_t nms = quick ? 5 : sizeof ms / sizeof *ms;
  static const char *const kinds[][2] = {{"", ""}, {"stream", ""}, {"mma", ""}, {"wgmma", "64"}, {"wgmma", "128"}, {"wgmma", "256"}, {"split", "64"}, {"split", "128"}, {"sk", "64"}, {"sk", "128"}, {"sk", "256"}};
  for (size_t kk = 0; kk < sizeof kinds / sizeof *kinds; kk++) {
    set_kernel(kinds[kk][0], kinds[kk][1]);
    for (size_t i = 0; i < nms; i++) check(fast, ms[i], w, 1e-2, "all E4M3 codes");
  }
  /* whole waves, then the rest (TPS_W8_HEAD forces the head this shape's two row blocks never
   * reach by the model): 256 rows by the wgmma pass, then 1 (stream), 44 (stream) and 188 rows
   * (split or stream-K) by their own pick; 512 + 188; 512 + 512 + 232 (the rest splits again),
   * against the float64 reference */
  set_kernel("", "");
  setenv("TPS_W8_HEAD", "256", 1);
  {
    static const int mh[] = {257, 300, 444};
    for (size_t i = 0; i < sizeof mh / sizeof *mh; i++) check(fast, mh[i], w, 1e-2, "head 256 + rest");
  }
  setenv("TPS_W8_HEAD", "512", 1);
  check(fast, 700, w, 1e-2, "head 512 + 188");
  check(fast, 1256, w, 1e-2, "head 512 + 512 + 232");
  unsetenv("TPS_W8_HEAD");
  /* every stream-kernel form: token tiles 16..64 (TPS_W8_SBT) x partial sums pushed, pulled
   * or by st.async (TPS_W8_SUM=0|1|4) */
  static const char *const sbt[] = {"16", "32", "48", "64", "128"}, *const sum[] = {"0", "1", "4"};
  static const char *const sumname[] = {"E4M3 codes, push", "E4M3 codes, pull", "E4M3 codes, st.async"};
  set_kernel("stream", "");
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < 3; b++) {
      setenv("TPS_W8_SBT", sbt[a], 1);
      setenv("TPS_W8_SUM", sum[b], 1);
      for (size_t i = 0; i < (quick ? 3 : nms); i++) check(fast, ms[i], w, 1e-2, sumname[b]);
    }
  unsetenv("TPS_W8_SBT");
  unsetenv("TPS_W8_SUM");
  check_s192(quick);
  /* the split kernel (issue 28): token tiles 64, 128 and 256 x cluster split-K 1, 2, 4, 8 */
  static const char *const spl[] = {"1", "2", "4", "8"};
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 4; b++) {
      set_kernel("split", spt[a]);
      setenv("TPS_W8_SPLIT", spl[b], 1);
      for (size_t i = 0; i < nms; i++) check(fast, ms[i], w, 1e-2, "E4M3 codes, split kernel");
    }
  unsetenv("TPS_W8_SPLIT");
  /* the stream-K kernel (issue 28): tiles 64 and 128 on grids forced to 1 block (every tile
   * in one block), 3 and 7 (tiles spanning several blocks, owners adding 1..n partials) and
   * 50; then the same M twice on the default grid must give the same bits (the fix-up's
   * order is fixed, and the flags were cleared for the second launch) */
  static const char *const skg[] = {"1", "3", "7", "50"};
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 4; b++) {
      set_kernel("sk", spt[a]);
      setenv("TPS_W8_SKG", skg[b], 1);
      for (size_t i = 0; i < (quick ? 3 : nms); i++) check(fast, ms[i], w, 1e-2, "E4M3 codes, stream-K kernel");
    }
  /* the 256-token form's whole waves first (TPS_W8_SKDP: that many): 4096 rows = 32
   * tiles on 7 blocks (4 whole waves, 4 tiles shared), on 13 (1 wave, 19 shared), none forced
   * (all 32 shared over 7), 1000 rows on 3 blocks (2 waves, 2 tiles shared over 3) */
  set_kernel("sk", "256");
  {
    static const struct { const char *grid, *dp; int m; } dw[] = {{"7", "", 4096}, {"13", "", 4096}, {"7", "0", 4096}, {"3", "", 1000}, {"3", "1", 1000}};
    for (size_t i = 0; i < (quick ? 2 : sizeof dw / sizeof *dw); i++) {
      setenv("TPS_W8_SKG", dw[i].grid, 1);
      if (*dw[i].dp) setenv("TPS_W8_SKDP", dw[i].dp, 1); else unsetenv("TPS_W8_SKDP");
      check(fast, dw[i].m, w, 1e-2, "stream-K 256, waves first");
    }
    unsetenv("TPS_W8_SKDP");
  }
  /* even grids of the 256-token form (no whole waves, G = tiles x p: each block 1/p of one tile) with
   * both fix-ups (TPS_W8_SKRS 0: the owner adds the p - 1 partials; 1: reduce-scatter, each block adds
   * and stores 1/p of the tile): 1000 rows = 8 tiles on 16, 32, 64 blocks (p 2, 4, 8), 300 = 4 tiles on
   * 32 (p 8, a partial token tile), each run twice (the counters were zeroed for the second launch) */
  {
    static const struct { int m; const char *grid; } ev[] = {{1000, "16"}, {1000, "32"}, {1000, "64"}, {300, "32"}};
    for (int rs = 0; rs < 2; rs++)
      for (size_t i = 0; i < (quick ? 2 : sizeof ev / sizeof *ev); i++)
        check_cut(fast, w, ev[i].m, ev[i].grid, "0", "", rs, 2, rs ? "stream-K 256, even grid, reduce-scatter" : "stream-K 256, even grid, owner");
    /* an even tail (TPS_W8_SKTAIL = p) after whole waves: 4096 rows = 32 tiles on 13 blocks, 2 waves, the 6 left
     * in 2 pieces on 12 blocks (one idle), and on 7 blocks, 4 waves, the 4 left whole on 4 */
    static const struct { const char *grid, *dp, *p; } tl[] = {{"13", "2", "2"}, {"7", "4", "1"}};
    for (int rs = 0; rs < 2; rs++)
      for (size_t i = 0; i < sizeof tl / sizeof *tl; i++)
        check_cut(fast, w, 4096, tl[i].grid, tl[i].dp, tl[i].p, rs, 2, rs ? "stream-K 256, even tail, reduce-scatter" : "stream-K 256, even tail, owner");
  }
  unsetenv("TPS_W8_SKG");
  /* the default grid and every resident block forced (65536, capped) are one grid where the
   * even grids are off (TPS_W8_SKEVEN=0); with them, the 256-token form's default grid may be
   * an even one (tiles x p): forced to the grid the default names, the same bits again */
  setenv("TPS_W8_SKEVEN", "0", 1);
  setenv("TPS_W8_BT", "128", 1);
  same_bits(fast, 1000, "sk", "TPS_W8_SKG", "65536");
  same_bits(fast, 300, "sk", "TPS_W8_SKG", "65536");
  setenv("TPS_W8_BT", "256", 1);
  same_bits(fast, 1000, "sk", "TPS_W8_SKG", "65536");
  same_bits(fast, 300, "sk", "TPS_W8_SKG", "65536");
  unsetenv("TPS_W8_SKEVEN");
  for (int i = 0; i < 2; i++) {
    const int m = i ? 300 : 1000;
    char cfg[256], grid[32];
    const char *at = NULL;
    setenv("TPS_W8_KERNEL", "sk", 1);
    uint64_t id = 0;
    EXPECT(tps_gemm_config(fast, m, cfg, sizeof cfg, &id) == 0 && (at = strstr(cfg, "persistent grid of ")) != NULL,
           "sk 256 M=%d: no grid in '%s'", m, cfg);
    unsetenv("TPS_W8_KERNEL");
    if (!at) continue;
    snprintf(grid, sizeof grid, "%d", atoi(at + strlen("persistent grid of ")));
    same_bits(fast, m, "sk", "TPS_W8_SKG", grid);
  }
  set_kernel("", "");
  static const int sm[] = {5, 45, 64};
  for (size_t i = 0; i < 3; i++) {
    same_bits(fast, sm[i], "stream", "TPS_W8_SUM", "1");
    same_bits(fast, sm[i], "stream", "TPS_W8_SUM", "4");
  }
  /* records by plain bulk copy (TPS_W8_RECBULK=1): not in the quick mode, which
   * compute-sanitizer racecheck runs (it reports the bulk copy's writes as races) */
  if (!quick) {
    same_bits(fast, 7, "stream", "TPS_W8_RECBULK", "1");
    same_bits(fast, 300, "wgmma", "TPS_W8_RECBULK", "1");
  }
  set_kernel("", "");
  for (size_t i = 0; i < nms; i++) check(ref, ms[i], w, 1e-2, "all E4M3 codes");
  /* fast vs reference kernel, same inputs: the two must agree to bf16 rounding */
  fast_vs_ref(fast, ref, 200);
  /* 4. split bitwise (stream: 12 = 2 x 6, both 16-token tiles; wgmma tile 256: 4096 = 2 x
   * 2048; the split kernel forced to one tile and split: 512 = 2 x 256; by default 512 and
   * 1024 rows take different splits, whose sums differ in rounding) */
  split_bitwise(fast, 12, 2);
  if (!quick) split_bitwise(fast, 4096, 2);
  set_kernel("split", "128");
  setenv("TPS_W8_SPLIT", "2", 1);
  split_bitwise(fast, 512, 2);
  set_kernel("split", "256"); /* 512 = 2 x 256: one 256-token tile a shard, split 2 (partials in the stages) */
  split_bitwise(fast, 512, 2);
  unsetenv("TPS_W8_SPLIT");
  set_kernel("", "");
  /* 5. harness */
  if (!quick) {
    tps_harness *h;
    OK(tps_harness_create(&h, 0));
    tps_op op = {"w8a16 M=64", fast, enqueue, NULL};
    tps_timing t, te;
    const char *why;
    tps_timer tm = tps_harness_timer(h, &why);
    OK(tps_harness_time(h, &op, 1, 5, 1, &t, &te, NULL));
    printf("harness: w8a16 M=64: median %.2f us (min %.2f, max %.2f), timer %s%s; events: median %.2f us\n",
           t.median_us, t.min_us, t.max_us, tm == TPS_TIMER_SPAN ? "CUPTI span" : "events: ", why ? why : "",
           te.median_us);
    EXPECT(t.nsamples == 5 && t.min_us > 0 && t.min_us <= t.median_us && t.median_us <= t.max_us, "harness stats");
    EXPECT(te.nsamples == 5 && te.min_us > 0 && te.min_us <= te.median_us, "harness event stats");
    /* the kernel span lies inside the events' interval (0.5 us for the two clocks) */
    if (tm == TPS_TIMER_SPAN) EXPECT(t.median_us <= te.median_us + 0.5 && t.max_us <= te.max_us + 0.5, "span within events");
    else EXPECT(t.median_us == te.median_us, "event timer: time = event time");
    tps_harness_destroy(h);
  }
  tps_gemm_destroy(fast);
  tps_gemm_destroy(ref);
  /* 2. checkpoint layout through the loader */
  float *wf = malloc((size_t)N * K * sizeof *wf);
  for (size_t i = 0; i < (size_t)N * K; i++) wf[i] = (float)((rand() / (double)RAND_MAX - 0.5) * 0.1 * (1 + (i / K) % 7));
  uint8_t *sb = malloc((size_t)(N / 32) * (K / 32));
  tps_w8_quantize_32x32(wf, N, K, q, sb);
  tps_w8_expand_32x32(sb, N, K, s);
  tps_w8_dequant_1x32(q, s, N, K, w);
  OK(tps_gemm_create_w8(&fast, TPS_PATH_W8A16, N, K, MAXM, q, s));
  check(fast, 33, w, 1e-2, "32x32 checkpoint, expanded");
  tps_gemm_destroy(fast);
  /* 1b. a second shape: N = 320 (not a multiple of the 128-row blocks), K = 1024, every kernel */
  {
    double *w2;
    tps_gemm *g2 = random_w8(320, 1024, 110, 16, &w2);
    if (!g2) return 1;
    static const int m2[] = {1, 37, 200, 700};
    for (size_t kk = 0; kk < sizeof kinds / sizeof *kinds; kk++) {
      set_kernel(kinds[kk][0], kinds[kk][1]);
      for (size_t i = 0; i < (quick ? 2 : sizeof m2 / sizeof *m2); i++) check(g2, m2[i], w2, 1e-2, "N=320 K=1024");
    }
    /* the reduce-scatter fix-up where a tile's rows 64..127 are past N (one warpgroup idles): 700 rows =
     * 3 x 3 tiles on 36 blocks (p 4) */
    set_kernel("sk", "256");
    check_cut(g2, w2, 700, "36", "0", "", 1, 1, "N=320 K=1024 sk 256, even grid, reduce-scatter");
    set_kernel("", "");
    tps_gemm_destroy(g2);
    free(w2);
  }
  /* 1c. K = 3072: 48 chunks, 6 per split, so the stream kernel's 128-token tile (5-stage
   * ring) refills its stages while the 10-stage tiles keep every chunk resident; every
   * exchange form of the 128-token tile gives the same bits */
  {
    double *w3;
    tps_gemm *g3 = random_w8(256, 3072, 112, 10, &w3);
    if (!g3) return 1;
    static const int m3[] = {1, 65, 100, 128, 200};
    static const char *const sbt3[] = {"", "64", "128"};
    set_kernel("stream", "");
    for (size_t a = 0; a < 3; a++) {
      if (*sbt3[a]) setenv("TPS_W8_SBT", sbt3[a], 1); else unsetenv("TPS_W8_SBT");
      for (size_t i = 0; i < (quick ? 3 : sizeof m3 / sizeof *m3); i++) check(g3, m3[i], w3, 1e-2, "N=256 K=3072");
    }
    /* the split kernel: 48 chunks over 1, 2, 4, 8 blocks (ring refills, groups of 4 with a
     * partial last group at 6 per block) */
    unsetenv("TPS_W8_SBT");
    static const char *const spl3[] = {"1", "2", "4", "8"};
    for (size_t a = 0; a < 3; a++)
      for (size_t b = 0; b < 4; b++) {
        set_kernel("split", spt[a]);
        setenv("TPS_W8_SPLIT", spl3[b], 1);
        for (size_t i = 0; i < (quick ? 3 : sizeof m3 / sizeof *m3); i++) check(g3, m3[i], w3, 1e-2, "N=256 K=3072 split");
      }
    unsetenv("TPS_W8_SPLIT");
    /* the stream-K kernel: 48 chunks a tile, on grids of 5 and 13 blocks and the default */
    static const char *const skg3[] = {"5", "13", "0"};
    for (size_t a = 0; a < 3; a++)
      for (size_t b = 0; b < 3; b++) {
        set_kernel("sk", spt[a]);
        setenv("TPS_W8_SKG", skg3[b], 1);
        for (size_t i = 0; i < (quick ? 3 : sizeof m3 / sizeof *m3); i++) check(g3, m3[i], w3, 1e-2, "N=256 K=3072 sk");
      }
    unsetenv("TPS_W8_SKG");
    set_kernel("stream", "");
    setenv("TPS_W8_SBT", "128", 1);
    same_bits(g3, 100, "stream", "TPS_W8_SUM", "1");
    same_bits(g3, 100, "stream", "TPS_W8_SUM", "4");
    unsetenv("TPS_W8_SBT");
    set_kernel("", "");
    tps_gemm_destroy(g3);
    free(w3);
  }
  /* 3. cuBLASLt paths */
  static const tps_path_id lt_paths[] = {TPS_PATH_DENSE_BF16, TPS_PATH_NATIVE_FP8};
  for (size_t p = 0; p < sizeof lt_paths / sizeof *lt_paths; p++) {
    tps_gemm *g;
    OK(tps_gemm_create(&g, lt_paths[p], N, K, MAXM, wf));
    OK(tps_gemm_weights(g, w));
    check(g, 1, w, 1e-2, "float weights");
    check(g, 77, w, 1e-2, "float weights");
    if (!quick) check(g, 1000, w, 1e-2, "float weights");
    tps_gemm_destroy(g);
  }
  /* 6. fp8-block: each form on two shapes (the second: 2.5 row blocks, 5 K blocks) */
  {
    static const int fsh[2][2] = {{256, 512}, {320, 640}}; /* N, K */
    static const char *const pads[3] = {"", "1", "0"};
    static const int fm[] = {1, 77, 1000, 3, 64};
    bufs b;
    if (bufs_alloc(&b, (size_t)MAXM * 640, (size_t)MAXM * 320)) { fails++; printf("FAIL: buffers\n"); return 1; }
    for (int si = 0; si < 2; si++) {
      const int n = fsh[si][0], k = fsh[si][1];
      float *wb = block_weights(n, k);
      double *wd = malloc((size_t)n * k * sizeof *wd);
      if (!wb || !wd) { fails++; printf("FAIL: out of memory\n"); return 1; }
      for (int pv = 0; pv < 3; pv++) {
        char what[64];
        snprintf(what, sizeof what, "N=%d K=%d TPS_FP8B_PAD=%s", n, k, *pads[pv] ? pads[pv] : "unset");
        if (*pads[pv]) setenv("TPS_FP8B_PAD", pads[pv], 1); else unsetenv("TPS_FP8B_PAD");
        tps_gemm *g = plan_or_skip(TPS_PATH_FP8_BLOCK, n, k, MAXM, wb, wd, what);
        unsetenv("TPS_FP8B_PAD");
        if (!g) continue;
        for (size_t i = 0; i < (quick ? 2 : sizeof fm / sizeof *fm); i++) check_rows(g, fm[i], wd, what, &b);
        parts_equal(g, 77, what, &b);
        tps_gemm_destroy(g);
      }
      free(wb);
      free(wd);
    }
    bufs_free(&b);
  }
  /* 7. the shapes of issue 18: DeepSeek-V4.1's compressor (5120x1024, 5120x512) and indexer
   * (5120x32: N below one 64-wide tile), DeepSeek-V3's q_a + kv_a (7168x2112: a partial
   * 128-row block), K x N; every path, W8A16 with the default choice and each kernel forced */
  {
    static const int sh[4][2] = {{1024, 5120}, {512, 5120}, {32, 5120}, {2112, 7168}}; /* N, K */
    static const tps_path_id sp[] = {TPS_PATH_DENSE_BF16, TPS_PATH_NATIVE_FP8, TPS_PATH_FP8_BLOCK, TPS_PATH_W8A16};
    static const char *const w8k[] = {"", "stream", "wgmma", "split", "sk", "mma"};
    static const int sm7[] = {1, 61, 300};
    const int maxm = 300, nsm = quick ? 2 : 3;
    bufs b;
    if (bufs_alloc(&b, (size_t)maxm * 7168, (size_t)maxm * 2112)) { fails++; printf("FAIL: buffers\n"); return 1; }
    for (int si = 0; si < 4; si++) {
      const int n = sh[si][0], k = sh[si][1];
      float *wb = block_weights(n, k);
      double *wd = malloc((size_t)n * k * sizeof *wd);
      if (!wb || !wd) { fails++; printf("FAIL: out of memory\n"); return 1; }
      for (size_t p = 0; p < sizeof sp / sizeof *sp; p++) {
        char what[64];
        snprintf(what, sizeof what, "K=%d N=%d", k, n);
        tps_gemm *g = plan_or_skip(sp[p], n, k, maxm, wb, wd, what);
        if (!g) continue;
        const size_t nk = sp[p] == TPS_PATH_W8A16 ? sizeof w8k / sizeof *w8k : 1;
        for (size_t kk = 0; kk < nk; kk++) {
          set_kernel(w8k[kk], "");
          snprintf(what, sizeof what, "K=%d N=%d%s%s", k, n, *w8k[kk] ? " " : "", w8k[kk]);
          for (int i = 0; i < nsm; i++) check_rows(g, sm7[i], wd, what, &b);
        }
        set_kernel("", "");
        tps_gemm_destroy(g);
      }
      free(wb);
      free(wd);
    }
    bufs_free(&b);
  }
  if (nskipped) printf("test_gemm_gpu: %d fp8-block case(s) SKIPPED: cuBLASLt has no algorithm for them (lines above)\n", nskipped);
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT(e == cudaSuccess, "device error: %s", cudaGetErrorString(e));
  printf("%s\n", fails ? "test_gemm_gpu: FAILED" : "test_gemm_gpu: ok");
  return fails ? 1 : 0;
}

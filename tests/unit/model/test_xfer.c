/* test_xfer.c: transfer accuracy (model/predict/xfer.h) on numbers computed by hand in the
 * comments: the score (median, max, coverage), the hierarchy's answers and the targets. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/predict/xfer.h"
#include "model/predict/resolve.h"
#include "model/numeric/robust.h"
#include "model/latency/xgather.h"
#include "tests/unit/expect.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static tps_gpu gpu(const char *name, double hbm) {
  tps_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "%s", name);
  g.sms = 100;
  g.cc_major = 9;
  g.bf16_tflops = 100;
  g.fp8_tflops = 200;
  g.hbm_gbps = hbm;
  return g;
}

int main(void) {
  /* |rel| 0.10, 0.05, 0.10, 0 (the fifth point, pred -1, is not scored): sorted 0, 0.05, 0.1,
   * 0.1, median (0.05 + 0.1) / 2 = 0.075, max 0.1.  Inside: |log 1.1| = 0.0953 <= 0.1 yes;
   * |log 0.95| = 0.0513 > 0.04 no; |log 0.9| = 0.1054 > 0.1 no; |log 1| = 0 <= 0 yes: 2. */
  const double meas[5] = {100, 100, 200, 50, 10}, pred[5] = {110, 95, 180, 50, -1}, hw[5] = {0.1, 0.04, 0.1, 0.0, 1};
  tps_xfer_err e = tps_xfer_score(meas, pred, hw, 5);
  CHECK(e.n == 4, "scored %zu, want 4", e.n);
  CHECK(near(e.med_abs, 0.075, 1e-12) && near(e.max_abs, 0.1, 1e-12), "median %g max %g, want 0.075 0.1", e.med_abs, e.max_abs);
  CHECK(e.covered == 2 && e.nint == 4, "covered %zu of %zu, want 2 of 4", e.covered, e.nint);
  const double hw2[5] = {0.1, NAN, 0.1, -1, 1}; /* intervals at the first and third only: 1 of 2 */
  e = tps_xfer_score(meas, pred, hw2, 5);
  CHECK(e.n == 4 && e.nint == 2 && e.covered == 1, "partial intervals: %zu scored, %zu of %zu covered", e.n, e.covered, e.nint);
  e = tps_xfer_score(meas, pred, NULL, 3); /* 0.10, 0.05, 0.10: median 0.1; no interval */
  CHECK(e.n == 3 && near(e.med_abs, 0.1, 1e-12) && e.covered == 0 && e.nint == 0, "three points: %zu %g %zu", e.n, e.med_abs, e.covered);
  e = tps_xfer_score(meas, pred, hw, 0);
  CHECK(e.n == 0 && isnan(e.med_abs), "no points: %zu %g", e.n, e.med_abs);

  /* GEMM from a sibling: m 1, n = k = 1024, dense-bf16 streams (test_resolve.c: roofline
   * ratio 0.5 for twice the HBM); the path's learned fixed part 8 us (min(8, 20 / 2)), alpha
   * 1: 20 us on A -> 8 + 12 x 0.5 = 14 us on B; the interval TPS_Z90 x 0.066 (same SMs). */
  tps_gpu a = gpu("A", 1000), b = gpu("B", 2000);
  double h = 0;
  int sib = -1;
  double t = tps_xfer_gemm_answer(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, 20.0, 13.0, 0.3, &h, &sib);
  CHECK(near(t, 14.0, 1e-6) && sib == 1, "sibling GEMM %g us (from sibling %d), want 14", t, sib);
  CHECK(near(h, TPS_Z90 * 0.066, 1e-12), "sibling GEMM half-width %g, want %g", h, TPS_Z90 * 0.066);
  /* no sibling measurement at that point: the model's 13 us and its half-width 0.3 */
  t = tps_xfer_gemm_answer(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, NAN, 13.0, 0.3, &h, &sib);
  CHECK(t == 13.0 && h == 0.3 && sib == 0, "model GEMM %g %g %d", t, h, sib);
  t = tps_xfer_gemm_answer(NULL, &b, &tps_path_dense_bf16, 1, 1024, 1024, 20.0, 13.0, 0.3, &h, &sib);
  CHECK(t == 13.0 && sib == 0, "no sibling GPU: %g %d", t, sib);
  /* gather: the sibling's time as measured, half-width TPS_Z90 x 0.05 = 0.0822427 */
  t = tps_xfer_gather_answer(21.0, 30.0, 0.6, &h, &sib);
  CHECK(t == 21.0 && sib == 1 && near(h, 0.0822427, 1e-6), "sibling gather %g %g %d", t, h, sib);
  t = tps_xfer_gather_answer(0.0, 30.0, 0.6, &h, &sib);
  CHECK(t == 30.0 && h == 0.6 && sib == 0, "model gather %g %g %d", t, h, sib);

  /* targets: GEMM 8%, and within 1 point of copying a measured sibling */
  CHECK_TRUE(tps_xfer_gemm_met(0.08, NAN));
  CHECK_TRUE(!tps_xfer_gemm_met(0.081, NAN));
  CHECK_TRUE(tps_xfer_gemm_met(0.05, 0.045));  /* 5.0% vs copying 4.5%: 0.5 point worse */
  CHECK_TRUE(!tps_xfer_gemm_met(0.05, 0.035)); /* 1.5 points worse */
  CHECK_TRUE(!tps_xfer_gemm_met(NAN, NAN));
  CHECK_TRUE(tps_xfer_gather_met(0.10) && !tps_xfer_gather_met(0.1001) && !tps_xfer_gather_met(NAN));
  CHECK_TRUE(tps_xfer_cover_met(85, 100) && !tps_xfer_cover_met(84, 100) && !tps_xfer_cover_met(0, 0));
  /* fabric weights of a gather fit: A and B one NVLink4 fabric (18 links x 20.6), C another
   * (40.1): all in, 1/2, 1/2, 1; without B, 1, 0, 1; a PCIe GPU (no links) has no sibling */
  tps_gpu f[4] = {gpu("A", 1), gpu("B", 1), gpu("C", 1), gpu("P", 1)};
  for (int i = 0; i < 3; i++) {
    f[i].nvlink = 1;
    f[i].links = 18;
    f[i].link_gbps = 450;
    f[i].nccl_link_gbps = i == 2 ? 40.1 : 20.6;
    snprintf(f[i].fabric, sizeof f[i].fabric, "%s", i == 2 ? "nvlink5" : "nvlink4");
  }
  f[3].link_gbps = 32;
  snprintf(f[3].fabric, sizeof f[3].fabric, "pcie4");
  const tps_gpu *fg[4] = {&f[0], &f[1], &f[2], &f[3]};
  int use[4] = {1, 1, 1, 1};
  double w[4];
  tps_xga_fabric_weights(fg, use, 4, w);
  CHECK(w[0] == 0.5 && w[1] == 0.5 && w[2] == 1.0 && w[3] == 1.0, "weights %g %g %g %g, want 0.5 0.5 1 1", w[0], w[1], w[2], w[3]);
  use[1] = 0;
  tps_xga_fabric_weights(fg, use, 4, w);
  CHECK(w[0] == 1.0 && w[1] == 0.0 && w[2] == 1.0, "weights without B %g %g %g, want 1 0 1", w[0], w[1], w[2]);
  CHECK_TRUE(tps_xga_same_fabric(&f[0], &f[1]) && !tps_xga_same_fabric(&f[0], &f[2]) && !tps_xga_same_fabric(&f[0], &f[0]));

  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

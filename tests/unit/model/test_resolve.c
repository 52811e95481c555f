/* test_resolve.c: model/predict/resolve.h without files: the sibling rules and scaling
 * (expected values computed by hand in the comments), the monotone envelope, and which model
 * answers when nothing is loaded. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/predict/resolve.h"
#include "model/core/backend.h"
#include "tests/unit/expect.h"

static tps_gpu gpu(const char *name, int cc, double hbm, double bf16, int links, double nccl_link) {
  tps_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "%s", name);
  g.sms = 100;
  g.cc_major = cc;
  g.bf16_tflops = bf16;
  g.fp8_tflops = 2 * bf16;
  g.hbm_gbps = hbm;
  g.l2_mb = 50;
  g.link_gbps = links * 25.0;
  g.links = links;
  g.nccl_link_gbps = nccl_link;
  g.nvlink = links > 0;
  return g;
}

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

int main(void) {
  tps_gpu a = gpu("A", 9, 1000, 100, 18, 20.6), b = gpu("B", 9, 2000, 100, 18, 20.6), c = gpu("C", 10, 1000, 400, 18, 40.1);
  tps_gpu d = gpu("D", 9, 1000, 400, 8, 20.6);
  /* siblings: same compute capability major for a GEMM, same fabric for a gather */
  CHECK_TRUE(tps_resolve_gemm_sibling(&a, &b));
  CHECK_TRUE(!tps_resolve_gemm_sibling(&a, &a));
  CHECK_TRUE(!tps_resolve_gemm_sibling(&a, &c));
  CHECK_TRUE(tps_resolve_gather_sibling(&a, &b));
  CHECK_TRUE(!tps_resolve_gather_sibling(&a, &d)); /* 8 links, not 18 */
  CHECK_TRUE(!tps_resolve_gather_sibling(&a, &c)); /* another NCCL link bandwidth */
  CHECK(near(tps_resolve_sibling_distance(&a, &b), log(2.0), 1e-12), "distance A-B %g, want log 2",
        tps_resolve_sibling_distance(&a, &b));

  /* streaming: m 1, n = k = 1024, dense-bf16 (2 + 2 bytes), fixed part 2.5 us, alpha 1.  Bytes 2*1024^2 +
   * 2*1024 + 2*1024 = 2101248: 2.101 us at 1000 GB/s, 1.051 us at 2000; 2 MNK = 2.1e6 flop is
   * 0.021 us at 100 TFLOPS, so both are streaming (the 4-norm adds < 1e-7): ratio 0.5.
   * 10 us on A: floor min(2.5, 5) + 7.5 x 0.5 = 6.25 us on B. */
  double hr, pr;
  double t = tps_resolve_sibling_gemm_us_with(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, 10.0, 2.5, 1.0, &hr, &pr);
  CHECK(near(t, 6.25, 1e-6), "streaming sibling %g us, want 6.25", t);
  CHECK(near(hr, 2.0, 1e-12) && near(pr, 1.0, 1e-12), "ratios %g %g, want 2 1", hr, pr);
  /* a short time keeps half of itself as the floor: 3 us -> 1.5 + 1.5 x 0.5 = 2.25 */
  t = tps_resolve_sibling_gemm_us_with(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, 3.0, 2.5, 1.0, NULL, NULL);
  CHECK(near(t, 2.25, 1e-6), "short streaming sibling %g us, want 2.25", t);
  /* computing: m 16384, n = k = 8192, A at 100 TFLOPS vs D-like peak 400 with A's HBM:
   * tc 21990 us vs 5498 us, ts 671 us on both: ratio 0.25 x (1 + (671/5498)^4)^(1/4) /
   * (1 + (671/21990)^4)^(1/4) = 0.250014; 30000 us -> 2.5 + 29997.5 x 0.250014 = 7501.9 */
  tps_gpu a4 = a;
  a4.bf16_tflops = 400;
  a4.fp8_tflops = 800;
  t = tps_resolve_sibling_gemm_us_with(&a, &a4, &tps_path_dense_bf16, 16384, 8192, 8192, 30000.0, 2.5, 1.0, NULL, &pr);
  CHECK(near(t, 7501.9, 1e-4), "computing sibling %g us, want 7501.9", t);
  CHECK(near(pr, 4.0, 1e-12), "peak ratio %g, want 4", pr);
  /* native-fp8 is bound by the fp8 peak: the same ratio from fp8_tflops = 2 x bf16 */
  t = tps_resolve_sibling_gemm_us(&a, &a4, &tps_path_native_fp8, 16384, 8192, 8192, 30000.0, NULL, &pr);
  CHECK(near(pr, 4.0, 1e-12), "fp8 peak ratio %g, want 4", pr);
  /* alpha 0.5 at the streaming point: 2.5 + 7.5 x 0.5^0.5 = 7.8033 */
  t = tps_resolve_sibling_gemm_us_with(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, 10.0, 2.5, 0.5, NULL, NULL);
  CHECK(near(t, 2.5 + 7.5 * sqrt(0.5), 1e-6), "alpha 0.5: %g us, want 7.8033", t);
  /* the path's learned correction is what the plain form uses */
  t = tps_resolve_sibling_gemm_us(&a, &b, &tps_path_native_fp8, 1, 1024, 1024, 20.0, NULL, NULL);
  double t2 = tps_resolve_sibling_gemm_us_with(&a, &b, &tps_path_native_fp8, 1, 1024, 1024, 20.0, tps_path_native_fp8.sibling_fixed_us,
                                               tps_path_native_fp8.sibling_alpha, NULL, NULL);
  CHECK(t == t2 && tps_path_native_fp8.sibling_alpha > 0, "learned correction: %g vs %g", t, t2);
  CHECK_TRUE(isnan(tps_resolve_sibling_gemm_us(&a, &b, &tps_path_dense_bf16, 0, 1024, 1024, 10.0, NULL, NULL)));
  CHECK_TRUE(isnan(tps_resolve_sibling_gemm_us(&a, &b, &tps_path_dense_bf16, 1, 1024, 1024, -1.0, NULL, NULL)));

  /* the spread: equal SM counts 0.06; 100 vs 50 SMs 0.06 + 0.5 log 2 */
  tps_gpu half = b;
  half.sms = 50;
  CHECK(near(tps_resolve_sibling_gemm_rsd(&a, &b), TPS_RESOLVE_SIBLING_GEMM_RSD, 1e-12), "rsd equal SMs");
  CHECK(near(tps_resolve_sibling_gemm_rsd(&a, &half), TPS_RESOLVE_SIBLING_GEMM_RSD + 0.5 * log(2.0), 1e-12), "rsd 100 vs 50 SMs");

  /* the monotone envelope */
  /* moved times dip at 2 and 4; the sibling's own dip at 4 is kept, the one at 2 raised */
  double own[5] = {1, 2, 3, 4, 3.5}, v[5] = {1, 3, 2, 5, 4};
  size_t raised = tps_resolve_monotone(own, v, 5);
  CHECK(raised == 1 && v[2] == 3 && v[3] == 5 && v[4] == 4, "monotone: raised %zu, %g %g %g %g %g", raised, v[0], v[1], v[2],
        v[3], v[4]);

  /* nothing loaded: a GEMM is spec-only, a TP1 or unknown-fabric NCCL gather has no model,
   * the custom gather falls back to xgather's priors (transferred from the H20) */
  tps_resolve_models none;
  memset(&none, 0, sizeof none);
  none.gpus = &a;
  none.ngpus = 1;
  none.tmax = 16384;
  tps_part_model m;
  char src[600], from[400];
  int rc = tps_resolve_gemm_model(&none, &a, &tps_path_dense_bf16, 5120, 1792, 0, &m, src, sizeof src, from, sizeof from);
  CHECK(rc == 0 && m.prov == TPS_PROV_SPEC && !strncmp(src, "spec-only", 9), "dense without models: rc %d prov %d '%s'", rc,
        m.prov, src);
  rc = tps_resolve_gemm_model(&none, &a, &tps_path_marlin_w8a16, 5120, 1792, 0, &m, src, sizeof src, from, sizeof from);
  CHECK(rc == 0 && m.prov == TPS_PROV_SPEC, "marlin without the H20 fit: rc %d prov %d", rc, m.prov);
  CHECK(tps_resolve_gather_model(&none, &a, 1, TPS_GATHER_NCCL, &m, src, sizeof src, from, sizeof from) == 1, "TP1: no model");
  CHECK(tps_resolve_gather_model(&none, &a, 8, TPS_GATHER_NCCL, &m, src, sizeof src, from, sizeof from) == 1,
        "NCCL without xgpu fits: no model");
  rc = tps_resolve_gather_model(&none, &a, 8, TPS_GATHER_CUSTOM, &m, src, sizeof src, from, sizeof from);
  CHECK(rc == 0 && m.prov == TPS_PROV_TRANSFERRED && m.kind == TPS_PM_XGATHER && !strcmp(from, "H20"),
        "custom without the H20 fit: rc %d prov %d kind %d from '%s'", rc, m.prov, m.kind, from);
  /* harness conversion by a sibling's two curves (2 points each: straight lines in log-log):
   * from (1, 10)-(100, 20), to (1, 5)-(100, 20); by hand the ratio to/from is 0.5 at 1 row,
   * 10 / (10 sqrt 2) at 10 rows, 1 at 100 rows, and the nearest end's outside */
  {
    const double fx[2] = {1, 100}, ft[2] = {10, 20}, tt[2] = {5, 20};
    const double x[5] = {0.5, 1, 10, 100, 1000};
    double t[5] = {1, 1, 1, 1, 1}, lo, hi;
    int hrc = tps_resolve_harness_convert_sibling(fx, ft, 2, fx, tt, 2, x, t, 5, &lo, &hi);
    const double want[5] = {0.5, 0.5, 1 / sqrt(2.0), 1, 1};
    CHECK(hrc == 0, "sibling conversion rc %d", hrc);
    for (int i = 0; i < 5; i++) CHECK(fabs(t[i] - want[i]) < 1e-9, "ratio at %g rows: %.12g, want %.12g", x[i], t[i], want[i]);
    CHECK(fabs(lo - 0.5) < 1e-12 && fabs(hi - 1) < 1e-12, "ratio range %g..%g", lo, hi);
    double one[1] = {7};
    CHECK(tps_resolve_harness_convert_sibling(fx, ft, 1, fx, tt, 2, x, one, 1, &lo, &hi) == 1 && one[0] == 7,
          "one point: no conversion, t unchanged");
    /* curves of different row ranges (an AIConfigurator table to 1000 rows, a bench table to 100): past 100 rows
     * the ratio is the one at 100, to(100) / from(100) = 20 / (10 x 100^(1/3)) by hand (from: 10 at 1 row, 100 at
     * 1000, a straight line in log-log), not to's last value over from(1000) (0.2); no common row: no conversion */
    const double gx[2] = {1, 1000}, gt[2] = {10, 100};
    const double x3[3] = {10, 100, 1000};
    double t3[3] = {1, 1, 1};
    CHECK(tps_resolve_harness_convert_sibling(gx, gt, 2, fx, tt, 2, x3, t3, 3, &lo, &hi) == 0, "different ranges: converted");
    const double r100 = 20 / (10 * cbrt(100.0)), r10 = 10 / (10 * cbrt(10.0));
    CHECK(fabs(t3[0] - r10) < 1e-9 && fabs(t3[1] - r100) < 1e-9 && fabs(t3[2] - r100) < 1e-9,
          "ratios at 10, 100, 1000 rows: %.12g %.12g %.12g, want %.12g %.12g %.12g", t3[0], t3[1], t3[2], r10, r100, r100);
    const double hx[2] = {200, 400};
    double t1[1] = {3};
    CHECK(tps_resolve_harness_convert_sibling(hx, ft, 2, fx, tt, 2, x3, t1, 1, &lo, &hi) == 1 && t1[0] == 3,
          "no common row: no conversion, t unchanged");
  }
  {
    /* a reference fit's gather: its own on its GPU and TP; elsewhere each protocol's latency
     * and bus bandwidth times the ratio of the two datasheet models (computed here from
     * tps_ag_from_spec, not by the function) */
    tps_ag_model fit, sa, sb;
    tps_ag_from_spec(&fit, &a, 8);
    for (int q = 0; q < TPS_NPROTO; q++) { fit.lat_us[q] *= 1.5; fit.busbw_gbps[q] *= 0.8; }
    tps_part_model m;
    memset(&m, 0, sizeof m);
    CHECK(tps_resolve_gather_fit(&m, &fit, 8, 0.04, &a, &a, 8, TPS_GATHER_NCCL) == TPS_PROV_FITTED && m.rsd == 0.04 &&
              m.kind == TPS_PM_AG && m.ag.busbw_gbps[0] == fit.busbw_gbps[0] && m.ag.ranks == 8, "the fit's own gather");
    CHECK(tps_resolve_gather_fit(&m, &fit, 8, 0.04, &a, &b, 4, TPS_GATHER_NCCL) == TPS_PROV_TRANSFERRED && m.ag.ranks == 4,
          "moved to B at TP 4");
    tps_ag_from_spec(&sa, &a, 8);
    tps_ag_from_spec(&sb, &b, 4);
    for (int q = 0; q < TPS_NPROTO; q++) {
      if (sa.busbw_gbps[q] > 0)
        CHECK(near(m.ag.busbw_gbps[q], 0.8 * sb.busbw_gbps[q], 1e-12), "proto %d bus bandwidth %g, want %g", q, m.ag.busbw_gbps[q],
              0.8 * sb.busbw_gbps[q]);
      if (sa.lat_us[q] > 0) CHECK(near(m.ag.lat_us[q], 1.5 * sb.lat_us[q], 1e-12), "proto %d latency", q);
    }
    CHECK(tps_resolve_gather_fit(&m, &fit, 8, 0.04, NULL, &a, 8, TPS_GATHER_NCCL) == TPS_PROV_TRANSFERRED,
          "an unknown GPU's fit is moved, not taken as this GPU's");
  }
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

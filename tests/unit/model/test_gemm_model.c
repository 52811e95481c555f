/* test_gemm_model.c: the GEMM and all-gather models (model/latency/gemm.c, model/latency/allgather.c)
 * against hand-computed values.
 *
 * Marlin launches (vLLM's host loop, worked by hand; blocks of 16 rows, slices of 4 blocks,
 * at most 16 slices per launch, pad = padding rows of the last block):
 *   6 rows     -> 1 block                                  -> (16 rows, par 1)
 *   96 rows    -> 6 blocks, par = 96/64 = 1                -> (64,1), then 2 blocks (32,1)
 *   100 rows   -> 7 blocks, pad 12, par = (112-12)/64 = 1  -> (64,1), (48,1)
 *   384 rows   -> 24 blocks, par = 6                       -> (384,6)
 *   600 rows   -> 38 blocks, pad 8, par = 600/64 = 9       -> (576,9), (32,1)
 *   16384 rows -> 1024 blocks, par capped at 16            -> 16 x (1024,16)
 * dense-bf16 (output-tiled, row tile 64): 100 rows -> (128,1).
 * Identity: a GEMM of 96 rows costs t(64) + t(32) - floor (two launches, one floor). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/latency/allgather.h"
#include "model/latency/gemm.h"
#include "model/core/path.h"

#include "tests/unit/expect.h"
#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol) * fabs(b))

static void launches(const tps_path *p, long m, long n, const long *rows, const long *par) {
  long r[32], q[32];
  long nl = tps_gemm_launches(p, m, r, q, 32);
  CHECK(nl == n, "%s m=%ld: %ld launches, want %ld", p->name, m, nl, n);
  for (long i = 0; i < n && i < nl; i++)
    CHECK(r[i] == rows[i] && q[i] == par[i], "%s m=%ld launch %ld: (%ld,%ld) want (%ld,%ld)", p->name, m, i, r[i], q[i], rows[i], par[i]);
}

int main(void) {
  const tps_path *mp = &tps_path_marlin_w8a16;
  launches(mp, 6, 1, (long[]){16}, (long[]){1});
  launches(mp, 96, 2, (long[]){64, 32}, (long[]){1, 1});
  launches(mp, 100, 2, (long[]){64, 48}, (long[]){1, 1});
  launches(mp, 384, 1, (long[]){384}, (long[]){6});
  launches(mp, 600, 2, (long[]){576, 32}, (long[]){9, 1});
  long r16[16], p16[16];
  for (int i = 0; i < 16; i++) { r16[i] = 1024; p16[i] = 16; }
  launches(mp, 16384, 16, r16, p16);
  launches(&tps_path_dense_bf16, 100, 1, (long[]){128}, (long[]){1});

  /* one Marlin launch of 16 rows by an independent evaluation of gemm.h's formula */
  tps_gemm_model g = {TPS_GEMM_PARAMETRIC, mp, 78, {0}, NULL};
  g.p[TPS_GP_FLOOR_US] = 1.0; g.p[TPS_GP_BW_GBPS] = 3400; g.p[TPS_GP_TFLOPS] = 84; g.p[TPS_GP_SHARP] = 4;
  g.p[TPS_GP_LAUNCH_US] = 8.5; g.p[TPS_GP_REDUCE_US] = 0.2;
  tps_gemm_shape sh = {5120, 1792, 2};
  double bytes = 5120.0 * 1792 * (1 + 1.0 / 32) + 16.0 * 5120 * 2 + 16.0 * 1792 * 2;
  double ts = bytes / 3400e3, tc = 16.0 * 2 * 5120 * 1792 / 84e6;
  double red = 0.2 * 1 * (78.0 / 7 - 1); /* 7 column tiles of 256; 78/7 blocks per column */
  double want = 1.0 + 8.5 + pow(pow(ts, 4) + pow(tc, 4), 0.25) + red;
  double got = tps_gemm_time_us(&g, &sh, 6);
  CHECK(NEAR(got, want, 1e-12), "t(6) = %.15g, want %.15g", got, want);
  CHECK(tps_gemm_time_us(&g, &sh, 16) == got, "rows 6 and 16 pad to the same block");
  double t96 = tps_gemm_time_us(&g, &sh, 96), t64 = tps_gemm_time_us(&g, &sh, 64), t32 = tps_gemm_time_us(&g, &sh, 32);
  CHECK(NEAR(t96, t64 + t32 - 1.0, 1e-12), "t(96) %.6g != t(64)+t(32)-floor %.6g", t96, t64 + t32 - 1.0);
  /* 16 launches of 1024 rows with par 16: splits = 78/(16*7) < 1, no reduction */
  double t1024 = tps_gemm_time_us(&g, &sh, 1024), t16384 = tps_gemm_time_us(&g, &sh, 16384);
  CHECK(NEAR(t16384, 16 * (t1024 - 1.0) + 1.0, 1e-12), "t(16384) = 16 launches of 1024");
  /* large M: the per-row cost approaches 2KN/tflops = 0.2185 us/row (within 5%) */
  CHECK(NEAR((t16384 - t1024) / 15360, 2.0 * 5120 * 1792 / 84e6, 0.05), "large-M slope");
  CHECK(isnan(tps_gemm_time_us(&g, &sh, 0)), "m = 0 is NaN");
  g.p[TPS_GP_TFLOPS] = -1;
  CHECK(isnan(tps_gemm_time_us(&g, &sh, 10)), "negative tflops is NaN");

  /* dense, output-tiled: 100 rows -> 2 row tiles x 14 column tiles = 28 tiles on 132 SMs;
   * split K floor(132/28) = 4 ways (<= 5120/256 = 20): 112 tiles, one wave, factor 132/112 */
  tps_gemm_model d = {TPS_GEMM_PARAMETRIC, &tps_path_dense_bf16, 132, {0}, NULL};
  d.p[TPS_GP_FLOOR_US] = 2.5; d.p[TPS_GP_BW_GBPS] = 2900; d.p[TPS_GP_TFLOPS] = 790; d.p[TPS_GP_SHARP] = 4;
  double dts = (5120.0 * 1792 * 2 + 128.0 * 5120 * 2 + 128.0 * 1792 * 2) / 2900e3;
  double dtc = 128.0 * 2 * 5120 * 1792 / 790e6 * (132.0 / 112);
  double dwant = 2.5 + pow(pow(dts, 4) + pow(dtc, 4), 0.25);
  CHECK(NEAR(tps_gemm_time_us(&d, &sh, 100), dwant, 1e-12), "dense t(100) %.15g want %.15g", tps_gemm_time_us(&d, &sh, 100), dwant);

  /* 4096 rows: 64 x 14 = 896 tiles, no split, 7 waves: factor 7*132/896 */
  double dts2 = (5120.0 * 1792 * 2 + 4096.0 * 5120 * 2 + 4096.0 * 1792 * 2) / 2900e3;
  double dtc2 = 4096.0 * 2 * 5120 * 1792 / 790e6 * (7 * 132.0 / 896);
  double dwant2 = 2.5 + pow(pow(dts2, 4) + pow(dtc2, 4), 0.25);
  CHECK(NEAR(tps_gemm_time_us(&d, &sh, 4096), dwant2, 1e-12), "dense t(4096)");

  /* spec and transfer: H20 -> H200 scales tflops by 989/148, bw by 4800/4000 */
  tps_gpu h20 = {.name = "H20", .sms = 78, .cc_major = 9, .bf16_tflops = 148, .fp8_tflops = 296, .hbm_gbps = 4000, .link_gbps = 450, .nvlink = 1};
  tps_gpu h200 = {.name = "H200", .sms = 132, .cc_major = 9, .bf16_tflops = 989, .fp8_tflops = 1979, .hbm_gbps = 4800, .link_gbps = 450, .nvlink = 1};
  tps_gemm_model s, t;
  CHECK(tps_gemm_from_spec(&s, mp, &h20) == 0, "spec");
  CHECK(NEAR(s.p[TPS_GP_TFLOPS], 148 * mp->compute_eff, 1e-12) && NEAR(s.p[TPS_GP_BW_GBPS], 4000 * mp->stream_eff, 1e-12), "spec values");
  CHECK(tps_gemm_transfer(&t, &s, &h20, &h200, NULL) == 0, "transfer");
  CHECK(NEAR(t.p[TPS_GP_TFLOPS], s.p[TPS_GP_TFLOPS] * 989 / 148, 1e-12) && NEAR(t.p[TPS_GP_BW_GBPS], s.p[TPS_GP_BW_GBPS] * 1.2, 1e-12) && t.sms == 132, "transfer values");

  /* curve mode: through the points, floor below, linear above */
  long m[4] = {1, 10, 100, 1000};
  double tt[4] = {10, 12, 30, 200};
  tps_gemm_curve *c = tps_gemm_curve_alloc(m, tt, 4);
  tps_gemm_model cm = {TPS_GEMM_CURVE, NULL, 0, {0}, c};
  CHECK(c != NULL, "curve alloc");
  for (int i = 0; i < 4 && c; i++) CHECK(NEAR(tps_gemm_time_us(&cm, NULL, m[i]), tt[i], 1e-12), "curve at %ld", m[i]);
  double prev = 0;
  for (long x = 1; x <= 1000 && c; x++) {
    double v = tps_gemm_time_us(&cm, NULL, x);
    CHECK(v >= prev - 1e-9, "curve not monotone at %ld", x);
    prev = v;
  }
  if (c) CHECK(NEAR(tps_gemm_time_us(&cm, NULL, 2000), 200 + (200 - 30) / 900.0 * 1000, 1e-9), "linear above");
  tps_gemm_curve_free(c);
  CHECK(tps_gemm_curve_alloc((long[]){1, 1}, tt, 2) == NULL, "duplicate m rejected");

  /* all-gather: 8 ranks, 1 MiB per rank = 8 MiB total; custom under the 2 MiB cap */
  tps_ag_model a;
  tps_ag_from_spec(&a, &h20, 8);
  int used, proto;
  double bytes8 = 8.0 * 1048576;
  double ct = tps_ag_time_us(&a, bytes8, 8, TPS_GATHER_AUTO, &used, &proto);
  CHECK(used == TPS_GATHER_CUSTOM && proto == -1 && NEAR(ct, a.custom_floor_us + bytes8 * 7 / 8 / (a.custom_gbps * 1e3), 1e-12), "custom");
  double at_cap = tps_ag_time_us(&a, 8 * a.custom_cap_bytes, 8, TPS_GATHER_AUTO, &used, NULL);
  CHECK(used == TPS_GATHER_CUSTOM && isfinite(at_cap), "exactly at the cap: custom");
  tps_ag_time_us(&a, 8 * a.custom_cap_bytes + 8, 8, TPS_GATHER_AUTO, &used, NULL);
  CHECK(used == TPS_GATHER_NCCL, "above the cap: NCCL");
  /* NCCL: the fastest protocol; tiny messages LL (lowest latency), huge ones Simple */
  tps_ag_time_us(&a, 1024, 8, TPS_GATHER_NCCL, &used, &proto);
  CHECK(proto == TPS_PROTO_LL, "1 KiB: LL, got %d", proto);
  double big = 1e9, tb = tps_ag_time_us(&a, big, 8, TPS_GATHER_NCCL, &used, &proto);
  CHECK(proto == TPS_PROTO_SIMPLE && NEAR(tb, a.lat_us[2] + big * 7 / 8 / (a.busbw_gbps[2] * 1e3), 1e-12), "1 GB: Simple");
  CHECK(tps_ag_time_us(&a, 1e6, 1, TPS_GATHER_AUTO, NULL, NULL) == 0, "one rank: no gather");
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}

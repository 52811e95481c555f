/* test_xgpu.c: the cross-GPU models (model/latency/xgemm.h, model/latency/xgather.h), the break-even and
 * interval helpers (model/numeric/robust.h) and the AIConfigurator reader (src/io/aic.h).  Expected values
 * are computed here independently (closed forms, brute-force scans, counts of the raw file),
 * never taken from the code under test. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "src/io/aic.h"
#include "src/io/measure.h"
#include "src/io/gpus.h"
#include "model/numeric/robust.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "model/latency/xgather.h"
#include "model/core/w8plan.h"
#include "model/latency/xgemm.h"

#include "tests/unit/expect.h"

static tps_gpu_table gt;

static const tps_gpu *gpu(const char *name) {
  tps_err e;
  const tps_gpu *g = tps_gpus_find(&gt, name, &e);
  if (!g) { fprintf(stderr, "%s\n", e.msg); exit(1); }
  return g;
}

/* ------------------------------------------------------------------ xgemm */

/* The path row a form models (path.c: model xgemm, xgemm_form). */
static const tps_path *form_row(int form) {
  for (int i = 0; i < TPS_NPATHS; i++)
    if (tps_paths[i]->model == TPS_PATH_MODEL_XGEMM && tps_paths[i]->xgemm_form == form) return tps_paths[i];
  return NULL;
}

static void test_xgemm(void) {
  const char *names[] = {"A100", "H100", "H200", "B200", "L40S", "RTX-PRO-6000-Server"};
  for (int path = 0; path < TPS_XG_NPATH; path++) {
    tps_xg_model m;
    tps_xg_prior(&m, (tps_xg_path)path);
    const tps_path *row = form_row(path);
    CHECK_TRUE(row != NULL);
    if (!row) continue;
    for (size_t gi = 0; gi < sizeof names / sizeof names[0]; gi++) {
      const tps_gpu *g = gpu(names[gi]);
      if (!tps_xg_supported(g, (tps_xg_path)path)) {
        /* only a GPU without the form's tensor peak (A100: fp8; all but Blackwell: FP4) */
        CHECK_TRUE(path != TPS_XG_BF16 && tps_path_peak_tflops(row, g) == 0);
        CHECK_TRUE(isnan(tps_xg_time_us(&m, g, NULL, 16, 1792, 5120, NULL)));
        continue;
      }
      for (int h = 0; h < 2; h++) {
        tps_xg_harness hs = {h ? TPS_XG_FLUSHED : TPS_XG_AIC};
        /* with the occupancy term off (sat_frac ~ 0: more CTAs cannot stream faster), every
         * tiling's time grows with M, so their minimum does too */
        tps_xg_model mo = m;
        mo.p[TPS_XG_SAT_FRAC] = 1e-9;
        double prev = 0;
        int mono = 1;
        for (long M = 1; M <= 20000; M += M < 64 ? 1 : M / 37) {
          double t = tps_xg_time_us(&mo, g, &hs, M, 1792, 5120, NULL);
          if (!(t >= prev - 1e-9)) mono = 0;
          prev = t;
        }
        CHECK_TRUE(mono);
        /* the hinted search (tps_xg_time_hint_us, the hint carried from call to call, in a
         * zigzag of M) gives the same values as the plain one */
        int hint = -1, same = 1;
        for (long i = 0; i < 60; i++) {
          long M2 = i % 2 ? 3 + 97 * i : 16384 / (i + 1);
          same &= tps_xg_time_hint_us(&m, g, &hs, M2, 1792, 5120, &hint) == tps_xg_time_us(&m, g, &hs, M2, 1792, 5120, NULL);
        }
        CHECK_TRUE(same && hint >= 0);
        /* large M: no faster than the tensor peak allows, within 2x of eff_max of it */
        double M = 16384, N = 1792, K = 5120;
        double peak = tps_path_peak_tflops(row, g);
        double tmin = 2 * M * N * K / (peak * 1e6);
        double t = tps_xg_time_us(&m, g, &hs, (long)M, (long)N, (long)K, NULL);
        CHECK_TRUE(t > tmin && t < 2.0 * tmin / m.p[TPS_XG_EFF_MAX] + 100);
        /* M = 1: at least the floor plus the weights at the fastest rate the model allows */
        double wb = row->weight_bytes;
        double t1 = tps_xg_time_us(&m, g, &hs, 1, (long)N, (long)K, NULL);
        double floor_us = h ? m.p[TPS_XG_FLOOR_BENCH_US] : m.p[TPS_XG_FLOOR_US];
        double ghz = tps_xg_clock_ghz(g);
        double fastest = fmax(m.p[TPS_XG_STREAM_EFF] * g->hbm_gbps, m.p[TPS_XG_L2_BPC_SM] * g->sms * ghz);
        CHECK_TRUE(t1 >= floor_us + K * N * wb / (fastest * 1e3) - 1e-9);
      }
    }
  }
  /* the clock implied by the datasheet: H100 989 TFLOPS / (132 SMs x 4096) = 1.829 GHz */
  CHECK_TRUE(fabs(tps_xg_clock_ghz(gpu("H100")) - 989e3 / (132.0 * 4096)) < 1e-12);
  CHECK_TRUE(isnan(tps_xg_clock_ghz(gpu("MI300X"))));
  /* L2 residency (AIC harness): 5 copies of N=512 bf16 weights (5.2 MB each) fit an L2 of
   * 128 MB, so with a fast L2 rate the AIC time is below the flushed one; N=16384 (168 MB)
   * does not fit and both harnesses stream from HBM (same time but the floor) */
  tps_xg_model m;
  tps_xg_prior(&m, TPS_XG_BF16);
  m.p[TPS_XG_L2_BPC_SM] = 64;
  m.p[TPS_XG_FLOOR_BENCH_US] = m.p[TPS_XG_FLOOR_US];
  tps_xg_harness aic = {TPS_XG_AIC}, fl = {TPS_XG_FLUSHED};
  const tps_gpu *rtx = gpu("RTX-PRO-6000-Server");
  CHECK_TRUE(tps_xg_time_us(&m, rtx, &aic, 1, 512, 5120, NULL) < 0.9 * tps_xg_time_us(&m, rtx, &fl, 1, 512, 5120, NULL));
  CHECK_TRUE(fabs(tps_xg_time_us(&m, rtx, &aic, 1, 16384, 5120, NULL) - tps_xg_time_us(&m, rtx, &fl, 1, 16384, 5120, NULL)) < 1e-9);
  /* the winning tiling is a valid one; stream-K (sk 0) only on SM90/SM100 */
  int best, tm, tn, sk;
  tps_xg_time_us(&m, gpu("A100"), &aic, 3000, 1792, 5120, &best);
  CHECK_TRUE(tps_xg_tiling(best, &tm, &tn, &sk) == 0 && sk != 0);
  int any_streamk = 0;
  for (long M = 256; M <= 8192; M += 128) {
    tps_xg_time_us(&m, gpu("H100"), &aic, M, 1792, 5120, &best);
    if (tps_xg_tiling(best, &tm, &tn, &sk) == 0 && sk == 0) any_streamk = 1;
  }
  CHECK_TRUE(any_streamk);
  CHECK_TRUE(tps_xg_tiling(-1, &tm, &tn, &sk) == -1 && tps_xg_tiling(1000, &tm, &tn, &sk) == -1);
}

/* A fit recovers parameters it generated: points from a known model on three GPUs. */
static void test_xgemm_fit(void) {
  tps_xg_model truth, fit;
  tps_xg_prior(&truth, TPS_XG_BF16);
  truth.p[TPS_XG_FLOOR_US] = 5.0;
  truth.p[TPS_XG_EFF_MAX] = 0.7;
  truth.p[TPS_XG_STREAM_EFF] = 0.8;
  const char *names[] = {"A100", "H100", "B200"};
  tps_xg_point pts[3 * 40 + 8]; /* + 8: the bench points below */
  size_t n = 0;
  for (int g = 0; g < 3; g++)
    for (long M = 1; M <= 16384; M *= 2)
      for (int nn = 0; nn < 3; nn++) {
        if (n >= 3 * 40) break;
        tps_xg_harness h = {TPS_XG_AIC};
        long N = nn == 0 ? 1536 : nn == 1 ? 2048 : 4096;
        if (nn == 2 && M % 4) continue;
        pts[n] = (tps_xg_point){gpu(names[g]), h, M, N, 5120, tps_xg_time_us(&truth, gpu(names[g]), &h, M, N, 5120, NULL), 1.0};
        n++;
      }
  tps_xg_prior(&fit, TPS_XG_BF16);
  CHECK_TRUE(tps_xg_fit(&fit, pts, n, 150, 2) == TPS_OK);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double t = tps_xg_time_us(&fit, pts[i].gpu, &pts[i].harness, pts[i].m, pts[i].n, pts[i].k, NULL);
    worst = fmax(worst, fabs(t / pts[i].t_us - 1));
  }
  CHECK_TRUE(worst < 0.03);
  /* the H200 (not in the fit) is predicted as the true model does */
  tps_xg_harness h = {TPS_XG_AIC};
  for (long M = 1; M <= 16384; M *= 4) {
    double a = tps_xg_time_us(&fit, gpu("H200"), &h, M, 1792, 5120, NULL), b = tps_xg_time_us(&truth, gpu("H200"), &h, M, 1792, 5120, NULL);
    CHECK_TRUE(fabs(a / b - 1) < 0.05);
  }
  /* no tpsplit bench point in the fit: the bench floor is the GEMM kernel's own (4 us),
   * plus our fp8 quantization's 3 graph nodes at 1 us (kernels/gemm/gemm_cublaslt.cu), never
   * the fitted AIC floor (5 us here: it would be carried over if the fit fell back to it) */
  CHECK_TRUE(fabs(fit.p[TPS_XG_FLOOR_BENCH_US] - 4.0) < 1e-12);
  CHECK_TRUE(fabs(fit.p[TPS_XG_FLOOR_US] - 5.0) < 0.5);
  CHECK_TRUE(fabs(tps_xg_bench_floor_spec_us(TPS_XG_FP8) - 7.0) < 1e-12);
  CHECK_TRUE(fabs(tps_xg_bench_floor_spec_us(TPS_XG_BF16) - 4.0) < 1e-12);
  /* one bench point in the fit: the bench floor is fitted (moves off the spec value) */
  tps_xg_harness fl = {TPS_XG_FLUSHED};
  truth.p[TPS_XG_FLOOR_BENCH_US] = 9.0;
  for (long M = 1; M <= 16384 && n < sizeof pts / sizeof pts[0]; M *= 16, n++)
    pts[n] = (tps_xg_point){gpu("H200"), fl, M, 1792, 5120, tps_xg_time_us(&truth, gpu("H200"), &fl, M, 1792, 5120, NULL), 1.0};
  tps_xg_prior(&fit, TPS_XG_BF16);
  CHECK_TRUE(tps_xg_fit(&fit, pts, n, 150, 2) == TPS_OK);
  CHECK_TRUE(fabs(fit.p[TPS_XG_FLOOR_BENCH_US] - 9.0) < 1.0);
  CHECK_TRUE(tps_xg_fit(&fit, pts, 3, 10, 1) == TPS_ETOOFEW);
}

/* ------------------------------------------------------------------ w8a16 */

static void test_xw8(void) {
  const tps_gpu *h200 = gpu("H200");
  tps_xw8_model m;
  tps_xw8_prior(&m, h200);
  m.p[TPS_XW8_LAUNCH_US] = 1.5;
  int kind;
  tps_xw8_time_us(&m, h200, 64, 1792, 5120, &kind);
  CHECK_TRUE(kind == TPS_W8P_STREAM);
  tps_xw8_time_us(&m, h200, 16384, 1792, 5120, &kind);
  CHECK_TRUE(kind == TPS_W8P_SK); /* the 256-token stream-K form since the sk2_time refit (data/h100_w8a16_sk2fit.txt) */
  tps_xw8_time_us(&m, h200, 2048, 1792, 5120, &kind);
  CHECK_TRUE(kind == TPS_W8P_SK); /* 112 whole 256-token tiles on an even grid of 112 blocks since data/h100_w8a16_s22.txt */
  tps_xw8_time_us(&m, h200, 2560, 1792, 5120, &kind);
  CHECK_TRUE(kind == TPS_W8P_WGMMA); /* whole waves first (head 2304) */
  /* one stream launch of the 16-token tile serves 2..16 rows alike */
  CHECK_TRUE(tps_xw8_time_us(&m, h200, 2, 1792, 5120, NULL) == tps_xw8_time_us(&m, h200, 16, 1792, 5120, NULL));
  /* whole waves first: at 2305 rows (N 1792 on 132 SMs: 9 x 256 = 2304 rows a wave) the rule
   * runs 2304 rows as one 256-token wgmma launch and one row as a stream launch; the model is
   * the sum: launch_us + plan_scale x the rule's time of the first, plus the one-row time */
  tps_w8_geom g;
  tps_w8_geom_default(&g, h200->sms, 1792, 5120);
  tps_w8_pick p;
  CHECK_TRUE(tps_w8_pick_default(&g, 2305, &p) == 0 && p.head == 2304);
  const double t2305 = tps_xw8_time_us(&m, h200, 2305, 1792, 5120, NULL), t1 = tps_xw8_time_us(&m, h200, 1, 1792, 5120, NULL);
  CHECK(fabs(t2305 - (1.5 + m.p[TPS_XW8_PLAN_SCALE] * tps_w8_wgmma256_us(&g, 2304) + t1)) < 1e-9, "2305 rows: %g", t2305);
  /* the launch term scales with plan_scale: doubling it doubles the rest of a one-launch time */
  tps_xw8_model m2 = m;
  m2.p[TPS_XW8_PLAN_SCALE] *= 2;
  CHECK_TRUE(tps_w8_pick_default(&g, 1024, &p) == 0 && p.head == 0 && p.kind != TPS_W8P_STREAM);
  CHECK_TRUE(fabs(tps_xw8_time_us(&m2, h200, 1024, 1792, 5120, NULL) - 1.5 -
                  2 * (tps_xw8_time_us(&m, h200, 1024, 1792, 5120, NULL) - 1.5)) < 1e-9);
  /* a fit to points of a known model recovers them; leaving a point out still fits */
  tps_xw8_model truth = m;
  truth.p[TPS_XW8_STREAM_US] = 4.0;
  truth.p[TPS_XW8_PLAN_SCALE] = 1.2;
  long rows[] = {1, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384};
  double t[18];
  for (int i = 0; i < 18; i++) t[i] = tps_xw8_time_us(&truth, h200, rows[i], 1792, 5120, NULL);
  tps_xw8_model f;
  CHECK_TRUE(tps_xw8_fit(&f, h200, 1792, 5120, rows, t, 18, -1) == TPS_OK);
  double worst = 0;
  for (int i = 0; i < 18; i++) worst = fmax(worst, fabs(tps_xw8_time_us(&f, h200, rows[i], 1792, 5120, NULL) / t[i] - 1));
  CHECK(worst < 0.02, "worst %g", worst);
  CHECK_TRUE(tps_xw8_fit(&f, h200, 1792, 5120, rows, t, 18, 17) == TPS_OK);
  CHECK_TRUE(tps_xw8_fit(&f, h200, 1792, 5120, rows, t, 6, -1) == TPS_ETOOFEW);
  /* regimes: rows of one launch plan share a key; another wave or launch count does not */
  CHECK_TRUE(tps_xw8_regime(h200, 2, 1792, 5120) == tps_xw8_regime(h200, 16, 1792, 5120));
  CHECK_TRUE(tps_xw8_regime(h200, 16, 1792, 5120) != tps_xw8_regime(h200, 17, 1792, 5120));
  CHECK_TRUE(tps_xw8_regime(h200, 2304, 1792, 5120) != tps_xw8_regime(h200, 2305, 1792, 5120));
}

/* ------------------------------------------------------------------ xgather */

static void test_xgather(void) {
  tps_xga_model m;
  tps_xga_prior(&m, 0);
  const tps_gpu *h100 = gpu("H100"), *l40s = gpu("L40S");
  CHECK_TRUE(fabs(tps_xga_bus_gbps(h100) - 20.6 * 18) < 1e-9);
  CHECK_TRUE(tps_xga_bus_gbps(l40s) == 32);
  CHECK_TRUE(tps_xga_time_us(&m, h100, 1e6, 1, TPS_XGA_NCCL, NULL) == 0);
  /* nccl = the smooth minimum (sum t_p^-k)^(-1/k) of the protocols, by hand: t_p = a + b (n-1)
   * + S (n-1)/n / bw_p, bw_p = min(f_p B (LL also <= its cap), phi_p x link x max(1, S / c_p))
   * with c_p = 8 x 8 x 512 (LL at 8 ranks), 8 x 640 (LL128), 64 x 512 (Simple) bytes */
  const double chan[TPS_XGA_NPROTO] = {8.0 * 8 * 512, 8.0 * 640, 64.0 * 512};
  for (double S = 512; S < 1e9; S *= 8) {
    double best = INFINITY, t[TPS_XGA_NPROTO], k = m.p[TPS_XGA_SHARP];
    for (int p = 0; p < TPS_XGA_NPROTO; p++) {
      double a = m.p[TPS_XGA_PAR(p, TPS_XGA_A)], b = m.p[TPS_XGA_PAR(p, TPS_XGA_B)], f = m.p[TPS_XGA_PAR(p, TPS_XGA_F)];
      double full = f * 20.6 * 18;
      if (p == TPS_XGA_LL) full = fmin(full, m.p[TPS_XGA_LLCAP]);
      double bw = fmin(full, m.p[TPS_XGA_PHI(p)] * 20.6 * fmax(1.0, S / chan[p]));
      t[p] = a + b * 7 + S * 7 / 8 / (bw * 1e3);
      best = fmin(best, t[p]);
    }
    double s = 0;
    for (int p = 0; p < TPS_XGA_NPROTO; p++) s += pow(t[p], -k);
    int proto;
    double got = tps_xga_time_us(&m, h100, S, 8, TPS_XGA_NCCL, &proto);
    CHECK_TRUE(fabs(got - pow(s, -1.0 / k)) < 1e-9 * got && proto >= 0 && t[proto] == best);
    CHECK_TRUE(got <= best && got >= best * pow(3.0, -1.0 / k));
  }
  /* PCIe: no LL128 (NCCL enables it only over NVLink) */
  tps_xga_model mp;
  tps_xga_prior(&mp, 1);
  for (double S = 512; S < 1e9; S *= 8) {
    int proto;
    tps_xga_time_us(&mp, l40s, S, 8, TPS_XGA_NCCL, &proto);
    CHECK_TRUE(proto != TPS_XGA_LL128);
  }
  /* custom: per-rank input capped at 2 MiB, NVLink only */
  CHECK_TRUE(isfinite(tps_xga_time_us(&m, h100, 8 * 2097152.0, 8, TPS_XGA_CUSTOM, NULL)));
  CHECK_TRUE(isnan(tps_xga_time_us(&m, h100, 8 * 2097152.0 + 8, 8, TPS_XGA_CUSTOM, NULL)));
  CHECK_TRUE(isnan(tps_xga_time_us(&m, l40s, 1024, 8, TPS_XGA_CUSTOM, NULL)));
  /* a fit to points of a known model (two NVLink GPUs) predicts a third; nccl-symm then
   * reproduces its reference point, 2 MiB at 8 H100s in 10.9 us */
  tps_xga_model truth;
  tps_xga_prior(&truth, 0);
  truth.p[TPS_XGA_PAR(TPS_XGA_SIMPLE, TPS_XGA_A)] = 12;
  truth.p[TPS_XGA_PAR(TPS_XGA_LL, TPS_XGA_A)] = 7;
  tps_xga_point pts[2 * 3 * 21];
  size_t n = 0;
  const tps_gpu *gs[2] = {gpu("A100"), gpu("B200")};
  for (int g = 0; g < 2; g++)
    for (int r = 2; r <= 8; r *= 2)
      for (double S = 512; S <= 512.0 * 1024 * 1024; S *= 2)
        if (n < sizeof pts / sizeof pts[0])
          pts[n++] = (tps_xga_point){gs[g], r, S, tps_xga_time_us(&truth, gs[g], S, r, TPS_XGA_NCCL, NULL), 1.0};
  tps_xga_model f;
  tps_xga_prior(&f, 0);
  CHECK_TRUE(tps_xga_fit(&f, pts, n) == TPS_OK);
  double worst = 0;
  for (double S = 65536; S <= 64.0 * 1024 * 1024; S *= 2)
    worst = fmax(worst, fabs(tps_xga_time_us(&f, h100, S, 8, TPS_XGA_NCCL, NULL) / tps_xga_time_us(&truth, h100, S, 8, TPS_XGA_NCCL, NULL) - 1));
  CHECK_TRUE(worst < 0.05);
  CHECK_TRUE(fabs(tps_xga_time_us(&f, h100, 2.0 * 1024 * 1024, 8, TPS_XGA_NCCL_SYMM, NULL) - 10.9) < 1e-6);
}

/* ------------------------------------------------------------------ break-even, intervals */

typedef struct { double a, b; } lin;
static double lin_fn(double x, void *c) { lin *l = c; return l->a + l->b * x; }

static void test_breakeven(void) {
  /* gemm(M) = 5 + 0.02 M us, gather(S) = 8 + S / 3e6 us (3 TB/s): brute force over every
   * integer T gives the threshold the grid search must find */
  lin g = {5, 0.02}, a = {8, 1.0 / 3e6};
  tps_loo_curve *cg = tps_loo_curve_fn(lin_fn, &g), *ca = tps_loo_curve_fn(lin_fn, &a);
  for (int tp = 2; tp <= 8; tp *= 2) {
    long last_lose = 0;
    for (long T = 1; T <= 16384; T++) {
      double repl = 5 + 0.02 * T, split = 5 + 0.02 * ceil((double)T / tp) + 8 + T * 3584.0 / 3e6;
      if (!(split < repl)) last_lose = T;
    }
    double want = last_lose >= 16384 ? 0 : (double)(last_lose + 1);
    CHECK_TRUE(tps_loo_breakeven(cg, ca, tp, 3584, 16384) == want);
    CHECK_TRUE(want > 1);
    CHECK_TRUE(tps_loo_split_wins(cg, ca, tp, 3584, want) == 1 && tps_loo_split_wins(cg, ca, tp, 3584, want - 1) == 0);
  }
  /* a gather that never pays off: 0 */
  lin slow = {8, 1.0 / 1e3};
  tps_loo_curve *cs = tps_loo_curve_fn(lin_fn, &slow);
  CHECK_TRUE(tps_loo_breakeven(cg, cs, 8, 3584, 16384) == 0);
  tps_loo_curve_free(cs);
  tps_loo_curve_free(cg);
  tps_loo_curve_free(ca);
  /* measured curves: through their points, flat below, log-log slope above */
  double x[] = {1, 10, 100, 1000}, t[] = {5, 6, 20, 150};
  tps_loo_curve *c = tps_loo_curve_measured(x, t, 4);
  CHECK_TRUE(c != NULL);
  for (int i = 0; i < 4; i++) CHECK_TRUE(fabs(tps_loo_curve_eval(c, x[i]) - t[i]) < 1e-9 * t[i]);
  CHECK_TRUE(fabs(tps_loo_curve_eval(c, 0.5) - 5) < 1e-12);
  CHECK_TRUE(fabs(tps_loo_curve_eval(c, 10000) - 150 * pow(10, log(150.0 / 20) / log(10))) < 1e-6);
  double v = tps_loo_curve_eval(c, 50);
  CHECK_TRUE(v > 6 && v < 20);
  CHECK_TRUE(tps_loo_curve_covers(c, 500) && !tps_loo_curve_covers(c, 2000));
  tps_loo_curve_free(c);
  double bad[] = {1, 1, 2};
  CHECK_TRUE(tps_loo_curve_measured(bad, t, 3) == NULL);
  /* the quantile half-width: |v| = 0.01 .. 0.10; the 90% quantile (linear between order
   * statistics, GSL's definition) is 0.01 + 0.9 * 9 * 0.01 = 0.091; never below the floor */
  double r[10];
  for (int i = 0; i < 10; i++) r[i] = (i % 2 ? -1 : 1) * 0.01 * (i + 1);
  CHECK_TRUE(fabs(tps_loo_quantile_abs(r, 10, 0.9, 0.0) - 0.091) < 1e-12);
  CHECK_TRUE(tps_loo_quantile_abs(r, 10, 0.9, 0.2) == 0.2);
  CHECK_TRUE(tps_loo_quantile_abs(NULL, 0, 0.9, 0.03) == 0.03);
  tps_loo_err s = tps_loo_summary(r, 10);
  CHECK_TRUE(s.n == 10 && fabs(s.med_abs - 0.055) < 1e-12 && fabs(s.max_abs - 0.10) < 1e-12);
}

/* ------------------------------------------------------------------ AIC reader */

/* rows of a gzipped AIC GEMM file matching dtype/n/k, counted straight from the file */
static long count_raw(const char *path, const char *dtype, long n, long k) {
  gzFile z = gzopen(path, "rb");
  char line[4096];
  long c = 0;
  while (z && gzgets(z, line, sizeof line)) {
    char g[64], b[64], v[64], d[64];
    long m, nn, kk;
    if (line[0] == '#') continue;
    if (sscanf(line, "%63s %63s %63s %63s %ld %ld %ld", g, b, v, d, &m, &nn, &kk) == 7 && !strcmp(d, dtype) && nn == n &&
        kk == k)
      c++;
  }
  if (z) gzclose(z);
  return c;
}

static void test_aic(const char *datadir) {
  char path[1024], spec[1200];
  snprintf(path, sizeof path, "%s/aic/gemm_h100_sxm_k5120.tsv.gz", datadir);
  tps_aic_file a;
  tps_err e;
  snprintf(spec, sizeof spec, "%s:dtype=fp8,n=2048,k=5120", path);
  CHECK_TRUE(tps_aic_read_spec(spec, &a, &e) == 0);
  CHECK_TRUE(a.kind == TPS_AIC_GEMM && (long)a.nrows == count_raw(path, "fp8", 2048, 5120) && a.nrows > 50);
  CHECK_TRUE(a.nprov >= 5 && strncmp(a.prov[0], "source: ai-dynamo/aiconfigurator", 32) == 0);
  int copy_line = 0;
  for (size_t i = 0; i < a.nprov; i++) if (!strncmp(a.prov[i], "copy: 2026-12-04 from shared/data/aic/", 38)) copy_line = 1;
  CHECK_TRUE(copy_line);
  long *m;
  double *t;
  size_t n;
  CHECK_TRUE(tps_aic_gemm_curve(&a, "fp8", 2048, 5120, &m, &t, &n, &e) == 0 && n == a.nrows);
  for (size_t i = 1; i < n; i++) CHECK_TRUE(m[i] > m[i - 1]);
  free(m);
  free(t);
  CHECK_TRUE(tps_aic_gemm_curve(&a, "fp8", 1792, 5120, &m, &t, &n, &e) == -1 && strstr(e.msg, "n 1792"));
  char name[64];
  CHECK_TRUE(strcmp(tps_aic_gpu_name(a.gpu, name, sizeof name), "h100-sxm") == 0 && gpu(name) == gpu("H100-SXM"));
  tps_aic_free(&a);
  /* missing shape and unknown dtype: errors naming the file */
  snprintf(spec, sizeof spec, "%s:dtype=fp8,n=1792", path);
  CHECK_TRUE(tps_aic_read_spec(spec, &a, &e) == -1 && strstr(e.msg, path) && strstr(e.msg, "no rows with dtype fp8, n 1792"));
  snprintf(spec, sizeof spec, "%s:dtype=int3", path);
  CHECK_TRUE(tps_aic_read_spec(spec, &a, &e) == -1 && strstr(e.msg, "unknown dtype 'int3'"));
  snprintf(spec, sizeof spec, "%s:colour=red", path);
  CHECK_TRUE(tps_aic_read_spec(spec, &a, &e) == -1 && strstr(e.msg, "unknown selection key 'colour'"));
  CHECK_TRUE(tps_meas_sniff_spec(path) == TPS_MEAS_AIC);
  snprintf(path, sizeof path, "%s/gpus.tsv", datadir);
  CHECK_TRUE(tps_meas_sniff_spec(path) != TPS_MEAS_AIC);
  /* NCCL: all_gather at 8 GPUs has 21 sizes in each of two dtypes */
  snprintf(spec, sizeof spec, "%s/aic/nccl_b200_sxm.tsv.gz:op=all_gather,num_gpus=8", datadir);
  CHECK_TRUE(tps_aic_read_spec(spec, &a, &e) == 0 && a.kind == TPS_AIC_NCCL && a.nrows == 42);
  double *by;
  CHECK_TRUE(tps_aic_nccl_curve(&a, "all_gather", 8, "half", &by, &t, &n, &e) == 0 && n == 21 && by[0] == 512);
  free(by);
  free(t);
  tps_aic_free(&a);
}

int main(void) {
  const char *dd = getenv("TPSPLIT_DATADIR");
  if (!dd) dd = TPS_SRCDATADIR;
  char gp[1024];
  tps_err e;
  snprintf(gp, sizeof gp, "%s/gpus.tsv", dd);
  if (tps_gpus_load(gp, &gt, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
  test_xgemm();
  test_xgemm_fit();
  test_xw8();
  test_xgather();
  test_breakeven();
  test_aic(dd);
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}

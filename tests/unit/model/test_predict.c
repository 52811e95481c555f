/* test_predict.c: unit tests of model/predict.c.
 *
 * Every expected value is computed independently here: by hand (in the comments), with a
 * second formula, or by a brute-force scan that does not share the code under test. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "model/predict/predict.h"
#include "model/predict/crossover.h"
#include "model/predict/uncertainty.h"
#include "model/predict/sensitivity.h"

#include "model/predict/resolve.h"
#include "tests/unit/expect.h"

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

/* GPUs as in data/gpus.tsv (datasheet numbers from the brief). */
static tps_gpu mkgpu(const char *name, int sms, int ccM, int ccm, double bf16, double fp8, double hbm,
                     double link, int links, int nvlink) {
  tps_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "%s", name);
  g.sms = sms; g.cc_major = ccM; g.cc_minor = ccm; g.bf16_tflops = bf16; g.fp8_tflops = fp8;
  g.hbm_gbps = hbm; g.link_gbps = link; g.links = links; g.nvlink = nvlink;
  return g;
}

/* ---- generic crossover on synthetic curves ------------------------------------------ */
typedef struct { double a, b, c; } lin;
/* replicated = a*T, split = b*T + c: diff = (b-a)*T + c */
static double lin_diff(long t, void *arg) { const lin *l = arg; return (l->b - l->a) * t + l->c; }
/* diff = -(T-10)(T-50)(T-200): + on [1,10], - on (10,50), + on [50,200], - above 200 */
static double cubic_diff(long t, void *arg) { (void)arg; double x = t; return -(x - 10) * (x - 50) * (x - 200); }
/* diff = +1 everywhere (split never wins) */
static double pos_diff(long t, void *arg) { (void)arg; (void)t; return 1.0; }
static double nan_diff(long t, void *arg) { (void)arg; return t == 7 ? NAN : -1.0; }

/* ---- win bands on synthetic pairs ---------------------------------------------------- */
/* replicated 100; split 105 below lo (a leading loss), 90 on [lo, a) and from b on (wins),
 * and 100 + (10 - |T - mid| / scale) on [a, b) (a losing gap, a tie at T = a, deepest at mid:
 * speedup 100 / 110) */
typedef struct { long lo, a, b, mid; double scale; } vgap;
static int vgap_pair(long t, void *arg, double *rep, double *split) {
  const vgap *v = arg;
  *rep = 100;
  if (t < v->lo) *split = 105;
  else if (t < v->a || t >= v->b) *split = 90;
  else *split = 100 + (10 - fabs((double)(t - v->mid)) / v->scale);
  return TPS_OK;
}
/* wins on [10k, 10k + 9] for odd k: 150 bands up to 3000 */
static int comb_pair(long t, void *arg, double *rep, double *split) {
  (void)arg;
  *rep = 10;
  *split = (t / 10) % 2 ? 9 : 11;
  return TPS_OK;
}
static double comb_diff(long t, void *arg) { double r, s; comb_pair(t, arg, &r, &s); return s - r; }
static int nan_pair(long t, void *arg, double *rep, double *split) { (void)arg; *rep = 1; *split = t == 7 ? NAN : 0.5; return TPS_OK; }
static int fail_pair(long t, void *arg, double *rep, double *split) { (void)arg; *rep = 1; *split = 0.5; return t == 9 ? TPS_EBADDATA : TPS_OK; }

static void test_bands_generic(void) {
  tps_bands b;
  /* dense: wins on [5, 19] and [40, 1000]; the gap [20, 39] is deepest at 30: 100 / 110 */
  vgap v = {5, 20, 40, 30, 1.0};
  CHECK(tps_bands_find(vgap_pair, &v, 1, 1000, TPS_BANDS_DENSE, &b) == TPS_OK, "dense bands");
  CHECK(b.nbands == 2 && b.from_tokens[0] == 5 && b.to_tokens[0] == 19 && b.from_tokens[1] == 40 && b.to_tokens[1] == 1000,
        "dense bands [%ld, %ld] [%ld, %ld], want [5, 19] [40, 1000]", b.from_tokens[0], b.to_tokens[0], b.from_tokens[1],
        b.to_tokens[1]);
  CHECK(b.breakeven == 40, "dense break-even %ld, want 40", b.breakeven);
  CHECK(fabs(b.gap_min_speedup[0] - 100.0 / 110.0) < 1e-12, "gap depth %.6f, want 100/110", b.gap_min_speedup[0]);
  CHECK(isnan(b.gap_min_speedup[1]), "no gap after the last band");
  /* the log grid holds every integer up to ~92: the same answer */
  tps_bands g;
  CHECK(tps_bands_find(vgap_pair, &v, 1, 1000, TPS_BANDS_LOG64, &g) == TPS_OK && g.nbands == 2 && g.from_tokens[0] == 5 &&
            g.to_tokens[0] == 19 && g.from_tokens[1] == 40 && g.to_tokens[1] == 1000 &&
            fabs(g.gap_min_speedup[0] - 100.0 / 110.0) < 1e-12,
        "log grid below 92 = dense");
  /* x100: the edges fall between grid points (spacing ~1.1%) and are placed at the integer;
   * the gap's deepest grid point lies within half a spacing (~17 tokens) of 3000 */
  vgap w = {500, 2000, 4000, 3000, 100.0};
  CHECK(tps_bands_find(vgap_pair, &w, 1, 16384, TPS_BANDS_LOG64, &g) == TPS_OK, "log bands");
  CHECK(g.nbands == 2 && g.from_tokens[0] == 500 && g.to_tokens[0] == 1999 && g.from_tokens[1] == 4000 &&
            g.to_tokens[1] == 16384 && g.breakeven == 4000,
        "log bands %zu: [%ld, %ld] [%ld, %ld], want [500, 1999] [4000, 16384]", g.nbands, g.from_tokens[0], g.to_tokens[0],
        g.from_tokens[1], g.to_tokens[1]);
  CHECK(g.gap_min_speedup[0] >= 100.0 / 110.0 - 1e-12 && g.gap_min_speedup[0] <= 100.0 / (110.0 - 0.17),
        "log gap depth %.6f in [100/110, 100/109.83]", g.gap_min_speedup[0]);
  /* ends before tmax: one closed band, no break-even */
  CHECK(tps_bands_find(vgap_pair, &w, 1, 3000, TPS_BANDS_LOG64, &g) == TPS_OK && g.nbands == 1 && g.to_tokens[0] == 1999 &&
            g.breakeven == -1,
        "closed band");
  /* from tmin inside a band */
  CHECK(tps_bands_find(vgap_pair, &v, 10, 30, TPS_BANDS_DENSE, &b) == TPS_OK && b.nbands == 1 && b.from_tokens[0] == 10 &&
            b.to_tokens[0] == 19 && b.breakeven == -1,
        "from tmin");
  /* more bands than stored (128): all counted, the first 128 kept, the sign changes all
   * counted (each band has two: 300) */
  CHECK(TPS_BANDS_MAX == 128, "TPS_BANDS_MAX %d", TPS_BANDS_MAX);
  CHECK(tps_bands_find(comb_pair, NULL, 1, 3000, TPS_BANDS_DENSE, &b) == TPS_OK && b.nbands == 150 && b.breakeven == -1 &&
            b.from_tokens[127] == 2550 && b.to_tokens[127] == 2559 && b.gap_min_speedup[0] == 10.0 / 11.0,
        "150 bands: %zu, band 127 [%ld, %ld]", b.nbands, b.from_tokens[127], b.to_tokens[127]);
  tps_crossover c;
  CHECK(tps_crossover_find(comb_diff, NULL, 1, 3000, &c) == TPS_OK && c.nchg == 300 && c.chg[31] == 320 && c.chg_wins[31] == 0 &&
            c.breakeven == -1,
        "150 bands: %zu sign changes, the 32nd %ld", c.nchg, c.chg[31]);
  CHECK(tps_crossover_find(comb_diff, NULL, 1, 2995, &c) == TPS_OK && c.nchg == 299 && c.breakeven == 2990, "ends winning: %zu, %ld",
        c.nchg, c.breakeven);
  CHECK(isnan(c.bands.gap_min_speedup[0]), "a difference alone has no gap depth");
  CHECK(tps_bands_find(nan_pair, NULL, 1, 100, TPS_BANDS_DENSE, &b) == TPS_EINVAL, "NaN rejected");
  CHECK(tps_bands_find(fail_pair, NULL, 1, 100, TPS_BANDS_LOG64, &b) == TPS_EBADDATA, "the callback's status");
  CHECK(tps_bands_find(vgap_pair, &v, 10, 5, TPS_BANDS_DENSE, &b) == TPS_EINVAL, "tmin > tmax");
  CHECK(tps_bands_find(vgap_pair, &v, 1, 5, 7, &b) == TPS_EINVAL, "unknown grid");
}

static void test_crossover_generic(void) {
  tps_crossover c;
  /* replicated 2T, split T + 100: split wins when T > 100 (T = 100 is a tie: not a win). */
  lin l = {2.0, 1.0, 100.0};
  CHECK(tps_crossover_find(lin_diff, &l, 1, 1000, &c) == 0, "linear");
  CHECK(c.breakeven == 101, "linear break-even %ld, want 101", c.breakeven);
  CHECK(c.nchg == 1 && c.chg[0] == 101 && c.chg_wins[0] == 1, "linear changes");
  /* replicated 3T, split 1.5T + 1000: crossing at 1000/1.5 = 666.67 -> first win 667 */
  lin l2 = {3.0, 1.5, 1000.0};
  CHECK(tps_crossover_find(lin_diff, &l2, 1, 5000, &c) == 0 && c.breakeven == 667, "linear2 %ld", c.breakeven);
  /* tmax below the crossing: never */
  CHECK(tps_crossover_find(lin_diff, &l2, 1, 600, &c) == 0 && c.breakeven == -1 && c.nchg == 0, "never");
  /* three sign changes: wins from 11, loses from 50 (tie), wins from 201 */
  CHECK(tps_crossover_find(cubic_diff, NULL, 1, 1000, &c) == 0, "cubic");
  CHECK(c.nchg == 3, "cubic nchg %zu", c.nchg);
  CHECK(c.chg[0] == 11 && c.chg_wins[0] == 1, "cubic 1st %ld", c.chg[0]);
  CHECK(c.chg[1] == 50 && c.chg_wins[1] == 0, "cubic 2nd %ld", c.chg[1]);
  CHECK(c.chg[2] == 201 && c.chg_wins[2] == 1, "cubic 3rd %ld", c.chg[2]);
  CHECK(c.breakeven == 201, "cubic break-even %ld", c.breakeven);
  /* up to 100 only: the split does not win at tmax = 100 */
  CHECK(tps_crossover_find(cubic_diff, NULL, 1, 100, &c) == 0 && c.breakeven == -1 && c.nchg == 2, "cubic 100");
  /* starting inside the first winning run: wins from tmin = 20 to 49 */
  CHECK(tps_crossover_find(cubic_diff, NULL, 20, 40, &c) == 0 && c.breakeven == 20 && c.nchg == 0, "cubic 20..40");
  CHECK(tps_crossover_find(pos_diff, NULL, 1, 100, &c) == 0 && c.breakeven == -1, "positive");
  CHECK(tps_crossover_find(nan_diff, NULL, 1, 100, &c) == TPS_EINVAL, "NaN rejected");
  CHECK(tps_crossover_find(lin_diff, &l, 10, 5, &c) == TPS_EINVAL, "tmin > tmax rejected");
  /* a user's rounding of the threshold: the next multiple */
  CHECK(tps_threshold_round(1450, 256, 16384) == 1536, "thr 1450/256"); /* 6*256 = 1536 */
  CHECK(tps_threshold_round(1536, 256, 16384) == 1536, "thr 1536/256");
  CHECK(tps_threshold_round(1450, 0, 16384) == 1450, "thr 1450, no rounding");
  CHECK(tps_threshold_round(-1, 256, 16384) == -1, "thr never");
}

/* ---- spec-only predictions: plumbing, applicability, gathers --------------------------- */
static void test_spec(void) {
  tps_gpu h100 = mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1);
  tps_gpu a100 = mkgpu("A100-SXM-80GB", 108, 8, 0, 312, 0, 2039, 300, 12, 1);
  tps_gpu l40s = mkgpu("L40S", 142, 8, 9, 362, 733, 864, 32, 0, 0);
  tps_gpu mi300 = mkgpu("MI300X", 304, 0, 0, 1307, 2615, 5300, 448, 7, 0);
  tps_pred p;
  tps_pred_opts o;
  tps_pred_opts_default(&o);
  tps_gemm_shape sh = {5120, 1792, 2.0};

  CHECK(tps_pred_init_spec(&p, &a100, 8, &tps_path_native_fp8, &sh, 3584, &o) == TPS_NA, "A100 fp8 n/a");
  CHECK(strstr(p.why, "fp8") != NULL, "A100 reason: %s", p.why);
  CHECK(isnan(tps_pred_split_us(&p, 100, NULL)), "n/a context gives NaN");
  tps_pred_free(&p);
  CHECK(tps_pred_init_spec(&p, &mi300, 8, &tps_path_dense_bf16, &sh, 3584, &o) == TPS_NA, "MI300X n/a");
  tps_pred_free(&p);
  /* TP 12 spans 8-GPU nodes unevenly: n/a with the reason (was TPS_EINVAL, "impossible configuration") */
  CHECK(tps_pred_init_spec(&p, &h100, 12, &tps_path_dense_bf16, &sh, 3584, &o) == TPS_NA, "TP 12 n/a");
  CHECK(strstr(p.why, "multiple of 8") != NULL, "TP 12 reason: %s", p.why);
  tps_pred_free(&p);
  CHECK(tps_pred_init_spec(&p, &h100, 65, &tps_path_dense_bf16, &sh, 3584, &o) == TPS_EINVAL, "TP 65 invalid");
  tps_pred_free(&p);
  o.backend = TPS_GATHER_CUSTOM;
  CHECK(tps_pred_init_spec(&p, &l40s, 4, &tps_path_dense_bf16, &sh, 3584, &o) == TPS_NA, "L40S custom n/a");
  tps_pred_free(&p);
  o.backend = TPS_GATHER_AUTO;

  /* plumbing: split = GEMM(ceil(T/8)) + gather(T*3584) with the library models directly */
  CHECK(tps_pred_init_spec(&p, &h100, 8, &tps_path_marlin_w8a16, &sh, 3584, &o) == 0, "H100 spec");
  tps_gemm_model g;
  tps_gemm_from_spec(&g, &tps_path_marlin_w8a16, &h100);
  long ts[] = {1, 7, 8, 9, 100, 1000, 4680, 4681, 16384};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    long t = ts[i], rows = (t + 7) / 8;
    int used;
    double want_rep = tps_gemm_time_us(&g, &sh, t);
    /* the gathered buffer is 8 shards of ceil(t/8) rows of 3584 bytes */
    double want_split = tps_gemm_time_us(&g, &sh, rows) + tps_ag_time_us(&p.ag, 8.0 * rows * 3584.0, 8, TPS_GATHER_AUTO, &used, NULL);
    int b;
    CHECK(near(tps_pred_replicated_us(&p, t), want_rep, 1e-12), "rep %ld", t);
    CHECK(near(tps_pred_split_us(&p, t, &b), want_split, 1e-12), "split %ld", t);
    /* custom while the per-rank input ceil(t/8)*3584 <= 2 MiB: 585 rows (2096640 B) fit,
     * 586 (2100224 B) do not, so t <= 8*585 = 4680 */
    CHECK(b == (t <= 4680 ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL), "backend at %ld: %d", t, b);
  }
  /* another shape: the GEMM of 5120 -> 1024 fp32 rows equals the library model's */
  tps_gemm_shape sh2 = {5120, 1024, 4.0};
  CHECK(tps_pred_set_shape(&p, &sh2, 0) == 0 && p.out_bytes_per_token == 4096.0, "set_shape");
  CHECK(near(tps_pred_gemm_us(&p, 300), tps_gemm_time_us(&g, &sh2, 300), 1e-12), "gemm of another shape");
  tps_pred_free(&p);

  /* L40S (no NVLink): NCCL at every size */
  CHECK(tps_pred_init_spec(&p, &l40s, 8, &tps_path_dense_bf16, &sh, 3584, &o) == 0, "L40S spec");
  int b;
  tps_pred_gather_us(&p, 6, &b);
  CHECK(b == TPS_GATHER_NCCL, "L40S small gather is NCCL");
  CHECK(!tps_pred_knob_used(&p, TPS_PK_AG_CUSTOM_BW), "L40S has no custom knob");
  tps_pred_free(&p);

  /* TP16 across two nodes: NCCL only; time >= bytes*(15/16) / 50 GB/s */
  CHECK(tps_pred_init_spec(&p, &h100, 16, &tps_path_marlin_w8a16, &sh, 3584, &o) == 0, "H100 TP16");
  double t16 = tps_pred_gather_us(&p, 8192, &b);
  double bound = 8192.0 * 3584 * 15 / 16 / (50.0 * 1e3);
  CHECK(b == TPS_GATHER_NCCL && t16 >= bound, "TP16 gather %.1f us >= %.1f us (IB bound), backend %d", t16, bound, b);
  CHECK(tps_pred_knob_used(&p, TPS_PK_AG_INTERNODE), "TP16 has the inter-node knob");
  /* halving the IB bandwidth cannot make the gather faster */
  tps_pred q;
  o.ib_gbps = 200;
  tps_pred_init_spec(&q, &h100, 16, &tps_path_marlin_w8a16, &sh, 3584, &o);
  CHECK(tps_pred_gather_us(&q, 8192, NULL) >= t16, "200 Gb/s IB slower");
  o.ib_gbps = 0;
  tps_pred_free(&q);
  tps_pred_free(&p);
}

/* ---- the memoized dense scan = direct model calls at every T ------------------------- */
static double direct_diff(long t, void *arg) {
  const tps_pred *p = arg;
  return tps_pred_split_us(p, t, NULL) - tps_pred_replicated_us(p, t);
}

static void test_dense_direct(void) {
  tps_gpu h100 = mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1);
  tps_gemm_shape sh = {5120, 1792, 2.0};
  const tps_path *paths[3] = {&tps_path_marlin_w8a16, &tps_path_dense_bf16, &tps_path_native_fp8};
  for (int i = 0; i < 3; i++) {
    tps_pred p;
    tps_pred_init_spec(&p, &h100, 8, paths[i], &sh, 3584, NULL);
    tps_crossover a, b;
    CHECK(tps_pred_crossover(&p, 12000, &a) == 0, "dense");
    CHECK(tps_crossover_find(direct_diff, &p, 1, 12000, &b) == 0, "direct");
    int same = a.breakeven == b.breakeven && a.nchg == b.nchg;
    for (size_t k = 0; same && k < a.nchg && k < TPS_CROSS_MAXCHG; k++) same = a.chg[k] == b.chg[k] && a.chg_wins[k] == b.chg_wins[k];
    CHECK(same, "%s: memoized scan (be %ld, %zu changes) = direct (be %ld, %zu changes)", paths[i]->name, a.breakeven, a.nchg, b.breakeven, b.nchg);
    tps_pred_free(&p);
  }
}

/* ---- fast break-even = dense scan, over many random perturbations -------------------- */
static void test_fast_vs_dense(void) {
  tps_gpu gpus[3] = {mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1),
                     mkgpu("H20", 78, 9, 0, 148, 296, 4000, 450, 18, 1),
                     mkgpu("L40S", 142, 8, 9, 362, 733, 864, 32, 0, 0)};
  const tps_path *paths[3] = {&tps_path_marlin_w8a16, &tps_path_dense_bf16, &tps_path_native_fp8};
  int tps[4] = {2, 4, 8, 16};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 12345);
  tps_gemm_shape sh = {5120, 1792, 2.0};
  int mism = 0, n = 0, found = 0;
  for (int gi = 0; gi < 3; gi++)
    for (int pi = 0; pi < 3; pi++)
      for (int ti = 0; ti < 4; ti++)
        for (int rep = 0; rep < 6; rep++) {
          tps_pred p;
          tps_pred_opts o;
          tps_pred_opts_default(&o);
          if (tps_pred_init_spec(&p, &gpus[gi], tps[ti], paths[pi], &sh, 3584, &o) != 0) { tps_pred_free(&p); continue; }
          long tmax = 4096 + 1000 * rep;
          for (int k = 0; k < TPS_PK_N; k++)
            if (tps_pred_knob_used(&p, k)) tps_pred_set_knob(&p, k, exp(0.8 * (gsl_rng_uniform(r) - 0.5) * (rep ? 1 : 0)));
          tps_crossover c;
          long be;
          tps_pred_crossover(&p, tmax, &c);
          tps_pred_breakeven_fast(&p, tmax, &be);
          n++;
          if (be != c.breakeven) {
            mism++;
            printf("  mismatch %s %s tp%d rep%d: fast %ld dense %ld\n", gpus[gi].name, paths[pi]->name, tps[ti], rep, be, c.breakeven);
          }
          if (be > 0) found++;
          tps_pred_free(&p);
        }
  gsl_rng_free(r);
  CHECK(mism == 0, "fast break-even differs from the dense scan in %d of %d cases", mism, n);
  CHECK(n > 100 && found > n / 4, "enough cases with a break-even (%d of %d)", found, n);
}

/* ---- the pessimistic rule on the H20 table ------------------------------------------- */
/* data/h20_tp8_fused_wqa_wkv.tsv, copied: tokens, replicated_us, split_us */
static const long h20_t[] = {6, 12, 24, 48, 96, 384, 1024, 2048, 4096, 8192, 16384};
static const double h20_rep[] = {14.1, 14.6, 19.2, 25.9, 49.6, 99.7, 239.4, 458.5, 903.6, 1794.7, 3570.8};
static const double h20_split[] = {23.2, 23.1, 21.1, 20.3, 21.5, 35.8, 66.8, 99.7, 173.3, 346.9, 635.4};

static void test_pessimistic(void) {
  tps_gpu h20 = mkgpu("H20", 78, 9, 0, 148, 296, 4000, 450, 18, 1);
  tps_gpu h100 = mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1);
  tps_gpu h200 = mkgpu("H200-SXM", 132, 9, 0, 989, 1979, 4800, 450, 18, 1);
  tps_gpu b200 = mkgpu("B200", 148, 10, 0, 2250, 4500, 7700, 900, 18, 1);
  tps_split_data d;
  memset(&d, 0, sizeof d);
  d.n = 11; d.tokens = h20_t; d.replicated_us = h20_rep; d.split_us = h20_split; d.tp = 8;
  d.shape.k = 5120; d.shape.n = 1792; d.shape.out_bytes = 2; d.out_bytes_per_token = 3584;
  d.gather_cap_bytes = 2097152; d.path = &tps_path_marlin_w8a16; d.sms = 78;
  tps_pred p;
  tps_pred_opts o;
  tps_pred_opts_default(&o);
  tps_gemm_curve *c = tps_gemm_curve_alloc(h20_t, h20_rep, 11);
  tps_gemm_model cm;
  memset(&cm, 0, sizeof cm);
  cm.kind = TPS_GEMM_CURVE; cm.curve = c;
  const tps_gpu *targets[2] = {&h100, &h200};
  for (int i = 0; i < 2; i++) {
    CHECK(tps_pred_init_pessimistic(&p, &d, &h20, targets[i], 8, &tps_path_marlin_w8a16, &o) == 0, "pessimistic init");
    /* at a measured size >= 1024 rows the replicated GEMM is the H20 time / 6.7 */
    CHECK(near(tps_pred_replicated_us(&p, 1024), 239.4 / 6.7, 1e-9), "rep(1024) %.4f", tps_pred_replicated_us(&p, 1024));
    CHECK(near(tps_pred_replicated_us(&p, 4096), 903.6 / 6.7, 1e-9), "rep(4096)");
    /* 512 rows: 3.7x; 362 rows: log2(362) = 8.4998 -> 2 + 1.7*0.4998 */
    CHECK(near(tps_pred_gemm_us(&p, 512), tps_gemm_time_us(&cm, NULL, 512) / 3.7, 1e-9), "gemm(512)");
    double s362 = 2.0 + 1.7 * (log(362.0) / log(2.0) - 8.0);
    CHECK(near(tps_pred_gemm_us(&p, 362), tps_gemm_time_us(&cm, NULL, 362) / s362, 1e-9), "gemm(362)");
    CHECK(near(tps_pred_gemm_us(&p, 100), tps_gemm_time_us(&cm, NULL, 100) / 2.0, 1e-9), "gemm(100)");
    /* at a measured T the gather is the H20 one: split = H20 split - GEMM_H20(rows)*(1 - 1/2)
     * for rows <= 256, e.g. T = 2048 (256 rows): 99.7 - c(256)/2 */
    double want = 99.7 - tps_gemm_time_us(&cm, NULL, 256) / 2.0;
    CHECK(near(tps_pred_split_us(&p, 2048, NULL), want, 1e-9), "split(2048) %.3f want %.3f", tps_pred_split_us(&p, 2048, NULL), want);
    tps_crossover cr;
    CHECK(tps_pred_crossover(&p, 16384, &cr) == 0, "pessimistic crossover");
    CHECK(cr.breakeven >= 1000 && cr.breakeven <= 1600, "%s pessimistic break-even %ld in [1000, 1600]", targets[i]->name, cr.breakeven);
    /* the split loses at 1024 (H20 split 66.8 vs replicated 239.4/6.7 = 35.7 needs the GEMM
     * part of the split, c(128)/2 ~ 29, plus the gather 66.8 - c(128) ~ 9.5: 38 > 35.7)
     * and wins at 2048 (99.7 - c(256)/2 ~ 59 < 458.5/6.7 = 68.4) */
    CHECK(tps_pred_split_us(&p, 1024, NULL) > tps_pred_replicated_us(&p, 1024), "loses at 1024");
    CHECK(tps_pred_split_us(&p, 2048, NULL) < tps_pred_replicated_us(&p, 2048), "wins at 2048");
    tps_interval iv;
    CHECK(tps_pred_interval(&p, 16384, NULL, &iv) == 0 && isnan(iv.lo), "a rule has no interval");
    tps_pred_free(&p);
  }
  CHECK(tps_pred_init_pessimistic(&p, &d, &h20, &h100, 4, &tps_path_marlin_w8a16, &o) == TPS_NA, "TP4 n/a");
  tps_pred_free(&p);
  CHECK(tps_pred_init_pessimistic(&p, &d, &h20, &b200, 8, &tps_path_marlin_w8a16, &o) == TPS_NA, "B200 n/a");
  tps_pred_free(&p);
  CHECK(tps_pred_init_pessimistic(&p, &d, &h20, &h20, 8, &tps_path_marlin_w8a16, &o) == TPS_NA, "H20 itself n/a");
  tps_pred_free(&p);
  tps_gemm_curve_free(c);
}

/* ---- interval, sensitivity, inverse (spec-only) --------------------------------------- */
static void test_uncertainty(void) {
  tps_gpu h200 = mkgpu("H200-SXM", 132, 9, 0, 989, 1979, 4800, 450, 18, 1);
  tps_gemm_shape sh = {5120, 1792, 2.0};
  tps_pred p;
  tps_pred_opts o;
  tps_pred_opts_default(&o);
  CHECK(tps_pred_init_spec(&p, &h200, 8, &tps_path_marlin_w8a16, &sh, 3584, &o) == 0, "H200 spec");
  long be;
  tps_pred_breakeven(&p, 16384, &be);
  CHECK(be > 1, "H200 spec break-even %ld", be);
  tps_unc_opts u = {300, 7, 0.90};
  tps_interval iv;
  CHECK(tps_pred_interval(&p, 16384, &u, &iv) == 0, "interval");
  CHECK(iv.nsamples == 300 && iv.prior_part && !iv.fit_part, "samples %d", iv.nsamples);
  CHECK(iv.lo <= iv.median && iv.median <= iv.hi && iv.lo < iv.hi, "ordered %g %g %g", iv.lo, iv.median, iv.hi);
  /* the nominal break-even lies inside the 90% interval of the priors' lognormal spread */
  CHECK(iv.lo <= be && be <= iv.hi, "nominal %ld in [%g, %g]", be, iv.lo, iv.hi);
  /* the same seed gives the same interval */
  tps_interval iv2;
  tps_pred_interval(&p, 16384, &u, &iv2);
  CHECK(iv2.lo == iv.lo && iv2.hi == iv.hi, "reproducible");

  /* sensitivity: a faster GEMM (more TFLOPS) leaves less to save, so the break-even
   * moves up or stays; a faster gather moves it down or keeps it */
  tps_sens s[TPS_PK_N];
  int ns;
  CHECK(tps_pred_sensitivity(&p, 16384, s, &ns) == 0 && ns >= 6, "sensitivity %d", ns);
  for (int i = 0; i < ns; i++) {
    if (s[i].knob == TPS_PK_GEMM_TFLOPS) CHECK(s[i].be_minus <= be && be <= s[i].be_plus, "tflops direction %ld %ld %ld", s[i].be_minus, be, s[i].be_plus);
    if (s[i].knob == TPS_PK_AG_CUSTOM_BW) CHECK(s[i].be_minus >= be && be >= s[i].be_plus, "custom bw direction");
  }

  /* inverse: at x the split and the replicated GEMM tie at T (checked by evaluating the
   * context with the knobs set by hand), and 5% either way decides */
  long T = 4096; /* well above the break-even */
  double x;
  CHECK(tps_pred_inverse(&p, TPS_INV_LINK, T, &x) == 0 && x > 0 && isfinite(x), "inverse link %g", x);
  tps_pred q = p;
  tps_pred_set_knob(&q, TPS_PK_AG_CUSTOM_BW, x);
  tps_pred_set_knob(&q, TPS_PK_AG_NCCL_BW, x);
  tps_pred_set_knob(&q, TPS_PK_AG_INTERNODE, x);
  CHECK(near(tps_pred_split_us(&q, T, NULL), tps_pred_replicated_us(&q, T), 1e-6), "tie at the link root");
  tps_pred_set_knob(&q, TPS_PK_AG_CUSTOM_BW, x * 1.05);
  tps_pred_set_knob(&q, TPS_PK_AG_NCCL_BW, x * 1.05);
  CHECK(tps_pred_split_us(&q, T, NULL) < tps_pred_replicated_us(&q, T), "pays above the link root");
  double y;
  CHECK(tps_pred_inverse(&p, TPS_INV_GEMM, T, &y) == 0 && y > 0 && isfinite(y), "inverse gemm %g", y);
  q = p;
  tps_pred_set_knob(&q, TPS_PK_GEMM_TFLOPS, y);
  CHECK(near(tps_pred_split_us(&q, T, NULL), tps_pred_replicated_us(&q, T), 1e-6), "tie at the gemm root");
  tps_pred_set_knob(&q, TPS_PK_GEMM_TFLOPS, y * 0.95);
  CHECK(tps_pred_split_us(&q, T, NULL) < tps_pred_replicated_us(&q, T), "pays with a slower GEMM");
  /* "from T on": just above x_from the break-even is <= T, just below it is not (checked
   * with the dense scan of contexts whose knobs are set by tps_pred_inverse_apply) */
  for (int what = 0; what < 2; what++) {
    double xf;
    CHECK(tps_pred_inverse_from(&p, what, T, 16384, &xf) == 0 && xf > 0 && isfinite(xf), "inverse_from %d: %g", what, xf);
    double up = what == TPS_INV_LINK ? 1.01 : 1 / 1.01;
    long b1, b2;
    q = p;
    tps_pred_inverse_apply(&q, what, xf * up);
    tps_pred_breakeven(&q, 16384, &b1);
    q = p;
    tps_pred_inverse_apply(&q, what, xf / up);
    tps_pred_breakeven(&q, 16384, &b2);
    CHECK(b1 >= 1 && b1 <= T, "from %ld on with x_from: break-even %ld", T, b1);
    CHECK(b2 < 0 || b2 > T, "just short of x_from: break-even %ld beyond %ld", b2, T);
  }
  /* at T = 6 (one row per rank) the floors dominate: even 1000x the link cannot pay */
  CHECK(tps_pred_inverse(&p, TPS_INV_LINK, 6, &x) == TPS_NA && isinf(x), "T=6 impossible");
  tps_pred_free(&p);
}

/* ---- model mode: a real fit of the H20 table ------------------------------------------ */
static void test_model(void) {
  tps_gpu h20 = mkgpu("H20", 78, 9, 0, 148, 296, 4000, 450, 18, 1);
  tps_gpu h200 = mkgpu("H200-SXM", 132, 9, 0, 989, 1979, 4800, 450, 18, 1);
  h20.nccl_link_gbps = h200.nccl_link_gbps = 20.6;
  tps_split_data d;
  memset(&d, 0, sizeof d);
  d.n = 11; d.tokens = h20_t; d.replicated_us = h20_rep; d.split_us = h20_split; d.tp = 8;
  d.shape.k = 5120; d.shape.n = 1792; d.shape.out_bytes = 2; d.out_bytes_per_token = 3584;
  d.gather_cap_bytes = 2097152; d.path = &tps_path_marlin_w8a16; d.sms = 78; d.gpu = &h20;
  d.gather = TPS_GATHER_AUTO;
  static tps_fit f;
  char msg[256];
  tps_fit_opts fo = {0, 0};
  int st = tps_fit_split(&d, &fo, &f, msg, sizeof msg);
  CHECK(st == 0, "fit: %s", msg);
  if (st) return;
  tps_pred p;
  CHECK(tps_pred_init_model(&p, &f, &h20, &h20, 8, &tps_path_marlin_w8a16, NULL) == 0, "init model H20");
  /* on the measured GPU, TP and path the context is the fit itself (the fit's own evaluation, model/fit/fit_core.c) */
  for (int i = 0; i < 11; i++) {
    long t = h20_t[i];
    CHECK(near(tps_pred_replicated_us(&p, t), tps_fit_replicated_us(&f, t, NULL), 1e-9), "rep = fit at %ld", t);
    CHECK(near(tps_pred_split_us(&p, t, NULL), tps_fit_split_us(&f, t, NULL, NULL), 1e-9), "split = fit at %ld", t);
  }
  /* acceptance: the break-even lies in (24, 48], like the measurement (19.2 < 21.1 at 24,
   * 25.9 > 20.3 at 48) */
  long be;
  tps_pred_breakeven(&p, 16384, &be);
  CHECK(be > 24 && be <= 48, "H20 TP8 marlin break-even %ld in (24, 48]", be);
  tps_unc_opts u = {100, 3, 0.90};
  tps_interval iv;
  CHECK(tps_pred_interval(&p, 16384, &u, &iv) == 0 && iv.fit_part && !iv.prior_part, "H20 interval from the fit alone");
  CHECK(iv.lo <= be && be <= iv.hi, "H20 nominal %ld in [%g, %g]", be, iv.lo, iv.hi);
  tps_pred_free(&p);
  /* transferred: priors join, and the fast break-even of perturbed fits = the dense scan */
  CHECK(tps_pred_init_model(&p, &f, &h20, &h200, 8, &tps_path_marlin_w8a16, NULL) == 0, "init model H200");
  CHECK(p.compute_rsd > 0 && p.gather_rsd > 0, "transfer adds the priors' spread");
  CHECK(tps_pred_interval(&p, 16384, &u, &iv) == 0 && iv.fit_part && iv.prior_part, "H200 interval");
  tps_pred_breakeven(&p, 16384, &be);
  CHECK(iv.lo <= iv.hi && (be < 0 || (iv.lo <= be && be <= iv.hi)), "H200 nominal %ld in [%g, %g]", be, iv.lo, iv.hi);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int mism = 0;
  for (int k = 0; k < 30; k++) {
    tps_pred q = p;
    tps_pred_set_knob(&q, TPS_PK_GEMM_TFLOPS, exp(0.5 * (gsl_rng_uniform(r) - 0.5)));
    tps_pred_set_knob(&q, TPS_PK_GEMM_FLOOR, exp(0.5 * (gsl_rng_uniform(r) - 0.5)));
    tps_pred_set_knob(&q, TPS_PK_AG_CUSTOM_BW, exp(0.5 * (gsl_rng_uniform(r) - 0.5)));
    long a, b;
    tps_pred_breakeven(&q, 16384, &a);
    tps_pred_breakeven_fast(&q, 16384, &b);
    mism += a != b;
  }
  gsl_rng_free(r);
  CHECK(mism == 0, "fast != dense in %d of 30 perturbed H200 models", mism);
  /* the draws behind the interval (tps_pred_draws, also the plot bands): with the same seed,
   * the dense break-even of every accepted draw, sorted, gives the interval's quantiles */
  {
    tps_unc_opts u2 = {60, 11, 0.90};
    tps_interval iv2;
    CHECK(tps_pred_interval(&p, 16384, &u2, &iv2) == 0, "H200 interval, 60 draws");
    tps_pred_draws *dr = NULL;
    CHECK(tps_pred_draws_alloc(&p, 11, &dr) == TPS_OK && dr, "draws alloc");
    double bes[60];
    int got = 0, rej = 0;
    while (dr && got < 60 && rej < 600) {
      tps_pred q;
      long b;
      if (tps_pred_draws_next(dr, &q) != 0 || tps_pred_breakeven(&q, 16384, &b) != 0) { rej++; continue; }
      bes[got++] = b < 0 ? 16385.0 : (double)b;
    }
    tps_pred_draws_free(dr);
    CHECK(got == 60 && iv2.nsamples == 60 && iv2.nrejected == rej, "draws: %d accepted (%d rejected), interval %d (%d)",
          got, rej, iv2.nsamples, iv2.nrejected);
    if (got == 60) {
      gsl_sort(bes, 1, 60);
      double lo = round(gsl_stats_quantile_from_sorted_data(bes, 1, 60, 0.05));
      double hi = round(gsl_stats_quantile_from_sorted_data(bes, 1, 60, 0.95));
      CHECK(lo == iv2.lo && hi == iv2.hi, "draws give [%g, %g], interval [%g, %g]", lo, hi, iv2.lo, iv2.hi);
    }
    tps_pred pess;
    memset(&pess, 0, sizeof pess);
    pess.scaling = TPS_SCALING_PESSIMISTIC;
    CHECK(tps_pred_draws_alloc(&pess, 1, &dr) == TPS_NA && !dr, "a rule has no draws");
  }
  tps_pred_free(&p);
}

/* A GEMM part (K 5120, N 1792) with the datasheet model of dense-bf16 on gpu, nothing measured
 * yet (spread 0.1; measured points: the caller's). */
static void spec_gemm_part(tps_part *g, const tps_gpu *gpu) {
  memset(g, 0, sizeof *g);
  g->what = TPS_PART_GEMM;
  g->meas_rsd = TPS_PART_MEASURED_RSD;
  g->model.kind = TPS_PM_GEMM;
  g->model.prov = TPS_PROV_SPEC;
  g->model.rsd = 0.1;
  g->model.shape = (tps_gemm_shape){5120, 1792, 2};
  CHECK(tps_gemm_from_spec(&g->model.gm, &tps_path_dense_bf16, gpu) == 0, "spec model");
}

/* ---- parts (model/predict/parts.h) and the parts scaling ------------------------------------- */
static void test_parts(void) {
  /* measured curve: exact at the points, monotone between them (Steffen), NaN outside */
  double x[5] = {1, 2, 4, 8, 16}, t[5] = {10, 10, 11, 20, 40};
  tps_mcurve *c = tps_mcurve_alloc(x, t, 5);
  CHECK(c != NULL, "mcurve");
  for (int i = 0; i < 5; i++) CHECK(near(tps_mcurve_eval(c, x[i]), t[i], 1e-12), "exact at %g", x[i]);
  double prev = 0;
  int mono = 1;
  for (double v = 1; v <= 16; v += 0.25) { double y = tps_mcurve_eval(c, v); mono &= y >= prev - 1e-12; prev = y; }
  CHECK(mono, "nondecreasing data give a nondecreasing curve");
  /* between 2 and 4 in log-log: at sqrt(8) the value lies between 10 and 11 */
  double mid = tps_mcurve_eval(c, sqrt(8.0));
  CHECK(mid >= 10 && mid <= 11, "between points %g", mid);
  CHECK(isnan(tps_mcurve_eval(c, 0.5)) && isnan(tps_mcurve_eval(c, 17)), "NaN outside");
  CHECK(near(tps_mcurve_max(c, 3, 9), 20, 1e-12) && tps_mcurve_max(c, 2.5, 3.5) == 0, "measured max inside a range");
  double bad[3] = {1, 1, 2};
  CHECK(tps_mcurve_alloc(bad, t, 3) == NULL, "x not increasing refused");
  tps_mcurve_free(c);

  /* a GEMM part: measured 1..16 rows, a spec model outside, anchored at both ends */
  tps_gpu h100 = mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1);
  tps_part g;
  spec_gemm_part(&g, &h100);
  g.meas = tps_mcurve_alloc(x, t, 5);
  CHECK(tps_part_finish(&g) == TPS_OK, "anchors");
  int out = 0;
  CHECK(near(tps_part_eval(&g, 16, &out), 40, 1e-12) && !out, "measured end, inside");
  /* just past the end: the model times measured(16)/model(16), so no step */
  double m16 = tps_part_model_eval(&g.model, 16, 0), m17 = tps_part_model_eval(&g.model, 17, 0);
  CHECK(near(tps_part_eval(&g, 17, &out), m17 * 40 / m16, 1e-12) && out, "anchored outside, flagged");
  CHECK(tps_part_covers(&g, 1, 16) && !tps_part_covers(&g, 1, 17), "covers");
  CHECK(tps_part_rsd(&g, 1, 16) == TPS_PART_MEASURED_RSD && tps_part_rsd(&g, 1, 64) == 0.1, "spread: measured, then model");
  CHECK(tps_part_tabulate(&g, 64) == TPS_OK && g.ntab == 64 && near(g.tab[8], 20, 1e-12), "table");
  /* without a model: NaN outside */
  tps_part g2 = g;
  g2.model.kind = TPS_PM_NONE;
  g2.tab = NULL;
  CHECK(isnan(tps_part_eval(&g2, 17, NULL)), "no model: NaN outside");

  /* a parts context: GEMM = the part, gather = a measured NCCL curve that is not monotone
   * at small sizes (as nccl-tests' are); its break-even by bisection equals the dense scan
   * and a brute-force scan here */
  double gx[6] = {1024, 65536, 1048576, 4194304, 16777216, 268435456}, gt[6] = {12, 11, 14, 25, 70, 900};
  tps_part a;
  memset(&a, 0, sizeof a);
  a.what = TPS_PART_GATHER;
  a.backend = TPS_GATHER_NCCL;
  a.ranks = 8;
  a.meas = tps_mcurve_alloc(gx, gt, 6);
  a.meas_rsd = TPS_PART_MEASURED_RSD;
  double hx[20], ht[20];
  for (int i = 0; i < 20; i++) { hx[i] = 1 << i; ht[i] = 9.0 + 0.02 * hx[i] + (i == 3 ? 3 : 0); } /* a bump at 8 rows */
  tps_part h;
  memset(&h, 0, sizeof h);
  h.what = TPS_PART_GEMM;
  h.meas = tps_mcurve_alloc(hx, ht, 20);
  h.meas_rsd = TPS_PART_MEASURED_RSD;
  CHECK(tps_part_tabulate(&h, 16384) == TPS_OK && !h.mono, "a GEMM with a bump is not monotone");
  tps_pred_parts pp;
  memset(&pp, 0, sizeof pp);
  pp.gemm = &h;
  pp.gather[TPS_GATHER_NCCL] = &a;
  pp.shape = (tps_gemm_shape){5120, 1792, 2};
  pp.compute_rsd = pp.gather_rsd = TPS_PART_MEASURED_RSD;
  tps_pred_opts o;
  tps_pred_opts_default(&o);
  o.backend = TPS_GATHER_NCCL;
  tps_pred p;
  CHECK(tps_pred_init_parts(&p, &h100, 8, &tps_path_dense_bf16, &pp, &o) == TPS_OK, "parts context");
  CHECK(near(tps_pred_replicated_us(&p, 8), ht[3], 1e-12), "GEMM = the part");
  CHECK(near(tps_pred_gather_us(&p, 2048, NULL), tps_part_eval(&a, 8.0 * 256 * 3584, NULL), 1e-12), "gather = the part");
  /* the provenance record of a row (model/predict/resolve.h): inside the measured ranges each
   * part takes its measurement's provenance as given; a part with no measurement is spec-only */
  int gprov[TPS_NGATHERS];
  for (int i = 0; i < TPS_NGATHERS; i++) gprov[i] = TPS_PROV_TRANSFERRED;
  gprov[TPS_GATHER_NCCL] = TPS_PROV_MEASURED;
  tps_row_prov rp = tps_resolve_row_prov(&p, TPS_PROV_SIBLING, gprov, 2048);
  CHECK(rp.replicated == TPS_PROV_SIBLING && rp.split == TPS_PROV_SIBLING && rp.gather == TPS_PROV_MEASURED &&
            rp.backend == TPS_GATHER_NCCL && tps_resolve_has_gather(&p), "row record %d %d %d %d", rp.replicated, rp.split,
        rp.gather, rp.backend);
  tps_pred sp;
  CHECK(tps_pred_init_spec(&sp, &h100, 1, &tps_path_dense_bf16, &pp.shape, 3584, &o) == TPS_OK, "spec context TP1");
  rp = tps_resolve_row_prov(&sp, TPS_PROV_MEASURED, gprov, 64);
  CHECK(!tps_resolve_has_gather(&sp) && rp.backend == -1 && rp.replicated == TPS_PROV_SPEC && rp.split == TPS_PROV_SPEC,
        "spec TP1: spec-only parts, no gather");
  tps_pred_free(&sp);
  long be_dense, be_fast, be_brute = -1;
  CHECK(tps_pred_breakeven(&p, 16384, &be_dense) == TPS_OK && tps_pred_breakeven_fast(&p, 16384, &be_fast) == TPS_OK, "break-evens");
  for (long T = 16384; T >= 1; T--) {
    double rep = tps_part_eval(&h, (double)T, NULL);
    double spl = tps_part_eval(&h, (double)((T + 7) / 8), NULL) + tps_part_eval(&a, 8.0 * ((T + 7) / 8) * 3584, NULL);
    if (!(spl < rep)) break;
    be_brute = T;
  }
  CHECK(be_dense == be_brute && be_fast == be_brute, "break-even dense %ld fast %ld brute %ld", be_dense, be_fast, be_brute);
  /* the interval: measured parts, 3% spreads, holds the nominal break-even */
  tps_unc_opts uo = {200, 1, TPS_INTERVAL_LEVEL};
  tps_interval iv;
  long be2;
  CHECK(tps_pred_analyze_be(&p, 16384, &uo, &be2, &iv) == TPS_OK && be2 == be_brute, "analyze_be");
  CHECK(iv.lo <= be_brute && be_brute <= iv.hi && iv.lo < iv.hi, "interval %g..%g holds %ld", iv.lo, iv.hi, be_brute);
  /* a knob on the GEMM throughput divides the part's time */
  tps_pred q = p;
  CHECK(tps_pred_set_knob(&q, TPS_PK_GEMM_TFLOPS, 2.0) == TPS_OK && near(tps_pred_replicated_us(&q, 8), ht[3] / 2, 1e-12), "knob");
  tps_part_free(&g);
  tps_part_free(&a);
  tps_part_free(&h);

  /* our W8A16 kernels' model moved to another SM90 GPU: streaming by HBM, compute by peak */
  tps_xw8_model w, w2;
  tps_gpu h200 = mkgpu("H200-SXM", 132, 9, 0, 989, 1979, 4800, 450, 18, 1), h20 = mkgpu("H20", 78, 9, 0, 148, 296, 4000, 450, 18, 1);
  tps_xw8_prior(&w, &h200);
  tps_xw8_transfer(&w2, &w, &h200, &h20);
  CHECK(near(w2.p[TPS_XW8_STREAM_GBPS], w.p[TPS_XW8_STREAM_GBPS] * 4000 / 4800, 1e-12) &&
        near(w2.p[TPS_XW8_PLAN_SCALE], w.p[TPS_XW8_PLAN_SCALE] / ((148.0 / 78) / (989.0 / 132)), 1e-12) &&
        w2.p[TPS_XW8_STREAM_US] == w.p[TPS_XW8_STREAM_US], "xw8 transfer");
}

/* Parts built in model/ on first use (tps_pred_init_ready, tps_partcache): the points handed
 * down as plain data become the curve once, even from several threads; what the question may
 * use and the refusals of --measured-only are decided here, without files. */
static double *dup_arr(const double *v, size_t n) {
  double *d = malloc(n * sizeof *d);
  if (d) memcpy(d, v, n * sizeof *d);
  return d;
}

typedef struct {
  tps_partcache *c;
  tps_pred_sources src;
  const tps_gpu *gpu;
  const tps_pred_opts *o;
  int st;
  const void *gtab;
} ready_job;

static void *ready_thread(void *arg) {
  ready_job *j = arg;
  tps_pred p;
  tps_pred_check chk;
  j->st = tps_pred_init_ready(&p, j->c, j->gpu, 8, &tps_path_dense_bf16, &j->src, j->o, &chk);
  j->gtab = p.gtab;
  if (j->st == TPS_OK) tps_pred_free(&p);
  return NULL;
}

static void test_ready(void) {
  tps_gpu h100 = mkgpu("H100-SXM", 132, 9, 0, 989, 1979, 3350, 450, 18, 1);
  const double x[5] = {1, 2, 4, 8, 16}, t[5] = {10, 10, 11, 20, 40};
  const double gx[6] = {1024, 65536, 1048576, 4194304, 16777216, 268435456}, gt[6] = {12, 11, 14, 25, 70, 900};
  tps_part g, a;
  spec_gemm_part(&g, &h100);
  memset(&a, 0, sizeof a);
  g.px = dup_arr(x, 5), g.pt = dup_arr(t, 5), g.pn = 5, g.anchor = 1;
  a.what = TPS_PART_GATHER;
  a.backend = TPS_GATHER_NCCL;
  a.ranks = 8;
  a.px = dup_arr(gx, 6), a.pt = dup_arr(gt, 6), a.pn = 6;
  a.meas_rsd = TPS_PART_MEASURED_RSD;
  tps_partcache *c = tps_partcache_alloc(16384);
  CHECK(c != NULL, "cache");
  tps_pred_opts o;
  tps_pred_opts_default(&o);
  o.backend = TPS_GATHER_NCCL;
  tps_pred_sources src;
  memset(&src, 0, sizeof src);
  src.gemm = &g;
  src.gemm_prov = TPS_PROV_MEASURED;
  src.gather[TPS_GATHER_NCCL] = &a;
  src.gather_prov[TPS_GATHER_NCCL] = TPS_PROV_SIBLING;
  src.shape = (tps_gemm_shape){5120, 1792, 2};
  src.out_bytes_per_token = 3584;
  src.tmax = 16384;
  /* four threads ask at once: one builds, every one gets a context */
  ready_job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (ready_job){c, src, &h100, &o, -1, NULL};
    CHECK(pthread_create(&th[i], NULL, ready_thread, &jobs[i]) == 0, "thread");
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) CHECK(jobs[i].st == TPS_OK && jobs[i].gtab == NULL, "thread %d: context %d, no table yet", i, jobs[i].st);
  CHECK(g.built == 1 && a.built == 1 && g.meas && a.meas && !g.px && !a.px && g.pn == 0, "built once, points freed");
  double m16 = tps_part_model_eval(&g.model, 16, 0), m17 = tps_part_model_eval(&g.model, 17, 0);
  CHECK(near(tps_part_eval(&g, 17, NULL), m17 * 40 / m16, 1e-12), "the model anchored at the measured end");
  tps_pred p;
  tps_pred_check chk;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_OK, "context");
  /* 1..16 rows measured, the question 1..16384: outside; the gather's 28 KiB..56 MiB inside */
  CHECK(chk.gemm_outside && !chk.gather_outside[TPS_GATHER_NCCL] && !chk.spec_gather && chk.refusal == TPS_USE_OK,
        "coverage %d %d", chk.gemm_outside, chk.gather_outside[TPS_GATHER_NCCL]);
  /* the GEMM's spread: the measured one on its rows 1..16, the model's beyond them (one spread a part gave every row
   * the model's once the question left the table); a draw's two factors apply on their own rows */
  CHECK(p.compute_rsd == TPS_PART_MEASURED_RSD && p.compute_rsd_out == 0.1 && p.gather_rsd == TPS_PART_MEASURED_RSD,
        "spreads %g %g %g", p.compute_rsd, p.compute_rsd_out, p.gather_rsd);
  CHECK(near(p.gcov_lo, 1, 1e-12) && near(p.gcov_hi, 16, 1e-12), "covered rows %.17g..%.17g", p.gcov_lo, p.gcov_hi);
  {
    tps_pred q = p;
    q.gscale = 2, q.gscale_out = 3;
    CHECK(near(tps_pred_gemm_us(&q, 8), 2 * tps_part_eval(&g, 8, NULL), 1e-12) &&
          near(tps_pred_gemm_us(&q, 100), 3 * tps_part_eval(&g, 100, NULL), 1e-12), "inside x gscale, outside x gscale_out");
  }
  CHECK(near(tps_pred_gather_us(&p, 2048, NULL), tps_part_eval(&a, 8.0 * 256 * 3584, NULL), 1e-12), "gather = the part");
  tps_pred_free(&p);
  /* --measured-only: the sibling's gather first, then the GEMM outside its rows */
  src.measured_only = 1;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_EBADDATA &&
            chk.refusal == TPS_USE_SIBLING && chk.refused == TPS_GATHER_NCCL, "a sibling's gather refused");
  src.gather_prov[TPS_GATHER_NCCL] = TPS_PROV_MEASURED;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_EBADDATA &&
            chk.refusal == TPS_USE_OUTSIDE && chk.refused == -1, "the GEMM outside refused");
  src.tmax = 16;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_OK, "inside both: allowed");
  tps_pred_free(&p);
  src.tmax = 16384;
  src.measured_only = 0;
  /* a gather the rule uses without a part: the datasheet's, its spread */
  src.gather[TPS_GATHER_NCCL] = NULL;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_OK && chk.spec_gather &&
            chk.gather_outside[TPS_GATHER_NCCL] && p.gather_rsd == TPS_PRED_GATHER_RSD, "spec gather");
  tps_pred_free(&p);
  src.gather[TPS_GATHER_NCCL] = &a;
  /* table mode: the GEMM's table of 1..tmax and one gather table, shared */
  tps_partcache_tables(c, 1);
  const void *gt1 = NULL;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_OK && g.tab && g.ntab == 16384 &&
            p.gtab != NULL, "tables made");
  gt1 = p.gtab;
  tps_pred_free(&p);
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_OK && p.gtab == gt1, "table shared");
  tps_pred_free(&p);
  /* parts that cannot be built: points not increasing; a GEMM with no time at tmax rows */
  const double bx[3] = {1, 1, 2}, bt[3] = {1, 2, 3};
  tps_part b;
  memset(&b, 0, sizeof b);
  b.what = TPS_PART_GATHER;
  b.backend = TPS_GATHER_NCCL;
  b.px = dup_arr(bx, 3), b.pt = dup_arr(bt, 3), b.pn = 3;
  src.gather[TPS_GATHER_NCCL] = &b;
  for (int k = 0; k < 2; k++)
    CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_EBADDATA &&
              chk.refusal == TPS_USE_UNBUILT && chk.refused == TPS_GATHER_NCCL && b.fail == TPS_PART_FAIL_CURVE,
          "no curve (ask %d)", k);
  tps_part h;
  memset(&h, 0, sizeof h);
  h.what = TPS_PART_GEMM;
  h.px = dup_arr(x, 5), h.pt = dup_arr(t, 5), h.pn = 5;
  src.gemm = &h;
  src.gather[TPS_GATHER_NCCL] = &a;
  CHECK(tps_pred_init_ready(&p, c, &h100, 8, &tps_path_dense_bf16, &src, &o, &chk) == TPS_EBADDATA &&
            chk.refusal == TPS_USE_UNBUILT && chk.refused == -1 && h.fail == TPS_PART_FAIL_RANGE, "GEMM without 16384 rows");
  tps_partcache_free(c);
  tps_part_free(&g);
  tps_part_free(&a);
  tps_part_free(&b);
  tps_part_free(&h);
}

int main(void) {
  gsl_set_error_handler_off();
  test_parts();
  test_ready();
  test_crossover_generic();
  test_bands_generic();
  test_spec();
  test_dense_direct();
  test_fast_vs_dense();
  test_pessimistic();
  test_uncertainty();
  test_model();
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}

/* test_marlin_phys.c: the Marlin path obeys physics on every GPU of the bundled data/gpus.tsv
 * that can run it (issue 27 item 4).  For each such GPU:
 *  1. the GEMM part a prediction uses (src/evidence: the H20 table moved to a sibling, else
 *     the H20 fit transferred; TP 8, K 5120, N 1792) is non-decreasing in M over 1..16384
 *     beyond 3% (more rows never faster than fewer), and so is the split's GEMM at ceil(T/8);
 *  2. the transferred H20 fit (model/latency/gemm.h): its fixed part (floor, launch cost and
 *     serial reduction steps) does not move when the GPU's HBM or tensor peak doubles; what is
 *     above it halves (within the q-norm's 2-4%) where the weights stream (HBM x2 at 1 row,
 *     where its bytes take >= 2x the 16-row block's compute: every GPU but the H20) and where it
 *     computes (peak x2 at 16384 rows), and stays within 0.5% under the other change; at 1 row
 *     each change lowers it, neither below half;
 *  3. the fixed part at 1 row is the H20 fit's, computed by hand: launch_us + reduce_us x 1
 *     block x (SMs / 7 column tiles - 1) (N 1792 / 256-column tiles = 7);
 *  4. tps_gemm_time_env_us equals the running maximum of the launch model over every row
 *     count 1..m (a full scan at a few m), and the moved sibling with the H20 fit
 *     (tps_resolve_sibling_fit_us) returns a time unchanged when target = sibling.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/path.h"
#include "model/latency/gemm.h"
#include "model/predict/predict.h"
#include "model/predict/resolve.h"
#include "src/base/util.h"
#include "src/evidence/evidence.h"
#include "src/evidence/fit_from_file.h"
#include "src/io/gpus.h"
#include "tests/unit/expect.h"

enum { TMAX = 16384 };

static double rest(const tps_gemm_model *g, const tps_gemm_shape *s, long m) {
  return tps_gemm_time_us(g, s, m) - tps_gemm_fixed_us(g, s, m);
}

/* 2 and 3 for one GPU */
static void check_scaling(const tps_fit *h20, const tps_gpu *src, const tps_gpu *g) {
  const tps_path *mp = &tps_path_marlin_w8a16;
  tps_gemm_shape sh = {5120, 1792, 2.0};
  tps_gemm_model m0, mh, mc;
  tps_gpu gh = *g, gc = *g;
  gh.hbm_gbps *= 2;
  gc.bf16_tflops *= 2;
  gc.fp8_tflops *= 2;
  if (tps_gemm_transfer(&m0, &h20->gemm, src, g, mp) || tps_gemm_transfer(&mh, &h20->gemm, src, &gh, mp) ||
      tps_gemm_transfer(&mc, &h20->gemm, src, &gc, mp)) {
    CHECK(0, "%s: the H20 fit does not transfer", g->name);
    return;
  }
  long ms[3] = {1, 96, TMAX};
  for (int i = 0; i < 3; i++) {
    double f0 = tps_gemm_fixed_us(&m0, &sh, ms[i]);
    CHECK(f0 > 0 && f0 == tps_gemm_fixed_us(&mh, &sh, ms[i]) && f0 == tps_gemm_fixed_us(&mc, &sh, ms[i]),
          "%s: fixed part at %ld rows moves with HBM or peak (%g %g %g)", g->name, ms[i], f0, tps_gemm_fixed_us(&mh, &sh, ms[i]),
          tps_gemm_fixed_us(&mc, &sh, ms[i]));
  }
  double rs = rest(&mh, &sh, 1) / rest(&m0, &sh, 1), rsc = rest(&mc, &sh, 1) / rest(&m0, &sh, 1);
  double rc = rest(&mc, &sh, TMAX) / rest(&m0, &sh, TMAX), rch = rest(&mh, &sh, TMAX) / rest(&m0, &sh, TMAX);
  /* 1 row runs as 16 (one block): streaming where the weights take >= 2x the block's compute */
  double ts = (5120.0 * 1792 * mp->weight_bytes + 16 * 5120 * 2.0 + 16 * 1792 * 2.0) / (m0.p[TPS_GP_BW_GBPS] * 1e3);
  double tc = 16 * 2.0 * 5120 * 1792 / (m0.p[TPS_GP_TFLOPS] * 1e6);
  CHECK(rs >= 0.5 && rs < 1 && rsc < 1, "%s: 1 row: HBM x2 -> x%.4f, peak x2 -> x%.4f", g->name, rs,
        rsc);
  if (ts >= 2 * tc)
    CHECK(rs <= 0.52 && rsc >= 0.995, "%s: 1 row streams (%.2f vs %.2f us): HBM x2 -> x%.4f, peak x2 -> x%.4f", g->name, ts, tc,
          rs, rsc);
  CHECK(rc >= 0.5 && rc <= 0.54 && rch >= 0.995, "%s: %d rows (computes): peak x2 -> x%.4f, HBM x2 -> x%.4f", g->name, TMAX,
        rc, rch);
  double want = h20->gemm.p[TPS_GP_FLOOR_US] + h20->gemm.p[TPS_GP_LAUNCH_US] +
                h20->gemm.p[TPS_GP_REDUCE_US] * 1.0 * ((double)g->sms / 7.0 - 1.0);
  CHECK(fabs(tps_gemm_fixed_us(&m0, &sh, 1) - want) < 1e-9, "%s: fixed part at 1 row %g us, by hand %g", g->name,
        tps_gemm_fixed_us(&m0, &sh, 1), want);
  /* 4: the envelope is the running maximum over every row count */
  long probe[4] = {127, 200, 1100, 2047};
  double run = 0;
  for (long m = 1, i = 0; m <= 2047; m++) {
    double t = tps_gemm_time_us(&m0, &sh, m);
    if (t > run) run = t;
    if (m == probe[i]) {
      double env = tps_gemm_time_env_us(&m0, &sh, m);
      CHECK(fabs(env - run) <= 1e-9 * run, "%s: envelope at %ld rows %g us, running maximum %g", g->name, m, env, run);
      i++;
    }
  }
  double t = tps_resolve_sibling_fit_us(&h20->gemm, src, g, g, mp, 96, 1792, 5120, 40.0, NULL, NULL);
  CHECK(fabs(t - 40.0) < 1e-9, "%s: moved to itself 40 us -> %g", g->name, t);
}

/* 1 for one GPU: returns 1 when checked */
static int check_monotone(tps_partset *ps, const tps_gpu *g) {
  tps_pred_opts po;
  tps_pred_opts_default(&po);
  tps_pred p;
  tps_err e;
  tps_err_clear(&e);
  int rc = tps_partset_context(ps, g, 8, &tps_path_marlin_w8a16, &po, NULL, 0, &p, NULL, &e);
  if (rc != 0) return 0;
  double run_r = 0, run_s = 0;
  long bad_r = 0, bad_s = 0, first = 0;
  for (long t = 1; t <= TMAX; t++) {
    double r = tps_pred_replicated_us(&p, t), s = tps_pred_gemm_us(&p, tps_pred_rows_per_rank(&p, t));
    if (r < run_r / 1.03) { if (!bad_r) first = t; bad_r++; }
    if (s < run_s / 1.03) bad_s++;
    if (r > run_r) run_r = r;
    if (s > run_s) run_s = s;
  }
  CHECK(bad_r == 0 && bad_s == 0, "%s: Marlin GEMM falls by more than 3%% below an earlier M at %ld rows (first %ld), split %ld",
        g->name, bad_r, first, bad_s);
  tps_pred_free(&p);
  return 1;
}

int main(void) {
  tps_gpu_table gt;
  tps_err e;
  tps_err_clear(&e);
  char gp[4096], hp[4096];
  if (tps_data_path("gpus.tsv", gp, sizeof gp, &e) || tps_gpus_load(gp, &gt, &e)) { printf("gpus: %s\n", e.msg); return 1; }
  tps_fit h20;
  int status;
  if (tps_data_path("h20_tp8_fused_wqa_wkv.tsv", hp, sizeof hp, &e) || tps_fit_file(hp, NULL, NULL, NULL, &h20, &status, &e)) {
    printf("h20 fit: %s\n", e.msg);
    return 1;
  }
  const tps_gpu *src = tps_gpus_find(&gt, "H20", &e);
  tps_partset *ps = NULL;
  tps_partset_opts o = {TMAX, 5120, 1792, 0, 0};
  if (!src || tps_partset_open(&ps, &gt, &o, &e)) { printf("open: %s\n", e.msg); return 1; }
  int nrun = 0, nchecked = 0;
  for (size_t i = 0; i < gt.n; i++) {
    const tps_gpu *g = &gt.gpu[i];
    if (g->cc_major * 10 + g->cc_minor < tps_path_marlin_w8a16.min_cc || !(g->bf16_tflops > 0)) continue;
    nrun++;
    check_scaling(&h20, src, g);
    nchecked += check_monotone(ps, g);
  }
  /* every GPU of the table but MI300X runs Marlin (sm80+); all of them predicted */
  CHECK(nrun >= 11 && nchecked == nrun, "%d GPUs run Marlin, %d predicted", nrun, nchecked);
  printf("marlin physics: %d GPUs checked\n", nchecked);
  tps_partset_free(ps);
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

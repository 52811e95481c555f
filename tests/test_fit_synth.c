/* test_fit_synth.c: the fit recovers known parameters from synthetic data.
 *
 * Truth: the model of model/gemm.h + model/allgather.h with chosen parameters (an H20-like
 * Marlin GEMM of K=5120, N=1792 on 78 SMs; custom gather up to the 2 MiB cap, NCCL above),
 * evaluated at 16 token counts from 4 to 32768.  Each of 200 seeds (gsl_rng mt19937) draws
 * multiplicative noise, measured = model * (1 + 0.03 z), z ~ N(0,1) (gsl_ran_gaussian),
 * for both columns, then fits.  Acceptance (issue 3): every fitted parameter's reported 95%
 * interval contains the true value in at least 90% of the seeds (expected ~95%).
 * Parameters the fit fixes at their priors are fixed at the truth here (bw_gbps and
 * floor_us priors are the true values), so they cannot spoil the count; the test also
 * requires that every seed converges and that each parameter is fitted in >= 90% of seeds.
 * A second check: with noise 0.1% the estimates are within 2% of the truth (a bias check
 * that does not depend on the intervals). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "fit.h"
#include "path.h"

static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

#define NT 16
static const long tok[NT] = {4, 8, 16, 24, 40, 48, 96, 160, 384, 640, 1024, 2048, 4096, 6144, 16384, 32768};

int main(void) {
  gsl_set_error_handler_off();
  tps_gpu h20;
  memset(&h20, 0, sizeof h20);
  snprintf(h20.name, sizeof h20.name, "H20");
  h20.sms = 78; h20.cc_major = 9; h20.bf16_tflops = 148; h20.hbm_gbps = 4000; h20.link_gbps = 450; h20.nvlink = 1;
  const tps_path *path = &tps_path_marlin_w8a16;
  /* the truth */
  tps_gemm_model g = {TPS_GEMM_PARAMETRIC, path, 78, {0}, NULL};
  g.p[TPS_GP_FLOOR_US] = 0.0;                     /* sliced paths: cost is per launch */
  g.p[TPS_GP_BW_GBPS] = 4000 * path->stream_eff;  /* = prior */
  g.p[TPS_GP_TFLOPS] = 84.0;
  g.p[TPS_GP_SHARP] = TPS_GEMM_DEFAULT_SHARP;
  g.p[TPS_GP_LAUNCH_US] = 8.5;
  g.p[TPS_GP_REDUCE_US] = 0.2;
  tps_ag_model a;
  tps_ag_from_spec(&a, &h20, 8);
  a.custom_floor_us = 7.0;
  a.custom_gbps = 260.0;
  double scale = 0.85;
  for (int p = 0; p < TPS_NPROTO; p++) a.busbw_gbps[p] *= scale;
  const char *names[] = {"tflops", "launch_us", "reduce_us", "ag_custom_floor_us", "ag_custom_gbps", "ag_nccl_bw_scale"};
  const double truth[] = {84.0, 8.5, 0.2, 7.0, 260.0, scale};
  enum { NP = 6 };
  tps_gemm_shape sh = {5120, 1792, 2.0};
  double rep0[NT], spl0[NT];
  for (int i = 0; i < NT; i++) {
    long r = (tok[i] + 7) / 8;
    rep0[i] = tps_gemm_time_us(&g, &sh, tok[i]);
    spl0[i] = tps_gemm_time_us(&g, &sh, r) + tps_ag_time_us(&a, 8.0 * r * 3584, 8, TPS_AG_AUTO, NULL, NULL);
  }
  tps_split_data d;
  memset(&d, 0, sizeof d);
  double rep[NT], spl[NT];
  d.n = NT; d.tokens = tok; d.replicated_us = rep; d.split_us = spl; d.tp = 8; d.shape = sh;
  d.out_bytes_per_token = 3584; d.gather_cap_bytes = 2097152; d.path = path; d.sms = 78; d.gpu = &h20;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  static tps_fit f;
  char msg[256];
  int covered[NP] = {0}, fitted[NP] = {0}, nok = 0;
  const int seeds = 200;
  for (int s = 0; s < seeds; s++) {
    gsl_rng_set(rng, (unsigned long)s + 1);
    for (int i = 0; i < NT; i++) {
      rep[i] = rep0[i] * (1 + 0.03 * gsl_ran_gaussian(rng, 1.0));
      spl[i] = spl0[i] * (1 + 0.03 * gsl_ran_gaussian(rng, 1.0));
    }
    if (tps_fit_split(&d, NULL, &f, msg, sizeof msg) != TPS_FIT_OK) { printf("seed %d: %s\n", s, msg); continue; }
    nok++;
    for (int k = 0; k < NP; k++) {
      int j = tps_fit_par_index(&f, names[k]);
      if (j < 0) continue;
      fitted[k]++;
      if (f.lo95[j] <= truth[k] && truth[k] <= f.hi95[j]) covered[k]++;
    }
  }
  CHECK(nok == seeds, "%d of %d fits converged", nok, seeds);
  for (int k = 0; k < NP; k++) {
    printf("%-20s fitted in %3d seeds, truth inside the 95%% interval in %3d (%.1f%%)\n", names[k], fitted[k],
           covered[k], fitted[k] ? 100.0 * covered[k] / fitted[k] : 0.0);
    CHECK(fitted[k] >= 0.9 * seeds, "%s fitted in only %d seeds", names[k], fitted[k]);
    CHECK(covered[k] >= 0.9 * fitted[k], "%s: coverage %d/%d < 90%%", names[k], covered[k], fitted[k]);
  }
  /* bias check with tiny noise */
  gsl_rng_set(rng, 12345);
  for (int i = 0; i < NT; i++) {
    rep[i] = rep0[i] * (1 + 0.001 * gsl_ran_gaussian(rng, 1.0));
    spl[i] = spl0[i] * (1 + 0.001 * gsl_ran_gaussian(rng, 1.0));
  }
  int st = tps_fit_split(&d, NULL, &f, msg, sizeof msg);
  CHECK(st == TPS_FIT_OK, "low-noise fit: %s", msg);
  for (int k = 0; k < NP && st == TPS_FIT_OK; k++) {
    int j = tps_fit_par_index(&f, names[k]);
    CHECK(j >= 0 && fabs(f.theta[j] / truth[k] - 1) < 0.02, "low noise: %s = %g, truth %g", names[k],
          j >= 0 ? f.theta[j] : NAN, truth[k]);
  }
  gsl_rng_free(rng);
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}

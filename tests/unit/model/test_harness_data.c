/* test_harness_data.c: the harness conversion (issue 27 item 3) judged leaving the GPU out, on
 * the two GPUs measured by both harnesses (H100 and H200: AIConfigurator's tables in
 * data/aic/ and tpsplit bench's data/h1x0_gemm_<path>.tsv, K 5120 N 1792).
 *
 * Each GPU's AIConfigurator curve (read through src/evidence, as `predict --gemm AIC` does:
 * N interpolated to 1792) is converted to the bench harness and compared with its bench table
 * at the table's rows, two ways, neither of which sees the held-out GPU's bench table:
 *  - sibling: by the other GPU's two tables (same architecture and fabric), as
 *    src/evidence does when the target lacks the harness asked and a sibling has both;
 *  - model: by the cross-GPU model's two harness forms, the fold fitted without the GPU
 *    (data/xgpu.fit), as `predict --gemm AIC --harness bench` does on a GPU without a sibling.
 * Asserts: native-fp8, where the harnesses differ by 25-45% (raw median >= 15%): the sibling
 * conversion's median <= 6%, the model's <= 12%; dense-bf16 (0-6% apart): neither more than
 * 1.5 points worse than not converting; the model-converted source names both harnesses.
 * Prints the table doc/predict.md quotes ("Harness"). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "model/core/harness.h"
#include "model/predict/parts.h"
#include "model/predict/resolve.h"
#include "src/base/util.h"
#include "src/evidence/evidence.h"
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "tests/unit/expect.h"

/* The GEMM part of g/path from the AIC table spec alone (no bundled data), in harness h (-1:
 * as measured), at rows x[0..n): into t.  src: its source line.  0 ok. */
static int part_at(const tps_gpu_table *gt, const tps_gpu *g, const tps_path *path, const char *aic_spec, int h,
                   const double *x, double *t, size_t n, char *src, size_t srcsz) {
  tps_err e;
  tps_partset *ps = NULL;
  tps_partset_opts o = {16384, 5120, 1792, 0, 1, h};
  if (tps_partset_open(&ps, gt, &o, &e) || tps_partset_user_gemm(ps, aic_spec, path, &e)) {
    printf("%s: %s\n", aic_spec, e.msg);
    tps_partset_free(ps);
    return -1;
  }
  tps_pred_opts po;
  tps_pred_opts_default(&po);
  tps_pred p;
  tps_partuse use;
  int rc = tps_partset_context(ps, g, 8, path, &po, NULL, 0, &p, &use, &e);
  if (rc != TPS_OK || !use.gemm) {
    printf("%s %s: context %d %s\n", g->name, path->name, rc, rc == TPS_NA ? p.why : e.msg);
    tps_partset_free(ps);
    return -1;
  }
  snprintf(src, srcsz, "%s", use.gemm->src);
  for (size_t i = 0; i < n; i++) t[i] = tps_part_gemm_us(&use.gemm->part, (long)x[i], NULL);
  tps_partset_free(ps);
  return 0;
}

/* median and max |t/ref - 1| */
static void errs(const double *t, const double *ref, size_t n, double *med, double *mx, const char *what) {
  double *err = malloc(n * sizeof *err);
  for (size_t i = 0; i < n; i++) {
    err[i] = fabs(t[i] / ref[i] - 1);
    if (getenv("TPS_TEST_VERBOSE")) printf("  %s #%zu: %.2f vs %.2f\n", what, i, t[i], ref[i]);
  }
  gsl_sort(err, 1, n);
  *med = gsl_stats_median_from_sorted_data(err, 1, n);
  *mx = err[n - 1];
  free(err);
}

typedef struct {
  const tps_gpu *g;
  tps_table bench;
  double *x;       /* bench rows */
  double *aic;     /* the AIC curve at them, as measured */
  char spec[4300];
} gdata;

int main(void) {
  tps_gpu_table gt;
  tps_err e;
  char gp[4096];
  if (tps_data_path("gpus.tsv", gp, sizeof gp, &e) || tps_gpus_load(gp, &gt, &e)) { printf("gpus: %s\n", e.msg); return 1; }
  const char *gpus[2] = {"H100-SXM", "H200-SXM"}, *stems[2] = {"h100", "h200"};
  const tps_path *paths[2] = {&tps_path_dense_bf16, &tps_path_native_fp8};
  const char *dtypes[2] = {"bfloat16", "fp8"};
  printf("held-out GPU  path        not converted     by the sibling    by the model   (median / max |error| against its bench table)\n");
  for (int pi = 0; pi < 2; pi++) {
    gdata d[2];
    memset(d, 0, sizeof d);
    int ok = 1;
    for (int gi = 0; gi < 2 && ok; gi++) {
      char rel[128], full[4096], src[1100];
      d[gi].g = tps_gpus_find(&gt, gpus[gi], &e);
      snprintf(rel, sizeof rel, "%s_gemm_%s.tsv", stems[gi], paths[pi]->name);
      if (!d[gi].g || tps_data_path(rel, full, sizeof full, &e) || tps_table_read(full, &d[gi].bench, &e)) {
        CHECK(0, "%s: %s", rel, e.msg);
        ok = 0;
        break;
      }
      size_t n = d[gi].bench.nrows;
      d[gi].x = malloc(n * sizeof(double));
      d[gi].aic = malloc(n * sizeof(double));
      for (size_t i = 0; i < n; i++) d[gi].x[i] = (double)d[gi].bench.rows[i];
      snprintf(rel, sizeof rel, "aic/gemm_%s_sxm_k5120.tsv.gz", stems[gi]);
      ok = tps_data_path(rel, full, sizeof full, &e) == 0;
      snprintf(d[gi].spec, sizeof d[gi].spec, "%s:dtype=%s", full, dtypes[pi]);
      ok = ok && part_at(&gt, d[gi].g, paths[pi], d[gi].spec, -1, d[gi].x, d[gi].aic, n, src, sizeof src) == 0;
      CHECK(ok, "%s %s: the AIC curve", gpus[gi], paths[pi]->name);
      CHECK(!ok || strstr(src, "converted") == NULL, "unconverted source: %s", src);
    }
    for (int gi = 0; gi < 2 && ok; gi++) {
      gdata *t = &d[gi], *s = &d[1 - gi];
      size_t n = t->bench.nrows;
      double *sib = malloc(n * sizeof *sib), *mod = malloc(n * sizeof *mod), lo, hi;
      char src[1100];
      memcpy(sib, t->aic, n * sizeof *sib);
      int rs = tps_resolve_harness_convert_sibling(s->x, s->aic, s->bench.nrows, s->x, s->bench.time_us, s->bench.nrows, t->x,
                                                   sib, n, &lo, &hi);
      int rm = part_at(&gt, t->g, paths[pi], t->spec, TPS_HARNESS_BENCH, t->x, mod, n, src, sizeof src);
      CHECK(rs == 0 && rm == 0, "%s %s: converted (%d %d)", gpus[gi], paths[pi]->name, rs, rm);
      if (rs == 0 && rm == 0) {
        double r0, r1, s0, s1, m0, m1;
        errs(t->aic, t->bench.time_us, n, &r0, &r1, "raw");
        errs(sib, t->bench.time_us, n, &s0, &s1, "sibling");
        errs(mod, t->bench.time_us, n, &m0, &m1, "model");
        printf("%-12s  %-10s  %5.1f%% / %5.1f%%   %5.1f%% / %5.1f%%   %5.1f%% / %5.1f%%\n", gpus[gi], paths[pi]->name,
               100 * r0, 100 * r1, 100 * s0, 100 * s1, 100 * m0, 100 * m1);
        CHECK(strstr(src, "converted from the aic harness to bench by the cross-GPU model") != NULL, "model source: %s", src);
        if (pi == 1) {
          CHECK(r0 >= 0.15, "%s native-fp8: the harnesses differ (raw median %.3f >= 0.15)", gpus[gi], r0);
          CHECK(s0 <= 0.06, "%s native-fp8: sibling-converted median %.3f <= 0.06", gpus[gi], s0);
          CHECK(m0 <= 0.12, "%s native-fp8: model-converted median %.3f <= 0.12", gpus[gi], m0);
        } else {
          CHECK(s0 <= r0 + 0.015, "%s dense-bf16: sibling-converted median %.3f <= raw %.3f + 1.5 points", gpus[gi], s0, r0);
          CHECK(m0 <= r0 + 0.015, "%s dense-bf16: model-converted median %.3f <= raw %.3f + 1.5 points", gpus[gi], m0, r0);
        }
      }
      free(sib);
      free(mod);
    }
    for (int gi = 0; gi < 2; gi++) {
      if (d[gi].x) tps_table_free(&d[gi].bench);
      free(d[gi].x);
      free(d[gi].aic);
    }
  }
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

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
 * Prints the tables doc/predict.md quotes ("Harness") and asserts that the doc has each row as computed. */
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
static int part_at(const tps_gpu_table *gt, const tps_gpu *g, const tps_path *path, const char *aic_spec, int h, long nn,
                   const double *x, double *t, size_t n, char *src, size_t srcsz) {
  tps_err e;
  tps_partset *ps = NULL;
  tps_partset_opts o = {16384, 5120, nn, 0, 1, h};
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

/* The row `row` is a line of doc/predict.md ("Harness"), which quotes this test's tables: 1 yes; without
 * top_srcdir (run by hand) not checked, 1. */
static int doc_has(const char *row) {
  const char *top = getenv("top_srcdir");
  if (!top) return 1;
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/doc/predict.md", top);
  FILE *f = fopen(path, "r");
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    found = strcmp(line, row) == 0;
  }
  if (f) fclose(f);
  return found;
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
      ok = ok && part_at(&gt, d[gi].g, paths[pi], d[gi].spec, -1, 1792, d[gi].x, d[gi].aic, n, src, sizeof src) == 0;
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
      int rm = part_at(&gt, t->g, paths[pi], t->spec, TPS_HARNESS_BENCH, 1792, t->x, mod, n, src, sizeof src);
      CHECK(rs == 0 && rm == 0, "%s %s: converted (%d %d)", gpus[gi], paths[pi]->name, rs, rm);
      if (rs == 0 && rm == 0) {
        double r0, r1, s0, s1, m0, m1;
        errs(t->aic, t->bench.time_us, n, &r0, &r1, "raw");
        errs(sib, t->bench.time_us, n, &s0, &s1, "sibling");
        errs(mod, t->bench.time_us, n, &m0, &m1, "model");
        printf("%-12s  %-10s  %5.1f%% / %5.1f%%   %5.1f%% / %5.1f%%   %5.1f%% / %5.1f%%\n", gpus[gi], paths[pi]->name,
               100 * r0, 100 * r1, 100 * s0, 100 * s1, 100 * m0, 100 * m1);
        char row[256];
        snprintf(row, sizeof row, "| %s | %s | %.1f%% / %.1f%% | %.1f%% / %.1f%% | %.1f%% / %.1f%% |", gpus[gi], paths[pi]->name,
                 100 * r0, 100 * r1, 100 * s0, 100 * s1, 100 * m0, 100 * m1);
        CHECK(doc_has(row), "doc/predict.md has no line '%s'", row);
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
  /* Out of sample in shape: the H200's bench tables of the DeepSeek shapes (K 5120, N 32..2048, 2026-12-04) against
   * its AIConfigurator rows of the same N, not converted and converted by the cross-GPU model (no sibling here: the
   * H100 has no bench table of these shapes).  native-fp8: the conversion must help at each N (the harnesses
   * differ by 25-45%); dense-bf16 is printed (doc/predict.md, "Harness": the model's forms move it the wrong way
   * at N <= 1024, where our bench, L2 flushed, is slower than AIConfigurator's, not faster as at N 1792). */
  printf("H200-SXM, K 5120, at N      path        not converted     by the model   (median / max |error| against its bench table; bench - aic, converted - aic at M <= 64, us)\n");
  const long ns[5] = {32, 512, 1024, 1536, 2048};
  const tps_gpu *h200 = tps_gpus_find(&gt, "H200-SXM", &e);
  for (int pi = 0; pi < 2 && h200; pi++)
    for (int ni = 0; ni < 5; ni++) {
      if (pi == 1 && ns[ni] > 1024) continue; /* native-fp8 measured at N 32, 512, 1024 */
      char rel[128], full[4096], spec[4300], src[1100];
      tps_table b;
      snprintf(rel, sizeof rel, "h200_gemm_5120x%ld_%s.tsv", ns[ni], paths[pi]->name);
      if (tps_data_path(rel, full, sizeof full, &e) || tps_table_read(full, &b, &e)) {
        CHECK(0, "%s: %s", rel, e.msg);
        continue;
      }
      size_t nr = b.nrows;
      double *x = malloc(nr * sizeof *x), *raw = malloc(nr * sizeof *raw), *mod = malloc(nr * sizeof *mod);
      for (size_t i = 0; i < nr; i++) x[i] = (double)b.rows[i];
      int ok = tps_data_path("aic/gemm_h200_sxm_k5120.tsv.gz", full, sizeof full, &e) == 0;
      snprintf(spec, sizeof spec, "%s:dtype=%s", full, dtypes[pi]);
      ok = ok && part_at(&gt, h200, paths[pi], spec, -1, ns[ni], x, raw, nr, src, sizeof src) == 0;
      ok = ok && part_at(&gt, h200, paths[pi], spec, TPS_HARNESS_BENCH, ns[ni], x, mod, nr, src, sizeof src) == 0;
      CHECK(ok, "H200 N %ld %s: the AIC curve, as measured and converted", ns[ni], paths[pi]->name);
      if (ok) {
        double r0, r1, m0, m1;
        errs(raw, b.time_us, nr, &r0, &r1, "raw");
        errs(mod, b.time_us, nr, &m0, &m1, "model");
        /* the gap at M <= 64 (us, mean over the table's rows there): the bench table and the converted curve, each
         * minus AIConfigurator's: the direction the conversion moves against the direction it should */
        double gb = 0, gm = 0;
        int ng = 0;
        for (size_t i = 0; i < nr; i++)
          if (x[i] <= 64) { gb += b.time_us[i] - raw[i]; gm += mod[i] - raw[i]; ng++; }
        if (ng) { gb /= ng; gm /= ng; }
        printf("H200-SXM, K 5120, at N %-4ld %-10s  %5.1f%% / %5.1f%%   %5.1f%% / %5.1f%%   %+.2f   %+.2f\n", ns[ni], paths[pi]->name,
               100 * r0, 100 * r1, 100 * m0, 100 * m1, gb, gm);
        char row[256];
        snprintf(row, sizeof row, "| %ld | %s | %.1f%% / %.1f%% | %.1f%% / %.1f%% | %+.2f | %+.2f |", ns[ni], paths[pi]->name, 100 * r0,
                 100 * r1, 100 * m0, 100 * m1, gb, gm);
        CHECK(doc_has(row), "doc/predict.md has no line '%s'", row);
        CHECK(strstr(src, "converted from the aic harness to bench by the cross-GPU model") != NULL, "model source: %s", src);
        if (pi == 1) CHECK(m0 < r0, "H200 N %ld native-fp8: model-converted median %.3f < not converted %.3f", ns[ni], m0, r0);
      }
      free(x);
      free(raw);
      free(mod);
      tps_table_free(&b);
    }
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

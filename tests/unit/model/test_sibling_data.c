/* test_sibling_data.c: a measured sibling moved to its sibling, on the bundled tables of the
 * pair of GPUs measured both with one harness (tpsplit bench: data/h100_gemm_<path>.tsv and
 * data/h200_gemm_<path>.tsv, K 5120 N 1792).  Each table predicts the other's rows (the
 * source interpolated in log-log at the target's M, inside its range) by
 * tps_resolve_sibling_gemm_us (with the path's learned correction: path.c's sibling_fixed_us
 * and sibling_alpha); the median |error| is compared with copying the sibling's table
 * unchanged.  Asserts (issue 27 items 2 and 6): median <= 8% each way, no more than 1 point
 * worse than copying; and that the learned correction is the best point of a grid (fixed
 * part 4..12 us, alpha 0..1) within 0.5 point of pooled median (it was chosen that way: this
 * is in-sample, on the one pair measured both).  Prints the numbers doc/predict.md quotes. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "model/predict/parts.h"
#include "model/predict/resolve.h"
#include "src/base/util.h"
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "src/io/aic.h"
#include "tests/unit/expect.h"

static int load(const char *rel, tps_table *t) {
  char full[4096];
  tps_err e;
  if (tps_data_path(rel, full, sizeof full, &e) || tps_table_read(full, t, &e)) {
    printf("cannot read %s: %s\n", rel, e.msg);
    return -1;
  }
  return 0;
}

/* median |rel err| of predicting dst's rows from src's (scaled when scale, copied else) */
/* scale: 0 copy, 1 the learned correction, 2 the given fixed_us and alpha.  Appends the
 * |errors| to pool (when not NULL, at *npool). */
static double median_err(const tps_table *src, const tps_gpu *gs, const tps_table *dst, const tps_gpu *gd,
                         const tps_path *path, int scale, double fx, double al, double *pool, size_t *npool, size_t *n_out) {
  double *x = malloc(src->nrows * sizeof *x), *t = malloc(src->nrows * sizeof *t);
  double *err = malloc(dst->nrows * sizeof *err);
  for (size_t i = 0; i < src->nrows; i++) x[i] = (double)src->rows[i], t[i] = src->time_us[i];
  tps_mcurve *c = tps_mcurve_alloc(x, t, src->nrows);
  size_t n = 0;
  for (size_t i = 0; c && i < dst->nrows; i++) {
    double m = (double)dst->rows[i], ts = tps_mcurve_eval(c, m);
    if (!isfinite(ts)) continue;
    double p = scale == 1 ? tps_resolve_sibling_gemm_us(gs, gd, path, m, dst->n, dst->k, ts, NULL, NULL)
               : scale == 2 ? tps_resolve_sibling_gemm_us_with(gs, gd, path, m, dst->n, dst->k, ts, fx, al, NULL, NULL) : ts;
    err[n++] = fabs(p / dst->time_us[i] - 1);
    if (pool) pool[(*npool)++] = err[n - 1];
  }
  double med = NAN;
  if (n) {
    gsl_sort(err, 1, n);
    med = gsl_stats_median_from_sorted_data(err, 1, n);
  }
  tps_mcurve_free(c);
  free(x), free(t), free(err);
  *n_out = n;
  return med;
}

/* fp8-block (issue 27 item 10): AIConfigurator's fp8_block tables of the pair (N 2048, K 5120,
 * M 1..16384, the same M in both) into a tps_table-like pair of arrays; the path's correction is
 * native-fp8's (not tuned on these: path.c), asserted no worse than copying and <= 8% each way. */
static int load_aic(const char *rel, tps_table *t) {
  char full[4096];
  tps_err e;
  tps_aic_filter f;
  memset(&f, 0, sizeof f);
  snprintf(f.dtype, sizeof f.dtype, "fp8_block");
  f.n = 2048;
  f.k = 5120;
  f.m_lo = 1;
  f.m_hi = 16384;
  tps_aic_file a;
  memset(t, 0, sizeof *t);
  if (tps_data_path(rel, full, sizeof full, &e) || tps_aic_read(full, &f, &a, &e)) {
    printf("cannot read %s: %s\n", rel, e.msg);
    return -1;
  }
  t->rows = calloc(a.nrows ? a.nrows : 1, sizeof *t->rows);
  t->time_us = calloc(a.nrows ? a.nrows : 1, sizeof *t->time_us);
  for (size_t i = 0; t->rows && t->time_us && i < a.nrows; i++) {
    t->rows[t->nrows] = a.g[i].m;
    t->time_us[t->nrows++] = a.g[i].latency_us;
  }
  t->n = 2048;
  t->k = 5120;
  tps_aic_free(&a);
  return t->nrows >= 15 ? 0 : -1;
}

static void check_fp8_block(const tps_gpu *h100, const tps_gpu *h200) {
  tps_table ta, tb;
  if (load_aic("aic/gemm_h100_sxm_k5120_fp8_block.tsv.gz", &ta) || load_aic("aic/gemm_h200_sxm_k5120_fp8_block.tsv.gz", &tb)) {
    CHECK(0, "AIC fp8_block tables of H100 and H200");
    return;
  }
  const tps_path *p = &tps_path_fp8_block;
  CHECK(p->sibling_fixed_us == tps_path_native_fp8.sibling_fixed_us && p->sibling_alpha == tps_path_native_fp8.sibling_alpha,
        "fp8-block's sibling correction is native-fp8's (chosen without the fp8_block tables)");
  for (int dir = 0; dir < 2; dir++) {
    const tps_table *s = dir ? &tb : &ta, *d = dir ? &ta : &tb;
    const tps_gpu *gs = dir ? h200 : h100, *gd = dir ? h100 : h200;
    size_t n1, n2, n3;
    double sib = median_err(s, gs, d, gd, p, 1, 0, 0, NULL, NULL, &n1);
    double copy = median_err(s, gs, d, gd, p, 0, 0, 0, NULL, NULL, &n2);
    double full = median_err(s, gs, d, gd, p, 2, p->floor_us, 1.0, NULL, NULL, &n3);
    printf("%-10s %s -> %s (AIC fp8_block N 2048, %zu rows): sibling scaled median |err| %.1f%%, copied %.1f%%, full spec "
           "ratio %.1f%%\n", p->name, gs->name, gd->name, n1, 100 * sib, 100 * copy, 100 * full);
    CHECK(n1 >= 15, "fp8-block: only %zu rows compared", n1);
    CHECK(sib <= 0.08, "fp8-block %s -> %s: sibling median %.1f%% > 8%%", gs->name, gd->name, 100 * sib);
    CHECK(sib <= copy + 0.01, "fp8-block %s -> %s: sibling %.1f%% worse than copying %.1f%% by more than 1 point", gs->name,
          gd->name, 100 * sib, 100 * copy);
  }
  tps_table_free(&ta);
  tps_table_free(&tb);
}

int main(void) {
  tps_gpu_table gt;
  tps_err e;
  char gp[4096];
  if (tps_data_path("gpus.tsv", gp, sizeof gp, &e) || tps_gpus_load(gp, &gt, &e)) { printf("gpus: %s\n", e.msg); return 1; }
  const tps_gpu *h100 = tps_gpus_find(&gt, "H100-SXM", &e), *h200 = tps_gpus_find(&gt, "H200-SXM", &e);
  CHECK_TRUE(h100 && h200 && tps_resolve_gemm_sibling(h100, h200));
  const tps_path *paths[2] = {&tps_path_dense_bf16, &tps_path_native_fp8};
  for (int pi = 0; pi < 2 && h100 && h200; pi++) {
    char a[128], b[128];
    snprintf(a, sizeof a, "h100_gemm_%s.tsv", paths[pi]->name);
    snprintf(b, sizeof b, "h200_gemm_%s.tsv", paths[pi]->name);
    tps_table ta, tb;
    if (load(a, &ta) || load(b, &tb)) { CHECK(0, "tables of %s", paths[pi]->name); continue; }
    for (int dir = 0; dir < 2; dir++) {
      const tps_table *s = dir ? &tb : &ta, *d = dir ? &ta : &tb;
      const tps_gpu *gs = dir ? h200 : h100, *gd = dir ? h100 : h200;
      size_t n1, n2;
      double sib = median_err(s, gs, d, gd, paths[pi], 1, 0, 0, NULL, NULL, &n1);
      double copy = median_err(s, gs, d, gd, paths[pi], 0, 0, 0, NULL, NULL, &n2);
      printf("%-10s %s -> %s (tpsplit bench, %zu rows): sibling scaled median |err| %.1f%%, copied %.1f%%\n", paths[pi]->name,
             gs->name, gd->name, n1, 100 * sib, 100 * copy);
      CHECK(n1 >= 15, "%s: only %zu rows compared", paths[pi]->name, n1);
      CHECK(sib <= 0.08, "%s %s -> %s: sibling median %.1f%% > 8%%", paths[pi]->name, gs->name, gd->name, 100 * sib);
      CHECK(sib <= copy + 0.01, "%s %s -> %s: sibling %.1f%% worse than copying %.1f%% by more than 1 point", paths[pi]->name,
            gs->name, gd->name, 100 * sib, 100 * copy);
    }
    /* the grid: pooled median of both directions at each (fixed part, alpha) */
    static const double fxs[] = {4, 6, 8, 10, 12}, als[] = {0, 0.125, 0.25, 0.375, 0.5, 0.75, 1};
    double best = INFINITY, bfx = 0, bal = 0, learned = NAN;
    double *pool = malloc((ta.nrows + tb.nrows) * sizeof *pool);
    for (size_t i = 0; pool && i <= sizeof fxs / sizeof fxs[0]; i++)
      for (size_t j = 0; j < sizeof als / sizeof als[0]; j++) {
        int last = i == sizeof fxs / sizeof fxs[0]; /* the learned point itself */
        if (last && j) break;
        double fx = last ? paths[pi]->sibling_fixed_us : fxs[i], al = last ? paths[pi]->sibling_alpha : als[j];
        size_t np = 0, nn;
        median_err(&ta, h100, &tb, h200, paths[pi], 2, fx, al, pool, &np, &nn);
        median_err(&tb, h200, &ta, h100, paths[pi], 2, fx, al, pool, &np, &nn);
        gsl_sort(pool, 1, np);
        double med = np ? gsl_stats_median_from_sorted_data(pool, 1, np) : NAN;
        if (last) learned = med;
        else if (med < best) best = med, bfx = fx, bal = al;
      }
    free(pool);
    printf("%-10s learned correction (fixed %.1f us, alpha %.3f): pooled median %.1f%%; best of the grid %.1f%% at %.0f us, "
           "alpha %.3f\n", paths[pi]->name, paths[pi]->sibling_fixed_us, paths[pi]->sibling_alpha, 100 * learned, 100 * best, bfx,
           bal);
    CHECK(learned <= best + 0.005, "%s: the learned correction %.1f%% is not the grid's best %.1f%% (%.0f us, alpha %.3f)",
          paths[pi]->name, 100 * learned, 100 * best, bfx, bal);
    tps_table_free(&ta);
    tps_table_free(&tb);
  }
  if (h100 && h200) check_fp8_block(h100, h200);
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}

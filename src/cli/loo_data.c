/* loo_data.c: the bundled measurements of the cross-GPU models and their fits (loo_data.h).
 *
 * GEMM (model/latency/xgemm.h), paths dense-bf16 and native-fp8, K = 5120:
 *   AIConfigurator tables data/aic/gemm_<gpu>_k5120.tsv.gz: N = 1536 and 2048 scored (the
 *   measured N either side of 1792), N = 512, 1024, 3072, 4096 fitted only; M = 1..16384
 *   (a100_sxm: its sglang and trtllm rows, one GPU); our tables (tpsplit bench gemm) of the
 *   H200 and the H100, N = 1792 (each one GPU with its AIC table, one fold).
 * All-gather (model/latency/xgather.h): AIC nccl-tests all_gather tables, 2, 4, 8 ranks.
 * w8a16 (model/latency/xgemm.h, tps_xw8): our kernels on data/h100_w8a16_grid_5120x1792_w8a16.tsv (TPS_LGO_W8_TABLE). */
#include "config.h"
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort_double.h>
#include "src/io/aic.h"
#include "src/io/measure.h"
#include "src/io/table.h"
#include "src/base/util.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "src/cli/loo_data.h"

const aic_src tps_lgo_aic_gemm[] = {{"a100_sxm", "sglang"}, {"a100_sxm", "trtllm"}, {"h100_sxm", ""}, {"h200_sxm", ""},
                                   {"b200_sxm", ""},       {"l40s", ""},             {"rtx_pro_6000_server", ""}};
const long tps_lgo_aic_n[2] = {1536, 2048};
/* N fitted but not in the error table: they tell the model about smaller and larger
 * weights (L2-resident ones among them) on the same GPUs. */
static const long aic_n_train[] = {512, 1024, 3072, 4096};
static int n_used(long n, int *eval) {
  *eval = n == tps_lgo_aic_n[0] || n == tps_lgo_aic_n[1];
  if (*eval) return 1;
  for (size_t i = 0; i < sizeof aic_n_train / sizeof aic_n_train[0]; i++) if (n == aic_n_train[i]) return 1;
  return 0;
}

void tps_lgo_gset_free(gset *s) {
  free(s->m); free(s->nn); free(s->t); free(s->line); free(s->pred); free(s->sigma_pred); free(s->eval);
  memset(s, 0, sizeof *s);
}

static int gset_alloc(gset *s, size_t n) {
  s->m = calloc(n, sizeof *s->m);
  s->nn = calloc(n, sizeof *s->nn);
  s->t = calloc(n, sizeof *s->t);
  s->line = calloc(n, sizeof *s->line);
  s->pred = calloc(n, sizeof *s->pred);
  s->sigma_pred = calloc(n, sizeof *s->sigma_pred);
  s->eval = calloc(n, sizeof *s->eval);
  return s->m && s->nn && s->t && s->line && s->pred && s->sigma_pred && s->eval ? 0 : -1;
}


const char *tps_lgo_aic_dtype(tps_xg_path path) {
  const tps_path *p = tps_xg_path_row(path);
  return p && p->aic_dtype[0] ? p->aic_dtype : "";
}

void tps_lgo_aic_gemm_rel(const aic_src *src, tps_xg_path path, char *rel, size_t sz) {
  if (path == TPS_XG_BF16 || path == TPS_XG_FP8) snprintf(rel, sz, "aic/gemm_%s_k5120.tsv.gz", src->aic_gpu);
  else snprintf(rel, sz, "aic/gemm_%s_k5120_%s.tsv.gz", src->aic_gpu, tps_lgo_aic_dtype(path));
}

int tps_lgo_load_aic_gemm(const aic_src *src, tps_xg_path path, const tps_gpu_table *gt, gset *s, tps_err *e) {
  char rel[256], file[512], gname[64];
  tps_lgo_aic_gemm_rel(src, path, rel, sizeof rel);
  if (tps_data_path(rel, file, sizeof file, e)) return -1;
  tps_aic_filter f;
  memset(&f, 0, sizeof f);
  snprintf(f.dtype, sizeof f.dtype, "%s", tps_lgo_aic_dtype(path));
  snprintf(f.backend, sizeof f.backend, "%s", src->backend);
  f.k = GEMM_K;
  f.m_lo = 1;
  f.m_hi = GEMM_MMAX;
  tps_aic_file a;
  if (tps_meas_load_aic(file, &f, &a, e)) return -1;
  memset(s, 0, sizeof *s);
  if (!(s->gpu = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), e))) { tps_aic_free(&a); return -1; }
  s->harness.kind = TPS_XG_AIC;
  snprintf(s->file, sizeof s->file, "data/%s", rel);
  size_t cnt = 0;
  int ev;
  for (size_t i = 0; i < a.nrows; i++)
    if (n_used(a.g[i].n, &ev)) cnt++;
  if (!cnt || gset_alloc(s, cnt)) {
    tps_aic_free(&a);
    return tps_err_set(e, file, 0, cnt ? "out of memory" : "no rows with k 5120 and n 1536 or 2048");
  }
  long seen[8] = {0};
  for (size_t i = 0; i < a.nrows; i++) {
    if (!n_used(a.g[i].n, &ev)) continue;
    if (!ev) {
      /* training-only N: every other row (M ascending in the file), to keep fits fast */
      size_t t = 0;
      while (t < 4 && aic_n_train[t] != a.g[i].n) t++;
      if (seen[t]++ % 2) continue;
    }
    s->eval[s->n] = (char)ev;
    s->neval += ev;
    s->m[s->n] = a.g[i].m;
    s->nn[s->n] = a.g[i].n;
    s->t[s->n] = a.g[i].latency_us;
    s->line[s->n] = a.g[i].line;
    s->n++;
  }
  snprintf(s->what, sizeof s->what, "AIC %s %s, n 1536+2048", a.g[0].backend, a.g[0].version);
  tps_aic_free(&a);
  return 0;
}

/* Our tables (tpsplit bench gemm, L2 flushed, median of CUPTI spans), K 5120 N 1792:
 * data/<stem>_gemm_<path>.tsv.  h100: 23 rows copied from the lent H100's 400-row dense table
 * (data/calibrate/2026-12-05-h100/, the file's '# copy:' line), the H200 table's M.  A GPU is
 * one fold whatever its harnesses: its AIC and bench sets share the gpus.tsv row (tps_lgo_group_sets),
 * so holding it out removes both.  fit --xgpu (data/xgpu.fit) uses the first TPS_LGO_NBENCH_XGPU only. */
const char *const tps_lgo_bench_gemm[TPS_LGO_NBENCH] = {"h200", "h100"};

int tps_lgo_load_bench_gemm(const char *rel, const tps_gpu_table *gt, gset *s, tps_err *e) {
  char file[512];
  if (tps_data_path(rel, file, sizeof file, e)) return -1;
  tps_table t;
  if (tps_table_read(file, &t, e)) return -1;
  memset(s, 0, sizeof *s);
  int rc = -1;
  if (t.kind != TPS_TABLE_GEMM || t.k != GEMM_K || t.n < 1) {
    tps_err_set(e, file, 0, "not a GEMM table with k %d", GEMM_K);
    goto done;
  }
  if (!(s->gpu = tps_gpus_find(gt, t.gpu, e))) goto done;
  s->harness.kind = TPS_XG_FLUSHED;
  snprintf(s->file, sizeof s->file, "data/%s", rel);
  if (gset_alloc(s, t.nrows)) { tps_err_set(e, file, 0, "out of memory"); goto done; }
  for (size_t i = 0; i < t.nrows; i++) {
    if (t.rows[i] > GEMM_MMAX) continue;
    s->eval[s->n] = 1;
    s->neval++;
    s->m[s->n] = t.rows[i];
    s->nn[s->n] = t.n;
    s->t[s->n] = t.time_us[i];
    s->line[s->n] = t.line[i];
    s->n++;
  }
  snprintf(s->what, sizeof s->what, "tpsplit bench, n %ld", t.n);
  rc = 0;
done:
  tps_table_free(&t);
  return rc;
}

/* Sets are grouped by GPU (a100_sxm has two backends): grp[i] is set i's GPU index. */
int tps_lgo_group_sets(const gset *sets, int ns, int *grp) {
  int ng = 0;
  for (int i = 0; i < ns; i++) {
    grp[i] = -1;
    for (int j = 0; j < i; j++) if (sets[j].gpu == sets[i].gpu) grp[i] = grp[j];
    if (grp[i] < 0) grp[i] = ng++;
  }
  return ng;
}

/* Points of every set whose GPU is not skipped, each GPU weighing 1 in total. */
static tps_xg_point *points_except(const gset *sets, int ns, const int *grp, const int *skipg, size_t *np) {
  size_t n = 0;
  int per_gpu[MAXSETS] = {0};
  for (int i = 0; i < ns; i++) if (!skipg[grp[i]]) { n += sets[i].n; per_gpu[grp[i]]++; }
  tps_xg_point *p = calloc(n ? n : 1, sizeof *p);
  if (!p) return NULL;
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    if (skipg[grp[i]]) continue;
    for (size_t j = 0; j < sets[i].n; j++) {
      p[k].gpu = sets[i].gpu;
      p[k].harness = sets[i].harness;
      p[k].m = sets[i].m[j];
      p[k].n = sets[i].nn[j];
      p[k].k = GEMM_K;
      p[k].t_us = sets[i].t[j];
      p[k].weight = 1.0 / ((double)sets[i].n * per_gpu[grp[i]]);
      k++;
    }
  }
  *np = k;
  return p;
}

int tps_lgo_fit_except(tps_xg_path path, const gset *sets, int ns, const int *grp, const int *skipg, tps_xg_model *m,
                      const tps_xg_model *start) {
  size_t np;
  tps_xg_point *p = points_except(sets, ns, grp, skipg, &np);
  if (!p) return TPS_ENOMEM;
  if (start) *m = *start;
  else tps_xg_prior(m, path);
  int st = tps_xg_fit(m, p, np, 150, start ? 1 : 2);
  free(p);
  return st;
}

void tps_lgo_predict_set(const tps_xg_model *m, const gset *s, double *out) {
  int hint = -1; /* the previous row's best tiling first: the same values, fewer candidates tried */
  for (size_t j = 0; j < s->n; j++) out[j] = tps_xg_time_hint_us(m, s->gpu, &s->harness, s->m[j], s->nn[j], GEMM_K, &hint);
}

/* ------------------------------------------------------------------ all-gather */


const char *const tps_lgo_aic_nccl[TPS_LGO_NNCCL] = {"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "l40s", "rtx_pro_6000_server"};

void tps_lgo_aset_free(aset *a) {
  free(a->ranks); free(a->bytes); free(a->t); free(a->pred); free(a->eval);
  memset(a, 0, sizeof *a);
}

int tps_lgo_load_aic_nccl(const char *stem, const tps_gpu_table *gt, aset *s, tps_err *e) {
  char rel[256], file[512], gname[64];
  snprintf(rel, sizeof rel, "aic/nccl_%s.tsv.gz", stem);
  if (tps_data_path(rel, file, sizeof file, e)) return -1;
  tps_aic_filter f;
  memset(&f, 0, sizeof f);
  snprintf(f.op, sizeof f.op, "all_gather");
  tps_aic_file a;
  if (tps_meas_load_aic(file, &f, &a, e)) return -1;
  memset(s, 0, sizeof *s);
  if (!(s->gpu = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), e))) { tps_aic_free(&a); return -1; }
  snprintf(s->file, sizeof s->file, "data/%s", rel);
  snprintf(s->version, sizeof s->version, "%s", a.c[0].nccl_version);
  size_t n = a.nrows;
  s->ranks = calloc(n, sizeof *s->ranks);
  s->bytes = calloc(n, sizeof *s->bytes);
  s->t = calloc(n, sizeof *s->t);
  s->pred = calloc(n, sizeof *s->pred);
  s->eval = calloc(n, sizeof *s->eval);
  if (!s->ranks || !s->bytes || !s->t || !s->pred || !s->eval) { tps_aic_free(&a); tps_lgo_aset_free(s); return tps_err_set(e, file, 0, "out of memory"); }
  for (size_t i = 0; i < n; i++) {
    s->ranks[s->n] = a.c[i].num_gpus;
    s->bytes[s->n] = a.c[i].bytes;
    s->t[s->n] = a.c[i].latency_us;
    s->eval[s->n] = a.c[i].num_gpus == AG_EVAL_N && a.c[i].bytes >= AG_EVAL_LO && a.c[i].bytes <= AG_EVAL_HI;
    s->neval += (size_t)s->eval[s->n];
    s->n++;
  }
  tps_aic_free(&a);
  return 0;
}

int tps_lgo_fit_gather_except(const aset *sets, int ns, const int *skip, int pcie, tps_xga_model *m) {
  size_t n = 0;
  int ng = 0, use[MAXSETS] = {0};
  const tps_gpu *g[MAXSETS] = {0};
  double w[MAXSETS];
  for (int i = 0; i < ns; i++) {
    g[i] = sets[i].gpu;
    use[i] = !skip[i] && (sets[i].gpu->nvlink == 0) == pcie;
    if (use[i]) { n += sets[i].n; ng++; }
  }
  tps_xga_fabric_weights(g, use, ns, w); /* each fabric weighs 1 (H100 and H200: one NVLink4) */
  tps_xga_prior(m, pcie);
  if (!ng) return TPS_ETOOFEW;
  tps_xga_point *p = calloc(n, sizeof *p);
  if (!p) return TPS_ENOMEM;
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    if (skip[i] || (sets[i].gpu->nvlink == 0) != pcie) continue;
    for (size_t j = 0; j < sets[i].n; j++)
      p[k++] = (tps_xga_point){sets[i].gpu, sets[i].ranks[j], sets[i].bytes[j], sets[i].t[j], w[i] / (double)sets[i].n};
  }
  int st = tps_xga_fit(m, p, k);
  free(p);
  return st;
}

/* ------------------------------------------------------------------ our w8a16 kernels */


int tps_lgo_run_w8(const tps_gpu_table *gt, w8_part *w, tps_err *e) {
  tps_table t;
  memset(w, 0, sizeof *w);
  char path[512];
  snprintf(w->file, sizeof w->file, "data/%s", TPS_LGO_W8_TABLE);
  if (tps_data_path(TPS_LGO_W8_TABLE, path, sizeof path, e) || tps_table_read(path, &t, e)) return TPS_EINVAL;
  int st = TPS_EINVAL;
  if (t.kind != TPS_TABLE_GEMM || t.k < 1 || t.n < 1 || t.nrows < 8 || t.nrows > 64 || strcmp(t.kpath, "w8a16")) {
    tps_err_set(e, path, 0, "not a w8a16 GEMM table with k, n and 8..64 rows");
    goto done;
  }
  if (!(w->gpu = tps_gpus_find(gt, t.gpu, e))) goto done;
  w->n = t.n;
  w->k = t.k;
  w->npts = t.nrows;
  for (size_t i = 0; i < t.nrows; i++) { w->rows[i] = t.rows[i]; w->t[i] = t.time_us[i]; }
  double rel[64], lrel[64];
  if ((st = tps_xw8_fit(&w->m, w->gpu, w->n, w->k, w->rows, w->t, w->npts, -1)) != TPS_OK) {
    tps_err_set(e, path, 0, "w8a16 fit: %s", tps_strstatus(st));
    goto done;
  }
  for (size_t i = 0; i < w->npts; i++) {
    w->fit_us[i] = tps_xw8_time_us(&w->m, w->gpu, w->rows[i], w->n, w->k, NULL);
    rel[i] = w->fit_us[i] / w->t[i] - 1.0;
    tps_xw8_model mo;
    if (tps_xw8_fit(&mo, w->gpu, w->n, w->k, w->rows, w->t, w->npts, (long)i) == TPS_OK)
      w->loo_us[i] = tps_xw8_time_us(&mo, w->gpu, w->rows[i], w->n, w->k, NULL);
    else { w->loo_us[i] = NAN; w->loo_failed++; }
    lrel[i] = w->loo_us[i] / w->t[i] - 1.0;
  }
  w->in = tps_loo_summary(rel, w->npts);
  w->loo = tps_loo_summary(lrel, w->npts);
  st = TPS_OK;
done:
  tps_table_free(&t);
  return st;
}

const size_t tps_lgo_naic = sizeof tps_lgo_aic_gemm / sizeof tps_lgo_aic_gemm[0];

int tps_lgo_has_file(const char *rel) {
  char file[512];
  tps_err e;
  return tps_data_path(rel, file, sizeof file, &e) == 0 && access(file, R_OK) == 0;
}

int tps_lgo_load_gemm(tps_xg_path path, size_t nbench, const tps_gpu_table *gt, gset *sets, int *ns, tps_err *e) {
  *ns = 0;
  /* dense-bf16 and native-fp8: every bundled GPU (and the two bench tables); fp8-block and
   * nvfp4: the GPUs whose AIConfigurator tables have that dtype (bundled as their own files),
   * no bench table */
  int own_files = path != TPS_XG_BF16 && path != TPS_XG_FP8;
  for (size_t i = 0; i < tps_lgo_naic; i++) {
    if (path == TPS_XG_FP8 && !strcmp(tps_lgo_aic_gemm[i].aic_gpu, "a100_sxm")) continue; /* no fp8 tensor cores */
    char rel[256];
    tps_lgo_aic_gemm_rel(&tps_lgo_aic_gemm[i], path, rel, sizeof rel);
    if (own_files && !tps_lgo_has_file(rel)) continue;
    if (tps_lgo_load_aic_gemm(&tps_lgo_aic_gemm[i], path, gt, &sets[*ns], e)) return -1;
    (*ns)++;
  }
  for (size_t i = 0; i < nbench && !own_files; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "%s_gemm_%s.tsv", tps_lgo_bench_gemm[i], tps_xg_path_names[path]);
    if (tps_lgo_load_bench_gemm(rel, gt, &sets[*ns], e)) return -1;
    (*ns)++;
  }
  return 0;
}

int tps_lgo_load_nccl(const tps_gpu_table *gt, aset *as, int *nas, tps_err *e) {
  *nas = 0;
  for (size_t i = 0; i < TPS_LGO_NNCCL; i++) {
    if (tps_lgo_load_aic_nccl(tps_lgo_aic_nccl[i], gt, &as[*nas], e)) return -1;
    (*nas)++;
  }
  return 0;
}

/* ------------------------------------------------------------------ measured curves */

tps_loo_curve *tps_lgo_measured_gemm(const gset *s, long n) {
  double w = log((double)n / tps_lgo_aic_n[0]) / log((double)tps_lgo_aic_n[1] / tps_lgo_aic_n[0]);
  double *x = malloc(s->n * sizeof *x), *t = malloc(s->n * sizeof *t);
  size_t k = 0;
  if (!x || !t) { free(x); free(t); return NULL; }
  for (size_t i = 0; i < s->n; i++) {
    if (s->nn[i] != tps_lgo_aic_n[0]) continue;
    for (size_t j = 0; j < s->n; j++)
      if (s->nn[j] == tps_lgo_aic_n[1] && s->m[j] == s->m[i]) {
        x[k] = (double)s->m[i];
        t[k] = exp(log(s->t[i]) + w * (log(s->t[j]) - log(s->t[i])));
        k++;
        break;
      }
  }
  /* M ascending (the file's order is by M within an N, but be sure) */
  gsl_sort2(x, 1, t, 1, k);
  tps_loo_curve *c = tps_loo_curve_measured(x, t, k);
  free(x);
  free(t);
  return c;
}

tps_loo_curve *tps_lgo_measured_gather(const aset *a, int n) {
  double *x = malloc(a->n * sizeof *x), *t = malloc(a->n * sizeof *t);
  size_t k = 0;
  if (!x || !t) { free(x); free(t); return NULL; }
  /* both dtypes measure the same sizes: their mean per size */
  for (size_t i = 0; i < a->n; i++) {
    if (a->ranks[i] != n) continue;
    size_t j = 0;
    while (j < k && x[j] != a->bytes[i]) j++;
    if (j == k) { x[k] = a->bytes[i]; t[k] = 0; k++; }
  }
  for (size_t j = 0; j < k; j++) {
    double s = 0;
    int c = 0;
    for (size_t i = 0; i < a->n; i++) if (a->ranks[i] == n && a->bytes[i] == x[j]) { s += log(a->t[i]); c++; }
    t[j] = exp(s / c);
  }
  gsl_sort2(x, 1, t, 1, k);
  tps_loo_curve *c = tps_loo_curve_measured(x, t, k);
  free(x);
  free(t);
  return c;
}

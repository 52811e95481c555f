/* cmd_loo.c: `tpsplit fit --loo-gpu [--json] [--only PART] [--hold-out GPU]`: leave-one-
 * GPU-out evaluation of the cross-GPU models on the bundled measurements (doc/loo.md holds
 * its output).  Reached from cmd_fit (one hook line there).
 *
 * GEMM (model/latency/xgemm.h), paths dense-bf16 and native-fp8, K = 5120:
 *   AIConfigurator tables data/aic/gemm_<gpu>_k5120.tsv.gz: N = 1536 and 2048 scored (the
 *   measured N either side of 1792), N = 512, 1024, 3072, 4096 fitted only; M = 1..16384
 *   (a100_sxm: its sglang and trtllm rows, one GPU); our tables (tpsplit bench gemm) of the
 *   H200 and the H100, N = 1792 (the H100: one GPU with its AIC table, one fold).
 *   For every GPU g: fit on the other GPUs, predict every point of g; the 90% interval's
 *   log half-width is the 90% quantile of the training GPUs' nested leave-one-out |log
 *   residuals| (each training GPU h predicted by a fit without g and h).
 * All-gather (model/latency/xgather.h): AIC nccl-tests all_gather tables, NVLink and PCIe GPUs
 *   fitted apart; scored at 8 GPUs, 64 KiB..64 MiB; intervals as for the GEMM.
 * Break-even: every GPU with a measured GEMM and gather, TP 2/4/8: from its measured parts
 *   vs from the models fitted without it; decisions at T = 1, 2, 4 .. 16384.
 * w8a16 (model/latency/xgemm.h, tps_xw8): our kernels on data/h200_gemm_w8a16.tsv, in sample and
 *   leaving one M out.
 * Everything is read before anything is printed; output is deterministic (fixed starts, no
 * random numbers). */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/aic.h"
#include "src/io/gpus.h"
#include "src/base/jsonout.h"
#include "model/numeric/robust.h"
#include "model/core/status.h"
#include "src/io/table.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"
#include "src/base/iocheck.h"
#include "model/latency/xgather.h"
#include "model/latency/xgemm.h"

int cmd_fit_loo_gpu(int argc, char **argv);
int cmd_fit_xgpu(int argc, char **argv);

#define MAXSETS 16
#define HW_FLOOR 0.03 /* no interval narrower than +-3% (log half-width) */

/* The measured GEMM points of one GPU on one path. */
typedef struct {
  const tps_gpu *gpu;
  tps_xg_harness harness;
  char file[512];
  char what[96];        /* "AIC trtllm 1.3.0rc20, n 1536+2048" */
  size_t n;
  long *m, *nn;
  double *t;
  long *line;
  char *eval;           /* 1: a point of the error table (N 1536, 2048 or 1792); 0: training only */
  size_t neval;
  /* results */
  double *pred, *sigma_pred; /* held-out prediction, interval sigma */
} gset;

typedef struct {
  const char *aic_gpu;  /* file stem under data/aic/ */
  const char *backend;  /* backend rows used ("" = the file's only one) */
} aic_src;

static const aic_src aic_gemm[] = {{"a100_sxm", "sglang"}, {"a100_sxm", "trtllm"}, {"h100_sxm", ""},
                                   {"b200_sxm", ""},       {"l40s", ""},             {"rtx_pro_6000_server", ""}};
#define NAIC (sizeof aic_gemm / sizeof aic_gemm[0])
static const long aic_n[] = {1536, 2048};
/* N fitted but not in the error table: they tell the model about smaller and larger
 * weights (L2-resident ones among them) on the same GPUs. */
static const long aic_n_train[] = {512, 1024, 3072, 4096};
static int n_used(long n, int *eval) {
  *eval = n == aic_n[0] || n == aic_n[1];
  if (*eval) return 1;
  for (size_t i = 0; i < sizeof aic_n_train / sizeof aic_n_train[0]; i++) if (n == aic_n_train[i]) return 1;
  return 0;
}
#define GEMM_K 5120
#define GEMM_MMAX 16384

static void gset_free(gset *s) {
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

static int load_aic_gemm(const aic_src *src, tps_xg_path path, const tps_gpu_table *gt, gset *s, tps_err *e) {
  char rel[256], file[512], gname[64];
  snprintf(rel, sizeof rel, "aic/gemm_%s_k5120.tsv.gz", src->aic_gpu);
  if (tps_data_path(rel, file, sizeof file, e)) return -1;
  tps_aic_filter f;
  memset(&f, 0, sizeof f);
  snprintf(f.dtype, sizeof f.dtype, "%s", path == TPS_XG_FP8 ? "fp8" : "bfloat16");
  snprintf(f.backend, sizeof f.backend, "%s", src->backend);
  f.k = GEMM_K;
  f.m_lo = 1;
  f.m_hi = GEMM_MMAX;
  tps_aic_file a;
  if (tps_aic_read(file, &f, &a, e)) return -1;
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
 * one fold whatever its harnesses: its AIC and bench sets share the gpus.tsv row (group_sets),
 * so holding it out removes both.  fit --xgpu (data/xgpu.fit) uses the first NBENCH_XGPU only. */
static const char *const bench_gemm[] = {"h200", "h100"};
#define NBENCH (sizeof bench_gemm / sizeof bench_gemm[0])
#define NBENCH_XGPU 1

static int load_bench_gemm(const char *rel, const tps_gpu_table *gt, gset *s, tps_err *e) {
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
static int group_sets(const gset *sets, int ns, int *grp) {
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

static int fit_except(tps_xg_path path, const gset *sets, int ns, const int *grp, const int *skipg, tps_xg_model *m,
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

static void predict_set(const tps_xg_model *m, const gset *s, double *out) {
  for (size_t j = 0; j < s->n; j++) out[j] = tps_xg_time_us(m, s->gpu, &s->harness, s->m[j], s->nn[j], GEMM_K, NULL);
}

typedef struct {
  int ngpu, grp[MAXSETS];
  tps_xg_model fold[MAXSETS]; /* per GPU: the fit without it */
  int fold_ok[MAXSETS];       /* fitted (all, or the --hold-out GPU) */
  tps_xg_model nest[MAXSETS][MAXSETS]; /* per GPU pair (g, h): the fit without both */
  double sigma[MAXSETS];      /* per GPU: 90% interval log half-width (nested) */
  tps_loo_err err[MAXSETS];   /* per set */
  double cover[MAXSETS];      /* per set: share of its points inside the 90% interval */
  double width[MAXSETS];      /* per set: full width of the interval, relative */
} gemm_loo;

/* only (may be NULL): hold out that GPU alone (no nested fits, no intervals). */
static int run_gemm_loo(tps_xg_path path, gset *sets, int ns, gemm_loo *r, const tps_gpu *only) {
  int skipg[MAXSETS], nested = only == NULL;
  r->ngpu = group_sets(sets, ns, r->grp);
  for (int g = 0; g < r->ngpu; g++) {
    int i0 = 0;
    while (r->grp[i0] != g) i0++;
    r->fold_ok[g] = 0;
    if (only && sets[i0].gpu != only) continue;
    r->fold_ok[g] = 1;
    memset(skipg, 0, sizeof skipg);
    skipg[g] = 1;
    int st = fit_except(path, sets, ns, r->grp, skipg, &r->fold[g], NULL);
    if (st != TPS_OK) return st;
  }
  for (int i = 0; i < ns; i++) {
    if (!r->fold_ok[r->grp[i]]) { r->err[i] = (tps_loo_err){0, NAN, NAN, NAN}; continue; }
    predict_set(&r->fold[r->grp[i]], &sets[i], sets[i].pred);
    double *rel = malloc(sets[i].n * sizeof *rel);
    size_t ne = 0;
    if (!rel) return TPS_ENOMEM;
    for (size_t j = 0; j < sets[i].n; j++) if (sets[i].eval[j]) rel[ne++] = sets[i].pred[j] / sets[i].t[j] - 1.0;
    r->err[i] = tps_loo_summary(rel, ne);
    free(rel);
  }
  for (int g = 0; g < r->ngpu && nested; g++) {
    /* nested: residuals of every training GPU h predicted by a fit without g and h */
    size_t tot = 0;
    for (int i = 0; i < ns; i++) if (r->grp[i] != g) tot += sets[i].n;
    double *lr = malloc((tot ? tot : 1) * sizeof *lr), *pr = NULL;
    size_t k = 0;
    if (!lr) return TPS_ENOMEM;
    for (int h = 0; h < r->ngpu; h++) {
      if (h == g) continue;
      memset(skipg, 0, sizeof skipg);
      skipg[g] = skipg[h] = 1;
      tps_xg_model *mp = &r->nest[g][h], m;
      int st = fit_except(path, sets, ns, r->grp, skipg, mp, &r->fold[g]);
      if (st != TPS_OK) { free(lr); return st; }
      r->nest[h][g] = *mp;
      m = *mp;
      for (int i = 0; i < ns; i++) {
        if (r->grp[i] != h) continue;
        pr = malloc(sets[i].n * sizeof *pr);
        if (!pr) { free(lr); return TPS_ENOMEM; }
        predict_set(&m, &sets[i], pr);
        for (size_t j = 0; j < sets[i].n; j++) if (sets[i].eval[j]) lr[k++] = log(pr[j] / sets[i].t[j]);
        free(pr);
      }
    }
    r->sigma[g] = tps_loo_quantile_abs(lr, k, 0.9, HW_FLOOR);
    free(lr);
  }
  for (int i = 0; i < ns && nested; i++) {
    size_t in = 0;
    double sg = r->sigma[r->grp[i]], hw = sg;
    for (size_t j = 0; j < sets[i].n; j++) {
      double lo = sets[i].pred[j] * exp(-hw), hi = sets[i].pred[j] * exp(hw);
      sets[i].sigma_pred[j] = sg;
      if (sets[i].eval[j] && sets[i].t[j] >= lo && sets[i].t[j] <= hi) in++;
    }
    r->cover[i] = sets[i].neval ? (double)in / (double)sets[i].neval : NAN;
    r->width[i] = exp(hw) - exp(-hw);
  }
  return TPS_OK;
}

/* ------------------------------------------------------------------ all-gather */

/* The NCCL all_gather points of one GPU (2, 4, 8 ranks; half and int8 rows). */
typedef struct {
  const tps_gpu *gpu;
  char file[512];
  char version[16];
  size_t n;
  int *ranks;
  double *bytes, *t, *pred;
  char *eval;          /* 8 ranks, 64 KiB .. 64 MiB */
  size_t neval;
} aset;

static const char *const aic_nccl[] = {"a100_sxm", "h100_sxm", "b200_sxm", "l40s", "rtx_pro_6000_server"};
#define NNCCL (sizeof aic_nccl / sizeof aic_nccl[0])
#define AG_EVAL_N 8
#define AG_EVAL_LO (64.0 * 1024)
#define AG_EVAL_HI (64.0 * 1024 * 1024)

static void aset_free(aset *a) {
  free(a->ranks); free(a->bytes); free(a->t); free(a->pred); free(a->eval);
  memset(a, 0, sizeof *a);
}

static int load_aic_nccl(const char *stem, const tps_gpu_table *gt, aset *s, tps_err *e) {
  char rel[256], file[512], gname[64];
  snprintf(rel, sizeof rel, "aic/nccl_%s.tsv.gz", stem);
  if (tps_data_path(rel, file, sizeof file, e)) return -1;
  tps_aic_filter f;
  memset(&f, 0, sizeof f);
  snprintf(f.op, sizeof f.op, "all_gather");
  tps_aic_file a;
  if (tps_aic_read(file, &f, &a, e)) return -1;
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
  if (!s->ranks || !s->bytes || !s->t || !s->pred || !s->eval) { tps_aic_free(&a); aset_free(s); return tps_err_set(e, file, 0, "out of memory"); }
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

static int fit_gather_except(const aset *sets, int ns, const int *skip, int pcie, tps_xga_model *m) {
  size_t n = 0;
  int ng = 0;
  for (int i = 0; i < ns; i++)
    if (!skip[i] && (sets[i].gpu->nvlink == 0) == pcie) { n += sets[i].n; ng++; }
  tps_xga_prior(m, pcie);
  if (!ng) return TPS_ETOOFEW;
  tps_xga_point *p = calloc(n, sizeof *p);
  if (!p) return TPS_ENOMEM;
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    if (skip[i] || (sets[i].gpu->nvlink == 0) != pcie) continue;
    for (size_t j = 0; j < sets[i].n; j++)
      p[k++] = (tps_xga_point){sets[i].gpu, sets[i].ranks[j], sets[i].bytes[j], sets[i].t[j], 1.0 / (double)sets[i].n};
  }
  int st = tps_xga_fit(m, p, k);
  free(p);
  return st;
}

typedef struct {
  tps_xga_model fold[MAXSETS];
  tps_xga_model nest[MAXSETS][MAXSETS];
  int nest_ok[MAXSETS][MAXSETS];
  int fold_ok[MAXSETS];
  tps_loo_err err[MAXSETS], err_n[MAXSETS][3]; /* eval points; 64 KiB..64 MiB at 2, 4, 8 ranks */
  tps_loo_err err_1pt[MAXSETS]; /* eval points, the latency shifted to the GPU's own smallest-size time */
  double hw[MAXSETS], cover[MAXSETS];
  int hw_ok[MAXSETS];
} gather_loo;

static const int ag_ranks[3] = {2, 4, 8};

static int run_gather_loo(aset *sets, int ns, gather_loo *r) {
  int skip[MAXSETS];
  for (int g = 0; g < ns; g++) {
    memset(skip, 0, sizeof skip);
    skip[g] = 1;
    int pcie = sets[g].gpu->nvlink == 0;
    int st = fit_gather_except(sets, ns, skip, pcie, &r->fold[g]);
    r->fold_ok[g] = st == TPS_OK;
    if (st != TPS_OK && st != TPS_ETOOFEW) return st;
    double *rel = malloc(sets[g].n * sizeof *rel);
    if (!rel) return TPS_ENOMEM;
    for (size_t j = 0; j < sets[g].n; j++)
      sets[g].pred[j] = r->fold_ok[g] ? tps_xga_time_us(&r->fold[g], sets[g].gpu, sets[g].bytes[j], sets[g].ranks[j], TPS_XGA_NCCL, NULL) : NAN;
    for (int q = 0; q < 4; q++) {
      size_t ne = 0;
      for (size_t j = 0; j < sets[g].n; j++) {
        int in = q == 3 ? sets[g].eval[j]
                        : sets[g].ranks[j] == ag_ranks[q] && sets[g].bytes[j] >= AG_EVAL_LO && sets[g].bytes[j] <= AG_EVAL_HI;
        if (in) rel[ne++] = sets[g].pred[j] / sets[g].t[j] - 1.0;
      }
      if (q == 3) r->err[g] = tps_loo_summary(rel, ne);
      else r->err_n[g][q] = tps_loo_summary(rel, ne);
    }
    /* one measured point: the held-out GPU's smallest-size time at each rank count sets the
     * latency (pred + (measured - pred) at that size); everything else stays transferred */
    {
      size_t ne = 0;
      for (size_t j = 0; j < sets[g].n; j++) {
        if (!sets[g].eval[j]) continue;
        double d = NAN, smin = INFINITY;
        for (size_t i = 0; i < sets[g].n; i++)
          if (sets[g].ranks[i] == sets[g].ranks[j] && sets[g].bytes[i] < smin) { smin = sets[g].bytes[i]; d = sets[g].t[i] - sets[g].pred[i]; }
        rel[ne++] = (sets[g].pred[j] + d) / sets[g].t[j] - 1.0;
      }
      r->err_1pt[g] = tps_loo_summary(rel, ne);
    }
    free(rel);
  }
  /* nested: interval half-width of g from the other GPUs of its fabric, each predicted
   * without g and itself: the 90% quantile of each such GPU's |log residuals|, and the
   * widest of them (a GPU's errors are correlated, a latency offset or a protocol switch of
   * its own; with two or three GPUs per fabric the 90% point of the spread between GPUs is
   * not below the largest one seen, so pooling their points would understate it) */
  for (int g = 0; g < ns; g++) {
    int pcie = sets[g].gpu->nvlink == 0;
    double hw = NAN;
    double *lr = NULL;
    size_t k = 0, cap = 0;
    for (int h = 0; h < ns; h++) {
      if (h == g || (sets[h].gpu->nvlink == 0) != pcie) continue;
      memset(skip, 0, sizeof skip);
      skip[g] = skip[h] = 1;
      int st = fit_gather_except(sets, ns, skip, pcie, &r->nest[g][h]);
      r->nest_ok[g][h] = st == TPS_OK;
      if (st != TPS_OK) continue;
      double *nl = realloc(lr, (cap + sets[h].n) * sizeof *lr);
      if (!nl) { free(lr); return TPS_ENOMEM; }
      lr = nl;
      cap += sets[h].n;
      size_t k0 = k;
      for (size_t j = 0; j < sets[h].n; j++)
        if (sets[h].eval[j])
          lr[k++] = log(tps_xga_time_us(&r->nest[g][h], sets[h].gpu, sets[h].bytes[j], sets[h].ranks[j], TPS_XGA_NCCL, NULL) / sets[h].t[j]);
      if (k > k0) {
        double q = tps_loo_quantile_abs(lr + k0, k - k0, 0.9, HW_FLOOR);
        if (!(q <= hw)) hw = q;
      }
    }
    r->hw_ok[g] = k > 0;
    r->hw[g] = k ? hw : NAN;
    free(lr);
    size_t in = 0;
    for (size_t j = 0; j < sets[g].n && r->hw_ok[g]; j++)
      if (sets[g].eval[j] && fabs(log(sets[g].pred[j] / sets[g].t[j])) <= r->hw[g]) in++;
    r->cover[g] = r->hw_ok[g] && sets[g].neval ? (double)in / (double)sets[g].neval : NAN;
  }
  return TPS_OK;
}

/* ------------------------------------------------------------------ break-even */

#define OUT_BYTES_PER_TOKEN 3584.0 /* fused_wqa_wkv: 1792 bf16 outputs per token */
#define BE_N 1792
#define BE_TMAX 16384.0
#define BE_NONE 32768.0 /* "never below 16384": counted as twice the grid's end */

typedef struct { const tps_xg_model *m; const tps_gpu *gpu; tps_xg_harness h; } gemm_fn_ctx;
typedef struct { const tps_xga_model *m; const tps_gpu *gpu; int n; } gather_fn_ctx;

static double gemm_fn(double x, void *vc) {
  gemm_fn_ctx *c = vc;
  return tps_xg_time_us(c->m, c->gpu, &c->h, (long)ceil(x), BE_N, GEMM_K, NULL);
}
static double gather_fn(double x, void *vc) {
  gather_fn_ctx *c = vc;
  return tps_xga_time_us(c->m, c->gpu, x, c->n, TPS_XGA_NCCL, NULL);
}

/* The measured GEMM at N = 1792: log-linear in N between the measured 1536 and 2048 at
 * every M measured at both. */
static tps_loo_curve *measured_gemm_1792(const gset *s) {
  double w = log((double)BE_N / aic_n[0]) / log((double)aic_n[1] / aic_n[0]);
  double *x = malloc(s->n * sizeof *x), *t = malloc(s->n * sizeof *t);
  size_t k = 0;
  if (!x || !t) { free(x); free(t); return NULL; }
  for (size_t i = 0; i < s->n; i++) {
    if (s->nn[i] != aic_n[0]) continue;
    for (size_t j = 0; j < s->n; j++)
      if (s->nn[j] == aic_n[1] && s->m[j] == s->m[i]) {
        x[k] = (double)s->m[i];
        t[k] = exp(log(s->t[i]) + w * (log(s->t[j]) - log(s->t[i])));
        k++;
        break;
      }
  }
  /* M ascending (the file's order is by M within an N, but be sure) */
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && x[j] < x[j - 1]; j--) {
      double a = x[j]; x[j] = x[j - 1]; x[j - 1] = a;
      a = t[j]; t[j] = t[j - 1]; t[j - 1] = a;
    }
  tps_loo_curve *c = tps_loo_curve_measured(x, t, k);
  free(x);
  free(t);
  return c;
}

static tps_loo_curve *measured_gather(const aset *a, int n) {
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
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && x[j] < x[j - 1]; j--) {
      double v = x[j]; x[j] = x[j - 1]; x[j - 1] = v;
      v = t[j]; t[j] = t[j - 1]; t[j - 1] = v;
    }
  tps_loo_curve *c = tps_loo_curve_measured(x, t, k);
  free(x);
  free(t);
  return c;
}

#define BE_MAXROWS 64
typedef struct {
  const tps_gpu *gpu;
  int path, tp;
  double meas, pred, lo, hi; /* break-even tokens; BE_NONE for none */
  double meas_ag10;          /* the measured break-even with the measured gather 10% slower */
  int agree, grid;           /* decisions that agree at T = 1, 2, 4 .. 16384 */
  int covered, has_interval;
} be_row;

static double be_or_none(double b) { return b > 0 ? b : BE_NONE; }

/* A measured curve scaled by a factor (the break-even's sensitivity to the gather). */
typedef struct { const tps_loo_curve *c; double f; } scaled_ctx;
static double scaled_fn(double x, void *vc) {
  scaled_ctx *s = vc;
  return s->f * tps_loo_curve_eval(s->c, x);
}

static double be_model(const tps_xg_model *gm, const tps_xga_model *am, const tps_gpu *gpu, int tp, int *dec) {
  gemm_fn_ctx gc = {gm, gpu, {TPS_XG_AIC}};
  gather_fn_ctx ac = {am, gpu, tp};
  tps_loo_curve *g = tps_loo_curve_fn(gemm_fn, &gc), *a = tps_loo_curve_fn(gather_fn, &ac);
  double b = g && a ? tps_loo_breakeven(g, a, tp, OUT_BYTES_PER_TOKEN, BE_TMAX) : NAN;
  for (int i = 0; dec && i < 15; i++) dec[i] = g && a ? tps_loo_split_wins(g, a, tp, OUT_BYTES_PER_TOKEN, (double)(1 << i)) : -1;
  tps_loo_curve_free(g);
  tps_loo_curve_free(a);
  return b;
}

/* ------------------------------------------------------------------ our w8a16 kernels */

typedef struct {
  const tps_gpu *gpu;
  char file[512];
  long n, k;
  size_t npts;
  long rows[64];
  double t[64], fit_us[64], loo_us[64];
  tps_xw8_model m;
  tps_loo_err in, loo;
  int loo_failed;
} w8_part;

static int run_w8(const tps_gpu_table *gt, w8_part *w, tps_err *e) {
  tps_table t;
  memset(w, 0, sizeof *w);
  char path[512];
  snprintf(w->file, sizeof w->file, "data/h200_gemm_w8a16.tsv");
  if (tps_data_path("h200_gemm_w8a16.tsv", path, sizeof path, e) || tps_table_read(path, &t, e)) return TPS_EINVAL;
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

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit fit --loo-gpu [--json] [--only PART] [--gpus-file FILE]\n"
          "Leave-one-GPU-out evaluation of the cross-GPU models on the bundled measurements\n"
          "(data/aic/ AIConfigurator tables, data/h200_gemm_*.tsv, data/h100_gemm_*.tsv): every\n"
          "GPU is predicted by fits on the other GPUs only.  Prints, per GPU: the GEMM model's\n"
          "median and max |relative error| per path (K 5120, N 1536 and 2048; our H200 and H100\n"
          "tables N 1792; M 1..16384), the\n"
          "all-gather model's (8 GPUs, 64 KiB..64 MiB; NVLink and PCIe GPUs fitted apart), the\n"
          "coverage of their 90%% intervals (calibrated on the training GPUs' own leave-one-out\n"
          "residuals), and the break-even table: the split's break-even (N 1792, 3584 output\n"
          "bytes per token, TP 2/4/8) from the held-out GPU's measured GEMM and gather curves\n"
          "vs from the models fitted without it, and the split decision at T = 1, 2, 4 .. 16384.\n"
          "Deterministic.  doc/loo.md holds the output.\n\n"
          "Options:\n"
          "  --only=PART   gemm, gather, breakeven or w8a16 (our W8A16 kernels fitted to\n"
          "                data/h200_gemm_w8a16.tsv, in sample and leaving one M out)\n"
          "  --json        print JSON\n"
          "  --hold-out=GPU  GEMM only, one fold: fit without GPU and predict it (no intervals)\n"
          "  --gpus-file=F GPU table (default: the bundled gpus.tsv)\n"
          "  -h, --help    print this help and exit\n\n"
          "Exit status: 0 ok, 1 a fit failed, 2 usage or input error.\n");
}

typedef struct {
  int path;
  int ns;
  gset sets[MAXSETS];
  gemm_loo r;
} gemm_part;

static int gemm_group_of(const gemm_part *gp, const tps_gpu *gpu, int *set) {
  for (int i = 0; i < gp->ns; i++)
    if (gp->sets[i].gpu == gpu) { if (set) *set = i; return gp->r.grp[i]; }
  return -1;
}

static json_t *err_json(const tps_loo_err *e) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)e->n));
  tps_json_set_num(o, "median_abs_rel", e->med_abs);
  tps_json_set_num(o, "max_abs_rel", e->max_abs);
  return o;
}

static void print_be(double v) {
  if (v >= BE_NONE) printf(" %9s", "none");
  else printf(" %9.0f", v);
}

int cmd_fit_loo_gpu(int argc, char **argv) {
  enum { OPT_JSON = 256, OPT_LOOGPU, OPT_ONLY, OPT_GPUS, OPT_HOLD };
  static const struct option opts[] = {{"json", no_argument, NULL, OPT_JSON},
                                       {"loo-gpu", no_argument, NULL, OPT_LOOGPU},
                                       {"only", required_argument, NULL, OPT_ONLY},
                                       {"gpus-file", required_argument, NULL, OPT_GPUS},
                                       {"hold-out", required_argument, NULL, OPT_HOLD},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int json = 0, c, do_gemm = 1, do_gather = 1, do_be = 1, do_w8 = 1;
  const char *gpus = NULL, *hold_name = NULL;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case OPT_JSON: json = 1; break;
      case OPT_LOOGPU: break;
      case OPT_ONLY:
        if (!strcmp(optarg, "gemm")) { do_gather = 0; do_be = 0; do_w8 = 0; }
        else if (!strcmp(optarg, "w8a16")) { do_gemm = 0; do_gather = 0; do_be = 0; }
        else if (!strcmp(optarg, "gather")) { do_gemm = 0; do_be = 0; do_w8 = 0; }
        else if (!strcmp(optarg, "breakeven")) { do_gemm = 0; do_gather = 0; do_w8 = 0; }
        else { tps_die_msg("fit --loo-gpu: --only '%s': expected gemm, gather, breakeven or w8a16", optarg); return TPS_EXIT_USAGE; }
        break;
      case OPT_GPUS: gpus = optarg; break;
      case OPT_HOLD: hold_name = optarg; break;
      case 'h': usage(stdout); return TPS_EXIT_OK;
      default:
        tps_die_msg("fit --loo-gpu: bad option '%s' (try 'tpsplit fit --loo-gpu --help')", argv[optind - 1]);
        return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    tps_die_msg("fit --loo-gpu: takes no FILE (it uses the bundled data), got '%s'", argv[optind]);
    return TPS_EXIT_USAGE;
  }
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(gpus, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  const tps_gpu *hold = NULL;
  if (hold_name) {
    if (!(hold = tps_gpus_find(&gt, hold_name, &e))) { tps_err_print(&e); tps_gpus_free(&gt); return TPS_EXIT_USAGE; }
    do_gather = do_be = do_w8 = 0; /* one GEMM fold: a quick look, and the leakage test */
  }
  int rc = TPS_EXIT_OK, st;
  static gemm_part gp[TPS_XG_NPATH];
  static aset as[MAXSETS];
  static gather_loo ar;
  static be_row be[BE_MAXROWS];
  int nas = 0, nbe = 0;
  memset(gp, 0, sizeof gp);
  memset(as, 0, sizeof as);
  memset(&ar, 0, sizeof ar);
  /* ---- read everything first: a bad file gives one error and no output */
  for (int path = 0; path < TPS_XG_NPATH && (do_gemm || do_be) && rc == TPS_EXIT_OK; path++) {
    gemm_part *g = &gp[path];
    g->path = path;
    for (size_t i = 0; i < NAIC; i++) {
      if (path == TPS_XG_FP8 && !strcmp(aic_gemm[i].aic_gpu, "a100_sxm")) continue; /* no fp8 tensor cores */
      if (load_aic_gemm(&aic_gemm[i], (tps_xg_path)path, &gt, &g->sets[g->ns], &e)) { rc = TPS_EXIT_USAGE; break; }
      g->ns++;
    }
    if (rc != TPS_EXIT_OK) break;
    for (size_t i = 0; i < NBENCH && rc == TPS_EXIT_OK; i++) {
      char rel[64];
      snprintf(rel, sizeof rel, "%s_gemm_%s.tsv", bench_gemm[i], tps_xg_path_names[path]);
      if (load_bench_gemm(rel, &gt, &g->sets[g->ns], &e)) rc = TPS_EXIT_USAGE;
      else g->ns++;
    }
  }
  for (size_t i = 0; i < NNCCL && (do_gather || do_be) && rc == TPS_EXIT_OK; i++) {
    if (load_aic_nccl(aic_nccl[i], &gt, &as[nas], &e)) { rc = TPS_EXIT_USAGE; break; }
    nas++;
  }
  static w8_part w8;
  if (rc == TPS_EXIT_OK && do_w8 && run_w8(&gt, &w8, &e) != TPS_OK) rc = TPS_EXIT_USAGE;
  if (rc != TPS_EXIT_OK) tps_err_print(&e);
  /* ---- fits */
  if (rc == TPS_EXIT_OK && (do_gemm || do_be))
    for (int path = 0; path < TPS_XG_NPATH; path++)
      if ((st = run_gemm_loo((tps_xg_path)path, gp[path].sets, gp[path].ns, &gp[path].r, hold)) != TPS_OK) {
        tps_die_msg("fit --loo-gpu: %s GEMM fit failed: %s", tps_xg_path_names[path], tps_strstatus(st));
        rc = TPS_EXIT_FAIL;
        break;
      }
  if (rc == TPS_EXIT_OK && (do_gather || do_be) && (st = run_gather_loo(as, nas, &ar)) != TPS_OK) {
    tps_die_msg("fit --loo-gpu: all-gather fit failed: %s", tps_strstatus(st));
    rc = TPS_EXIT_FAIL;
  }
  /* ---- break-even: every GPU with a measured GEMM and a measured gather */
  if (rc == TPS_EXIT_OK && do_be) {
    for (int path = 0; path < TPS_XG_NPATH; path++) {
      gemm_part *g = &gp[path];
      for (int a = 0; a < nas; a++) {
        int si, gg = gemm_group_of(g, as[a].gpu, &si);
        if (gg < 0 || g->sets[si].harness.kind != TPS_XG_AIC || !ar.fold_ok[a]) continue;
        tps_loo_curve *mg = measured_gemm_1792(&g->sets[si]);
        for (int q = 0; q < 3 && nbe < BE_MAXROWS; q++) {
          int tp = ag_ranks[q], dm[15], dp[15];
          tps_loo_curve *ma = measured_gather(&as[a], tp);
          be_row *b = &be[nbe++];
          memset(b, 0, sizeof *b);
          b->gpu = as[a].gpu;
          b->path = path;
          b->tp = tp;
          b->meas = mg && ma ? be_or_none(tps_loo_breakeven(mg, ma, tp, OUT_BYTES_PER_TOKEN, BE_TMAX)) : NAN;
          for (int i = 0; i < 15; i++) dm[i] = mg && ma ? tps_loo_split_wins(mg, ma, tp, OUT_BYTES_PER_TOKEN, (double)(1 << i)) : -1;
          scaled_ctx sc = {ma, 1.1};
          tps_loo_curve *ma10 = tps_loo_curve_fn(scaled_fn, &sc);
          b->meas_ag10 = mg && ma && ma10 ? be_or_none(tps_loo_breakeven(mg, ma10, tp, OUT_BYTES_PER_TOKEN, BE_TMAX)) : NAN;
          tps_loo_curve_free(ma10);
          b->pred = be_or_none(be_model(&g->r.fold[gg], &ar.fold[a], as[a].gpu, tp, dp));
          for (int i = 0; i < 15; i++) { b->grid++; b->agree += dm[i] == dp[i]; }
          tps_loo_curve_free(ma);
          /* interval: break-even errors of the other GPUs of the fabric, each predicted by
           * fits without this GPU and itself (both paths, all TP) */
          double lr[2 * 3 * MAXSETS];
          size_t k = 0;
          double hw = HW_FLOOR;
          for (int h = 0; h < nas; h++) {
            if (h == a || (as[h].gpu->nvlink == 0) != (as[a].gpu->nvlink == 0) || !ar.nest_ok[a][h]) continue;
            size_t k0 = k;
            for (int p2 = 0; p2 < TPS_XG_NPATH; p2++) {
              int sh = 0, gh = gemm_group_of(&gp[p2], as[h].gpu, &sh), ga = gemm_group_of(&gp[p2], as[a].gpu, NULL);
              if (gh < 0 || ga < 0 || gp[p2].sets[sh].harness.kind != TPS_XG_AIC) continue;
              tps_loo_curve *hg = measured_gemm_1792(&gp[p2].sets[sh]);
              for (int q2 = 0; q2 < 3; q2++) {
                tps_loo_curve *ha = measured_gather(&as[h], ag_ranks[q2]);
                if (hg && ha) {
                  double mh = be_or_none(tps_loo_breakeven(hg, ha, ag_ranks[q2], OUT_BYTES_PER_TOKEN, BE_TMAX));
                  double ph = be_or_none(be_model(&gp[p2].r.nest[ga][gh], &ar.nest[a][h], as[h].gpu, ag_ranks[q2], NULL));
                  lr[k++] = log(ph / mh);
                }
                tps_loo_curve_free(ha);
              }
              tps_loo_curve_free(hg);
            }
            /* the widest of the other GPUs (as the gather's width, see run_gather_loo) */
            if (k > k0) hw = fmax(hw, tps_loo_quantile_abs(lr + k0, k - k0, 0.9, HW_FLOOR));
          }
          b->has_interval = k > 0;
          if (k) {
            b->lo = b->pred * exp(-hw);
            b->hi = b->pred * exp(hw);
            b->covered = b->meas >= b->lo && b->meas <= b->hi;
          }
        }
        tps_loo_curve_free(mg);
      }
    }
  }
  /* ---- output */
  if (rc == TPS_EXIT_OK && !json) {
    size_t cin = 0, ctot = 0;
    for (int path = 0; path < TPS_XG_NPATH && do_gemm; path++) {
      gemm_part *g = &gp[path];
      printf("# GEMM %s, K %d, leave one GPU out (fit on the other GPUs, predict this one)\n", tps_xg_path_names[path], GEMM_K);
      printf("%-20s %-34s %5s %8s %8s %8s %9s\n", "gpu", "data", "n", "med_err", "max_err", "cover90", "width90");
      for (int i = 0; i < g->ns; i++) {
        const gset *s = &g->sets[i];
        if (!g->r.fold_ok[g->r.grp[i]]) continue;
        if (hold) {
          printf("%-20s %-34s %5zu %7.1f%% %7.1f%% %8s %9s\n", s->gpu->name, s->what, s->neval, 100 * g->r.err[i].med_abs,
                 100 * g->r.err[i].max_abs, "-", "-");
          continue;
        }
        printf("%-20s %-34s %5zu %7.1f%% %7.1f%% %7.1f%% %8.1f%%\n", s->gpu->name, s->what, s->neval, 100 * g->r.err[i].med_abs,
               100 * g->r.err[i].max_abs, 100 * g->r.cover[i], 100 * g->r.width[i]);
        cin += (size_t)(g->r.cover[i] * (double)s->neval + 0.5);
        ctot += s->neval;
      }
      printf("\n");
    }
    if (do_gemm && !hold) {
      double *all = malloc((ctot ? ctot : 1) * sizeof *all);
      size_t na = 0;
      for (int path = 0; path < TPS_XG_NPATH && all; path++)
        for (int i = 0; i < gp[path].ns; i++)
          for (size_t j = 0; j < gp[path].sets[i].n; j++)
            if (gp[path].sets[i].eval[j]) all[na++] = gp[path].sets[i].pred[j] / gp[path].sets[i].t[j] - 1.0;
      tps_loo_err pe = tps_loo_summary(all, na);
      free(all);
      printf("# GEMM 90%% interval coverage, all GPUs and paths: %.1f%% of %zu points\n", 100.0 * (double)cin / (double)ctot, ctot);
      printf("# GEMM held-out error, all GPUs and paths pooled: median %.1f%%, max %.1f%%\n\n", 100 * pe.med_abs, 100 * pe.max_abs);
    }
    if (do_gather) {
      printf("# all-gather (NCCL), leave one GPU out among the GPUs of the same fabric (NVLink, PCIe)\n");
      printf("# med/max_err: 8 GPUs, 64 KiB..64 MiB; med2/med4: 2 and 4 GPUs, same sizes\n");
      printf("%-20s %-7s %-6s %5s %8s %8s %8s %8s %8s %8s\n", "gpu", "fabric", "nccl", "n", "med_err", "max_err", "med2", "med4", "cover90", "med_1pt");
      for (int a = 0; a < nas; a++) {
        printf("%-20s %-7s %-6s %5zu", as[a].gpu->name, as[a].gpu->nvlink ? "NVLink" : "PCIe", as[a].version, as[a].neval);
        if (!ar.fold_ok[a]) { printf(" %8s\n", "no fit"); continue; }
        printf(" %7.1f%% %7.1f%% %7.1f%% %7.1f%%", 100 * ar.err[a].med_abs, 100 * ar.err[a].max_abs, 100 * ar.err_n[a][0].med_abs,
               100 * ar.err_n[a][1].med_abs);
        if (ar.hw_ok[a]) printf(" %7.1f%%", 100 * ar.cover[a]);
        else printf(" %8s", "-");
        printf(" %7.1f%%\n", 100 * ar.err_1pt[a].med_abs);
      }
      printf("\n");
    }
    if (do_w8) {
      printf("# our w8a16 kernels (%s), %s, K %ld N %ld: fitted on this table (one GPU)\n", w8.file, w8.gpu->name, w8.k, w8.n);
      printf("# in sample: median |err| %.1f%%, max %.1f%%; leave one M out: median %.1f%%, max %.1f%% (%d refits failed)\n",
             100 * w8.in.med_abs, 100 * w8.in.max_abs, 100 * w8.loo.med_abs, 100 * w8.loo.max_abs, w8.loo_failed);
      printf("#");
      for (int j = 0; j < TPS_XW8_NPAR; j++) printf(" %s=%.4g", tps_xw8_par_names[j], w8.m.p[j]);
      printf("\n%8s %7s %11s %9s %8s %9s %8s\n", "rows", "kernel", "measured_us", "model_us", "rel_err", "loo_us", "loo_err");
      for (size_t i = 0; i < w8.npts; i++) {
        int kind;
        tps_xw8_time_us(&w8.m, w8.gpu, w8.rows[i], w8.n, w8.k, &kind);
        printf("%8ld %7s %11.3f %9.3f %+7.1f%% %9.3f %+7.1f%%\n", w8.rows[i], kind ? "wgmma" : "stream", w8.t[i], w8.fit_us[i],
               100 * (w8.fit_us[i] / w8.t[i] - 1), w8.loo_us[i], 100 * (w8.loo_us[i] / w8.t[i] - 1));
      }
      printf("\n");
    }
    if (do_be && nbe) {
      int agree = 0, grid = 0, within = 0, cov = 0, ncov = 0;
      printf("# break-even tokens (N %d, %.0f bytes per token): from the GPU's measured GEMM and gather\n", BE_N, OUT_BYTES_PER_TOKEN);
      printf("# (Steffen in log-log) vs from the models fitted without it; 'none': the split does not win\n");
      printf("# for good below %.0f tokens; decisions at T = 1, 2, 4 .. 16384; ag+10%%: the measured break-even\n", BE_TMAX);
      printf("# with the measured gather 10%% slower (how much a gather error moves the answer)\n");
      printf("%-20s %-10s %3s %9s %9s %8s %9s %9s %7s %9s %9s\n", "gpu", "path", "tp", "measured", "predicted", "rel_err", "lo90",
             "hi90", "covered", "decisions", "ag+10%");
      for (int i = 0; i < nbe; i++) {
        const be_row *b = &be[i];
        double rel = b->pred / b->meas - 1.0;
        printf("%-20s %-10s %3d", b->gpu->name, tps_xg_path_names[b->path], b->tp);
        print_be(b->meas);
        print_be(b->pred);
        if (b->meas >= BE_NONE && b->pred >= BE_NONE) printf(" %8s", "both");
        else printf(" %+7.1f%%", 100 * rel);
        if (b->has_interval) { print_be(b->lo); print_be(b->hi); printf(" %7s", b->covered ? "yes" : "no"); }
        else printf(" %9s %9s %7s", "-", "-", "-");
        printf(" %6d/%d", b->agree, b->grid);
        print_be(b->meas_ag10);
        printf("\n");
        agree += b->agree;
        grid += b->grid;
        within += fabs(rel) <= 0.15 || (b->meas >= BE_NONE && b->pred >= BE_NONE);
        if (b->has_interval) { ncov++; cov += b->covered; }
      }
      printf("# break-even within 15%%: %d of %d; decisions agree: %d of %d (%.1f%%); 90%% interval covers: %d of %d\n",
             within, nbe, agree, grid, 100.0 * agree / grid, cov, ncov);
    }
  }
  if (rc == TPS_EXIT_OK && json) {
    json_t *root = json_object(), *jg = json_array(), *ja = json_array(), *jb = json_array();
    for (int path = 0; path < TPS_XG_NPATH && do_gemm; path++)
      for (int i = 0; i < gp[path].ns; i++) {
        const gset *s = &gp[path].sets[i];
        if (!gp[path].r.fold_ok[gp[path].r.grp[i]]) continue;
        json_t *o = err_json(&gp[path].r.err[i]), *pts = json_array();
        for (size_t j = 0; j < s->n; j++) {
          if (!s->eval[j]) continue;
          json_t *q = json_object();
          json_object_set_new(q, "m", json_integer(s->m[j]));
          json_object_set_new(q, "n", json_integer(s->nn[j]));
          json_object_set_new(q, "line", json_integer(s->line[j]));
          tps_json_set_num(q, "measured_us", s->t[j]);
          tps_json_set_num(q, "predicted_us", s->pred[j]);
          tps_json_set_num(q, "lo90_us", hold ? NAN : s->pred[j] * exp(-s->sigma_pred[j]));
          tps_json_set_num(q, "hi90_us", hold ? NAN : s->pred[j] * exp(s->sigma_pred[j]));
          json_array_append_new(pts, q);
        }
        json_object_set_new(o, "points", pts);
        /* the fold that predicted it (fitted without this GPU): e.g. floor_bench_us, fitted
         * when another GPU's bench table is in the fold, else tps_xg_bench_floor_spec_us */
        json_t *fp = json_object();
        for (int j = 0; j < TPS_XG_NPAR; j++) tps_json_set_num(fp, tps_xg_par_names[j], gp[path].r.fold[gp[path].r.grp[i]].p[j]);
        json_object_set_new(o, "fold_params", fp);
        json_object_set_new(o, "gpu", json_string(s->gpu->name));
        json_object_set_new(o, "path", json_string(tps_xg_path_names[path]));
        json_object_set_new(o, "data", json_string(s->what));
        json_object_set_new(o, "file", json_string(s->file));
        tps_json_set_num(o, "coverage90", hold ? NAN : gp[path].r.cover[i]);
        tps_json_set_num(o, "width90", hold ? NAN : gp[path].r.width[i]);
        json_array_append_new(jg, o);
      }
    for (int a = 0; a < nas && do_gather; a++) {
      json_t *o = err_json(&ar.err[a]);
      json_object_set_new(o, "gpu", json_string(as[a].gpu->name));
      json_object_set_new(o, "fabric", json_string(as[a].gpu->nvlink ? "nvlink" : "pcie"));
      json_object_set_new(o, "file", json_string(as[a].file));
      tps_json_set_num(o, "median_abs_rel_2", ar.err_n[a][0].med_abs);
      tps_json_set_num(o, "median_abs_rel_4", ar.err_n[a][1].med_abs);
      tps_json_set_num(o, "coverage90", ar.hw_ok[a] ? ar.cover[a] : NAN);
      json_t *pts = json_array();
      for (size_t j = 0; j < as[a].n; j++) {
        json_t *q = json_object();
        json_object_set_new(q, "ranks", json_integer(as[a].ranks[j]));
        tps_json_set_num(q, "bytes", as[a].bytes[j]);
        tps_json_set_num(q, "measured_us", as[a].t[j]);
        tps_json_set_num(q, "predicted_us", as[a].pred[j]);
        tps_json_set_num(q, "lo90_us", ar.hw_ok[a] ? as[a].pred[j] * exp(-ar.hw[a]) : NAN);
        tps_json_set_num(q, "hi90_us", ar.hw_ok[a] ? as[a].pred[j] * exp(ar.hw[a]) : NAN);
        json_object_set_new(q, "scored", json_boolean(as[a].eval[j]));
        json_array_append_new(pts, q);
      }
      json_object_set_new(o, "points", pts);
      json_array_append_new(ja, o);
    }
    for (int i = 0; i < nbe && do_be; i++) {
      json_t *o = json_object();
      json_object_set_new(o, "gpu", json_string(be[i].gpu->name));
      json_object_set_new(o, "path", json_string(tps_xg_path_names[be[i].path]));
      json_object_set_new(o, "tp", json_integer(be[i].tp));
      tps_json_set_num(o, "measured", be[i].meas >= BE_NONE ? NAN : be[i].meas);
      tps_json_set_num(o, "predicted", be[i].pred >= BE_NONE ? NAN : be[i].pred);
      tps_json_set_num(o, "lo90", be[i].has_interval ? be[i].lo : NAN);
      tps_json_set_num(o, "hi90", be[i].has_interval ? be[i].hi : NAN);
      json_object_set_new(o, "decisions_agree", json_integer(be[i].agree));
      json_object_set_new(o, "decisions", json_integer(be[i].grid));
      json_array_append_new(jb, o);
    }
    if (do_w8) {
      json_t *o = json_object(), *pts = json_array();
      json_object_set_new(o, "gpu", json_string(w8.gpu->name));
      json_object_set_new(o, "file", json_string(w8.file));
      json_object_set_new(o, "in_sample", err_json(&w8.in));
      json_object_set_new(o, "leave_one_m_out", err_json(&w8.loo));
      for (size_t i = 0; i < w8.npts; i++) {
        json_t *q = json_object();
        json_object_set_new(q, "rows", json_integer(w8.rows[i]));
        tps_json_set_num(q, "measured_us", w8.t[i]);
        tps_json_set_num(q, "model_us", w8.fit_us[i]);
        tps_json_set_num(q, "loo_us", w8.loo_us[i]);
        json_array_append_new(pts, q);
      }
      json_object_set_new(o, "points", pts);
      json_object_set_new(root, "w8a16", o);
    }
    json_object_set_new(root, "gemm", jg);
    json_object_set_new(root, "gather", ja);
    json_object_set_new(root, "breakeven", jb);
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  }
  for (int path = 0; path < TPS_XG_NPATH; path++)
    for (int i = 0; i < gp[path].ns; i++) gset_free(&gp[path].sets[i]);
  for (int a = 0; a < nas; a++) aset_free(&as[a]);
  tps_gpus_free(&gt);
  return rc;
}

/* ------------------------------------------------------------------ fit --xgpu
 * The cross-GPU fits that predictions use (src/evidence/evidence.c reads them), precomputed because
 * they take seconds: per GEMM path the fit on every bundled GPU and the fit without each of
 * them (the folds of the leave-one-GPU-out table above, same data, same starts), per
 * fabric the same for the NCCL all-gather, and our W8A16 kernels' fit.  Each line carries
 * the half-width sigma of its 90% interval in log space: for the fit without GPU g, the 90%
 * quantile of the held-out |log residuals| of each other GPU h, the widest (each predicted by the fit
 * without h, which does contain g: one level of leave-one-out, not the nested one of the
 * table above); for the fit on all GPUs, of every GPU.  Format (TAB-separated, %.17g):
 *   format  tpsplit-xgpu  1
 *   gemm    PATH  HELD_OUT|-  SIGMA  TRAINED_ON  P0..P10 (tps_xg_par_names)  SHARP
 *   gather  nvlink|pcie  HELD_OUT|-  SIGMA  TRAINED_ON  P0..P13 (LL, LL128, Simple: a b f; LL cap GB/s;
 *          smooth-min sharpness; phi LL, LL128, Simple: model/latency/xgather.h)
 *           SYMM_LAT_US  CUSTOM_FLOOR_US  CUSTOM_EFF
 *   w8a16   GPU  FILE  SIGMA  P0..P5 (tps_xw8_par_names)
 * Gather sigma: points at 2, 4 and 8 GPUs from 16 KiB to 64 MiB (the gathers of T = 1..16384
 * tokens of 3584 bytes at TP 2..8).  W8A16 sigma: the 90% quantile of the leave-one-M-out
 * |log errors|. */
#define XG_SIGMA_LO (16.0 * 1024)

static void names_except(const tps_gpu *const *g, int n, const tps_gpu *skip, char *buf, size_t sz) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < n; i++) {
    if (g[i] == skip) continue;
    int w = snprintf(buf + len, sz - len, "%s%s", len ? "," : "", g[i]->name);
    if (w < 0 || (size_t)w >= sz - len) break;
    len += (size_t)w;
  }
}

static int xgpu_gemm(FILE *fp, tps_xg_path path, gset *sets, int ns) {
  int grp[MAXSETS], skipg[MAXSETS], ng = group_sets(sets, ns, grp);
  static tps_xg_model fold[MAXSETS];
  tps_xg_model all;
  const tps_gpu *gg[MAXSETS];
  for (int i = 0; i < ns; i++) gg[grp[i]] = sets[i].gpu;
  for (int g = 0; g < ng; g++) {
    memset(skipg, 0, sizeof skipg);
    skipg[g] = 1;
    int st = fit_except(path, sets, ns, grp, skipg, &fold[g], NULL);
    if (st != TPS_OK) return st;
  }
  memset(skipg, 0, sizeof skipg);
  int st = fit_except(path, sets, ns, grp, skipg, &all, NULL);
  if (st != TPS_OK) return st;
  /* held-out log residuals of every set by its own fold */
  size_t tot = 0;
  for (int i = 0; i < ns; i++) tot += sets[i].n;
  double *lr = malloc((tot ? tot : 1) * sizeof *lr);
  int *lg = malloc((tot ? tot : 1) * sizeof *lg);
  double *sub = malloc((tot ? tot : 1) * sizeof *sub);
  if (!lr || !lg || !sub) { free(lr); free(lg); free(sub); return TPS_ENOMEM; }
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    predict_set(&fold[grp[i]], &sets[i], sets[i].pred);
    for (size_t j = 0; j < sets[i].n; j++)
      if (sets[i].eval[j]) { lr[k] = log(sets[i].pred[j] / sets[i].t[j]); lg[k++] = grp[i]; }
  }
  char names[512];
  for (int g = -1; g < ng; g++) {
    size_t m = 0;
    for (size_t j = 0; j < k; j++) if (lg[j] != g) sub[m++] = lr[j];
    double sigma = tps_loo_quantile_abs(sub, m, 0.9, HW_FLOOR);
    const tps_xg_model *mo = g < 0 ? &all : &fold[g];
    names_except(gg, ng, g < 0 ? NULL : gg[g], names, sizeof names);
    fprintf(fp, "gemm\t%s\t%s\t%.17g\t%s", tps_xg_path_names[path], g < 0 ? "-" : gg[g]->name, sigma, names);
    for (int p = 0; p < TPS_XG_NPAR; p++) fprintf(fp, "\t%.17g", mo->p[p]);
    fprintf(fp, "\t%.17g\n", mo->sharp);
  }
  free(lr); free(lg); free(sub);
  return TPS_OK;
}

static int xgpu_gather(FILE *fp, aset *sets, int ns, int pcie) {
  int skip[MAXSETS], idx[MAXSETS], n = 0;
  static tps_xga_model fold[MAXSETS];
  tps_xga_model all;
  const tps_gpu *gg[MAXSETS];
  for (int i = 0; i < ns; i++) if ((sets[i].gpu->nvlink == 0) == pcie) { idx[n] = i; gg[n++] = sets[i].gpu; }
  if (n == 0) return TPS_OK;
  int fold_ok[MAXSETS];
  for (int a = 0; a < n; a++) {
    memset(skip, 0, sizeof skip);
    skip[idx[a]] = 1;
    int st = fit_gather_except(sets, ns, skip, pcie, &fold[a]);
    fold_ok[a] = st == TPS_OK;
    if (st != TPS_OK && st != TPS_ETOOFEW) return st;
  }
  memset(skip, 0, sizeof skip);
  int st = fit_gather_except(sets, ns, skip, pcie, &all);
  if (st != TPS_OK) return st;
  char names[512];
  for (int g = -1; g < n; g++) {
    if (g >= 0 && !fold_ok[g]) continue;
    size_t cap = 0, m = 0;
    for (int h = 0; h < n; h++) cap += sets[idx[h]].n;
    double *lr = malloc((cap ? cap : 1) * sizeof *lr);
    if (!lr) return TPS_ENOMEM;
    double sigma = HW_FLOOR;
    for (int h = 0; h < n; h++) {
      if (h == g || !fold_ok[h]) continue;
      const aset *s = &sets[idx[h]];
      size_t m0 = m;
      for (size_t j = 0; j < s->n; j++)
        if (s->bytes[j] >= XG_SIGMA_LO && s->bytes[j] <= AG_EVAL_HI)
          lr[m++] = log(tps_xga_time_us(&fold[h], s->gpu, s->bytes[j], s->ranks[j], TPS_XGA_NCCL, NULL) / s->t[j]);
      /* the widest GPU's 90% quantile (as the table's nested width, see run_gather_loo) */
      if (m > m0) sigma = fmax(sigma, tps_loo_quantile_abs(lr + m0, m - m0, 0.9, HW_FLOOR));
    }
    free(lr);
    const tps_xga_model *mo = g < 0 ? &all : &fold[g];
    names_except(gg, n, g < 0 ? NULL : gg[g], names, sizeof names);
    fprintf(fp, "gather\t%s\t%s\t%.17g\t%s", pcie ? "pcie" : "nvlink", g < 0 ? "-" : gg[g]->name, sigma, names);
    for (int p = 0; p < TPS_XGA_NPAR; p++) fprintf(fp, "\t%.17g", mo->p[p]);
    fprintf(fp, "\t%.17g\t%.17g\t%.17g\n", mo->symm_lat_us, mo->custom_floor_us, mo->custom_eff);
  }
  return TPS_OK;
}

/* -o is none of the files read (src/base/iocheck.h): the GPU table and the bundled
 * measurements below.  0, or -1 with e. */
static int xgpu_io_check(const char *out, const char *gpus, tps_err *e) {
  char p[4096];
  const char *d = tps_data_dir();
  tps_io_reset();
  tps_io_output(out, "-o");
  tps_io_input(gpus, "--gpus-file");
  if (!gpus) { snprintf(p, sizeof p, "%s/gpus.tsv", d); tps_io_input(p, "the bundled GPU table"); }
  for (size_t i = 0; i < NAIC; i++) {
    snprintf(p, sizeof p, "%s/aic/gemm_%s_k5120.tsv.gz", d, aic_gemm[i].aic_gpu);
    tps_io_input(p, "a bundled measurement");
  }
  for (size_t i = 0; i < NNCCL; i++) {
    snprintf(p, sizeof p, "%s/aic/nccl_%s.tsv.gz", d, aic_nccl[i]);
    tps_io_input(p, "a bundled measurement");
  }
  for (size_t i = 0; i < NBENCH_XGPU; i++)
    for (int path = 0; path < TPS_XG_NPATH; path++) {
      snprintf(p, sizeof p, "%s/%s_gemm_%s.tsv", d, bench_gemm[i], tps_xg_path_names[path]);
      tps_io_input(p, "a bundled measurement");
    }
  snprintf(p, sizeof p, "%s/h200_gemm_w8a16.tsv", d);
  tps_io_input(p, "a bundled measurement");
  return tps_io_check(e);
}

int cmd_fit_xgpu(int argc, char **argv) {
  static const struct option opts[] = {{"xgpu", no_argument, NULL, 'x'}, {"output", required_argument, NULL, 'o'},
                                       {"gpus-file", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *out = NULL, *gpus = NULL;
  int c;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
    switch (c) {
      case 'x': break;
      case 'o': out = optarg; break;
      case 'g': gpus = optarg; break;
      case 'h':
        printf("Usage: tpsplit fit --xgpu -o FILE [--gpus-file FILE]\n"
               "Fit the cross-GPU models that predictions use on the bundled measurements and write\n"
               "them to FILE (data/xgpu.fit is this command's output: `tpsplit fit --xgpu -o\n"
               "data/xgpu.fit` regenerates it): per GEMM path (dense-bf16, native-fp8) the fit on\n"
               "every bundled GPU and the fit without each (data/aic/ GEMM tables, data/h200_gemm_*),\n"
               "per fabric the NCCL all-gather (data/aic/ NCCL tables), our W8A16 kernels\n"
               "(data/h200_gemm_w8a16.tsv); each with the 90%% half-width of its held-out errors.\n"
               "Deterministic; about 5 s on one core.\n\n"
               "Options:\n"
               "  -o, --output=FILE  where to write (temp file + rename; '-' = stdout)\n"
               "  --gpus-file=FILE   GPU table (default: the bundled gpus.tsv)\n"
               "  -h, --help         print this help and exit\n\n"
               "Exit status: 0 ok, 1 a fit failed or a write error, 2 usage or input error.\n");
        return TPS_EXIT_OK;
      default:
        tps_die_msg("fit --xgpu: bad option '%s' (try 'tpsplit fit --xgpu --help')", argv[optind - 1]);
        return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("fit --xgpu: takes no FILE (it fits the bundled data), got '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (!out) { tps_die_msg("fit --xgpu: -o FILE is required (try 'tpsplit fit --xgpu --help')"); return TPS_EXIT_USAGE; }
  tps_err e;
  tps_err_clear(&e);
  if (xgpu_io_check(out, gpus, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  tps_gpu_table gt;
  if (tps_gpus_load(gpus, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  int rc = TPS_EXIT_OK, st = TPS_OK;
  static gemm_part gp[TPS_XG_NPATH];
  static aset as[MAXSETS];
  static w8_part w8;
  int nas = 0;
  memset(gp, 0, sizeof gp);
  for (int path = 0; path < TPS_XG_NPATH && rc == TPS_EXIT_OK; path++) {
    gemm_part *g = &gp[path];
    for (size_t i = 0; i < NAIC; i++) {
      if (path == TPS_XG_FP8 && !strcmp(aic_gemm[i].aic_gpu, "a100_sxm")) continue;
      if (load_aic_gemm(&aic_gemm[i], (tps_xg_path)path, &gt, &g->sets[g->ns], &e)) { rc = TPS_EXIT_USAGE; break; }
      g->ns++;
    }
    for (size_t i = 0; i < NBENCH_XGPU && rc == TPS_EXIT_OK; i++) {
      char rel[64];
      snprintf(rel, sizeof rel, "%s_gemm_%s.tsv", bench_gemm[i], tps_xg_path_names[path]);
      if (load_bench_gemm(rel, &gt, &g->sets[g->ns], &e)) rc = TPS_EXIT_USAGE;
      else g->ns++;
    }
  }
  for (size_t i = 0; i < NNCCL && rc == TPS_EXIT_OK; i++) {
    if (load_aic_nccl(aic_nccl[i], &gt, &as[nas], &e)) { rc = TPS_EXIT_USAGE; break; }
    nas++;
  }
  if (rc == TPS_EXIT_OK && run_w8(&gt, &w8, &e) != TPS_OK) rc = TPS_EXIT_USAGE;
  if (rc != TPS_EXIT_OK) tps_err_print(&e);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  FILE *fp = stdout;
  int to_file = strcmp(out, "-") != 0;
  if (rc == TPS_EXIT_OK && to_file) {
    if (tps_out_open(&of, out, &e)) { tps_err_print(&e); rc = TPS_EXIT_FAIL; }
    else fp = of.fp;
  }
  if (rc == TPS_EXIT_OK) {
    fprintf(fp, "# tpsplit cross-GPU fits: `tpsplit fit --xgpu -o data/xgpu.fit` wrote this file (deterministic);\n"
                "# regenerate it after changing data/aic/, data/h200_gemm_*.tsv, data/gpus.tsv or model/latency/xgemm.c,\n"
                "# model/latency/xgather.c (tests/cli/parts.sh checks that it equals a fresh fit).  Fields: src/cmd_loo.c.\n");
    fprintf(fp, "format\ttpsplit-xgpu\t1\n");
    for (int path = 0; path < TPS_XG_NPATH && st == TPS_OK; path++) st = xgpu_gemm(fp, (tps_xg_path)path, gp[path].sets, gp[path].ns);
    for (int pcie = 0; pcie < 2 && st == TPS_OK; pcie++) st = xgpu_gather(fp, as, nas, pcie);
    if (st == TPS_OK) {
      double lr[64];
      for (size_t i = 0; i < w8.npts; i++) lr[i] = log(w8.loo_us[i] / w8.t[i]);
      fprintf(fp, "w8a16\t%s\t%s\t%.17g", w8.gpu->name, w8.file, tps_loo_quantile_abs(lr, w8.npts, 0.9, HW_FLOOR));
      for (int j = 0; j < TPS_XW8_NPAR; j++) fprintf(fp, "\t%.17g", w8.m.p[j]);
      fprintf(fp, "\n");
    }
    if (st != TPS_OK) {
      tps_die_msg("fit --xgpu: a fit failed: %s", tps_strstatus(st));
      rc = TPS_EXIT_FAIL;
      if (to_file) tps_out_abort(&of);
    } else if (to_file && tps_out_commit(&of, &e)) {
      tps_err_print(&e);
      rc = TPS_EXIT_FAIL;
    }
  }
  for (int path = 0; path < TPS_XG_NPATH; path++)
    for (int i = 0; i < gp[path].ns; i++) gset_free(&gp[path].sets[i]);
  for (int a = 0; a < nas; a++) aset_free(&as[a]);
  tps_gpus_free(&gt);
  return rc;
}

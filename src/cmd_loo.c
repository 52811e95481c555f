/* cmd_loo.c: `tpsplit fit --loo-gpu [--json] [--only PART]`: leave-one-GPU-out evaluation
 * of the cross-GPU models on the bundled measurements (doc/loo.md holds its output).
 *
 * GEMM (model/xgemm.h), paths dense-bf16 and native-fp8, K = 5120:
 *   AIConfigurator tables data/aic/gemm_<gpu>_k5120.tsv.gz, N = 1536 and 2048 (the measured
 *   N either side of 1792), M = 1..16384 (a100_sxm: the sglang rows, 74 M values);
 *   our H200 tables data/h200_gemm_{dense-bf16,native-fp8}.tsv, N = 1792.
 * For every GPU g: fit on the other GPUs, predict every point of g; report median and max
 * |relative error| per GPU and path.  The 90% interval of a prediction is lognormal with
 * sigma from the training GPUs' own leave-one-out residuals (nested: each training GPU h
 * predicted by a fit without g and h); its coverage is the share of g's points inside.
 * Output is deterministic (fixed starts, no random numbers). */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aic.h"
#include "gpus.h"
#include "jsonout.h"
#include "loo.h"
#include "status.h"
#include "table.h"
#include "tpsplit.h"
#include "util.h"
#include "xgemm.h"

int cmd_fit_loo_gpu(int argc, char **argv);

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
  snprintf(s->file, sizeof s->file, "%s", file);
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
  snprintf(s->file, sizeof s->file, "%s", file);
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
  double sigma[MAXSETS];      /* per GPU: 90% interval log half-width (nested) */
  tps_loo_err err[MAXSETS];   /* per set */
  double cover[MAXSETS];      /* per set: share of its points inside the 90% interval */
  double width[MAXSETS];      /* per set: full width of the interval, relative */
} gemm_loo;

static int run_gemm_loo(tps_xg_path path, gset *sets, int ns, gemm_loo *r, int nested) {
  int skipg[MAXSETS];
  r->ngpu = group_sets(sets, ns, r->grp);
  for (int g = 0; g < r->ngpu; g++) {
    memset(skipg, 0, sizeof skipg);
    skipg[g] = 1;
    int st = fit_except(path, sets, ns, r->grp, skipg, &r->fold[g], NULL);
    if (st != TPS_OK) return st;
  }
  for (int i = 0; i < ns; i++) {
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
      tps_xg_model m;
      int st = fit_except(path, sets, ns, r->grp, skipg, &m, &r->fold[g]);
      if (st != TPS_OK) { free(lr); return st; }
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

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit fit --loo-gpu [--json] [--only gemm] [--no-nested] [--gpus FILE]\n"
          "Leave-one-GPU-out evaluation of the cross-GPU models on the bundled measurements\n"
          "(data/aic/ AIConfigurator tables, data/h200_gemm_*.tsv): every GPU is predicted by\n"
          "a fit on the others; prints per GPU and path the median and max |relative error|,\n"
          "the coverage of the 90%% interval, and the break-even table (doc/loo.md).\n");
}

int cmd_fit_loo_gpu(int argc, char **argv) {
  enum { OPT_JSON = 256, OPT_LOOGPU, OPT_ONLY, OPT_GPUS, OPT_NONESTED };
  static const struct option opts[] = {{"json", no_argument, NULL, OPT_JSON},
                                       {"loo-gpu", no_argument, NULL, OPT_LOOGPU},
                                       {"only", required_argument, NULL, OPT_ONLY},
                                       {"no-nested", no_argument, NULL, OPT_NONESTED},
                                       {"gpus", required_argument, NULL, OPT_GPUS},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int json = 0, nested = 1, c;
  const char *only = NULL, *gpus = NULL;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case OPT_JSON: json = 1; break;
      case OPT_LOOGPU: break;
      case OPT_ONLY: only = optarg; break;
      case OPT_NONESTED: nested = 0; break;
      case OPT_GPUS: gpus = optarg; break;
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
  (void)only;
  (void)json;
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(gpus, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  int rc = TPS_EXIT_OK;
  for (int path = 0; path < TPS_XG_NPATH && rc == TPS_EXIT_OK; path++) {
    gset sets[MAXSETS];
    int ns = 0;
    memset(sets, 0, sizeof sets);
    for (size_t i = 0; i < NAIC && rc == TPS_EXIT_OK; i++) {
      if (path == TPS_XG_FP8 && !strcmp(aic_gemm[i].aic_gpu, "a100_sxm")) continue; /* no fp8 tensor cores */
      if (load_aic_gemm(&aic_gemm[i], (tps_xg_path)path, &gt, &sets[ns], &e)) { tps_err_print(&e); rc = TPS_EXIT_USAGE; break; }
      ns++;
    }
    if (rc == TPS_EXIT_OK) {
      const char *rel = path == TPS_XG_FP8 ? "h200_gemm_native-fp8.tsv" : "h200_gemm_dense-bf16.tsv";
      if (load_bench_gemm(rel, &gt, &sets[ns], &e)) { tps_err_print(&e); rc = TPS_EXIT_USAGE; }
      else ns++;
    }
    if (rc == TPS_EXIT_OK) {
      static gemm_loo r;
      memset(&r, 0, sizeof r);
      int st = run_gemm_loo((tps_xg_path)path, sets, ns, &r, nested);
      if (st != TPS_OK) { tps_die_msg("fit --loo-gpu: %s fit failed: %s", tps_xg_path_names[path], tps_strstatus(st)); rc = TPS_EXIT_FAIL; }
      else {
        printf("# GEMM %s, K %d, leave one GPU out\n", tps_xg_path_names[path], GEMM_K);
        printf("%-22s %-34s %5s %8s %8s %8s %8s\n", "gpu", "data", "n", "med_err", "max_err", "cover90", "width90");
        for (int g = 0; g < ns; g++)
          printf("%-22s %-34s %5zu %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", sets[g].gpu->name, sets[g].what, sets[g].neval,
                 100 * r.err[g].med_abs, 100 * r.err[g].max_abs, 100 * r.cover[g], 100 * r.width[g]);
        for (int g = 0; g < r.ngpu; g++) {
          int i0 = 0;
          while (r.grp[i0] != g) i0++;
          printf("# fold without %s:", sets[i0].gpu->name);
          for (int j = 0; j < TPS_XG_NPAR; j++) if (tps_xg_par_free((tps_xg_path)path, j)) printf(" %s=%.4g", tps_xg_par_names[j], r.fold[g].p[j]);
          printf("\n");
        }
        if (getenv("TPS_LOO_DUMP"))
          for (int g = 0; g < ns; g++)
            for (size_t j = 0; j < sets[g].n; j++)
              if (sets[g].eval[j]) printf("pt %s %ld %ld %.4g %.4g %+.3f\n", sets[g].gpu->name, sets[g].nn[j], sets[g].m[j], sets[g].t[j], sets[g].pred[j], sets[g].pred[j] / sets[g].t[j] - 1);
      }
    }
    for (int i = 0; i < ns; i++) gset_free(&sets[i]);
  }
  tps_gpus_free(&gt);
  return rc;
}

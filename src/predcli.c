/* predcli.c: the reference, contexts, the crossover grid and its output, shared by
 * `predict`, `crossover` and the main job (see predcli.h). */
#include "predcli.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "fitfile.h"
#include "jsonout.h"
#include "util.h"

int tps_parse_gather(const char *s) {
  for (int i = 0; i < 3; i++)
    if (strcasecmp(s, tps_gather_name(i)) == 0) return i;
  return -1;
}

int tps_parse_tp_list(const char *s, int **out, size_t *n) {
  char **v;
  size_t nv;
  *out = NULL;
  *n = 0;
  if (tps_parse_list(s, &v, &nv) != 0 || nv == 0) return -1;
  int *t = malloc(nv * sizeof *t);
  int ok = t != NULL;
  for (size_t i = 0; ok && i < nv; i++) {
    long x;
    ok = tps_parse_long(v[i], &x) == 0 && x >= 1 && x <= 64;
    if (ok) t[i] = (int)x;
  }
  tps_free_list(v, nv);
  if (!ok) { free(t); return -1; }
  *out = t;
  *n = nv;
  return 0;
}

int tps_predref_load(tps_predref *r, int scaling, const char *fit_file, const char *gpus_file, int *fit_failed,
                     tps_err *e) {
  memset(r, 0, sizeof *r);
  *fit_failed = 0;
  if (tps_gpus_load(gpus_file, &r->gpus, e) != 0) return -1;
  char bundled[4096];
  if (scaling == TPS_SCALING_MODEL) {
    if (fit_file) {
      if (tps_fitfile_read(fit_file, &r->fit, e) != 0) return -1;
      snprintf(r->fit_source, sizeof r->fit_source, "fit %s", fit_file);
    } else {
      if (tps_data_path(TPS_BUNDLED_TABLE, bundled, sizeof bundled, e) != 0) return -1;
      tps_fit_opts fo = {0, 0};
      int status;
      if (tps_fit_file(bundled, NULL, gpus_file, &fo, &r->fit, &status, e) != 0) {
        *fit_failed = tps_fit_exit_code(status) == 1;
        return -1;
      }
      snprintf(r->fit_source, sizeof r->fit_source, "fit of %s", bundled);
    }
    if (r->fit.kind != TPS_FIT_SPLIT && r->fit.kind != TPS_FIT_GEMM)
      return tps_err_set(e, fit_file, 0, "an all-gather fit has no GEMM: predictions need a split or GEMM fit");
    tps_err e2;
    tps_err_clear(&e2);
    r->fit_gpu = tps_gpus_find(&r->gpus, r->fit.gpu, &e2);
    if (!r->fit_gpu) return tps_err_set(e, fit_file ? fit_file : bundled, 0, "the fit's GPU: %s", e2.msg);
    r->have_fit = 1;
  } else if (scaling == TPS_SCALING_PESSIMISTIC) {
    if (tps_data_path(TPS_BUNDLED_TABLE, bundled, sizeof bundled, e) != 0) return -1;
    if (tps_table_read(bundled, &r->table, e) != 0) return -1;
    r->have_table = 1;
    tps_table *t = &r->table;
    if (t->kind != TPS_TABLE_SPLIT || t->tp < 2 || !(t->out_bytes_per_token > 0) || t->k < 1 || t->n < 1)
      return tps_err_set(e, bundled, 0, "not a split table with tp, k, n and out_bytes_per_token metadata");
    tps_err e2;
    tps_err_clear(&e2);
    r->table_gpu = tps_gpus_find(&r->gpus, t->gpu, &e2);
    if (!r->table_gpu) return tps_err_set(e, bundled, 0, "%s", e2.msg);
    tps_split_data *d = &r->split;
    d->n = t->nrows;
    d->tokens = t->tokens;
    d->replicated_us = t->replicated_us;
    d->split_us = t->split_us;
    d->tp = t->tp;
    d->shape.k = t->k;
    d->shape.n = t->n;
    d->shape.out_bytes = t->out_bytes_per_token / (double)t->n;
    d->out_bytes_per_token = t->out_bytes_per_token;
    d->gather_cap_bytes = t->gather_cap_bytes;
    d->path = tps_path_find(t->kpath);
    d->sms = r->table_gpu->sms;
    d->gpu = r->table_gpu;
    snprintf(r->fit_source, sizeof r->fit_source, "%s", bundled);
  }
  return 0;
}

void tps_predref_free(tps_predref *r) {
  tps_gpus_free(&r->gpus);
  if (r->have_table) tps_table_free(&r->table);
  memset(r, 0, sizeof *r);
}

int tps_predref_context(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_opts *o, tps_pred *p) {
  switch (scaling) {
  case TPS_SCALING_MODEL:
    return tps_pred_init_model(p, &r->fit, r->fit_gpu, gpu, tp, path, o);
  case TPS_SCALING_PESSIMISTIC:
    return tps_pred_init_pessimistic(p, &r->split, r->table_gpu, gpu, tp, path, o);
  default:
    return tps_pred_init_spec(p, gpu, tp, path, NULL, 0, o);
  }
}

void tps_predref_describe(const tps_predref *r, int scaling, char *buf, size_t bufsz) {
  switch (scaling) {
  case TPS_SCALING_MODEL:
    snprintf(buf, bufsz, "scaling model: %s (%s), transferred by peak x efficiency, HBM and link bandwidth", r->fit_source,
             r->fit.gpu);
    break;
  case TPS_SCALING_PESSIMISTIC:
    snprintf(buf, bufsz, "scaling pessimistic: the brief's rule on %s (GEMM 2x/3.7x/6.7x faster at <=256/512/>=1024 rows, gather as measured)",
             r->fit_source);
    break;
  default:
    snprintf(buf, bufsz, "scaling spec: datasheet x path priors (no measurement)");
  }
}

/* ---------------------------------------------------------------- grid */
/* The cells are independent: they are shared out between worker threads (one per
 * online CPU, at most 8; TPSPLIT_THREADS overrides), each taking the next cell.  Every
 * cell draws its bootstrap samples from the same seed, so the output does not depend on
 * the number of threads. */
typedef struct {
  const tps_predref *r;
  int scaling;
  const tps_pred_opts *po;
  const tps_unc_opts *uo;
  long tmax, rounding;
  tps_grid *g;
  pthread_mutex_t lock;
  size_t next;
} grid_job;

static void grid_cell(grid_job *j, tps_gridcell *c) {
  tps_pred p;
  c->status = tps_predref_context(j->r, j->scaling, c->gpu, c->tp, c->path, j->po, &p);
  if (c->status == TPS_PRED_OK) c->status = tps_pred_analyze(&p, j->tmax, j->uo, &c->cx, &c->iv);
  if (c->status == TPS_PRED_NA) snprintf(c->why, sizeof c->why, "%s", p.why);
  tps_pred_free(&p);
  if (c->status == TPS_PRED_OK) c->threshold = tps_threshold(c->cx.breakeven, j->rounding);
}

static void *grid_worker(void *arg) {
  grid_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->g->n) return NULL;
    grid_cell(j, &j->g->cell[i]);
  }
}

static int grid_threads(void) {
  const char *s = getenv("TPSPLIT_THREADS");
  long n;
  if (s && tps_parse_long(s, &n) == 0 && n >= 1 && n <= 64) return (int)n;
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int tps_grid_run(const tps_predref *r, int scaling, const tps_gpu *const *gpus, size_t ngpu, const int *tps,
                 size_t ntp, const tps_path *const *paths, size_t npath, const tps_pred_opts *po,
                 const tps_unc_opts *uo, long tmax, long rounding, tps_grid *g, tps_err *e) {
  memset(g, 0, sizeof *g);
  g->tmax = tmax;
  g->scaling = scaling;
  g->nsamples = uo && uo->nsamples > 0 ? uo->nsamples : TPS_PRED_DEFAULT_SAMPLES;
  g->level = uo && uo->level > 0 ? uo->level : 0.90;
  g->cell = calloc(ngpu * ntp * npath + 1, sizeof *g->cell);
  if (!g->cell) return tps_err_set(e, NULL, 0, "out of memory");
  for (size_t i = 0; i < ngpu; i++)
    for (size_t j = 0; j < ntp; j++)
      for (size_t k = 0; k < npath; k++) {
        tps_gridcell *c = &g->cell[g->n++];
        c->gpu = gpus[i];
        c->tp = tps[j];
        c->path = paths[k];
        c->threshold = -1;
      }
  grid_job job = {r, scaling, po, uo, tmax, rounding, g, PTHREAD_MUTEX_INITIALIZER, 0};
  int nt = grid_threads();
  if ((size_t)nt > g->n) nt = g->n ? (int)g->n : 1;
  pthread_t th[64];
  int started = 0;
  for (int i = 1; i < nt; i++)
    if (pthread_create(&th[started], NULL, grid_worker, &job) == 0) started++;
  grid_worker(&job);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (c->status != TPS_PRED_OK && c->status != TPS_PRED_NA)
      return tps_err_set(e, NULL, 0, "%s TP%d %s: the prediction failed (status %d)", c->gpu->name, c->tp, c->path->name,
                         c->status);
  }
  return 0;
}

void tps_grid_free(tps_grid *g) {
  free(g->cell);
  memset(g, 0, sizeof *g);
}

static void fmt_tokens(char *buf, size_t n, double x) {
  if (isnan(x)) snprintf(buf, n, "-");
  else if (isinf(x)) snprintf(buf, n, "never");
  else snprintf(buf, n, "%.0f", x);
}

void tps_grid_print(const tps_grid *g) {
  printf("%-14s %3s  %-13s %10s  %-16s %9s\n", "gpu", "tp", "path", "breakeven", "interval90", "threshold");
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (c->status == TPS_PRED_NA) {
      printf("%-14s %3d  %-13s %10s  n/a: %s\n", c->gpu->name, c->tp, c->path->name, "n/a", c->why);
      continue;
    }
    char be[32], lo[32], hi[32], iv[80], th[32];
    fmt_tokens(be, sizeof be, c->cx.breakeven < 0 ? INFINITY : (double)c->cx.breakeven);
    fmt_tokens(lo, sizeof lo, c->iv.lo);
    fmt_tokens(hi, sizeof hi, c->iv.hi);
    if (isnan(c->iv.lo)) snprintf(iv, sizeof iv, "-");
    else snprintf(iv, sizeof iv, "%s..%s", lo, hi);
    if (c->threshold < 0) snprintf(th, sizeof th, "-");
    else snprintf(th, sizeof th, "%ld", c->threshold);
    printf("%-14s %3d  %-13s %10s  %-16s %9s\n", c->gpu->name, c->tp, c->path->name, be, iv, th);
  }
}

/* A token count as JSON: an integer, or null when not finite. */
static json_t *json_tokens(double x) { return isfinite(x) ? json_integer((json_int_t)x) : json_null(); }

json_t *tps_grid_json(const tps_grid *g) {
  json_t *root = json_object(), *cells = json_array(), *na = json_array();
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    json_t *o = json_object();
    json_object_set_new(o, "gpu", json_string(c->gpu->name));
    json_object_set_new(o, "tp", json_integer(c->tp));
    json_object_set_new(o, "path", json_string(c->path->name));
    if (c->status == TPS_PRED_NA) {
      json_object_set_new(o, "reason", json_string(c->why));
      json_array_append_new(na, o);
      continue;
    }
    json_object_set_new(o, "breakeven_tokens", json_tokens(c->cx.breakeven < 0 ? NAN : (double)c->cx.breakeven));
    json_object_set_new(o, "breakeven_lo", json_tokens(c->iv.lo));
    json_object_set_new(o, "breakeven_hi", json_tokens(c->iv.hi));
    json_object_set_new(o, "threshold_tokens", json_tokens(c->threshold < 0 ? NAN : (double)c->threshold));
    json_array_append_new(cells, o);
  }
  json_object_set_new(root, "cells", cells);
  json_object_set_new(root, "not_applicable", na);
  json_object_set_new(root, "scaling", json_string(tps_scaling_names[g->scaling]));
  json_object_set_new(root, "max_tokens", json_integer(g->tmax));
  json_object_set_new(root, "samples", json_integer(g->scaling == TPS_SCALING_PESSIMISTIC ? 0 : g->nsamples));
  tps_json_set_num(root, "level", g->level);
  return root;
}

int tps_pco_parse(tps_pco *p, const char *cmd, int c, const char *arg) {
  double x;
  switch (c) {
  case TPS_PCO_SCALING:
    if ((p->scaling = tps_scaling_find(arg)) < 0) { tps_die_msg("%s: unknown --scaling '%s' (model, spec, pessimistic)", cmd, arg); return -1; }
    return 0;
  case TPS_PCO_GATHER:
    if ((p->po->backend = tps_parse_gather(arg)) < 0) { tps_die_msg("%s: unknown --gather '%s' (auto, nccl, custom)", cmd, arg); return -1; }
    return 0;
  case TPS_PCO_CAP:
    if (tps_parse_double(arg, &x) || !(x > 0)) { tps_die_msg("%s: bad --cap-bytes '%s'", cmd, arg); return -1; }
    p->po->cap_bytes = x;
    return 0;
  case TPS_PCO_IB:
    if (tps_parse_double(arg, &x) || !(x > 0)) { tps_die_msg("%s: bad --ib-gbps '%s'", cmd, arg); return -1; }
    p->po->ib_gbps = x;
    return 0;
  case TPS_PCO_ROUND:
    if (tps_opt_long(cmd, "round", arg, 1, TPS_TOKENS_MAX, "the longest scan of the model", &p->rounding)) return -1;
    return 0;
  case TPS_PCO_SAMPLES:
    if (tps_parse_long(arg, &p->samples) || p->samples < 2 || p->samples > 100000) { tps_die_msg("%s: bad --samples '%s' (2..100000)", cmd, arg); return -1; }
    return 0;
  case TPS_PCO_SEED:
    if (tps_parse_long(arg, &p->seed) || p->seed < 0) { tps_die_msg("%s: bad --seed '%s'", cmd, arg); return -1; }
    return 0;
  }
  return -1;
}

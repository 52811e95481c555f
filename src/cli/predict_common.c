/* predict_common.c: the reference's options from a command's, the crossover grid and its
 * output, shared by `predict`, `crossover` and the main job (see predict_common.h). */
#include "config.h"
#include "src/cli/predict_common.h"
#include <math.h>
#include <pthread.h>
#include "src/base/parallel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "src/cli/tpsplit.h"
#include "src/base/jsonout.h"
#include "src/base/util.h"
#include "model/predict/crossover.h"
#include "src/plot/plot.h"
#include "src/cli/gpu_doubt.h"
#include "model/predict/uncertainty.h"
#include "model/predict/excess.h"



tps_predref_opts tps_predref_opts_of(const tps_cmdopt_values *v, long tmax, const tps_path *hint) {
  tps_predref_opts o = {v->scaling, v->fits.n ? v->fits.v[0] : NULL, v->gpus_file,
                        {tmax, v->k, v->n, v->measured_only, v->no_bundled, v->harness},
                        (const char *const *)v->gemms.v, v->gemms.n, (const char *const *)v->gathers.v, v->gathers.n,
                        ((v->given >> TPS_OI_PATH) & 1u) ? hint : NULL};
  return o;
}

/* ---------------------------------------------------------------- grid */
/* The cells are independent: they are shared out between worker threads (tps_parallel_for:
 * one per online CPU, at most 8; TPSPLIT_THREADS overrides), each taking the next cell.  Every
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
  size_t done;
  int stop;  /* the progress line's thread ends */
} grid_job;

static double never_replicated(long T, void *vc) { return tps_pred_replicated_us(vc, T); }
static double never_split(long T, void *vc) { return tps_pred_split_us(vc, T, NULL); }

int tps_never_note(const tps_pred *p, int scaling, const tps_partuse *use, const tps_interval *iv, long tmax, long *t1,
                   double *x, long *at) {
  if (scaling != TPS_SCALING_PARTS || isnan(iv->hi) || isfinite(iv->hi)) return 0;
  int measured = use->gemm && tps_prov_is_own_measurement(use->gemm->prov);
  for (int b = 0; b < TPS_NGATHERS; b++) measured |= use->gather[b] && tps_prov_is_own_measurement(use->gather[b]->prov);
  if (!measured) return 0;
  *t1 = isfinite(iv->lo) && iv->lo >= 1 ? (long)iv->lo : 1;
  tps_costs c = {never_replicated, never_split, (void *)p};
  *x = tps_split_flatness(&c, *t1, tmax, at);
  return !isnan(*x);
}

static void grid_cell(grid_job *j, tps_gridcell *c) {
  tps_pred p;
  c->status = tps_predref_context_use(j->r, j->scaling, c->gpu, c->tp, c->path, j->po, &p, &c->use, NULL);
  c->custom_possible = c->status == TPS_OK && tps_pred_custom_possible(&p);
  c->backend = p.backend;
  if (c->status == TPS_OK) {
    /* the break-even by bisection (the dense scan's number; a grid prints no sign changes) */
    memset(&c->cx, 0, sizeof c->cx);
    c->cx.tmin = 1;
    c->cx.tmax = j->tmax;
    c->status = tps_pred_analyze_be(&p, j->tmax, j->uo, &c->cx.breakeven, &c->iv);
  }
  if (c->status == TPS_OK && c->gpu->uncertain && j->scaling != TPS_SCALING_PESSIMISTIC) {
    tps_doubt d;
    c->status = tps_doubt_eval(j->r, j->scaling, c->gpu, c->tp, c->path, j->po, j->tmax, &d);
    if (c->status == TPS_OK) c->uncertain = tps_doubt_widen(&d, &c->iv.lo, &c->iv.hi) || d.n > 0;
  }
  if (c->status == TPS_NA) snprintf(c->why, sizeof c->why, "%s", p.why);
  c->never = c->status == TPS_OK && tps_never_note(&p, j->scaling, &c->use, &c->iv, j->tmax, &c->never_from, &c->never_x, &c->never_at);
  if (c->status == TPS_OK) c->threshold = tps_threshold_round(tps_pred_threshold(&p, j->tmax, NULL), j->rounding, j->tmax);
  tps_pred_free(&p);
}

/* One cell, on a worker thread of tps_parallel_for (src/base/parallel.h). */
static void grid_one(void *ctx, int i) {
  grid_job *j = ctx;
  grid_cell(j, &j->g->cell[i]);
  pthread_mutex_lock(&j->lock);
  j->done++;
  pthread_mutex_unlock(&j->lock);
}

/* Long runs say so (issue 30 item 9).  The estimate is made before the run from its size (so
 * that whether it is said does not depend on the machine's load): seconds per cell = a fixed
 * part + the bootstrap samples x the seconds per sample of the scaling, measured on one core
 * (crossover --gpus H200 --tp 8 --samples 100000: model 2.97 s, parts 0.45 s a cell), over the
 * worker threads.  Above TPS_LONG_RUN_S it is printed; on a terminal a progress line follows. */
#define TPS_LONG_RUN_S 10.0
static double grid_estimate_s(const tps_grid *g, int scaling, int threads) {
  double per_sample = scaling == TPS_SCALING_PARTS ? 1e-5 : scaling == TPS_SCALING_PESSIMISTIC ? 1e-6 : 3e-5;
  return (double)g->n * (0.02 + per_sample * (double)g->nsamples) / (threads > 0 ? threads : 1);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The progress line on stderr (a terminal): "k of n cells, about S s left", once a second. */
static void *grid_progress(void *arg) {
  grid_job *j = arg;
  const double t0 = now_s();
  for (int shown = 0;; shown = 1) {
    for (int k = 0; k < 10; k++) { /* 1 s, in steps that notice the end */
      pthread_mutex_lock(&j->lock);
      int stop = j->stop;
      pthread_mutex_unlock(&j->lock);
      if (stop) { if (shown) fputc('\n', stderr); return NULL; }
      struct timespec d = {0, 100000000L};
      nanosleep(&d, NULL);
    }
    pthread_mutex_lock(&j->lock);
    size_t done = j->done, n = j->g->n;
    pthread_mutex_unlock(&j->lock);
    double el = now_s() - t0;
    const char *cmd = tps_err_command_name();
    fprintf(stderr, "\rtpsplit%s%s: %zu of %zu cells, ", cmd[0] ? " " : "", cmd, done, n);
    if (done) fprintf(stderr, "about %.0f s left   ", el / (double)done * (double)(n - done));
    else fprintf(stderr, "%.0f s so far   ", el);
    fflush(stderr);
  }
}

int tps_grid_run(const tps_predref *r, int scaling, const tps_gpu *const *gpus, size_t ngpu, const int *tps,
                 size_t ntp, const tps_path *const *paths, size_t npath, const tps_pred_opts *po,
                 const tps_unc_opts *uo, long tmax, long rounding, tps_grid *g, tps_err *e) {
  memset(g, 0, sizeof *g);
  g->tmax = tmax;
  g->scaling = scaling;
  g->nsamples = uo && uo->nsamples > 0 ? uo->nsamples : TPS_PRED_DEFAULT_SAMPLES;
  g->level = uo && uo->level > 0 ? uo->level : TPS_INTERVAL_LEVEL;
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
  g->ref = r;
  /* the parts scaling: every part resolved (and its input errors reported) before the
   * threads share the set */
  if (scaling == TPS_SCALING_PARTS &&
      tps_partset_prepare(r->parts, gpus, ngpu, tps, ntp, paths, npath, po, e) != 0)
    return -2;
  grid_job job = {r, scaling, po, uo, tmax, rounding, g, PTHREAD_MUTEX_INITIALIZER, 0, 0};
  int nt = tps_threads_default();
  if ((size_t)nt > g->n) nt = g->n ? (int)g->n : 1;
  pthread_t prog;
  int progress = 0;
  const double est = grid_estimate_s(g, scaling, nt);
  if (est > TPS_LONG_RUN_S) {
    tps_die_msg("about %.0f s: %zu cells x %d bootstrap samples on %d thread%s (--samples sets the samples, "
                "--gpus/--tp/--paths the cells)", est, g->n, g->nsamples, nt, nt == 1 ? "" : "s");
    progress = isatty(STDERR_FILENO) && pthread_create(&prog, NULL, grid_progress, &job) == 0;
  }
  tps_parallel_for((int)g->n, nt, grid_one, &job);
  if (progress) {
    pthread_mutex_lock(&job.lock);
    job.stop = 1;
    pthread_mutex_unlock(&job.lock);
    pthread_join(prog, NULL);
  }
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (c->status != TPS_OK && c->status != TPS_NA)
      return tps_err_set(e, NULL, 0, "%s TP%d %s: the prediction failed: %s", c->gpu->name, c->tp, c->path->name,
                         c->status == TPS_EINVAL ? "a part has no finite time at some T of 1..--max-tokens (outside what "
                                                   "it was measured or fitted on: a lower --max-tokens)"
                                                 : tps_strstatus(c->status));
  }
  /* the sources in the order of the rows */
  for (size_t i = 0; i < g->n && scaling == TPS_SCALING_PARTS; i++)
    if (g->cell[i].status == TPS_OK)
      tps_partset_mark(r->parts, &g->cell[i].use, g->cell[i].backend, g->cell[i].tp, g->cell[i].custom_possible);
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
  char ivname[32];
  int parts = g->scaling == TPS_SCALING_PARTS;
  snprintf(ivname, sizeof ivname, "interval%.0f", 100 * g->level);
  printf("%-14s %3s  %-13s %10s  %-16s %9s", "gpu", "tp", "path", "breakeven", ivname, "threshold");
  if (parts) printf("  %-22s %s", "gemm", "gather");
  printf("\n");
  int nstar = 0;
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (c->status == TPS_NA) {
      printf("%-14s %3d  %-13s %10s  n/a: %s\n", c->gpu->name, c->tp, c->path->name, "n/a", c->why);
      continue;
    }
    char be[32], lo[32], hi[32], iv[80], th[32];
    fmt_tokens(be, sizeof be, c->cx.breakeven < 0 ? INFINITY : (double)c->cx.breakeven);
    fmt_tokens(lo, sizeof lo, c->iv.lo);
    fmt_tokens(hi, sizeof hi, c->iv.hi);
    if (isnan(c->iv.lo)) snprintf(iv, sizeof iv, "-");
    else snprintf(iv, sizeof iv, "%s..%s%s", lo, hi, c->uncertain ? "*" : "");
    nstar += c->uncertain;
    if (c->threshold < 0) snprintf(th, sizeof th, "-");
    else snprintf(th, sizeof th, "%ld", c->threshold);
    printf("%-14s %3d  %-13s %10s  %-16s %9s", c->gpu->name, c->tp, c->path->name, be, iv, th);
    if (parts) {
      char gs[64], as[128];
      tps_partuse_gemm_short(&c->use, gs, sizeof gs);
      tps_partuse_gather_short(&c->use, c->backend, c->tp, as, sizeof as);
      printf("  %-22s %s", gs, as);
    }
    printf("\n");
  }
  int nnever = 0;
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (!c->never) continue;
    if (!nnever++)
      printf("why an interval reaches never (a part measured): from its low end (or 1) on, split and replicated differ by at\n"
             "  most x (|split/replicated - 1|, 8 points per octave up to %ld): a part off by that much keeps the split from winning\n", g->tmax);
    printf("  %s TP%d %s: from %ld tokens on within %.1f%% (largest at %ld)\n", c->gpu->name, c->tp, c->path->name, c->never_from,
           100 * c->never_x, c->never_at);
  }
  if (nstar)
    printf("* the interval also covers the break-even with each uncertain fact of the GPU's row (a value with '?' in\n"
           "  data/gpus.tsv) at -10%% and +10%%; tpsplit predict --gpu G names them\n");
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
    if (c->status == TPS_NA) {
      json_object_set_new(o, "reason", json_string(c->why));
      json_array_append_new(na, o);
      continue;
    }
    json_object_set_new(o, "breakeven_tokens", json_tokens(c->cx.breakeven < 0 ? NAN : (double)c->cx.breakeven));
    json_object_set_new(o, "breakeven_lo", json_tokens(c->iv.lo));
    json_object_set_new(o, "breakeven_hi", json_tokens(c->iv.hi));
    json_object_set_new(o, "threshold_tokens", json_tokens(c->threshold < 0 ? NAN : (double)c->threshold));
    if (c->uncertain) json_object_set_new(o, "interval_covers_uncertain_facts", json_true());
    if (c->never) {
      json_t *nv = json_object();
      json_object_set_new(nv, "from_tokens", json_integer(c->never_from));
      tps_json_set_num(nv, "max_abs_rel_diff", c->never_x);
      json_object_set_new(nv, "at_tokens", json_integer(c->never_at));
      json_object_set_new(o, "interval_never", nv);
    }
    if (g->scaling == TPS_SCALING_PARTS) {
      json_t *pj = tps_partuse_json(&c->use, c->backend, c->tp, c->custom_possible);
      json_object_update(o, pj);
      json_decref(pj);
    }
    json_array_append_new(cells, o);
  }
  json_object_set_new(root, "cells", cells);
  json_object_set_new(root, "not_applicable", na);
  json_object_set_new(root, "scaling", json_string(tps_scaling_names[g->scaling]));
  json_object_set_new(root, "max_tokens", json_integer(g->tmax));
  json_object_set_new(root, "samples", json_integer(g->scaling == TPS_SCALING_PESSIMISTIC ? 0 : g->nsamples));
  tps_json_set_num(root, "level", g->level);
  if (g->scaling == TPS_SCALING_PARTS && g->ref && g->ref->parts)
    json_object_set_new(root, "sources", tps_partset_sources_json(g->ref->parts));
  return root;
}

/* plot_job.c: from fits, measurements and predictions to the figures of plot.c.
 *
 * Curves come from the prediction contexts of model/predict/predict.h evaluated on a token grid:
 *   replicated(T) = tps_pred_replicated_us(T), split(T) = tps_pred_split_us(T) (its gather
 *   backend per T), speedup = replicated / split;
 *   grid: every T in 1..64, then 32 points per octave (rounded, deduplicated) and every power
 *   of two up to tmax, so the tile steps of the GEMM model stay visible;
 *   break-even, its 90% interval and the threshold: tps_pred_breakeven, tps_pred_interval and
 *   tps_pred_threshold (least predicted excess), exactly what `tpsplit crossover` reports.
 * 90% bands (latency and speedup, per T): the 5% and 95% quantiles over nsamples draws of the
 *   parametric bootstrap behind tps_pred_interval (tps_pred_draws_next: the fit's parameters
 *   from their covariance and, for transferred or spec predictions, lognormal factors on the
 *   GEMM throughput, streaming bandwidth and gather bandwidths).  Pessimistic scaling is a
 *   rule: no band, no interval.
 * Units: tokens, microseconds. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "src/io/gpus.h"
#include "src/io/modeldesc.h"
#include "src/plot/plot.h"
#include "src/cli/predict_common.h"
#include "model/predict/predict.h"
#include "model/predict/crossover.h"
#include "model/predict/uncertainty.h"
#include "model/sim/sim.h"
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/base/util.h"
#include "src/cli/cmdopt.h"
#include "src/io/table.h"
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_TMAX 16384L
#define DEFAULT_SAMPLES 200
#define LATENCY_MAX_TARGETS 12
/* the GEMM measurement of our W8A16 kernels the main job draws on its H100 latency figure (the
 * table of the kernels' current dispatch; data/parts.tsv), and its path */
#define TPS_W8_GEMM_TABLE "h100_w8a16_grid_5120x1792_w8a16.tsv"
#define TPS_W8_GEMM_PATH "w8a16"

/* ---------------------------------------------------------------- token grid */

static int token_grid(long tmax, long **out, size_t *n) {
  size_t cap = 128, k = 0;
  long *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  long last = 0;
  for (int i = 0;; i++) {
    double x = i < 64 ? i + 1 : 64.0 * pow(2.0, (i - 63) / 32.0);
    long t = lround(x);
    /* hit the powers of two exactly */
    long p2 = 1;
    while (p2 * 2 <= t) p2 *= 2;
    if (p2 > last && p2 < t) t = p2;
    if (t > tmax) t = tmax;
    if (t > last) {
      if (k == cap) { cap *= 2; long *nv = realloc(v, cap * sizeof *nv); if (!nv) { free(v); return -1; } v = nv; }
      v[k++] = t;
      last = t;
    }
    if (t >= tmax) break;
  }
  *out = v; *n = k;
  return 0;
}

/* ---------------------------------------------------------------- one curve */

typedef struct {
  tps_plot_curve c;
  long *tok;
  double *rep, *rl, *rh, *sp, *sl, *sh, *spl, *sph;
  int *backend;
  char gpu[64], path[32], source[320];
} curve_buf;

static void curve_free(curve_buf *b) {
  free(b->tok); free(b->rep); free(b->rl); free(b->rh); free(b->sp); free(b->sl); free(b->sh);
  free(b->spl); free(b->sph); free(b->backend);
  memset(b, 0, sizeof *b);
}

/* The central TPS_INTERVAL_LEVEL quantiles of v[0..m) (sorted in place) into lo, hi; NaN
 * when too few. */
static void central_quantiles(double *v, size_t m, double *lo, double *hi) {
  const double tail = (1.0 - TPS_INTERVAL_LEVEL) / 2.0;
  if (m < 10) { *lo = *hi = NAN; return; }
  gsl_sort(v, 1, m);
  *lo = gsl_stats_quantile_from_sorted_data(v, 1, m, tail);
  *hi = gsl_stats_quantile_from_sorted_data(v, 1, m, 1.0 - tail);
}

/* The 90% bands of replicated, split and speedup on the grid (see the top comment). */
static int pred_band(const tps_pred *p, const long *grid, size_t n, int S, unsigned long seed, curve_buf *b) {
  for (size_t i = 0; i < n; i++) b->rl[i] = b->rh[i] = b->sl[i] = b->sh[i] = b->spl[i] = b->sph[i] = NAN;
  tps_pred_draws *d = NULL;
  int st = tps_pred_draws_alloc(p, seed, &d);
  if (st == TPS_NA) return 0; /* no uncertainty model: no band */
  int rc = -1;
  double *R = malloc((size_t)S * n * sizeof *R), *Sp = malloc((size_t)S * n * sizeof *Sp);
  double *col = malloc((size_t)S * sizeof *col);
  if (st != TPS_OK || !R || !Sp || !col) goto out;
  int got = 0, tries = 0;
  while (got < S && tries < 10 * S) {
    tries++;
    tps_pred q;
    if (tps_pred_draws_next(d, &q) != 0) continue;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
      double rv = tps_pred_replicated_us(&q, grid[i]), sv = tps_pred_split_us(&q, grid[i], NULL);
      if (!(rv > 0) || !(sv > 0) || !isfinite(rv) || !isfinite(sv)) bad = 1;
      R[(size_t)got * n + i] = rv;
      Sp[(size_t)got * n + i] = sv;
    }
    if (!bad) got++;
  }
  for (size_t i = 0; i < n; i++) {
    for (int s = 0; s < got; s++) col[s] = R[(size_t)s * n + i];
    central_quantiles(col, (size_t)got, &b->rl[i], &b->rh[i]);
    for (int s = 0; s < got; s++) col[s] = Sp[(size_t)s * n + i];
    central_quantiles(col, (size_t)got, &b->sl[i], &b->sh[i]);
    for (int s = 0; s < got; s++) col[s] = R[(size_t)s * n + i] / Sp[(size_t)s * n + i];
    central_quantiles(col, (size_t)got, &b->spl[i], &b->sph[i]);
  }
  rc = 0;
out:
  free(R); free(Sp); free(col);
  tps_pred_draws_free(d);
  return rc;
}

/* Break-even (NaN never), its interval and the threshold t (-1 never) of a prediction: tps_pred_analyze, as
 * `tpsplit crossover` (same samples and seed give the same numbers). */
static void cell_values(long t, const tps_crossover *cx, const tps_interval *iv, double *be, double *lo, double *hi,
                        double *thr) {
  *be = *lo = *hi = *thr = NAN;
  if (t > 0) *thr = (double)t;
  if (cx->breakeven < 1) { /* never: keep the interval's lower end where some draws win */
    if (isfinite(iv->lo) && iv->lo >= 1) *lo = iv->lo;
    return;
  }
  *be = (double)cx->breakeven;
  *lo = iv->lo;
  *hi = isfinite(iv->hi) ? iv->hi : NAN; /* "never" at the upper end: open interval */
}

static void pred_breakeven(const tps_pred *p, long tmax, int S, unsigned long seed, double *be, double *lo,
                           double *hi, double *thr) {
  tps_unc_opts u = {S, seed, TPS_INTERVAL_LEVEL};
  tps_crossover cx;
  tps_interval iv;
  *be = *lo = *hi = *thr = NAN;
  if (tps_pred_analyze(p, tmax, &u, &cx, &iv) == TPS_OK) cell_values(tps_pred_threshold(p, tmax, NULL), &cx, &iv, be, lo, hi, thr);
}

/* S: samples of the break-even interval; band: also draw the latency/speedup bands. */
/* The grid with the exact first token of each gather-backend change added (and the token
 * before it), found by bisection between the grid points that straddle it; malloc'ed. */
static long *refine_switches(const tps_pred *p, const long *grid, size_t n, size_t *nout) {
  long *v = malloc((n + 8) * sizeof *v);
  size_t k = 0, extra = 0;
  if (!v) return NULL;
  int prev = -1;
  for (size_t i = 0; i < n; i++) {
    int b;
    tps_pred_split_us(p, grid[i], &b);
    if (i && b != prev && extra < 4 && grid[i] - grid[i - 1] > 1) {
      long lo = grid[i - 1], hi = grid[i]; /* backend(lo) = prev, backend(hi) = b */
      while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        int bm;
        tps_pred_split_us(p, mid, &bm);
        if (bm == prev) lo = mid; else hi = mid;
      }
      if (lo > grid[i - 1]) v[k++] = lo;
      if (hi < grid[i]) v[k++] = hi;
      extra++;
    }
    v[k++] = grid[i];
    prev = b;
  }
  *nout = k;
  return v;
}

static int curve_from_pred(curve_buf *b, const tps_pred *p, const long *grid0, size_t n0, long tmax, int S, int band,
                           unsigned long seed, const char *source, tps_err *e) {
  memset(b, 0, sizeof *b);
  size_t n = 0;
  b->tok = refine_switches(p, grid0, n0, &n);
  const long *grid = b->tok;
  double **arr[8] = {&b->rep, &b->rl, &b->rh, &b->sp, &b->sl, &b->sh, &b->spl, &b->sph};
  for (int k = 0; k < 8; k++) *arr[k] = malloc((n0 + 8) * sizeof(double));
  b->backend = malloc((n0 + 8) * sizeof *b->backend);
  for (int k = 0; k < 8; k++) if (!*arr[k]) b->tok = (free(b->tok), NULL);
  if (!b->tok || !b->backend) { curve_free(b); return tps_err_set(e, NULL, 0, "out of memory"); }
  for (size_t i = 0; i < n; i++) {
    b->rep[i] = tps_pred_replicated_us(p, grid[i]);
    b->sp[i] = tps_pred_split_us(p, grid[i], &b->backend[i]);
  }
  if (!band) for (size_t i = 0; i < n; i++) b->rl[i] = b->rh[i] = b->sl[i] = b->sh[i] = b->spl[i] = b->sph[i] = NAN;
  else if (pred_band(p, grid, n, S, seed, b)) { curve_free(b); return tps_err_set(e, NULL, 0, "out of memory"); }
  snprintf(b->gpu, sizeof b->gpu, "%s", p->gpu.name);
  snprintf(b->path, sizeof b->path, "%s", p->path->name);
  snprintf(b->source, sizeof b->source, "%s", source);
  tps_plot_curve *c = &b->c;
  c->gpu = b->gpu; c->tp = p->tp; c->path = b->path; c->source = b->source;
  c->n = n; c->tokens = b->tok;
  c->rep_us = b->rep; c->rep_lo_us = b->rl; c->rep_hi_us = b->rh;
  c->split_us = b->sp; c->split_lo_us = b->sl; c->split_hi_us = b->sh;
  c->speedup_lo = b->spl; c->speedup_hi = b->sph; c->backend = b->backend;
  c->gather = tps_gather_name(p->backend);
  c->k = p->shape.k;
  c->nout = p->shape.n;
  pred_breakeven(p, tmax, S, seed, &c->breakeven_tokens, &c->breakeven_lo, &c->breakeven_hi, &c->threshold_tokens);
  return 0;
}

/* ---------------------------------------------------------------- targets */

typedef struct {
  const tps_gpu *gpu;
  int tp;
  const tps_path *path;
} target;

static int target_pred(const tps_plot_job *j, const target *t, tps_pred *p, char *source, size_t ssz);

/* Which fit serves a target: the split fit on the same path, else the first split fit. */
static int fit_for(const tps_plot_job *j, const tps_path *path) {
  int first = -1;
  for (size_t i = 0; i < j->nfit; i++) {
    if (j->fit[i]->kind != TPS_FIT_SPLIT) continue;
    if (first < 0) first = (int)i;
    if (j->fit_path[i] && strcmp(j->fit_path[i], path->name) == 0) return (int)i;
  }
  return first;
}

/* One part's evidence in words for a legend, its file by base name: "measured, nccl_h100_sxm.tsv.gz", "sibling's F, scaled" */
static void part_words(const tps_part_source *s, int outside, char *buf, size_t sz) {
  if (!s) { snprintf(buf, sz, "spec-only"); return; }
  const char *f = strrchr(s->file, '/');
  f = f ? f + 1 : s->file;
  switch (s->prov) {
  case TPS_PROV_MEASURED: case TPS_PROV_CONVERTED: /* converted: measured in the other harness */
    snprintf(buf, sz, "measured, %.200s%s%s", f, s->prov == TPS_PROV_CONVERTED ? ", other harness converted" : "", outside ? " + model beyond" : ""); break;
  case TPS_PROV_SIBLING: snprintf(buf, sz, "sibling's %.200s, scaled", f); break;
  case TPS_PROV_FITTED: snprintf(buf, sz, "fitted to %.200s", f); break;
  case TPS_PROV_TRANSFERRED:
    if (*f) snprintf(buf, sz, "model from %.200s", f);
    else if (s->from[0]) snprintf(buf, sz, "model from %.200s", s->from);
    else snprintf(buf, sz, "cross-GPU model");
    break;
  default: snprintf(buf, sz, "spec-only");
  }
}

/* Where a context's parts come from, in words (the legend names no [n] of the terminal). */
static void use_words(const tps_partuse *u, int backend, int tp, char *buf, size_t sz) {
  char gw[256], one[256];
  part_words(u->gemm, u->gemm_outside, gw, sizeof gw);
  int b[3], n = tps_partuse_backends(u, backend, tp, 1, b);
  size_t l = (size_t)snprintf(buf, sz, "GEMM %s; gather", gw);
  for (int i = 0; i < n && l < sz; i++) {
    part_words(u->gather[b[i]], u->gather_outside[b[i]], one, sizeof one);
    const char *bn = tps_gather_is_rule(b[i]) ? NULL : tps_gather_is_fallback(b[i]) ? "NCCL" : tps_gather_name(b[i]);
    l += (size_t)snprintf(buf + l, sz - l, "%s%s%s%s", i ? ", " : " ", n > 1 && bn ? bn : "", n > 1 && bn ? " " : "", one);
  }
  if (!n && l < sz) snprintf(buf + l, sz - l, " none");
}

/* Build the prediction of a target (at shape when not NULL: a model's projection); source
 * gets a legend note.  TPS_NA passes through. */
static int target_pred_at(const tps_plot_job *j, const target *t, const tps_gemm_shape *shape, tps_pred *p, char *source,
                          size_t ssz) {
  tps_pred_opts po;
  if (j->po) po = *j->po; else tps_pred_opts_default(&po);
  if (j->scaling == TPS_SCALING_PARTS && j->ref && j->ref->parts) {
    tps_partuse u;
    tps_err e2;
    tps_err_clear(&e2);
    int rc = tps_partset_context(j->ref->parts, t->gpu, t->tp, t->path, &po, shape, shape ? shape->n * shape->out_bytes : 0, p,
                                 &u, &e2);
    if (rc == TPS_OK) use_words(&u, p->backend, t->tp, source, ssz);
    return rc == TPS_EBADDATA ? TPS_EINVAL : rc;
  }
  int rc = target_pred(j, t, p, source, ssz);
  if (rc == TPS_OK && shape) rc = tps_pred_set_shape(p, shape, shape->n * shape->out_bytes);
  return rc;
}

/* Build the prediction of a target; source gets a legend note.  TPS_NA passes through. */
static int target_pred(const tps_plot_job *j, const target *t, tps_pred *p, char *source, size_t ssz) {
  tps_pred_opts po;
  if (j->po) po = *j->po; else tps_pred_opts_default(&po);
  if (j->scaling == TPS_SCALING_PARTS && j->ref && j->ref->parts) return target_pred_at(j, t, NULL, p, source, ssz);
  int fi = fit_for(j, t->path);
  int scaling = fi < 0 ? TPS_SCALING_SPEC : j->scaling;
  int rc;
  if (scaling == TPS_SCALING_SPEC || fi < 0) {
    const tps_fit *f = fi >= 0 ? j->fit[fi] : NULL;
    rc = tps_pred_init_spec(p, t->gpu, t->tp, t->path, f ? &f->shape : NULL, f ? f->out_bytes_per_token : 0, &po);
    snprintf(source, ssz, "spec only");
  } else if (scaling == TPS_SCALING_PESSIMISTIC) {
    const tps_fit *f = j->fit[fi];
    const tps_plot_meas *m = j->meas ? j->meas[fi] : NULL;
    if (!m) return TPS_NA;
    tps_split_data d;
    memset(&d, 0, sizeof d);
    d.n = m->n; d.tokens = m->tokens; d.replicated_us = m->rep_us; d.split_us = m->split_us;
    d.tp = f->tp; d.shape = f->shape; d.out_bytes_per_token = f->out_bytes_per_token;
    d.gather_cap_bytes = f->ag.custom_cap_bytes; d.path = f->gemm.path; d.sms = f->gemm.sms;
    d.gather = f->gather;
    rc = tps_pred_init_pessimistic(p, &d, j->fit_gpu[fi], t->gpu, t->tp, t->path, &po);
    snprintf(source, ssz, "pessimistic rule from %s", j->fit_gpu[fi]->name);
  } else {
    const tps_fit *f = j->fit[fi];
    rc = tps_pred_init_model(p, f, j->fit_gpu[fi], t->gpu, t->tp, t->path, &po);
    if (strcmp(j->fit_gpu[fi]->name, t->gpu->name) == 0 && f->tp == t->tp && f->gemm.path == t->path)
      snprintf(source, ssz, "fit");
    else
      snprintf(source, ssz, "model from the %s fit", j->fit_gpu[fi]->name);
  }
  return rc;
}

/* The measured set of a target, or NULL. */
static const tps_plot_meas *meas_for(const tps_plot_job *j, const target *t) {
  for (size_t i = 0; i < j->nfit; i++) {
    const tps_plot_meas *m = j->meas ? j->meas[i] : NULL;
    if (m && m->gpu && strcmp(m->gpu, t->gpu->name) == 0 && m->tp == t->tp && m->path &&
        strcmp(m->path, t->path->name) == 0)
      return m;
  }
  return NULL;
}

static void fig_name(char *out, size_t sz, const char *kind, const char *a, const char *b, const char *c) {
  char sa[64] = "", sb[64] = "", sc[64] = "";
  tps_plot_safe_name(a, sa, sizeof sa);
  if (b) tps_plot_safe_name(b, sb, sizeof sb);
  if (c) tps_plot_safe_name(c, sc, sizeof sc);
  snprintf(out, sz, "%s_%s%s%s%s%s", kind, sa, b ? "_" : "", sb, c ? "_" : "", sc);
}

/* ---------------------------------------------------------------- per-layer figure */

static int layers_figure(const tps_plot_job *j, const target *t, tps_plot_files *w, tps_err *e) {
  char mpath[4096];
  tps_sim_model *m = malloc(sizeof *m);
  tps_sim_kind *kinds = malloc(TPS_SIM_MAXKINDS * sizeof *kinds);
  tps_sim_chunk *ch = malloc(sizeof *ch);
  tps_pred *pr = calloc(TPS_SIM_MAXPROJ, sizeof *pr);
  int rc = -1, npr = 0;
  if (!m || !kinds || !ch || !pr) { tps_err_set(e, NULL, 0, "out of memory"); goto out; }
  if (tps_modeldesc_find(j->model_name, mpath, sizeof mpath, e) || tps_modeldesc_read(mpath, m, e)) goto out;
  size_t nk;
  if (tps_sim_kinds(m, kinds, TPS_SIM_MAXKINDS, &nk) != TPS_OK) { tps_err_set(e, mpath, 0, "cannot group the layers"); goto out; }
  tps_sim_models sm;
  memset(&sm, 0, sizeof sm);
  sm.tp = t->tp;
  sm.nproj = m->nproj;
  for (size_t k = 0; k < m->nproj; k++) {
    /* each projection on its own path: the target's prediction for that path, shape of the projection */
    target tk = {t->gpu, t->tp, m->proj[k].path};
    char src[320];
    tps_gemm_shape shp = {m->hidden, m->proj[k].n, m->proj[k].out_bytes};
    if (target_pred_at(j, &tk, &shp, &pr[k], src, sizeof src) != TPS_OK) {
      tps_err_set(e, mpath, 0, "projection %s: path %s cannot be predicted on %s at TP%d", m->proj[k].name,
                  m->proj[k].path->name, t->gpu->name, t->tp);
      npr = (int)k + 1;
      goto out;
    }
    npr = (int)k + 1;
    sm.p[k].pred = &pr[k]; /* at the projection's own shape and gathered bytes */
  }
  tps_sim_cost cost = {tps_sim_models_cost, &sm};
  long T = j->sim_tokens > 0 ? j->sim_tokens : 8192;
  if (tps_sim_chunk_eval(m, kinds, nk, tps_sim_default_mask(m), 1, T, &cost, ch) != TPS_OK) {
    tps_err_set(e, mpath, 0, "simulation failed at %ld tokens", T);
    goto out;
  }
  int *layer = malloc((size_t)m->layers * sizeof *layer);
  double *mu = malloc((size_t)m->layers * sizeof *mu), *su = malloc((size_t)m->layers * sizeof *su);
  if (!layer || !mu || !su) { free(layer); free(mu); free(su); tps_err_set(e, NULL, 0, "out of memory"); goto out; }
  for (int L = 0; L < m->layers; L++) {
    layer[L] = L; mu[L] = su[L] = NAN;
    for (size_t k = 0; k < nk; k++) {
      unsigned mask = 0;
      for (size_t q = 0; q < m->nproj; q++) if (m->proj[q].in_layer[L]) mask |= 1u << q;
      if (mask == kinds[k].mask) { mu[L] = ch->kind_main_us[k]; su[L] = ch->kind_split_us[k]; }
    }
  }
  tps_plot_layers ly = {m->name, t->gpu->name, t->tp, t->path->name, T, (size_t)m->layers, layer, mu, su,
                        0, NULL, NULL, NULL, NULL, NULL, ch->main_us, ch->split_us, tps_gather_name(pr[0].backend), m->hidden};
  const char *klab[TPS_SIM_MAXKINDS], *klay[TPS_SIM_MAXKINDS];
  int kcount[TPS_SIM_MAXKINDS];
  for (size_t k = 0; k < nk; k++) { klab[k] = kinds[k].label; klay[k] = kinds[k].layer_list; kcount[k] = kinds[k].count; }
  ly.nkind = nk; ly.kind_label = klab; ly.kind_layers = klay; ly.kind_count = kcount;
  ly.kind_main_us = ch->kind_main_us; ly.kind_split_us = ch->kind_split_us;
  char name[256], tt[32];
  snprintf(tt, sizeof tt, "tp%d_T%ld", t->tp, T);
  fig_name(name, sizeof name, "layers", m->name, t->gpu->name, tt);
  rc = tps_plot_layers_fig(j->outdir, name, &ly, j->o, w, e);
  free(layer); free(mu); free(su);
out:
  for (int k = 0; k < npr; k++) tps_pred_free(&pr[k]);
  free(pr); free(m); free(kinds); free(ch);
  return rc;
}

/* ---------------------------------------------------------------- the job */

static int same_group(int by, const target *a, const target *b) {
  switch (by) {
  case TPS_PLOT_BY_TP: return a->gpu == b->gpu && a->path == b->path;
  case TPS_PLOT_BY_PATH: return a->gpu == b->gpu && a->tp == b->tp;
  default: return a->tp == b->tp && a->path == b->path;
  }
}

int tps_plot_parse_figures(const char *s, unsigned *bits) {
  static const char *names[] = {"latency", "speedup", "crossover", "fitq", "layers"};
  char **v;
  size_t n;
  *bits = 0;
  if (tps_parse_list(s, &v, &n)) return -1;
  for (size_t i = 0; i < n; i++) {
    size_t f = 0;
    while (f < 5 && strcmp(v[i], names[f]) != 0) f++;
    if (f == 5) { tps_free_list(v, n); return -1; }
    *bits |= 1u << f;
  }
  tps_free_list(v, n);
  return 0;
}

int tps_plot_run(const tps_plot_job *j, tps_plot_files *w, tps_err *e) {
  long tmax = j->tmax > 0 ? j->tmax : DEFAULT_TMAX;
  tps_plot_opts od;
  tps_plot_opts_init(&od);
  const tps_plot_opts *o = j->o ? j->o : &od;
  int S = o->nsamples > 0 ? o->nsamples : DEFAULT_SAMPLES;
  unsigned long seed = o->seed;
  int by = j->by;
  unsigned figs = j->figures ? j->figures : ~0u;
  if ((figs & TPS_PLOT_FIG_LAYERS) && j->model_name && tps_modeldesc_check(j->model_name, e)) return -1; /* read last */
  /* targets: the lists given, else the first split fit's GPU, TP and path */
  int f0 = -1;
  for (size_t i = 0; i < j->nfit && f0 < 0; i++) if (j->fit[i]->kind == TPS_FIT_SPLIT) f0 = (int)i;
  const tps_gpu *fg = f0 >= 0 ? j->fit_gpu[f0] : NULL;
  size_t ng = j->ngpu ? j->ngpu : (fg ? 1 : 0), nt = j->ntp ? j->ntp : (f0 >= 0 ? 1 : 0),
         np = j->npath ? j->npath : (f0 >= 0 ? 1 : 0);
  size_t ntg = ng * nt * np;
  if (ntg == 0 && j->nfit == 0)
    return tps_err_set(e, NULL, 0, "plot: nothing to draw (give --fit, --measured, or --gpus with --tp and --paths)");
  target *tg = calloc(ntg + 1, sizeof *tg);
  curve_buf *cb = calloc(ntg + 1, sizeof *cb);
  int *ok = calloc(ntg + 1, sizeof *ok);
  tps_plot_cell *cells = calloc(ntg + 1, sizeof *cells);
  long *grid = NULL;
  size_t ngrid = 0;
  int rc = -1;
  if (!tg || !cb || !ok || !cells || token_grid(tmax, &grid, &ngrid)) { tps_err_set(e, NULL, 0, "out of memory"); goto out; }
  size_t k = 0;
  for (size_t pi = 0; pi < np; pi++)
    for (size_t gi = 0; gi < ng; gi++)
      for (size_t ti = 0; ti < nt; ti++, k++) {
        tg[k].gpu = j->ngpu ? j->gpu[gi] : fg;
        tg[k].tp = j->ntp ? j->tp[ti] : j->fit[f0]->tp;
        const char *pn = j->npath ? j->path[pi] : j->fit_path[f0];
        tg[k].path = pn ? tps_path_find_for(pn, TPS_PATH_F_MODEL) : NULL;
        if (!tg[k].path) { tps_err_set(e, NULL, 0, "unknown kernel path '%s'", pn ? pn : "?"); goto out; }
      }
  /* fit-quality figures */
  for (size_t i = 0; (figs & TPS_PLOT_FIG_FITQ) && i < j->nfit; i++) {
    char name[256], tp[16];
    snprintf(tp, sizeof tp, "tp%d", j->fit[i]->tp);
    if (j->fit[i]->kind == TPS_FIT_SPLIT) fig_name(name, sizeof name, "fitq", j->fit_gpu[i]->name, tp, j->fit_path[i]);
    else fig_name(name, sizeof name, "fitq", j->fit_gpu[i]->name, tps_fit_kind_name(j->fit[i]->kind),
                  j->fit[i]->kind == TPS_FIT_GEMM ? j->fit_path[i] : tp);
    if (tps_plot_fitq(j->outdir, name, j->fit[i], j->fit_path[i], j->o, w, e)) goto out;
  }
  /* curves (or only the break-even cells when no curve is drawn) */
  int need_curves = (figs & (TPS_PLOT_FIG_LATENCY | TPS_PLOT_FIG_SPEEDUP)) != 0;
  for (k = 0; k < ntg; k++) {
    tps_pred p;
    char src[320];
    int st = target_pred(j, &tg[k], &p, src, sizeof src);
    cells[k].gpu = tg[k].gpu->name; cells[k].tp = tg[k].tp; cells[k].path = tg[k].path->name;
    cells[k].breakeven_tokens = cells[k].breakeven_lo = cells[k].breakeven_hi = cells[k].threshold_tokens = NAN;
    if (st == TPS_NA) { cells[k].na = 1; tps_pred_free(&p); continue; }
    if (st == TPS_OK) { cells[k].gather = tps_gather_name(p.backend); cells[k].k = p.shape.k; cells[k].nout = p.shape.n; }
    if (st != TPS_OK) {
      tps_pred_free(&p);
      tps_err_set(e, NULL, 0, "cannot predict %s TP%d %s", tg[k].gpu->name, tg[k].tp, tg[k].path->name);
      goto out;
    }
    if (need_curves) {
      /* bands only where the figures stay readable */
      st = curve_from_pred(&cb[k], &p, grid, ngrid, tmax, S, ntg <= LATENCY_MAX_TARGETS, seed, src, e);
      if (st) { tps_pred_free(&p); goto out; }
      ok[k] = 1;
      cells[k].breakeven_tokens = cb[k].c.breakeven_tokens;
      cells[k].breakeven_lo = cb[k].c.breakeven_lo;
      cells[k].breakeven_hi = cb[k].c.breakeven_hi;
      cells[k].threshold_tokens = cb[k].c.threshold_tokens;
    } else {
      pred_breakeven(&p, tmax, S, seed, &cells[k].breakeven_tokens, &cells[k].breakeven_lo,
                     &cells[k].breakeven_hi, &cells[k].threshold_tokens);
    }
    tps_pred_free(&p);
  }
  /* latency figures */
  if ((figs & TPS_PLOT_FIG_LATENCY) && ntg <= LATENCY_MAX_TARGETS)
    for (k = 0; k < ntg; k++) {
      if (!ok[k]) continue;
      char name[256], tp[16];
      snprintf(tp, sizeof tp, "tp%d", tg[k].tp);
      fig_name(name, sizeof name, "latency", tg[k].gpu->name, tp, tg[k].path->name);
      if (tps_plot_latency(j->outdir, name, &cb[k].c, meas_for(j, &tg[k]), j->o, w, e)) goto out;
    }
  /* speedup figures: one per group of targets that differ only in `by` */
  if (figs & TPS_PLOT_FIG_SPEEDUP) {
    int *done = calloc(ntg + 1, sizeof *done);
    tps_plot_curve *cs = calloc(ntg + 1, sizeof *cs);
    tps_plot_meas *ms = calloc(ntg + 1, sizeof *ms);
    if (!done || !cs || !ms) { free(done); free(cs); free(ms); tps_err_set(e, NULL, 0, "out of memory"); goto out; }
    for (k = 0; k < ntg; k++) {
      if (done[k] || !ok[k]) continue;
      size_t nc = 0, nm = 0;
      for (size_t q = k; q < ntg; q++) {
        if (done[q] || !ok[q] || !same_group(by, &tg[k], &tg[q])) continue;
        done[q] = 1;
        cs[nc++] = cb[q].c;
        const tps_plot_meas *m = meas_for(j, &tg[q]);
        if (m) ms[nm++] = *m;
      }
      char name[256], a[16];
      snprintf(a, sizeof a, "tp%d", tg[k].tp);
      if (by == TPS_PLOT_BY_TP) fig_name(name, sizeof name, "speedup", tg[k].gpu->name, tg[k].path->name, NULL);
      else if (by == TPS_PLOT_BY_PATH) fig_name(name, sizeof name, "speedup", tg[k].gpu->name, a, NULL);
      else fig_name(name, sizeof name, "speedup", a, tg[k].path->name, NULL);
      if (tps_plot_speedup(j->outdir, name, by, cs, nc, ms, nm, j->o, w, e)) { free(done); free(cs); free(ms); goto out; }
    }
    free(done); free(cs); free(ms);
  }
  /* crossover map */
  if ((figs & TPS_PLOT_FIG_CROSSOVER) && ntg > 1 && tps_plot_crossover(j->outdir, "crossover", cells, ntg, j->o, w, e)) goto out;
  /* per-layer figure, for the first target */
  if ((figs & TPS_PLOT_FIG_LAYERS) && j->model_name && ntg && layers_figure(j, &tg[0], w, e)) goto out;
  rc = 0;
out:
  if (cb) for (k = 0; k < ntg; k++) curve_free(&cb[k]);
  free(tg); free(cb); free(ok); free(cells); free(grid);
  return rc;
}

/* ---------------------------------------------------------------- the main job */

int tps_plot_meas_from_fit(const tps_fit *f, const char *gpu, const char *path, const char *file,
                           tps_plot_meas *m) {
  memset(m, 0, sizeof *m);
  if (f->kind != TPS_FIT_SPLIT) return -1;
  long *tok = malloc(f->npts * sizeof *tok);
  double *rep = malloc(f->npts * sizeof *rep), *sp = malloc(f->npts * sizeof *sp);
  size_t n = 0;
  if (!tok || !rep || !sp) { free(tok); free(rep); free(sp); return -1; }
  /* pair the replicated and split points of each token count */
  for (size_t i = 0; i < f->npts; i++) {
    if (f->pt[i].series != 0) continue;
    for (size_t k = 0; k < f->npts; k++)
      if (f->pt[k].series == 1 && f->pt[k].x == f->pt[i].x) {
        tok[n] = (long)f->pt[i].x; rep[n] = f->pt[i].measured_us; sp[n] = f->pt[k].measured_us; n++;
        break;
      }
  }
  if (n == 0) { free(tok); free(rep); free(sp); return -1; }
  m->gpu = gpu; m->tp = f->tp; m->path = path; m->file = file;
  m->n = n; m->tokens = tok; m->rep_us = rep; m->split_us = sp;
  return 0;
}

void tps_plot_meas_free(tps_plot_meas *m) {
  free((void *)m->tokens); free((void *)m->rep_us); free((void *)m->split_us);
  memset(m, 0, sizeof *m);
}

/* The crossover map of a grid computed by predict_common.c (what `tpsplit crossover` prints). */
static int grid_figure(const tps_grid *g, const tps_gemm_shape *shape, const char *dir, const tps_plot_opts *o,
                       tps_plot_files *w, tps_err *e) {
  tps_plot_cell *cells = calloc(g->n + 1, sizeof *cells);
  if (!cells) return tps_err_set(e, NULL, 0, "out of memory");
  for (size_t i = 0; i < g->n; i++) {
    const tps_gridcell *c = &g->cell[i];
    tps_plot_cell *x = &cells[i];
    x->gpu = c->gpu->name; x->tp = c->tp; x->path = c->path->name;
    x->na = c->status == TPS_NA;
    x->gather = tps_gather_name(c->backend);
    x->k = shape->k;
    x->nout = shape->n;
    x->breakeven_tokens = x->breakeven_lo = x->breakeven_hi = x->threshold_tokens = NAN;
    if (c->status == TPS_OK)
      cell_values(c->threshold, &c->cx, &c->iv, &x->breakeven_tokens, &x->breakeven_lo, &x->breakeven_hi, &x->threshold_tokens);
  }
  int rc = tps_plot_crossover(dir, "crossover", cells, g->n, o, w, e);
  free(cells);
  return rc;
}

/* Speedup of H100 and H200 predicted by the model and by the pessimistic rule (one grey
 * curve: the rule is the same for both) at the job's TP and path: speedup_tpN_PATH_vs_rule. */
static int rule_figure(const tps_plot_job *j0, const tps_gpu *h100, const tps_gpu *h200, const char *outdir,
                       const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  tps_plot_job j = *j0;
  long tmax = DEFAULT_TMAX, *grid = NULL;
  size_t ngrid = 0;
  int S = o->nsamples > 0 ? o->nsamples : DEFAULT_SAMPLES, rc = -1, nb = 0;
  curve_buf cb[3];
  memset(cb, 0, sizeof cb);
  if (token_grid(tmax, &grid, &ngrid)) return tps_err_set(e, NULL, 0, "out of memory");
  const tps_gpu *gs[3] = {h100, h200, h200};
  const tps_path *path = tps_path_find_for(j.path[0], TPS_PATH_F_MODEL);
  for (int k = 0; k < 3; k++) {
    target t = {gs[k], j.tp[0], path};
    tps_pred p;
    char src[320];
    j.scaling = k < 2 ? j0->scaling : TPS_SCALING_PESSIMISTIC;
    if (!path || target_pred(&j, &t, &p, src, sizeof src) != TPS_OK) {
      tps_pred_free(&p);
      tps_err_set(e, NULL, 0, "cannot predict %s TP%d %s (%s)", gs[k]->name, j.tp[0], j.path[0],
                  tps_scaling_names[j.scaling]);
      goto out;
    }
    int st = curve_from_pred(&cb[k], &p, grid, ngrid, tmax, S, 1, o->seed, src, e);
    tps_pred_free(&p);
    if (st) goto out;
    nb = k + 1;
  }
  snprintf(cb[2].gpu, sizeof cb[2].gpu, "rule, H100/H200");
  snprintf(cb[2].source, sizeof cb[2].source, "the seed pull request's pessimistic rule on the H20 table (%s), the same for both GPUs",
           TPS_BUNDLED_TABLE);
  cb[2].c.colour = "#666666";
  tps_plot_opts ot = *o;
  ot.title = "The model against the seed pull request's pessimistic rule: H100 and H200";
  o = &ot;
  tps_plot_curve cs[3] = {cb[0].c, cb[1].c, cb[2].c};
  char name[256], tp[16];
  snprintf(tp, sizeof tp, "tp%d", j.tp[0]);
  fig_name(name, sizeof name, "speedup", tp, j.path[0], "vs_rule");
  rc = tps_plot_speedup(outdir, name, TPS_PLOT_BY_GPU, cs, 3, NULL, 0, o, w, e);
out:
  for (int k = 0; k < nb; k++) curve_free(&cb[k]);
  free(grid);
  return rc;
}

int tps_plot_default(const char *outdir, const tps_plot_opts *o, tps_plot_files *w, tps_err *e) {
  return tps_plot_default_from(outdir, o, NULL, NULL, w, e);
}

/* The H100 at TP8 on our W8A16 kernels: its replicated latency is the GEMM of T rows, which the
 * bundled H100 table measures (median, min and max).  0 or -1. */
static int w8_gemm_figure(const tps_plot_job *j, const tps_gpu *gpu, int tp, tps_plot_files *w, tps_err *e) {
  const tps_path *hp = tps_path_find_for(TPS_W8_GEMM_PATH, TPS_PATH_F_MODEL);
  tps_table gt;
  memset(&gt, 0, sizeof gt);
  char gpath[4096];
  if (!hp || tps_data_path(TPS_W8_GEMM_TABLE, gpath, sizeof gpath, e) || tps_table_read(gpath, &gt, e)) {
    if (!hp) tps_err_set(e, NULL, 0, "unknown kernel path '%s'", TPS_W8_GEMM_PATH);
    return -1;
  }
  const double *mn = tps_table_extra(&gt, "min_us"), *mx = tps_table_extra(&gt, "max_us");
  long *tok = gt.kind == TPS_TABLE_GEMM ? malloc(gt.nrows * sizeof *tok) : NULL;
  if (!tok) {
    tps_table_free(&gt);
    tps_err_set(e, gpath, 0, gt.kind == TPS_TABLE_GEMM ? "out of memory" : "not a GEMM table");
    return -1;
  }
  for (size_t i = 0; i < gt.nrows; i++) tok[i] = gt.rows[i];
  tps_plot_meas gm = {gpu->name, tp, hp->name, TPS_W8_GEMM_TABLE, gt.nrows, tok, gt.time_us, NULL, mn, mx, NULL, NULL};
  const tps_plot_meas *gms[1] = {&gm};
  const char *hpn[1] = {hp->name};
  const tps_gpu *g1[1] = {gpu};
  tps_plot_job jh = *j;
  jh.meas = gms; jh.ngpu = 1; jh.gpu = g1; jh.npath = 1; jh.path = hpn;
  jh.figures = TPS_PLOT_FIG_LATENCY;
  int r2 = tps_plot_run(&jh, w, e);
  free(tok);
  tps_table_free(&gt);
  return r2;
}

int tps_plot_default_from(const char *outdir, const tps_plot_opts *o, const tps_predref *ref0, const tps_grid *grid0,
                          tps_plot_files *w, tps_err *e) {
  /* the reference of the main job (scaling parts: what `tpsplit predict` uses by default),
   * loaded as predict/crossover load it (tps_predref_open, src/evidence/evidence.h) when the caller has none, so the numbers
   * match; the H20 table fitted with leave-one-out errors for the fit-quality figure and
   * its measured points */
  tps_predref *r = NULL;
  const tps_predref *ref = ref0;
  tps_fit *fl = malloc(sizeof *fl);
  tps_plot_meas m;
  tps_grid g;
  memset(&m, 0, sizeof m);
  memset(&g, 0, sizeof g);
  char tpath[4096];
  int rc = -1, status, fit_failed = 0;
  if (!fl) { tps_err_set(e, NULL, 0, "out of memory"); goto out; }
  if (tps_modeldesc_check(TPS_PLOT_DEFAULT_MODEL, e)) goto out; /* read last (step 4): refused before any figure */
  if (!ref) {
    tps_cmdopt_values v;
    tps_cmdopt_init(&v);
    r = calloc(1, sizeof *r);
    if (!r) { tps_err_set(e, NULL, 0, "out of memory"); goto out; }
    tps_predref_opts ro = tps_predref_opts_of(&v, TPS_PRED_DEFAULT_TMAX, NULL);
    if (tps_predref_open(r, &ro, &fit_failed, e)) goto out;
    tps_plot_use_gpus(&r->gpus);
    ref = r;
  }
  if (tps_bundled_fit(NULL, 1, fl, tpath, sizeof tpath, &status, e)) goto out;
  tps_err e2;
  const tps_gpu *h20 = tps_gpus_find(&ref->gpus, fl->gpu, e), *h100 = h20 ? tps_gpus_find(&ref->gpus, "H100", e) : NULL,
                *h200 = h100 ? tps_gpus_find(&ref->gpus, "H200", e) : NULL;
  if (!h200) goto out;
  const char *pname = fl->gemm.path ? fl->gemm.path->name : "?";
  if (tps_plot_meas_from_fit(fl, h20->name, pname, TPS_BUNDLED_TABLE, &m)) {
    tps_err_set(e, tpath, 0, "no split points in the fit");
    goto out;
  }
  tps_plot_opts oo;
  if (o) oo = *o; else tps_plot_opts_init(&oo);
  if (!oo.inputs) oo.inputs = "data/parts.tsv, data/xgpu.fit, " TPS_BUNDLED_TABLE " and gpus.tsv of the bundled data";
  const tps_plot_meas *meas[1] = {&m};
  const tps_gpu *fgpu[1] = {h20};
  const char *fpath[1] = {pname};
  int tp1[1] = {fl->tp};
  tps_plot_job j;
  memset(&j, 0, sizeof j);
  j.outdir = outdir; j.o = &oo;
  j.nfit = 1; j.fit_gpu = fgpu; j.fit_path = fpath; j.meas = meas;
  j.scaling = TPS_SCALING_PARTS;
  j.ref = ref;
  const tps_fit *fq[1] = {fl};
  j.fit = fq;
  /* 1. fit quality of the bundled table */
  j.figures = TPS_PLOT_FIG_FITQ;
  if (tps_plot_run(&j, w, e)) goto out;
  /* 2. the measured GPU and H100/H200 at the table's TP and path */
  const tps_gpu *g3[3] = {h20, h100, h200};
  j.ngpu = 3; j.gpu = g3; j.ntp = 1; j.tp = tp1; j.npath = 1; j.path = fpath;
  j.figures = TPS_PLOT_FIG_LATENCY | TPS_PLOT_FIG_SPEEDUP;
  if (tps_plot_run(&j, w, e)) goto out;
  /* 2b. H100/H200 next to the seed pull request's pessimistic rule (the rule scales H20 the
   * same way for both, so one grey curve) */
  if (rule_figure(&j, h100, h200, outdir, &oo, w, e)) goto out;
  /* 2c. the H100 at TP8 on our W8A16 kernels, measured there */
  if (w8_gemm_figure(&j, h100, tp1[0], w, e)) goto out;
  /* 3. the crossover map: every bundled GPU x TP 2, 4, 8, 16 x every path (tps_grid_run) */
  if (!grid0) {
    const tps_gpu **ga = malloc(ref->gpus.n * sizeof *ga);
    const tps_path *pa[8];
    if (!ga) { tps_err_set(e, NULL, 0, "out of memory"); goto out; }
    for (size_t i = 0; i < ref->gpus.n; i++) ga[i] = &ref->gpus.gpu[i];
    size_t npa = tps_path_select(TPS_PATH_F_MODEL, pa, sizeof pa / sizeof pa[0]);
    tps_pred_opts po;
    tps_pred_opts_default(&po);
    tps_unc_opts uo = {oo.nsamples, oo.seed, TPS_INTERVAL_LEVEL};
    int r3 = tps_grid_run(ref, TPS_SCALING_PARTS, ga, ref->gpus.n, tps_grid_tp, TPS_GRID_NTP, pa, npa, &po, &uo,
                          TPS_PRED_DEFAULT_TMAX, 0, &g, e);
    free(ga);
    if (r3) goto out;
  }
  if (grid_figure(grid0 ? grid0 : &g, &fl->shape, outdir, &oo, w, e)) goto out;
  /* 4. the per-layer stage of DeepSeek-V4.1-Flash on H200 at TP8 (an 8192-token chunk) */
  const tps_gpu *g1[1] = {h200};
  j.ngpu = 1; j.gpu = g1; j.ntp = 1; j.tp = tp1; j.npath = 1; j.path = fpath;
  j.figures = TPS_PLOT_FIG_LAYERS;
  j.model_name = TPS_PLOT_DEFAULT_MODEL;
  j.sim_tokens = 8192;
  if (tps_plot_run(&j, w, e)) goto out;
  rc = 0;
  (void)e2;
out:
  tps_grid_free(&g);
  tps_plot_meas_free(&m);
  if (r) { tps_predref_free(r); free(r); }
  free(fl);
  return rc;
}


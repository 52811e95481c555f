/* thr_excess.c: the decision quality of a calibration's thresholds (thr_excess.h). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/core/backend.h"
#include "model/core/status.h"
#include "model/numeric/robust.h"
#include "model/predict/excess.h"
#include "src/cli/loo_data.h"
#include "src/cli/thr_excess.h"

/* One gather of (TP, concrete backend): measured points, or a model. */
typedef struct {
  tps_loo_curve *meas;       /* owned */
  const tps_xga_model *xga;  /* model (borrowed) */
  int xga_backend;
  const tps_gpu *gpu;
  int tp;
} gcurve;

static double gcurve_us(const gcurve *g, double bytes) {
  if (g->meas) return tps_loo_curve_eval(g->meas, bytes);
  if (g->xga) return tps_xga_time_us(g->xga, g->gpu, bytes, g->tp, g->xga_backend, NULL);
  return NAN;
}

typedef struct {
  const tps_loo_curve *gemm; /* the bench's GEMM, or (cal set) the calibrated model */
  const tps_cal_gemm *cal;
  gcurve nccl, custom;       /* custom unused for backend nccl */
  int tp, backend;
  double out_bytes;
} costs_ctx;

static double gemm_us(const costs_ctx *c, double m) {
  return c->cal ? tps_cal_gemm_time_us(c->cal, m) : tps_loo_curve_eval(c->gemm, m);
}
static double c_replicated(long T, void *vc) {
  const costs_ctx *c = vc;
  return gemm_us(c, (double)T);
}
static double c_split(long T, void *vc) {
  const costs_ctx *c = vc;
  double bytes = (double)T * c->out_bytes, g;
  if (!tps_gather_is_fallback(c->backend) && (c->custom.meas || c->custom.xga) && bytes / c->tp <= tps_gather_cap_default())
    g = gcurve_us(&c->custom, bytes);
  else g = gcurve_us(&c->nccl, bytes);
  return gemm_us(c, ceil((double)T / c->tp)) + g;
}

/* The file's measured gather of (tp, backend), NULL when it has none. */
static tps_loo_curve *file_gather(const tps_thr_device *d, int tp, int backend) {
  for (size_t i = 0; i < d->ngather; i++) {
    const tps_thr_gather *g = &d->gather[i];
    if (g->tp == tp && g->backend == backend && !strcmp(g->status, "measured") && g->npts >= 2)
      return tps_loo_curve_measured(g->bytes, g->t_us, g->npts);
  }
  return NULL;
}

/* The transferred NCCL model of gpu, as calibrate fits it: the AIConfigurator all_gather
 * tables of the other GPUs of its fabric.  0 ok, 1 none (no table, no bandwidth: the entries
 * are then not scored, '-'; the check of the GEMM does not need these tables). */
static int nccl_model(const tps_gpu *gpu, const tps_gpu_table *gt, tps_xga_model *m) {
  static aset as[MAXSETS];
  int nas = 0, skip[MAXSETS] = {0}, rc = 1;
  tps_err e;
  tps_err_clear(&e);
  if (!gpu || !(tps_xga_bus_gbps(gpu) > 0)) return 1;
  if (tps_lgo_load_nccl(gt, as, &nas, &e)) { for (int i = 0; i < nas; i++) tps_lgo_aset_free(&as[i]); return 1; }
  for (int i = 0; i < nas; i++) skip[i] = as[i].gpu == gpu || !strcmp(as[i].gpu->name, gpu->name);
  if (tps_lgo_fit_gather_except(as, nas, skip, !gpu->nvlink, m) == TPS_OK) rc = 0;
  for (int i = 0; i < nas; i++) tps_lgo_aset_free(&as[i]);
  return rc;
}

/* The excess of one entry on the bench's GEMM curve. */
static void score_entry(const tps_thr_device *d, const tps_thr_entry *en, const tps_loo_curve *gemm, const tps_cal_gemm *cal,
                        const tps_gpu *gpu, const tps_xga_model *nccl, const tps_xga_model *custom, tps_thr_excess_row *x) {
  costs_ctx c = {gemm, NULL, {0}, {0}, en->tp, en->backend, en->out_bytes_per_token};
  memset(x, 0, sizeof *x);
  x->tp = en->tp;
  x->backend = en->backend;
  x->split_from = en->split_from;
  x->breakeven = en->breakeven;
  c.nccl = (gcurve){file_gather(d, en->tp, tps_gather_fallback()), nccl, TPS_XGA_NCCL, gpu, en->tp};
  if (!tps_gather_is_fallback(en->backend))
    c.custom = (gcurve){file_gather(d, en->tp, tps_gather_capped()), gpu && gpu->nvlink ? custom : NULL, TPS_XGA_CUSTOM, gpu, en->tp};
  snprintf(x->gather, sizeof x->gather, "%s", c.nccl.meas || c.custom.meas ? "measured" : "model");
  if (c.nccl.meas || c.nccl.xga) {
    tps_costs cs = {c_replicated, c_split, &c};
    tps_excess a, b;
    tps_excess_eval(&cs, en->split_from > 0 ? (double)en->split_from : TPS_EXCESS_NEVER, en->max_tokens, &a);
    tps_excess_eval(&cs, en->breakeven > 0 ? en->breakeven : TPS_EXCESS_NEVER, en->max_tokens, &b);
    x->npts = a.n;
    x->mean = a.mean;
    x->worst = a.worst;
    x->at = a.t_worst;
    x->be_mean = b.mean;
    x->be_worst = b.worst;
    x->be_at = b.t_worst;
    tps_excess bx;
    if (tps_excess_best(&cs, en->max_tokens, TPS_THR_EXCESS_MEAN_TARGET, TPS_THR_EXCESS_WORST_TARGET, &x->best, &bx) == 0) {
      x->best_mean = bx.mean;
      x->best_worst = bx.worst;
    } else x->best = x->best_mean = x->best_worst = NAN;
    /* the threshold calibrate writes now: least excess on the calibrated costs */
    x->now = -1;
    x->now_mean = x->now_worst = NAN;
    if (cal) {
      costs_ctx cc = c;
      cc.cal = cal;
      tps_costs ccs = {c_replicated, c_split, &cc};
      tps_excess nx, sx;
      long t = -1;
      if (tps_threshold_choose(&ccs, en->max_tokens, &t, &nx) == 0 &&
          tps_excess_eval(&cs, t > 0 ? (double)t : TPS_EXCESS_NEVER, en->max_tokens, &sx) == 0) {
        x->now = t > 0 ? t : 0;
        x->now_mean = sx.mean;
        x->now_worst = sx.worst;
      }
    }
  }
  tps_loo_curve_free(c.nccl.meas);
  tps_loo_curve_free(c.custom.meas);
}

/* The bench's rows as a curve (M ascending; a repeated M keeps its first time). */
static tps_loo_curve *bench_curve(const tps_thr_check_row *r) {
  double *x = malloc((r->nm ? r->nm : 1) * sizeof *x), *t = malloc((r->nm ? r->nm : 1) * sizeof *t);
  size_t k = 0;
  tps_loo_curve *c = NULL;
  if (x && t) {
    for (size_t i = 0; i < r->nm; i++) {
      size_t j = k;
      while (j > 0 && x[j - 1] > (double)r->m[i]) j--;
      if (j > 0 && x[j - 1] == (double)r->m[i]) continue;
      memmove(x + j + 1, x + j, (k - j) * sizeof *x);
      memmove(t + j + 1, t + j, (k - j) * sizeof *t);
      x[j] = (double)r->m[i];
      t[j] = r->measured_us[i];
      k++;
    }
    c = tps_loo_curve_measured(x, t, k);
  }
  free(x);
  free(t);
  return c;
}

int tps_thr_check_excess(const tps_thr_file *f, const char *device, tps_thr_check_row *rows, size_t n, const tps_gpu_table *gt,
                         tps_err *e) {
  const tps_thr_device *d = device ? tps_thr_find_device(f, device) : f->ndev == 1 ? &f->dev[0] : NULL;
  if (!d) return 0; /* tps_thr_check said so */
  const tps_gpu *gpu = NULL;
  if (d->gpu_spec[0] && gt) {
    tps_err ge;
    tps_err_clear(&ge);
    gpu = tps_gpus_find(gt, d->gpu_spec, &ge);
  }
  tps_xga_model nccl, custom;
  (void)e;
  int st = nccl_model(gpu, gt, &nccl);
  tps_xga_prior(&custom, 0);
  for (size_t i = 0; i < n; i++) {
    tps_thr_check_row *r = &rows[i];
    r->nex = 0;
    tps_loo_curve *gemm = bench_curve(r);
    if (!gemm) continue;
    for (size_t j = 0; j < d->nentries && r->nex < TPS_THR_CHECK_MAXEX; j++) {
      const tps_thr_entry *en = &d->e[j];
      if (en->k != r->k || en->n != r->n || en->path != r->path || !(en->out_bytes_per_token > 0) || en->max_tokens < 1) continue;
      score_entry(d, en, gemm, r->cal, gpu, st == 0 ? &nccl : NULL, &custom, &r->ex[r->nex]);
      r->nex++;
    }
    tps_loo_curve_free(gemm);
  }
  return 0;
}

int tps_thr_check_scored(const tps_thr_file *f, const char *device, char *const *bench, size_t nbench, double tol_med,
                         double tol_max, const tps_gpu_table *gt, tps_thr_check_row **rows, size_t *nrows, tps_err *e) {
  if (tps_thr_check(f, device, bench, nbench, tol_med, tol_max, gt, rows, nrows, e)) return -1;
  if (tps_thr_check_excess(f, device, *rows, *nrows, gt, e)) {
    tps_thr_check_free(*rows, *nrows);
    *rows = NULL;
    *nrows = 0;
    return -1;
  }
  return 0;
}

/* gather.c: the all-gathers of a calibration: measured here by bench allgather where the
 * GPUs are there (step 2 of the plan, run.c), else a --gather file (nccl-tests all_gather log,
 * bench allgather log, AIConfigurator NCCL table), else the transferred model
 * (model/latency/xgather.h fitted to the AIConfigurator all_gather tables of the other GPUs of
 * this GPU's fabric) and, for the custom backend, its spec-only priors. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/calibrate/cal.h"
#include "src/base/util.h"
#include "src/io/aic.h"
#include "src/io/measure.h"
#include "src/io/table.h"

static double gcurve_eval(const gcurve *g, double bytes) {
  if (g->have == 1) return tps_loo_curve_eval(g->curve, bytes);
  if (g->have == 2) return tps_xga_time_us(&g->xga, g->gpu, bytes, g->tp, g->xga_backend, NULL);
  return NAN;
}

double gsel_eval(double bytes, void *vc) {
  const gsel *s = vc;
  if (s->custom && s->custom->have && bytes / s->tp <= tps_gather_cap_default()) return gcurve_eval(s->custom, bytes);
  return s->nccl && s->nccl->have ? gcurve_eval(s->nccl, bytes) : NAN;
}

static void gcurve_set_points(gcurve *g, const double *b, const double *t, size_t n) {
  g->n = n < TPS_CAL_MAX_PTS ? n : TPS_CAL_MAX_PTS;
  memcpy(g->bytes, b, g->n * sizeof *b);
  memcpy(g->t, t, g->n * sizeof *t);
  tps_loo_curve_free(g->curve);
  g->curve = tps_loo_curve_measured(g->bytes, g->t, g->n);
  g->have = g->curve ? 1 : 0;
  g->w90 = tps_cal_curve_w90(g->bytes, g->t, g->n);
  g->prov.points = (int)g->n;
  g->prov.w90_log = g->w90;
}

void gfile_free(gfile *g) {
  for (int i = 0; i < g->ncurves; i++) { free(g->bytes[i]); free(g->t[i]); }
  memset(g, 0, sizeof *g);
}

int gfile_read(const char *spec, const opts *o, gfile *g, tps_err *e) {
  memset(g, 0, sizeof *g);
  g->file = spec;
  g->backend = tps_gather_fallback();
  if (tps_meas_sniff_spec(spec) == TPS_MEAS_AIC) {
    tps_aic_file a;
    char *file = NULL;
    tps_aic_filter f;
    int lrc = tps_aic_parse_spec(spec, &file, &f, e) || tps_meas_load_aic(file, &f, &a, e);
    free(file);
    if (lrc) return -1;
    if (a.kind != TPS_AIC_NCCL) { tps_aic_free(&a); return tps_err_set(e, spec, 0, "an AIConfigurator GEMM table, not an NCCL one"); }
    const char *dtype = NULL;
    for (size_t i = 0; i < a.nrows && !dtype; i++) if (!strcmp(a.c[i].op, "all_gather") && !strcmp(a.c[i].dtype, "half")) dtype = "half";
    for (size_t i = 0; i < a.nrows && !dtype; i++) if (!strcmp(a.c[i].op, "all_gather")) dtype = a.c[i].dtype;
    if (!dtype) { tps_aic_free(&a); return tps_err_set(e, spec, 0, "no all_gather rows (a table of another collective)"); }
    for (int i = 0; i < o->ntps; i++) {
      double *b, *t;
      size_t n;
      tps_err e2;
      tps_err_clear(&e2);
      if (tps_aic_nccl_curve(&a, "all_gather", o->tp[i], dtype, &b, &t, &n, &e2)) continue;
      g->ranks[g->ncurves] = o->tp[i];
      g->bytes[g->ncurves] = b;
      g->t[g->ncurves] = t;
      g->n[g->ncurves] = n;
      g->ncurves++;
    }
    snprintf(g->what, sizeof g->what, "AIConfigurator NCCL table of %s (all_gather, %s, NCCL %s)", a.gpu, dtype,
             a.nrows ? a.c[0].nccl_version : "?");
    tps_aic_free(&a);
    if (!g->ncurves) return tps_err_set(e, spec, 0, "no all_gather rows at any TP asked (--tp)");
    return 0;
  }
  tps_table t;
  if (tps_table_read(spec, &t, e)) return -1;
  if (t.kind != TPS_TABLE_ALLGATHER) {
    int k = t.kind;
    tps_table_free(&t);
    return tps_err_set(e, spec, 0, "not an all-gather log or table (a %s table)", tps_table_kind_names[k]);
  }
  if (t.ranks < 2) {
    int nr = t.ranks;
    tps_table_free(&t);
    return tps_err_set(e, spec, 0, "%d rank(s): an all-gather of >= 2 ranks is needed", nr);
  }
  /* our bench allgather logs name their backend in a "# Gather: X" line (nccl-tests' do not:
   * NCCL), read by src/io/ncclt.c */
  if (tps_gather_is_capped(tps_gather_parse(t.log_gather))) g->backend = tps_gather_capped();
  if (tps_gather_is_rule(tps_gather_parse(t.log_gather))) {
    long ln = t.log_gather_line;
    tps_table_free(&t);
    return tps_err_set(e, spec, ln, "a log of the auto rule (custom and nccl mixed): give one log per backend");
  }
  g->ranks[0] = t.ranks;
  g->n[0] = t.nrows;
  g->bytes[0] = malloc(t.nrows * sizeof(double));
  g->t[0] = malloc(t.nrows * sizeof(double));
  if (!g->bytes[0] || !g->t[0]) { tps_table_free(&t); gfile_free(g); return tps_err_set(e, spec, 0, "out of memory"); }
  memcpy(g->bytes[0], t.bytes, t.nrows * sizeof(double));
  memcpy(g->t[0], t.time_us, t.nrows * sizeof(double));
  g->line0[0] = t.line[0];
  g->line1[0] = t.line[t.nrows - 1];
  g->ncurves = 1;
  snprintf(g->what, sizeof g->what, "%s log, %d ranks, %s", !strcmp(t.source, "nccl-tests") ? "all-gather" : "all-gather table",
           t.ranks, t.gpu[0] ? t.gpu : "GPU not named");
  tps_table_free(&t);
  if (g->n[0] < 2) { gfile_free(g); return tps_err_set(e, spec, 0, "fewer than 2 sizes"); }
  return 0;
}

static const char *const aic_nccl_stems[] = {"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "l40s", "rtx_pro_6000_server"};
#define NSTEMS (sizeof aic_nccl_stems / sizeof aic_nccl_stems[0])

typedef struct {
  const tps_gpu *gpu;
  size_t n;
  tps_xga_point *p;
} xset;

/* The transferred model (see xfer in cal.h). */
static void xfer_build(const tps_gpu *gpu, const tps_gpu_table *gt, const opts *o, xfer *x) {
  memset(x, 0, sizeof *x);
  x->built = 1;
  if (!gpu) { snprintf(x->why, sizeof x->why, "this GPU is not in data/gpus.tsv"); return; }
  if (!(tps_xga_bus_gbps(gpu) > 0)) { snprintf(x->why, sizeof x->why, "%s has no scale-up bandwidth in data/gpus.tsv", gpu->name); return; }
  const int pcie = !gpu->nvlink;
  xset s[NSTEMS];
  int ns = 0;
  for (size_t i = 0; i < NSTEMS; i++) {
    char rel[128], file[512], gname[64];
    tps_err e;
    tps_err_clear(&e);
    snprintf(rel, sizeof rel, "aic/nccl_%s.tsv.gz", aic_nccl_stems[i]);
    if (tps_data_path(rel, file, sizeof file, &e)) continue;
    tps_aic_filter f;
    memset(&f, 0, sizeof f);
    snprintf(f.op, sizeof f.op, "all_gather");
    tps_aic_file a;
    if (tps_meas_load_aic(file, &f, &a, &e)) continue;
    const tps_gpu *g = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), &e);
    if (g && g != gpu && strcmp(g->name, gpu->name) && (!g->nvlink) == pcie) {
      s[ns].gpu = g;
      s[ns].p = calloc(a.nrows, sizeof *s[ns].p);
      s[ns].n = 0;
      for (size_t j = 0; s[ns].p && j < a.nrows; j++)
        s[ns].p[s[ns].n++] = (tps_xga_point){g, a.c[j].num_gpus, a.c[j].bytes, a.c[j].latency_us, 1.0};
      for (size_t j = 0; j < s[ns].n; j++) s[ns].p[j].weight = 1.0 / (double)s[ns].n;
      size_t u = strlen(x->from);
      snprintf(x->from + u, sizeof x->from - u, "%s%s", u ? "," : "", g->name);
      ns++;
    }
    tps_aic_free(&a);
  }
  tps_xga_set ts[NSTEMS];
  for (int i = 0; i < ns; i++) ts[i] = (tps_xga_set){s[i].gpu, s[i].p, s[i].n};
  if (!ns) { snprintf(x->why, sizeof x->why, "no AIConfigurator all_gather table of another %s GPU", pcie ? "PCIe" : "NVLink"); return; }
  if (tps_xga_fit_except(&x->m, ts, ns, -1, pcie) != TPS_OK) { snprintf(x->why, sizeof x->why, "the fit of the transferred gather model failed"); goto done; }
  x->ok = 1;
  /* the 90% half-width at each TP: each training GPU predicted by a fit on the others, at
   * its sizes a split of 1..max-tokens tokens gathers (4 KiB .. 64 MiB) */
  for (int t = 0; t < o->ntps; t++) x->w90[t] = NAN;
  if (ns >= 2) {
    tps_xga_model fm[NSTEMS];
    int fok[NSTEMS];
    for (int h = 0; h < ns; h++) fok[h] = tps_xga_fit_except(&fm[h], ts, ns, h, pcie) == TPS_OK;
    for (int t = 0; t < o->ntps; t++) {
      double lr[4096];
      size_t k = 0;
      for (int h = 0; h < ns; h++)
        for (size_t j = 0; fok[h] && j < s[h].n && k < 4096; j++) {
          const tps_xga_point *p = &s[h].p[j];
          if (p->n != o->tp[t] || p->bytes < 4096 || p->bytes > 64.0 * 1024 * 1024) continue;
          lr[k++] = log(tps_xga_time_us(&fm[h], s[h].gpu, p->bytes, p->n, TPS_XGA_NCCL, NULL) / p->t_us);
        }
      /* a TP no training GPU has (e.g. 16): the widest of the others */
      x->w90[t] = k ? tps_loo_quantile_abs(lr, k, 0.9, TPS_CAL_MIN_W) : NAN;
    }
    double wmax = NAN;
    for (int t = 0; t < o->ntps; t++) if (isfinite(x->w90[t]) && !(x->w90[t] <= wmax)) wmax = x->w90[t];
    for (int t = 0; t < o->ntps; t++) if (!isfinite(x->w90[t])) x->w90[t] = isfinite(wmax) ? wmax : log(2.0);
  } else {
    for (int t = 0; t < o->ntps; t++) x->w90[t] = log(2.0); /* one training GPU: no held-out error to go by */
  }
done:
  for (int i = 0; i < ns; i++) free(s[i].p);
}

static void on_ag_row(void *arg, size_t i, int phase, const void *row) {
  run_t *r = arg;
  const tps_bench_ag_row *a = row;
  if (phase == TPS_BENCH_ROW_TIMED) cal_progress("%s: %zu bytes: %.2f us", r->what, a->size, a->oop.median_us);
  (void)i;
}

/* The gather sizes: log-spaced over what a split of 1..max-tokens tokens of every shape
 * gathers (custom: the per-rank part within its cap). */
static size_t gather_sizes(const run_t *r, int tp, int custom, long *sizes) {
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < r->o->nshapes; s++) {
    double ob = 2.0 * (double)r->o->n[s];
    if (ob < lo) lo = ob;
    if (ob > hi) hi = ob;
  }
  /* tokens t_max * hi / lo at the smallest output covers every shape's range */
  long tmax = (long)ceil((double)r->o->t_max * hi / lo);
  return tps_cal_gather_sizes(lo, tp, tmax, GATHER_POINTS, custom ? tps_gather_cap_default() : 0, sizes,
                              TPS_CAL_MAX_PTS);
}

static int gather_step(run_t *r, gcurve *g) {
  char what[96];
  snprintf(what, sizeof what, "allgather TP%d %s", g->tp, tps_gather_name(g->backend));
  if (!cal_budget_allows(r, r->est_gather_s, what)) {
    snprintf(g->status, sizeof g->status, "not-run");
    snprintf(g->reason, sizeof g->reason, "the budget of %.0f s was reached before it", r->o->budget_s);
    return TPS_SKIP;
  }
  r->what = what;
  cal_progress("%s", what);
  long sizes[TPS_CAL_MAX_PTS];
  size_t ns = gather_sizes(r, g->tp, tps_gather_is_capped(g->backend), sizes);
  tps_bench_ag_opts o;
  memset(&o, 0, sizeof o);
  o.w.tp = g->tp;
  o.w.gather = g->backend;
  o.w.samples = r->o->samples;
  o.w.warmup = 3;
  o.w.cap_bytes = tps_gather_cap_default();
  o.w.arg = r;
  o.w.on_row = on_ag_row;
  o.sizes = sizes;
  o.nsizes = ns;
  tps_bench_ag_result res;
  memset(&res, 0, sizeof res);
  res.rows = calloc(ns, sizeof *res.rows);
  if (!res.rows) return TPS_ENOMEM;
  const double t1 = cal_elapsed_s();
  int st = tps_bench_allgather_run(&o, &res);
  const double dt = cal_elapsed_s() - t1;
  if (dt > r->est_gather_s || r->est_gather_s == EST_GATHER_S) r->est_gather_s = dt;
  cal_progress_forget();
  if (st != TPS_OK) {
    snprintf(g->status, sizeof g->status, "failed");
    snprintf(g->reason, sizeof g->reason, "%s", res.w.why[0] ? res.w.why : "the all-gather bench failed (see above: NCCL, a timeout or a rank)");
    cal_say("%s: failed: %s; its thresholds take the gather from a --gather file or a model", what, g->reason);
  } else {
    double b[TPS_CAL_MAX_PTS], t[TPS_CAL_MAX_PTS];
    size_t n = 0;
    for (size_t i = 0; i < ns; i++)
      if (res.rows[i].size) { b[n] = (double)res.rows[i].size; t[n] = res.rows[i].oop.median_us; n++; }
    char src[512];
    snprintf(src, sizeof src, "tpsplit calibrate on this machine: bench allgather, %d GPUs, %s, NCCL %s, %d samples (median, max over ranks)",
             g->tp, tps_gather_name(g->backend), res.w.prov.nccl, r->o->samples);
    g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, src, "Steffen interpolation in log-log of the measured sizes (model/numeric/robust.h)");
    gcurve_set_points(g, b, t, n);
    g->samples = r->o->samples;
    g->measured_here = 1;
    snprintf(g->status, sizeof g->status, "measured");
    if (!r->out.dev[0].nccl[0]) snprintf(r->out.dev[0].nccl, sizeof r->out.dev[0].nccl, "%s", res.w.prov.nccl);
    cal_say("%s: %.1f s; %zu sizes, %.0f..%.0f bytes", what, dt, n, b[0], b[n - 1]);
  }
  free(res.rows);
  return st;
}

/* The record of a gather not measured here: its status (not-run, or failed / not-run by the
 * budget as the attempt left it) and where the curve comes from instead. */
static void fallback_said(gcurve *g, const char *from) {
  char was[256];
  snprintf(was, sizeof was, "%s", g->reason);
  if (!g->status[0]) snprintf(g->status, sizeof g->status, "not-run");
  if (was[0]) snprintf(g->reason, sizeof g->reason, "%.200s; the curve: %s", was, from);
  else snprintf(g->reason, sizeof g->reason, "not measured here (%s); the curve: %s",
                g->tp > 1 ? "fewer GPUs than the TP" : "one rank", from);
}

/* A (TP, backend) not measured here: a --gather file, else the models. */
static void gather_fallback(run_t *r, gcurve *g, int ti) {
  for (int f = 0; f < r->o->ngfiles; f++) {
    const gfile *gf = &r->gf[f];
    if (gf->backend != g->backend) continue;
    for (int c = 0; c < gf->ncurves; c++) {
      if (gf->ranks[c] != g->tp) continue;
      char src[512];
      if (gf->line0[c] > 0) snprintf(src, sizeof src, "%s:%ld-%ld (%s)", gf->file, gf->line0[c], gf->line1[c], gf->what);
      else snprintf(src, sizeof src, "%s (%s, %d GPUs)", gf->file, gf->what, g->tp);
      g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, src, "Steffen interpolation in log-log of the file's sizes (model/numeric/robust.h)");
      gcurve_set_points(g, gf->bytes[c], gf->t[c], gf->n[c]);
      g->samples = 0;
      fallback_said(g, "from the --gather file");
      return;
    }
  }
  if (tps_gather_is_fallback(g->backend) && !r->xf.built) {
    xfer_build(r->gpu, &r->gt, r->o, &r->xf);
    if (!r->xf.ok) cal_say("no transferred gather model: %s", r->xf.why);
  }
  if (tps_gather_is_fallback(g->backend) && r->xf.ok) {
    g->have = 2;
    g->xga = r->xf.m;
    g->gpu = r->gpu;
    g->xga_backend = TPS_XGA_NCCL;
    g->w90 = r->xf.w90[ti];
    g->prov = tps_thr_prov_make(TPS_PROV_TRANSFERRED, tps_xga_backend_source[TPS_XGA_NCCL],
                                "model/latency/xgather.h: NCCL LL/LL128/Simple, the fastest, per-peer latency, bus bandwidth = NCCL's "
                                "per-link bandwidth x links of this GPU (data/gpus.tsv); w90 from leaving each training GPU out");
    snprintf(g->prov.from_gpus, sizeof g->prov.from_gpus, "%s", r->xf.from);
    g->prov.w90_log = g->w90;
    fallback_said(g, "transferred model");
    return;
  }
  if (tps_gather_is_capped(g->backend) && r->gpu && r->gpu->nvlink) {
    g->have = 2;
    tps_xga_prior(&g->xga, 0);
    g->gpu = r->gpu;
    g->xga_backend = TPS_XGA_CUSTOM;
    g->w90 = CUSTOM_W90;
    g->prov = tps_thr_prov_make(TPS_PROV_SPEC, tps_xga_backend_source[TPS_XGA_CUSTOM],
                                "model/latency/xgather.h custom one-shot: floor + bytes / (efficiency x NVLink line rate of data/gpus.tsv); "
                                "w90 assumed log(1.5): measured on no GPU but the H20");
    g->prov.w90_log = g->w90;
    fallback_said(g, "spec-only model");
    return;
  }
  g->have = 0;
}

/* Provenance of a backend's gather: nccl's, or custom's below the cap and nccl's above. */
tps_thr_prov gsel_prov(const gsel *s, int backend) {
  if (tps_gather_is_fallback(backend) || !s->custom || !s->custom->have) {
    tps_thr_prov p = s->nccl->prov;
    if (!tps_gather_is_fallback(backend)) {
      size_t u = strlen(p.method);
      snprintf(p.method + u, sizeof p.method - u, "; no custom one-shot gather on these GPUs: NCCL throughout");
    }
    return p;
  }
  const tps_thr_prov *c = &s->custom->prov, *n = &s->nccl->prov;
  tps_thr_prov p = tps_thr_prov_make(c->kind > n->kind ? c->kind : n->kind, "", "");
  snprintf(p.source, sizeof p.source, "custom: %.240s | nccl: %.240s", c->source, n->source);
  snprintf(p.method, sizeof p.method, "custom one-shot while the per-rank part <= %.0f bytes (%s), NCCL above (%s)",
           tps_gather_cap_default(), tps_prov_kind_names[c->kind], tps_prov_kind_names[n->kind]);
  p.points = tps_prov_is_own_measurement(c->kind) && tps_prov_is_own_measurement(n->kind) ? c->points + n->points : -1;
  snprintf(p.from_gpus, sizeof p.from_gpus, "%s", n->from_gpus[0] ? n->from_gpus : c->from_gpus);
  p.w90_log = fmax(s->custom->w90, s->nccl->w90);
  return p;
}

void cal_gathers(run_t *r) {
  const opts *o = r->o;
  int need_custom = 0;
  for (int b = 0; b < o->nbackends; b++) if (!tps_gather_is_fallback(o->backend[b])) need_custom = 1;
  for (int ti = 0; ti < o->ntps; ti++)
    for (int c = 0; c < 2; c++) {
      gcurve *g = &r->gc[ti][c];
      g->tp = o->tp[ti];
      g->backend = c ? tps_gather_capped() : tps_gather_fallback();
      g->w90 = NAN;
      if (c && !need_custom) continue;
      if (g->tp <= r->ngpus) gather_step(r, g);
      if (!g->have) gather_fallback(r, g, ti);
      if (!g->have && c == 0) {
        cal_say("TP%d: no all-gather (not measured here, no --gather file of %d ranks, no model): no thresholds at TP%d", g->tp, g->tp, g->tp);
        tps_thr_add_note(&r->out, "TP%d: no all-gather measured, given or modelled: no thresholds", g->tp);
      } else if (!g->measured_here && g->have) {
        cal_say("TP%d %s gather: %s (%s)", g->tp, tps_gather_name(g->backend), tps_prov_kind_names[g->prov.kind],
            g->prov.kind == TPS_PROV_TRANSFERRED ? g->prov.from_gpus : g->prov.source);
      }
    }
  if (r->ngpus < 2) tps_thr_add_note(&r->out, "one GPU visible: every all-gather comes from --gather files or models (see each entry's gather provenance)");
}

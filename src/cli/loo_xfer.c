/* loo_xfer.c: the transfer-accuracy tables of `tpsplit fit --loo-gpu` (issue 27 item 6): per
 * held-out GPU, the error of the answer the tool gives with that GPU's measurements removed
 * (the evidence hierarchy: a measured sibling where one is, else the cross-GPU model; the
 * arithmetic in model/predict/xfer.h), beside the model alone and copying the sibling as it
 * is; and the coverage of those answers' 90% intervals.
 *
 * GEMM: every scored point of a GPU's set (K 5120; AIC N 1536 and 2048, bench N 1792; M
 *   1..16384); the sibling: the nearest other GPU of its architecture (tps_resolve_gemm_sibling,
 *   tps_resolve_sibling_distance) with a set of the same harness, its time at the same M and N.
 * All-gather: each GPU count 2, 4, 8, 64 KiB..64 MiB, both dtypes; the sibling: the nearest
 *   other GPU of the same fabric (tps_resolve_gather_sibling), its measured curve at 2, 4, 8
 *   GPUs (both dtypes' mean) at the same size, as measured.  Targets apply to NVLink GPUs. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/base/jsonout.h"
#include "src/cli/loo_run.h"
#include "model/core/status.h"
#include "model/predict/resolve.h"
#include "model/predict/xfer.h"



/* The nearest other set of path part g with a sibling GPU of set i and the same harness; -1 none. */
static int gemm_sibling_set(const gemm_part *g, int i) {
  const gset *s = &g->sets[i];
  int best = -1;
  double bd = 0;
  for (int k = 0; k < g->ns; k++) {
    const gset *h = &g->sets[k];
    if (h->harness.kind != s->harness.kind || !tps_resolve_gemm_sibling(h->gpu, s->gpu)) continue;
    double d = tps_resolve_sibling_distance(h->gpu, s->gpu);
    if (best < 0 || d < bd) best = k, bd = d;
  }
  return best;
}

static double set_time_at(const gset *h, long m, long n) {
  for (size_t j = 0; j < h->n; j++) if (h->m[j] == m && h->nn[j] == n) return h->t[j];
  return NAN;
}

/* Row x for set i of GEMM part g: model, copy, hierarchy over its scored points. */
static int gemm_row(const gemm_part *g, int i, xfer_gemm_row *x, xfer_run *xr) {
  const gset *s = &g->sets[i];
  int k = gemm_sibling_set(g, i);
  const gset *h = k >= 0 ? &g->sets[k] : NULL;
  double *buf = malloc(6 * (s->n ? s->n : 1) * sizeof *buf);
  if (!buf) return TPS_ENOMEM;
  double *meas = buf, *pm = buf + s->n, *hm = buf + 2 * s->n, *pc = buf + 3 * s->n, *ph = buf + 4 * s->n, *hh = buf + 5 * s->n;
  size_t n = 0;
  memset(x, 0, sizeof *x);
  x->gpu = s->gpu;
  x->path = g->path;
  /* "aic/<backend>" (the set's what: "AIC sglang 0.5.10, n 1536+2048") or "bench" */
  char be[16] = "";
  if (s->harness.kind == TPS_XG_AIC) sscanf(s->what, "AIC %15s", be);
  snprintf(x->what, sizeof x->what, s->harness.kind == TPS_XG_AIC ? "aic/%s" : "bench", be);
  snprintf(x->sib, sizeof x->sib, "%s", h ? h->gpu->name : "");
  for (size_t j = 0; j < s->n; j++) {
    if (!s->eval[j]) continue;
    double ts = h ? set_time_at(h, s->m[j], s->nn[j]) : NAN;
    meas[n] = s->t[j];
    pm[n] = s->pred[j];
    hm[n] = s->sigma_pred[j];
    pc[n] = ts;
    int from = 0;
    ph[n] = tps_xfer_gemm_answer(h ? h->gpu : NULL, s->gpu, tps_xg_path_row(g->path), (double)s->m[j], s->nn[j], GEMM_K, ts, s->pred[j],
                                 s->sigma_pred[j], &hh[n], &from);
    if (from && xr->ngsib < XFER_MAXSIB) xr->gsib[xr->ngsib++] = log(ph[n] / meas[n]);
    n++;
  }
  x->model = tps_xfer_score(meas, pm, hm, n);
  x->copy = h ? tps_xfer_score(meas, pc, NULL, n) : (tps_xfer_err){0, NAN, NAN, 0, 0};
  x->hier = tps_xfer_score(meas, ph, hh, n);
  x->met = tps_xfer_gemm_met(x->hier.med_abs, h ? x->copy.med_abs : NAN);
  free(buf);
  return TPS_OK;
}

/* Row x for GPU a's gather at n ranks. */
static int gather_row(const loo_run *r, int a, int q, xfer_gather_row *x, xfer_run *xr) {
  const aset *s = &r->as[a];
  const gather_loo *ar = &r->ar;
  int n = tps_loo_ag_ranks[q], sb = -1;
  double bd = 0;
  for (int h = 0; h < r->nas; h++) {
    if (h == a || !tps_resolve_gather_sibling(r->as[h].gpu, s->gpu)) continue;
    double d = tps_resolve_sibling_distance(r->as[h].gpu, s->gpu);
    if (sb < 0 || d < bd) sb = h, bd = d;
  }
  tps_loo_curve *c = sb >= 0 ? tps_lgo_measured_gather(&r->as[sb], n) : NULL;
  double *buf = malloc(6 * (s->n ? s->n : 1) * sizeof *buf);
  if (!buf) { tps_loo_curve_free(c); return TPS_ENOMEM; }
  double *meas = buf, *pm = buf + s->n, *hm = buf + 2 * s->n, *pc = buf + 3 * s->n, *ph = buf + 4 * s->n, *hh = buf + 5 * s->n;
  size_t k = 0;
  memset(x, 0, sizeof *x);
  x->gpu = s->gpu;
  x->ranks = n;
  x->has_interval = ar->hw_ok[a] || c;
  snprintf(x->sib, sizeof x->sib, "%s", c ? r->as[sb].gpu->name : "");
  for (size_t j = 0; j < s->n && ar->fold_ok[a]; j++) {
    if (s->ranks[j] != n || s->bytes[j] < AG_EVAL_LO || s->bytes[j] > AG_EVAL_HI) continue;
    double hw = ar->hw_ok[a] ? ar->hw[a] : NAN;
    meas[k] = s->t[j];
    pm[k] = s->pred[j];
    hm[k] = hw;
    pc[k] = c ? tps_loo_curve_eval(c, s->bytes[j]) : NAN;
    int from = 0;
    ph[k] = tps_xfer_gather_answer(pc[k], s->pred[j], hw, &hh[k], &from);
    if (from && xr->nasib < XFER_MAXSIB) xr->asib[xr->nasib++] = log(ph[k] / meas[k]);
    k++;
  }
  x->model = tps_xfer_score(meas, pm, hm, k);
  x->copy = c ? tps_xfer_score(meas, pc, NULL, k) : (tps_xfer_err){0, NAN, NAN, 0, 0};
  x->hier = tps_xfer_score(meas, ph, hh, k);
  x->met = tps_xfer_gather_met(x->hier.med_abs);
  free(buf);
  tps_loo_curve_free(c);
  return TPS_OK;
}

int tps_loo_xfer_compute(loo_run *r) {
  xfer_run *x = &r->xf;
  memset(x, 0, sizeof *x);
  for (int path = 0; path < TPS_XG_NPATH; path++) {
    const gemm_part *g = &r->gp[path];
    for (int i = 0; i < g->ns && x->ng < XFER_MAXROWS; i++) {
      if (!g->r.fold_ok[g->r.grp[i]]) continue;
      int st = gemm_row(g, i, &x->g[x->ng], x);
      if (st != TPS_OK) return st;
      xfer_gemm_row *w = &x->g[x->ng++];
      x->gcov[0] += w->model.covered; x->gcov[1] += w->hier.covered;
      x->gn[0] += w->model.nint; x->gn[1] += w->hier.nint;
    }
  }
  for (int a = 0; a < r->nas; a++)
    for (int q = 0; q < TPS_LOO_NRANKS && x->na < XFER_MAXROWS; q++) {
      int st = gather_row(r, a, q, &x->a[x->na], x);
      if (st != TPS_OK) return st;
      xfer_gather_row *w = &x->a[x->na++];
      if (!w->gpu->nvlink) continue;
      x->acov[0] += w->model.covered; x->acov[1] += w->hier.covered;
      x->an[0] += w->model.nint; x->an[1] += w->hier.nint;
    }
  return TPS_OK;
}

/* ------------------------------------------------------------------ printing */

static void pct(double v) {
  if (isnan(v)) printf(" %7s", "-");
  else printf(" %6.1f%%", 100 * v);
}

static void cover(const tps_xfer_err *e) {
  if (e->nint && e->covered <= e->nint) printf(" %7.1f%%", 100.0 * (double)e->covered / (double)e->nint);
  else printf(" %8s", "-");
}

static void print_gemm(const xfer_run *x) {
  int met = 0;
  char miss[600] = "";
  size_t ml = 0;
  printf("# transfer accuracy (issue 27 item 6): the answer the tool gives for a GPU whose own measurements are\n");
  printf("# removed: the evidence hierarchy (model/predict/xfer.h), a measured sibling among the other GPUs where one is\n");
  printf("# (GEMM: the same architecture, its time at the same M and N moved by the regime's spec ratio; gather: the same\n");
  printf("# fabric, as measured), else the cross-GPU model.  Median |error| of the model alone, of copying the sibling as\n");
  printf("# it is, and of the hierarchy's answer; cover90: share of the points inside the answer's 90%% interval.\n");
  printf("# GEMM, K %d, the scored points above (N 1536 and 2048; bench N 1792; M 1..%d)\n", GEMM_K, GEMM_MMAX);
  printf("%-20s %-10s %-10s %-12s %5s %7s %7s %7s %8s %6s\n", "gpu", "path", "data", "sibling", "n", "model", "copy", "hier",
         "cover90", "target");
  for (int i = 0; i < x->ng; i++) {
    const xfer_gemm_row *w = &x->g[i];
    printf("%-20s %-10s %-10s %-12s %5zu", w->gpu->name, tps_xg_path_names[w->path], w->what, w->sib[0] ? w->sib : "-", w->hier.n);
    pct(w->model.med_abs);
    pct(w->copy.med_abs);
    pct(w->hier.med_abs);
    cover(&w->hier);
    printf(" %6s\n", w->met ? "met" : "missed");
    met += w->met;
    if (!w->met && ml < sizeof miss - 80) {
      int k = snprintf(miss + ml, sizeof miss - ml, "%s%s %s %s %.1f%%", ml ? ", " : "", w->gpu->name, tps_xg_path_names[w->path], w->what,
                       100 * w->hier.med_abs);
      if (k > 0) ml += (size_t)k;
    }
  }
  printf("# target GEMM (median <= %.0f%%, and <= copying + %.0f point where a sibling is measured): %s, %d of %d rows met%s%s%s\n",
         100 * TPS_XFER_GEMM_MED, 100 * TPS_XFER_GEMM_SIB_SLACK, met == x->ng ? "met" : "missed", met, x->ng, ml ? " (missed: " : "",
         miss, ml ? ")" : "");
}

static void print_gather(const xfer_run *x) {
  int met = 0, nv = 0;
  char miss[600] = "";
  size_t ml = 0;
  printf("# all-gather (NCCL), 64 KiB..64 MiB, both dtypes, per GPU count; the target applies to NVLink GPUs\n");
  printf("%-20s %-7s %4s %-12s %5s %7s %7s %7s %8s %6s\n", "gpu", "fabric", "gpus", "sibling", "n", "model", "copy", "hier", "cover90",
         "target");
  for (int i = 0; i < x->na; i++) {
    const xfer_gather_row *w = &x->a[i];
    printf("%-20s %-7s %4d %-12s %5zu", w->gpu->name, w->gpu->nvlink ? "NVLink" : "PCIe", w->ranks, w->sib[0] ? w->sib : "-", w->hier.n);
    pct(w->model.med_abs);
    pct(w->copy.med_abs);
    pct(w->hier.med_abs);
    if (w->has_interval) cover(&w->hier);
    else printf(" %8s", "-");
    printf(" %6s\n", !w->gpu->nvlink ? "-" : w->met ? "met" : "missed");
    if (!w->gpu->nvlink) continue;
    nv++;
    met += w->met;
    if (!w->met && ml < sizeof miss - 60) {
      int k = snprintf(miss + ml, sizeof miss - ml, "%s%s %d GPUs %.1f%%", ml ? ", " : "", w->gpu->name, w->ranks, 100 * w->hier.med_abs);
      if (k > 0) ml += (size_t)k;
    }
  }
  printf("# target all-gather (NVLink GPUs, median <= %.0f%%): %s, %d of %d met%s%s%s\n", 100 * TPS_XFER_GATHER_MED,
         met == nv ? "met" : "missed", met, nv, ml ? " (missed: " : "", miss, ml ? ")" : "");
}

void tps_loo_xfer_print(const loo_run *r) {
  const xfer_run *x = &r->xf;
  print_gemm(x);
  print_gather(x);
  double g0 = x->gn[0] ? (double)x->gcov[0] / (double)x->gn[0] : NAN, g1 = x->gn[1] ? (double)x->gcov[1] / (double)x->gn[1] : NAN;
  double a0 = x->an[0] ? (double)x->acov[0] / (double)x->an[0] : NAN, a1 = x->an[1] ? (double)x->acov[1] / (double)x->an[1] : NAN;
  int gm = tps_xfer_cover_met(x->gcov[1], x->gn[1]), am = tps_xfer_cover_met(x->acov[1], x->an[1]);
  printf("# target 90%% intervals of the answers (>= %.0f%% of the points): %s; GEMM %.1f%% of %zu points (model alone %.1f%%), "
         "all-gather on NVLink %.1f%% of %zu (model alone %.1f%%); points without an interval (a form fitted on one GPU) not counted\n", 100 * TPS_XFER_COVER, gm && am ? "met" : "missed", 100 * g1, x->gn[1],
         100 * g0, 100 * a1, x->an[1], 100 * a0);
  /* what the sibling answers' own spreads (model/predict/resolve.h) would need to cover 90% */
  printf("# the sibling answers' |log error|, 90%% quantile: GEMM %.3f of %zu points (their half-width TPS_Z90 x %.3f = %.3f), "
         "all-gather %.3f of %zu (TPS_Z90 x %.3f = %.3f)\n\n", tps_loo_quantile_abs(x->gsib, x->ngsib, 0.9, 0), x->ngsib,
         TPS_RESOLVE_SIBLING_GEMM_RSD, TPS_Z90 * TPS_RESOLVE_SIBLING_GEMM_RSD, tps_loo_quantile_abs(x->asib, x->nasib, 0.9, 0), x->nasib,
         TPS_RESOLVE_SIBLING_GATHER_RSD, TPS_Z90 * TPS_RESOLVE_SIBLING_GATHER_RSD);
}

/* ------------------------------------------------------------------ JSON */

static json_t *err_json(const tps_xfer_err *e, int with_cover) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)e->n));
  tps_json_set_num(o, "median_abs_rel", e->med_abs);
  tps_json_set_num(o, "max_abs_rel", e->max_abs);
  if (with_cover) tps_json_set_num(o, "coverage90", e->nint ? (double)e->covered / (double)e->nint : NAN);
  return o;
}

static void row_json(json_t *o, const char *sib, const tps_xfer_err *m, const tps_xfer_err *c, const tps_xfer_err *h, int met) {
  json_object_set_new(o, "sibling", sib[0] ? json_string(sib) : json_null());
  json_object_set_new(o, "model", err_json(m, 1));
  json_object_set_new(o, "copy_sibling", sib[0] ? err_json(c, 0) : json_null());
  json_object_set_new(o, "hierarchy", err_json(h, 1));
  json_object_set_new(o, "target_met", json_boolean(met));
}

json_t *tps_loo_xfer_json(const loo_run *r) {
  const xfer_run *x = &r->xf;
  json_t *o = json_object(), *g = json_array(), *a = json_array();
  for (int i = 0; i < x->ng; i++) {
    const xfer_gemm_row *w = &x->g[i];
    json_t *q = json_object();
    json_object_set_new(q, "gpu", json_string(w->gpu->name));
    json_object_set_new(q, "path", json_string(tps_xg_path_names[w->path]));
    json_object_set_new(q, "data", json_string(w->what));
    row_json(q, w->sib, &w->model, &w->copy, &w->hier, w->met);
    json_array_append_new(g, q);
  }
  for (int i = 0; i < x->na; i++) {
    const xfer_gather_row *w = &x->a[i];
    json_t *q = json_object();
    json_object_set_new(q, "gpu", json_string(w->gpu->name));
    json_object_set_new(q, "fabric", json_string(w->gpu->nvlink ? "nvlink" : "pcie"));
    json_object_set_new(q, "gpus", json_integer(w->ranks));
    row_json(q, w->sib, &w->model, &w->copy, &w->hier, w->gpu->nvlink ? w->met : 0);
    json_array_append_new(a, q);
  }
  json_object_set_new(o, "gemm", g);
  json_object_set_new(o, "gather", a);
  tps_json_set_num(o, "gemm_coverage90", x->gn[1] ? (double)x->gcov[1] / (double)x->gn[1] : NAN);
  tps_json_set_num(o, "gather_nvlink_coverage90", x->an[1] ? (double)x->acov[1] / (double)x->an[1] : NAN);
  return o;
}

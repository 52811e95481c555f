/* sweep.c: the GEMM steps of a calibration (the plan is in run.c): each a bench gemm run of
 * some rows of one part (shape, path), checked against the budget before it starts; the
 * first-phase sweep, the adaptive rows and their held-out check (model/calib/calib.h), the
 * rows the break-even needs; the calibrated model refitted after each. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort_long.h>
#include <gsl/gsl_sort_int.h>
#include "src/cli/calibrate/cal.h"
#include "model/core/status.h"


int cal_budget_allows(run_t *r, double est_s, const char *step) {
  if (cal_elapsed_s() + est_s <= r->o->budget_s) return 1;
  if (!r->partial)
    cal_say("budget: %.1f s of %.0f s used, the next step (%s) takes ~%.0f s: stopping here; the file will say \"partial\": true",
        cal_elapsed_s(), r->o->budget_s, step, est_s);
  r->partial = 1;
  return 0;
}

static void on_check(void *arg, const tps_bench_gemm_check *c) {
  run_t *r = arg;
  if (!c->ok) {
    r->checks_failed++;
    cal_say("check FAILED: %s M=%d: rel %.3g, max|diff| %.4g", r->what, c->m, c->rel, c->max_abs_diff);
  } else {
    cal_progress("%s: checked M=%d", r->what, c->m);
  }
}

/* The estimate of a step of n rows of part p: its latest step's time scaled by (n + 1) /
 * (rows + 1) (a step costs about one row more than its rows: the plan, the weights); before
 * any step, the longest step so far.  The first step holds the all-row checks, so the first
 * estimate after it errs long; every later one follows the part's own recent cost (run 3 on
 * the H200: a 12-row first step 13.0 s, the 4-row steps after it 1.3-6.3 s, where the longest
 * step had made the break-even rows (one row) wait for 13 s and the run stop at 48 of 60 s). */
static double step_est_s(const run_t *r, const gpart *p, size_t n) {
  if (!p->last_rows) return r->est_gemm_s;
  return p->last_s * (double)(n + 1) / (double)(p->last_rows + 1);
}

/* One bench gemm run of rows[] for a part; the measured rows are merged into its record. */
/* est_s < 0: the estimate of a GEMM step (the longest so far) */
static int gemm_step(run_t *r, gpart *p, const long *rows, size_t nrows, const char *phase, double est_s) {
  char what[320];
  snprintf(what, sizeof what, "gemm %ldx%ld %s (%s, %zu rows)", p->k, p->n, tps_path_name(p->path), phase, nrows);
  if (!cal_budget_allows(r, est_s < 0 ? r->est_gemm_s : est_s, what)) {
    if (!p->rec.npts) {
      snprintf(p->rec.status, sizeof p->rec.status, "not-run");
      snprintf(p->rec.reason, sizeof p->rec.reason, "the budget of %.0f s was reached before it", r->o->budget_s);
    }
    return TPS_SKIP;
  }
  r->what = what;
  cal_progress("%s", what);
  int irows[TPS_CAL_MAX_PTS];
  for (size_t i = 0; i < nrows; i++) irows[i] = (int)rows[i];
  gsl_sort_int(irows, 1, nrows);
  tps_bench_gemm_opts o;
  memset(&o, 0, sizeof o);
  o.path = (tps_path_id)p->path;
  o.k = (int)p->k;
  o.n = (int)p->n;
  o.rows = irows;
  o.nrows = (int)nrows;
  o.samples = r->o->samples;
  o.warmup = 2;
  o.device = r->o->device;
  o.seed = r->o->seed;
  /* rows are recorded only after a step whose checks all passed: the all-row checks (1, 7, 64,
   * 129 rows) ran then, once per part; each new M keeps its own check */
  o.full_checks_done = p->rec.npts > 0;
  o.arg = r;
  o.on_check = on_check;
  tps_bench_gemm_result res;
  memset(&res, 0, sizeof res);
  res.rows = calloc(nrows, sizeof *res.rows);
  if (!res.rows) return TPS_ENOMEM;
  const double t1 = cal_elapsed_s();
  r->checks_failed = 0;
  int st = tps_bench_gemm_run(&o, &res);
  const double dt = cal_elapsed_s() - t1;
  if (dt > r->est_gemm_s || r->est_gemm_s == EST_GEMM_S) r->est_gemm_s = dt;
  if (nrows) { p->last_s = dt; p->last_rows = nrows; }
  cal_progress_forget(); /* the step is over: its progress line is not drawn again */
  if (st == TPS_OK && (res.failed || r->checks_failed)) {
    snprintf(p->rec.status, sizeof p->rec.status, "failed");
    snprintf(p->rec.reason, sizeof p->rec.reason, "a correctness check failed: nothing timed");
    cal_say("%s: a correctness check failed: no thresholds for it", what);
    st = TPS_ERR;
  } else if (st != TPS_OK) {
    snprintf(p->rec.status, sizeof p->rec.status, "failed");
    snprintf(p->rec.reason, sizeof p->rec.reason, "%s", res.why[0] ? res.why : "the GEMM bench failed (see above)");
    cal_say("%s: failed: %s", what, p->rec.reason);
  } else {
    /* merge, ascending; a row measured before keeps its first time and configuration */
    char mc[TPS_CAL_MAX_PTS][TPS_THR_CONFIG];
    long mr[TPS_CAL_MAX_PTS];
    double mt[TPS_CAL_MAX_PTS];
    size_t m = 0, a = 0, b = 0;
    while ((a < p->rec.npts || b < nrows) && m < TPS_CAL_MAX_PTS) {
      const int old = b >= nrows || (a < p->rec.npts && p->rec.rows[a] <= res.rows[b].m);
      if (old && b < nrows && p->rec.rows[a] == res.rows[b].m) b++;
      if (old) {
        mr[m] = p->rec.rows[a];
        mt[m] = p->rec.t_us[a];
        memcpy(mc[m], p->rec.config[a], TPS_THR_CONFIG);
        a++;
      } else {
        mr[m] = res.rows[b].m;
        mt[m] = res.rows[b].t[0].median_us;
        snprintf(mc[m], TPS_THR_CONFIG, "%s", res.rows[b].config);
        b++;
      }
      m++;
    }
    memcpy(p->rec.rows, mr, m * sizeof *mr);
    memcpy(p->rec.t_us, mt, m * sizeof *mt);
    memcpy(p->rec.config, mc, m * sizeof *mc);
    p->rec.npts = m;
    p->rec.samples = r->o->samples;
    snprintf(p->rec.status, sizeof p->rec.status, "measured");
    p->rec.reason[0] = 0;
    cal_say("%s: %.1f s; %zu rows measured so far (M %ld..%ld)", what, dt, m, mr[0], mr[m - 1]);
  }
  free(res.rows);
  return st;
}
/* The calibrated model of a part: the first time fitted whole (and kept as its first-phase
 * fit), later with the first-phase base kept and the rows added taken by the residuals
 * (tps_cal_gemm_fit_frozen: an added row changes the curve only between its neighbours);
 * lopo 0 (adaptive rounds): no leave-one-point-out.  w90: the wider of the first-phase one
 * (the base refitted without each point) and the current one. */
static void fit_part(run_t *r, gpart *p, int lopo) {
  if (p->fitted) tps_cal_gemm_free(&p->fit);
  p->fitted = 0;
  if (strcmp(p->rec.status, "measured") || p->rec.npts < 2) return;
  int st;
  if (p->have_first) {
    st = tps_cal_gemm_fit_frozen(&p->fit, &p->first, p->rec.rows, p->rec.t_us, p->rec.npts, lopo);
    if (st == TPS_OK && !(p->fit.w90 >= p->first.w90)) p->fit.w90 = p->first.w90;
  } else {
    st = tps_cal_gemm_fit(&p->fit, p->path, p->k, p->n, r->gpu, NULL, TPS_XG_FLUSHED, p->rec.rows, p->rec.t_us, p->rec.npts,
                          r->o->method);
    if (st == TPS_OK) {
      p->rec.first_method = p->fit.method;
      p->have_first = tps_cal_gemm_fit_quick(&p->first, p->path, p->k, p->n, r->gpu, NULL, TPS_XG_FLUSHED, p->rec.rows,
                                             p->rec.t_us, p->rec.npts, r->o->method) == TPS_OK;
      if (p->have_first) {
        p->first.w90 = p->fit.w90;
        memcpy(p->first.w90_by, p->fit.w90_by, sizeof p->first.w90_by);
      } else {
        tps_cal_gemm_free(&p->first);
      }
    }
  }
  if (st != TPS_OK) {
    cal_say("gemm %ldx%ld %s: the calibrated model cannot be fitted (%s)", p->k, p->n, tps_path_name(p->path), tps_strstatus(st));
    tps_cal_gemm_free(&p->fit);
    return;
  }
  p->fitted = 1;
  p->rec.method = p->fit.method;
  p->rec.base = p->fit.base;
  p->rec.w90_log = p->fit.w90;
  memcpy(p->rec.lopo_med, p->fit.lopo_med, sizeof p->rec.lopo_med);
  memcpy(p->rec.lopo_max, p->fit.lopo_max, sizeof p->rec.lopo_max);
}

const char *cal_pct_text(double v, char *buf) {
  if (isfinite(v)) snprintf(buf, 16, "%.1f%%", 100 * v);
  else snprintf(buf, 16, "n/a");
  return buf;
}

/* The held-out check of a part's adaptive rows (model/calib/calib.h): each predicted by the
 * first-phase fit by both methods; the method chosen becomes the first-phase fit's, which
 * the refits after it keep (tps_cal_gemm_fit_frozen), unless --no-heldout or a --method
 * forced.  Said and recorded in the part's calibration record.  TPS_OK, TPS_NA (no adaptive
 * row), or the check's status (said). */
static int heldout_part(run_t *r, gpart *p) {
  if (!p->have_first || !p->nadapt) return TPS_NA;
  double t[TPS_CAL_MAX_PTS];
  size_t n = 0;
  for (int j = 0; j < p->nadapt; j++)
    for (size_t i = 0; i < p->rec.npts; i++)
      if (p->rec.rows[i] == p->adapt_rows[j]) { t[n++] = p->rec.t_us[i]; break; }
  if (n != (size_t)p->nadapt) return TPS_NA; /* a row not measured: no check */
  int st = tps_cal_heldout_choose(&p->first, p->adapt_rows, t, n, &p->ho);
  if (st != TPS_OK) {
    cal_say("gemm %ldx%ld %s: no held-out check (%s)", p->k, p->n, tps_path_name(p->path), tps_strstatus(st));
    return st;
  }
  p->have_ho = 1;
  const int prior = p->first.method;
  const int keep = r->o->no_heldout || r->o->method != TPS_CAL_AUTO; /* a method forced is kept */
  int chosen = keep ? prior : p->ho.method;
  if (chosen != prior && tps_cal_gemm_use_method(&p->first, chosen) != TPS_OK) chosen = prior;
  char a[4][16];
  cal_say("gemm %ldx%ld %s: held-out check of %zu adaptive rows by the first-phase fit: max |error| steffen %s, shaped %s "
      "(median %s, %s): %s %s",
      p->k, p->n, tps_path_name(p->path), p->ho.n, cal_pct_text(p->ho.max_abs_rel[TPS_CAL_STEFFEN], a[0]),
      cal_pct_text(p->ho.max_abs_rel[TPS_CAL_SHAPED], a[1]), cal_pct_text(p->ho.med_abs_rel[TPS_CAL_STEFFEN], a[2]),
      cal_pct_text(p->ho.med_abs_rel[TPS_CAL_SHAPED], a[3]), tps_cal_method_names[chosen],
      chosen != prior ? "chosen instead of the first phase's" : r->o->no_heldout ? "kept (--no-heldout)"
                                                              : keep ? "kept (--method)" : "kept");
  tps_thr_gemm *g = &p->rec;
  g->first_method = prior;
  g->heldout_n = p->ho.n;
  memcpy(g->heldout_rows, p->ho.rows, p->ho.n * sizeof *p->ho.rows);
  gsl_sort_long(g->heldout_rows, 1, g->heldout_n);
  memcpy(g->heldout_max, p->ho.max_abs_rel, sizeof g->heldout_max);
  memcpy(g->heldout_med, p->ho.med_abs_rel, sizeof g->heldout_med);
  return TPS_OK;
}

int cal_part_be(run_t *r, gpart *p, int ti, int backend, tps_cal_be *be, tps_bands *bands) {
  gsel s = {&r->gc[ti][0], tps_gather_is_fallback(backend) ? NULL : &r->gc[ti][1], r->o->tp[ti]};
  if (!s.nccl->have) return -1;
  tps_cal_parts parts = {cal_gemm_eval, p, gsel_eval, &s, cal_gemm_w90(p),
                         s.custom && s.custom->have ? fmax(s.custom->w90, s.nccl->w90) : s.nccl->w90};
  if (tps_cal_breakeven(&parts, r->o->tp[ti], 2.0 * (double)p->n, r->o->t_max, be) != TPS_OK) return -1;
  return bands && tps_cal_bands(&parts, r->o->tp[ti], 2.0 * (double)p->n, r->o->t_max, bands) != TPS_OK ? 1 : 0;
}

/* Step 1: per part the first-phase sweep rows (tps_cal_sweep_rows), fitted. */
void cal_first_sweeps(run_t *r) {
  const opts *o = r->o;
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    if (p->rec.status[0]) continue;
    tps_cal_sweep_req q = {p->path, p->k, p->n, r->gpu, o->t_max, o->points};
    long rows[TPS_CAL_MAX_PTS];
    size_t n = tps_cal_sweep_rows(&q, rows, TPS_CAL_MAX_PTS);
    gemm_step(r, p, rows, n, "sweep", -1);
    fit_part(r, p, 1);
  }
}

/* Step 2b, the adaptive phase: rounds over the parts, each measuring the midpoints of the
 * intervals tps_cal_adapt_rows proposes (per_round at most), until none is proposed,
 * max_rows are added or a step would end past budget_frac of the budget less the time
 * kept for the break-even rows (two rows per part) */
void cal_adaptive(run_t *r) {
  const opts *o = r->o;
  double reserve_s = 0;
  for (int i = 0; i < r->nparts; i++) if (r->part[i].fitted) reserve_s += step_est_s(r, &r->part[i], 2);
  int more = o->adapt.max_rows > 0, stop = 0;
  while (more && !stop) {
    more = 0;
    for (int i = 0; i < r->nparts && !stop; i++) {
      gpart *p = &r->part[i];
      if (!p->fitted || !p->have_first || p->nadapt >= o->adapt.max_rows) continue;
      tps_cal_adapt_pick pk[TPS_CAL_MAX_PTS];
      size_t cap = (size_t)(o->adapt.max_rows - p->nadapt);
      if (cap > (size_t)o->adapt.per_round) cap = (size_t)o->adapt.per_round;
      if (cap > TPS_CAL_MAX_PTS - p->rec.npts) cap = TPS_CAL_MAX_PTS - p->rec.npts;
      size_t np = cap ? tps_cal_adapt_rows(&p->fit, &o->adapt, p->skip_lo, p->nskip, pk, cap) : 0;
      while (np && !tps_cal_adapt_fits(cal_elapsed_s(), step_est_s(r, p, np), reserve_s, o->budget_s,
                                       o->adapt.budget_frac))
        np--;
      if (!np) continue;
      long rows[TPS_CAL_MAX_PTS];
      char why[200] = "";
      for (size_t j = 0; j < np; j++) {
        rows[j] = pk[j].row;
        size_t u = strlen(why);
        snprintf(why + u, sizeof why - u, "%s%ld %s", j ? ", " : "", pk[j].row, tps_cal_why_names[pk[j].why]);
      }
      char phase[240];
      snprintf(phase, sizeof phase, "adaptive: %s", why);
      int st = gemm_step(r, p, rows, np, phase, step_est_s(r, p, np));
      if (st == TPS_SKIP) { stop = 1; break; }
      if (st != TPS_OK) continue; /* said; the part keeps what it had */
      for (size_t j = 0; j < np; j++) p->adapt_rows[p->nadapt++] = rows[j];
      fit_part(r, p, 0);
      more = 1;
    }
  }
  for (int i = 0; i < r->nparts; i++)
    if (r->part[i].nadapt) {
      heldout_part(r, &r->part[i]);
      fit_part(r, &r->part[i], 1);
    }
}

/* Step 3: per part the rows the break-even needs (T* and ceil(T* / TP) of each TP), when
 * not near a row had. */
void cal_breakeven_rows(run_t *r) {
  const opts *o = r->o;
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    if (!p->fitted) continue;
    int tps[MAX_TPS];
    double be[MAX_TPS];
    for (int ti = 0; ti < o->ntps; ti++) {
      tps_cal_be x;
      tps[ti] = o->tp[ti];
      be[ti] = cal_part_be(r, p, ti, o->backend[0], &x, NULL) ? 0 : x.breakeven;
    }
    long rows[2 * MAX_TPS];
    size_t n = tps_cal_breakeven_rows(p->rec.rows, p->rec.npts, tps, be, (size_t)o->ntps, o->t_max, NEAR_FACTOR, rows,
                                      TPS_CAL_MAX_PTS - p->rec.npts < 2 * MAX_TPS ? TPS_CAL_MAX_PTS - p->rec.npts : 2 * MAX_TPS);
    if (!n) continue;
    if (gemm_step(r, p, rows, n, "break-even rows", step_est_s(r, p, n)) == TPS_OK) fit_part(r, p, 1);
  }
}

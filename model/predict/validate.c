/* validate.c: a prediction against a measured split table (see validate.h). */
#include "model/predict/validate.h"
#include "model/predict/crossover.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* median, max and RMS of |err[0..n)| (NaN for n = 0). */
static tps_errsum errsum_of(const double *err, size_t n) {
  tps_errsum s = {NAN, NAN, NAN};
  double *a = n ? malloc(n * sizeof *a) : NULL;
  if (!a) return s;
  double ss = 0;
  for (size_t i = 0; i < n; i++) {
    a[i] = fabs(err[i]);
    ss += err[i] * err[i];
  }
  gsl_sort(a, 1, n);
  s.median = gsl_stats_median_from_sorted_data(a, 1, n);
  s.max = a[n - 1];
  s.rms = sqrt(ss / (double)n);
  free(a);
  return s;
}

/* d(T) = split - replicated of a table, linear in log T between its rows. */
typedef struct {
  gsl_interp *it;
  gsl_interp_accel *acc;
  double *x, *d; /* log T, d at the rows */
  size_t n;
} table_diff;

static void table_diff_free(table_diff *t) {
  if (t->it) gsl_interp_free(t->it);
  if (t->acc) gsl_interp_accel_free(t->acc);
  free(t->x);
  memset(t, 0, sizeof *t);
}

static int table_diff_init(table_diff *t, const tps_split_series *s) {
  memset(t, 0, sizeof *t);
  t->n = s->n;
  t->x = malloc(2 * s->n * sizeof *t->x);
  t->it = gsl_interp_alloc(gsl_interp_linear, s->n);
  t->acc = gsl_interp_accel_alloc();
  if (!t->x || !t->it || !t->acc) { table_diff_free(t); return TPS_ENOMEM; }
  t->d = t->x + s->n;
  for (size_t i = 0; i < s->n; i++) {
    t->x[i] = log((double)s->tokens[i]);
    t->d[i] = s->split_us[i] - s->replicated_us[i];
  }
  if (gsl_interp_init(t->it, t->x, t->d, s->n) != 0) { table_diff_free(t); return TPS_EINVAL; }
  return TPS_OK;
}

static double table_diff_at(long T, void *arg) {
  table_diff *t = arg;
  double x = log((double)T);
  if (x <= t->x[0]) return t->d[0];
  if (x >= t->x[t->n - 1]) return t->d[t->n - 1];
  return gsl_interp_eval(t->it, t->x, t->d, x, t->acc);
}

/* A fit or a prediction context at T tokens. */
static double model_rep(const tps_val_prediction *p, long T, double *se) {
  if (p->fit) return tps_fit_replicated_us(p->fit, T, se);
  if (se) *se = NAN;
  return tps_pred_replicated_us(p->pred, T);
}
static double model_split(const tps_val_prediction *p, long T, double *se, int *backend) {
  if (p->fit) return tps_fit_split_us(p->fit, T, se, backend);
  if (se) *se = NAN;
  return tps_pred_split_us(p->pred, T, backend);
}
static double model_diff(long T, void *arg) {
  const tps_val_prediction *p = arg;
  return model_split(p, T, NULL, NULL) - model_rep(p, T, NULL);
}

/* Replicated and split times on [tmin, tmax] (NaN outside): a table's, each linear in log T
 * between its rows, or a model's (p, when s is NULL). */
typedef struct {
  gsl_interp *ir, *is;
  gsl_interp_accel *acc;
  double *x, *r, *s;
  size_t n;
  const tps_val_prediction *p;
  long tmin, tmax;
} series_costs;

static void series_costs_free(series_costs *c) {
  if (c->ir) gsl_interp_free(c->ir);
  if (c->is) gsl_interp_free(c->is);
  if (c->acc) gsl_interp_accel_free(c->acc);
  free(c->x);
  memset(c, 0, sizeof *c);
}

static int series_costs_init(series_costs *c, const tps_split_series *s, const tps_val_prediction *p, long tmin, long tmax) {
  memset(c, 0, sizeof *c);
  c->p = p;
  c->tmin = tmin;
  c->tmax = tmax;
  if (!s) return TPS_OK;
  c->n = s->n;
  c->x = malloc(3 * s->n * sizeof *c->x);
  c->ir = gsl_interp_alloc(gsl_interp_linear, s->n);
  c->is = gsl_interp_alloc(gsl_interp_linear, s->n);
  c->acc = gsl_interp_accel_alloc();
  if (!c->x || !c->ir || !c->is || !c->acc) { series_costs_free(c); return TPS_ENOMEM; }
  c->r = c->x + s->n;
  c->s = c->r + s->n;
  for (size_t i = 0; i < s->n; i++) {
    c->x[i] = log((double)s->tokens[i]);
    c->r[i] = s->replicated_us[i];
    c->s[i] = s->split_us[i];
  }
  if (gsl_interp_init(c->ir, c->x, c->r, s->n) != 0 || gsl_interp_init(c->is, c->x, c->s, s->n) != 0) {
    series_costs_free(c);
    return TPS_EINVAL;
  }
  return TPS_OK;
}

static double series_at(const series_costs *c, long T, int split) {
  if (T < c->tmin || T > c->tmax) return NAN;
  if (!c->x) return split ? model_split(c->p, T, NULL, NULL) : model_rep(c->p, T, NULL);
  double x = log((double)T);
  if (x <= c->x[0]) return split ? c->s[0] : c->r[0];
  if (x >= c->x[c->n - 1]) return split ? c->s[c->n - 1] : c->r[c->n - 1];
  return gsl_interp_eval(split ? c->is : c->ir, c->x, split ? c->s : c->r, x, c->acc);
}
static double series_rep(long T, void *c) { return series_at(c, T, 0); }
static double series_split(long T, void *c) { return series_at(c, T, 1); }

/* The threshold of least excess on a side's costs (model/predict/excess.h); -1 never. */
static long series_threshold(series_costs *c, long tmax) {
  tps_costs costs = {series_rep, series_split, c};
  tps_excess x;
  long t = -1;
  tps_threshold_choose(&costs, tmax, &t, &x);
  return t;
}

void tps_validation_free(tps_validation *v) {
  free(v->pred_rep_us);
  free(v->backend);
  memset(v, 0, sizeof *v);
}

/* The predicted values at the measured rows. */
static int predicted_rows(const tps_split_series *m, const tps_val_prediction *p, tps_validation *v) {
  for (size_t i = 0; i < m->n; i++) {
    const long T = m->tokens[i];
    v->backend[i] = -1;
    v->se_rep_us[i] = v->se_split_us[i] = NAN;
    if (p->table.n) {
      size_t j = 0;
      while (j < p->table.n && p->table.tokens[j] != T) j++;
      if (j == p->table.n) { v->bad_tokens = T; return TPS_EBADDATA; }
      v->pred_rep_us[i] = p->table.replicated_us[j];
      v->pred_split_us[i] = p->table.split_us[j];
    } else {
      v->pred_rep_us[i] = model_rep(p, T, &v->se_rep_us[i]);
      v->pred_split_us[i] = model_split(p, T, &v->se_split_us[i], &v->backend[i]);
      if (!isfinite(v->pred_rep_us[i]) || !isfinite(v->pred_split_us[i])) { v->bad_tokens = T; return TPS_EBADDATA; }
    }
    v->err_rep[i] = v->pred_rep_us[i] / m->replicated_us[i] - 1;
    v->err_split[i] = v->pred_split_us[i] / m->split_us[i] - 1;
  }
  return TPS_OK;
}

int tps_validate(const tps_split_series *m, const tps_val_prediction *p, long rounding, double tolerance,
                 tps_validation *v) {
  memset(v, 0, sizeof *v);
  v->bad_tokens = -1;
  if (!m || !p || m->n < 2 || (!p->fit && !p->pred && p->table.n < 2)) return TPS_EINVAL;
  const size_t n = v->n = m->n;
  /* one block: pred_rep, pred_split, se_rep, se_split, err_rep, err_split, and 2n for both errors */
  v->pred_rep_us = malloc(8 * n * sizeof(double));
  v->backend = malloc(n * sizeof *v->backend);
  if (!v->pred_rep_us || !v->backend) return TPS_ENOMEM;
  v->pred_split_us = v->pred_rep_us + n;
  v->se_rep_us = v->pred_split_us + n;
  v->se_split_us = v->se_rep_us + n;
  v->err_rep = v->se_split_us + n;
  v->err_split = v->err_rep + n;
  double *both = v->err_split + n;
  int st = predicted_rows(m, p, v);
  if (st != TPS_OK) return st;
  for (size_t i = 0; i < n; i++) {
    both[2 * i] = v->err_rep[i];
    both[2 * i + 1] = v->err_split[i];
  }
  v->rep = errsum_of(v->err_rep, n);
  v->split = errsum_of(v->err_split, n);
  v->all = errsum_of(both, 2 * n);
  v->pass = v->all.median <= tolerance;

  v->tmin = m->tokens[0];
  v->tmax = m->tokens[n - 1];
  table_diff dm, dp;
  tps_crossover cm, cp;
  if ((st = table_diff_init(&dm, m)) != TPS_OK) return st;
  st = tps_crossover_find(table_diff_at, &dm, v->tmin, v->tmax, &cm);
  table_diff_free(&dm);
  if (st == TPS_OK && p->table.n) {
    if ((st = table_diff_init(&dp, &p->table)) != TPS_OK) return st;
    st = tps_crossover_find(table_diff_at, &dp, v->tmin, v->tmax, &cp);
    table_diff_free(&dp);
  } else if (st == TPS_OK) {
    st = tps_crossover_find(model_diff, (void *)p, v->tmin, v->tmax, &cp);
  }
  if (st != TPS_OK) return TPS_EINVAL;
  v->breakeven_meas = cm.breakeven;
  v->breakeven_pred = cp.breakeven;
  v->breakeven_err = cm.breakeven > 0 && cp.breakeven > 0 ? (double)cp.breakeven / (double)cm.breakeven - 1 : NAN;
  /* the thresholds each side would write (least excess on its own costs over the measured range) */
  series_costs sm, sp;
  if ((st = series_costs_init(&sm, m, NULL, v->tmin, v->tmax)) != TPS_OK) return st;
  if ((st = series_costs_init(&sp, p->table.n ? &p->table : NULL, p, v->tmin, v->tmax)) != TPS_OK) {
    series_costs_free(&sm);
    return st;
  }
  v->threshold_meas = tps_threshold_round(series_threshold(&sm, v->tmax), rounding, v->tmax);
  v->threshold_pred = tps_threshold_round(series_threshold(&sp, v->tmax), rounding, v->tmax);
  series_costs_free(&sm);
  series_costs_free(&sp);
  v->first_winning_row = -1;
  for (size_t i = n; i-- > 0 && m->split_us[i] < m->replicated_us[i];) v->first_winning_row = m->tokens[i];
  return TPS_OK;
}

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
  v->threshold_meas = cm.breakeven > 0 ? tps_threshold(cm.breakeven, rounding) : -1;
  v->threshold_pred = cp.breakeven > 0 ? tps_threshold(cp.breakeven, rounding) : -1;
  v->first_winning_row = -1;
  for (size_t i = n; i-- > 0 && m->split_us[i] < m->replicated_us[i];) v->first_winning_row = m->tokens[i];
  return TPS_OK;
}

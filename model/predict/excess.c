/* excess.c: the cost of a split threshold (excess.h). */
#include "model/predict/excess.h"
#include <math.h>

size_t tps_excess_grid(long t_max, long *T, size_t cap) {
  size_t n = 0;
  if (t_max < 1) return 0;
  for (int i = 0; n < cap; i++) {
    double t = floor(exp2((double)i / TPS_EXCESS_PER_OCTAVE) + 0.5);
    if (t > (double)t_max) break;
    if (n == 0 || (long)t != T[n - 1]) T[n++] = (long)t;
  }
  return n;
}

/* The excess of one point; NaN when a cost is not usable. */
static double point_excess(double repl, double split, double threshold, long T) {
  if (!(repl > 0) || !(split > 0) || !isfinite(repl) || !isfinite(split)) return NAN;
  double chosen = (double)T >= threshold ? split : repl;
  return chosen / fmin(repl, split) - 1.0;
}

int tps_excess_sampled(const long *T, const double *replicated_us, const double *split_us, size_t n, double threshold,
                       tps_excess *out) {
  double sum = 0;
  out->n = 0;
  out->worst = NAN;
  out->t_worst = 0;
  for (size_t i = 0; i < n; i++) {
    double x = point_excess(replicated_us[i], split_us[i], threshold, T[i]);
    if (isnan(x)) continue;
    out->n++;
    sum += x;
    if (!(x <= out->worst)) { out->worst = x; out->t_worst = T[i]; }
  }
  out->mean = out->n ? sum / (double)out->n : NAN;
  return out->n ? 0 : -1;
}

/* Both costs on the grid up to t_max, into T, r, s (TPS_EXCESS_GRID_MAX each); how many. */
static size_t sample_costs(const tps_costs *c, long t_max, long *T, double *r, double *s) {
  size_t n = tps_excess_grid(t_max, T, TPS_EXCESS_GRID_MAX);
  for (size_t i = 0; i < n; i++) {
    r[i] = c->replicated_us(T[i], c->ctx);
    s[i] = c->split_us(T[i], c->ctx);
  }
  return n;
}

int tps_excess_eval(const tps_costs *c, double threshold, long t_max, tps_excess *out) {
  long T[TPS_EXCESS_GRID_MAX];
  double r[TPS_EXCESS_GRID_MAX], s[TPS_EXCESS_GRID_MAX];
  size_t n = sample_costs(c, t_max, T, r, s);
  return tps_excess_sampled(T, r, s, n, threshold, out);
}

static double target_score(const tps_excess *x, double mean_target, double worst_target) {
  return fmax(x->mean / mean_target, x->worst / worst_target);
}

int tps_excess_best(const tps_costs *c, long t_max, double mean_target, double worst_target, double *threshold,
                    tps_excess *out) {
  long T[TPS_EXCESS_GRID_MAX];
  double r[TPS_EXCESS_GRID_MAX], s[TPS_EXCESS_GRID_MAX];
  size_t n = sample_costs(c, t_max, T, r, s);
  *threshold = TPS_EXCESS_NEVER;
  if (tps_excess_sampled(T, r, s, n, TPS_EXCESS_NEVER, out) != 0) return -1;
  double best = target_score(out, mean_target, worst_target);
  for (size_t i = 0; i < n; i++) {
    tps_excess x;
    if (tps_excess_sampled(T, r, s, n, (double)T[i], &x) != 0) continue;
    double sc = target_score(&x, mean_target, worst_target);
    if (sc < best || (sc == best && (x.mean < out->mean || (x.mean == out->mean && x.worst < out->worst)))) {
      best = sc;
      *out = x;
      *threshold = (double)T[i];
    }
  }
  return 0;
}

double tps_split_flatness(const tps_costs *c, long t1, long t_max, long *t_at) {
  long T[TPS_EXCESS_GRID_MAX];
  size_t n = tps_excess_grid(t_max, T, TPS_EXCESS_GRID_MAX);
  double worst = NAN;
  if (t_at) *t_at = 0;
  for (size_t i = 0; i < n; i++) {
    if (T[i] < t1) continue;
    double r = c->replicated_us(T[i], c->ctx), s = c->split_us(T[i], c->ctx);
    if (!(r > 0) || !(s > 0) || !isfinite(r) || !isfinite(s)) continue;
    double d = fabs(s / r - 1.0);
    if (!(d <= worst)) { worst = d; if (t_at) *t_at = T[i]; }
  }
  return worst;
}

/* split < replicated at T, both usable */
static int split_wins(const tps_costs *c, long T) {
  double r = c->replicated_us(T, c->ctx), s = c->split_us(T, c->ctx);
  return r > 0 && s > 0 && isfinite(r) && isfinite(s) && s < r;
}

int tps_threshold_choose(const tps_costs *c, long t_max, long *threshold, tps_excess *out) {
  double best;
  *threshold = -1;
  if (tps_excess_best(c, t_max, TPS_EXCESS_TARGET_MEAN, TPS_EXCESS_TARGET_WORST, &best, out) != 0) return -1;
  if (!isfinite(best)) return 0;
  long T[TPS_EXCESS_GRID_MAX];
  size_t n = tps_excess_grid(t_max, T, TPS_EXCESS_GRID_MAX);
  long t = (long)best, floor_t = 0;
  for (size_t i = 0; i < n && T[i] < t; i++) floor_t = T[i];
  if (split_wins(c, t))
    while (t - 1 > floor_t && split_wins(c, t - 1)) t--;
  *threshold = t;
  return 0;
}

long tps_threshold_round(long threshold, long rounding, long t_max) {
  if (rounding <= 0 || threshold < 1) return threshold;
  long r = (threshold + rounding - 1) / rounding * rounding;
  return r > t_max ? -1 : r;
}

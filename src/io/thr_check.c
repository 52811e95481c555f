/* thr_check.c: the decision quality of a thresholds file in the check against full benches
 * (thresholds.h: tps_thr_excess_row; filled by src/cli/thr_excess.c): its printing and JSON. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/backend.h"
#include "model/core/path.h"
#include "src/io/thresholds.h"

static json_t *jnum(double x) {
  if (!isfinite(x)) return json_null();
  if (x == floor(x) && fabs(x) < 9e15) return json_integer((json_int_t)x);
  return json_real(x);
}

/* The largest mean and worst excess of a part's thresholds (NaN when none was scored); be: of
 * breakeven_tokens as the threshold. */
void tps_thr_check_excess_max(const tps_thr_check_row *r, int be, double *mean, double *worst) {
  *mean = *worst = NAN;
  for (size_t j = 0; j < r->nex; j++) {
    const tps_thr_excess_row *x = &r->ex[j];
    if (!x->npts) continue;
    double m = be ? x->be_mean : x->mean, w = be ? x->be_worst : x->worst;
    if (!(m <= *mean)) *mean = m;
    if (!(w <= *worst)) *worst = w;
  }
}

void tps_thr_pct_or_dash(FILE *fp, double v, int decimals) {
  if (isnan(v)) fprintf(fp, "\t-");
  else fprintf(fp, "\t%.*f%%", decimals, 100 * v);
}

static int ex_met(const tps_thr_excess_row *x) {
  return x->npts && x->mean <= TPS_THR_EXCESS_MEAN_TARGET && x->worst <= TPS_THR_EXCESS_WORST_TARGET;
}
static int best_met(const tps_thr_excess_row *x) {
  return x->npts && x->best_mean <= TPS_THR_EXCESS_MEAN_TARGET && x->best_worst <= TPS_THR_EXCESS_WORST_TARGET;
}
static int now_met(const tps_thr_excess_row *x) {
  return x->npts && x->now >= 0 && x->now_mean <= TPS_THR_EXCESS_MEAN_TARGET && x->now_worst <= TPS_THR_EXCESS_WORST_TARGET;
}

/* The thresholds of every part, each on its own line (after the table). */
void tps_thr_check_print_excess(FILE *fp, const tps_thr_check_row *rows, size_t n) {
  size_t nthr = 0, met = 0, nbest = 0, nnow = 0;
  for (size_t i = 0; i < n; i++) nthr += rows[i].nex;
  if (!nthr) return;
  fprintf(fp, "# decision quality: each threshold of the file on the bench's measured GEMM (Steffen in log-log of its rows)\n"
              "# and the gather calibrate used (gather: measured here, or the model): excess(T) = (split(T) if T >= threshold\n"
              "# else replicated(T)) / min(split(T), replicated(T)) - 1 over T = round(2^(i/8)) = 1..max_tokens; mean, worst and\n"
              "# the T of the worst ('-': nowhere), for split_from_tokens and for breakeven_tokens (the break-even as the\n"
              "# threshold); best: of never and every grid T, the threshold nearest the target on the same costs (where it\n"
              "# misses, no single threshold meets it); now: the threshold calibrate writes now from the file's calibrated GEMM\n"
              "# and the same gather (least excess on those costs, model/predict/excess.h; files written before 2026-12-06\n"
              "# hold the break-even rounded up to a power of two), scored the same way; target (issue 27): mean <= %.1f%%,\n"
              "# worst <= %.0f%% for split_from_tokens (n_target: for now)\n",
          100 * TPS_THR_EXCESS_MEAN_TARGET, 100 * TPS_THR_EXCESS_WORST_TARGET);
  fprintf(fp, "shape\tpath\ttp\tbackend\tgather\tsplit_from\tmean\tworst\tat_T\tbreakeven\tbe_mean\tbe_worst\tbe_at_T\tbest\tb_mean"
              "\tb_worst\ttarget\tnow\tn_mean\tn_worst\tn_target\n");
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < rows[i].nex; j++) {
      const tps_thr_excess_row *x = &rows[i].ex[j];
      fprintf(fp, "%ldx%ld\t%s\t%d\t%s\t%s", rows[i].k, rows[i].n, tps_path_name(rows[i].path), x->tp, tps_gather_name(x->backend),
              x->gather);
      if (x->split_from > 0) fprintf(fp, "\t%ld", x->split_from);
      else fprintf(fp, "\tnever");
      tps_thr_pct_or_dash(fp, x->npts ? x->mean : NAN, 2);
      tps_thr_pct_or_dash(fp, x->npts ? x->worst : NAN, 1);
      if (x->npts && x->worst > 0) fprintf(fp, "\t%ld", x->at);
      else fprintf(fp, "\t-");
      if (x->breakeven > 0) fprintf(fp, "\t%.0f", x->breakeven);
      else fprintf(fp, "\tnever");
      tps_thr_pct_or_dash(fp, x->npts ? x->be_mean : NAN, 2);
      tps_thr_pct_or_dash(fp, x->npts ? x->be_worst : NAN, 1);
      if (x->npts && x->be_worst > 0) fprintf(fp, "\t%ld", x->be_at);
      else fprintf(fp, "\t-");
      if (!x->npts || isnan(x->best)) fprintf(fp, "\t-");
      else if (isinf(x->best)) fprintf(fp, "\tnever");
      else fprintf(fp, "\t%.0f", x->best);
      tps_thr_pct_or_dash(fp, x->npts ? x->best_mean : NAN, 2);
      tps_thr_pct_or_dash(fp, x->npts ? x->best_worst : NAN, 1);
      fprintf(fp, "\t%s", ex_met(x) ? "met" : "missed");
      if (!x->npts || x->now < 0) fprintf(fp, "\t-");
      else if (x->now == 0) fprintf(fp, "\tnever");
      else fprintf(fp, "\t%ld", x->now);
      tps_thr_pct_or_dash(fp, x->npts && x->now >= 0 ? x->now_mean : NAN, 2);
      tps_thr_pct_or_dash(fp, x->npts && x->now >= 0 ? x->now_worst : NAN, 1);
      fprintf(fp, "\t%s\n", x->npts && x->now >= 0 ? now_met(x) ? "met" : "missed" : "-");
      met += (size_t)ex_met(x);
      nbest += (size_t)best_met(x);
      nnow += (size_t)now_met(x);
    }
  fprintf(fp, "# decision quality target met by %zu of %zu thresholds; by the best single threshold: %zu of %zu; by the threshold "
              "calibrate writes now: %zu of %zu\n", met, nthr, nbest, nthr, nnow, nthr);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < rows[i].nex; j++)
      if (!strcmp(rows[i].ex[j].gather, "model")) {
        fprintf(fp, "# gather 'model': not measured by calibrate; the model as this tpsplit builds it (a file written by\n"
                    "# another version may have used another: then its break-even is not this gather's)\n");
        return;
      }
}

json_t *tps_thr_check_excess_json(const tps_thr_check_row *r) {
  json_t *a = json_array();
  for (size_t j = 0; j < r->nex; j++) {
    const tps_thr_excess_row *x = &r->ex[j];
    json_t *o = json_object();
    json_object_set_new(o, "tp", json_integer(x->tp));
    json_object_set_new(o, "backend", json_string(tps_gather_name(x->backend)));
    json_object_set_new(o, "gather", json_string(x->gather));
    json_object_set_new(o, "split_from_tokens", x->split_from > 0 ? json_integer(x->split_from) : json_null());
    json_object_set_new(o, "breakeven_tokens", x->breakeven > 0 ? jnum(x->breakeven) : json_null());
    json_object_set_new(o, "points", json_integer((json_int_t)x->npts));
    json_object_set_new(o, "mean", jnum(x->npts ? x->mean : NAN));
    json_object_set_new(o, "worst", jnum(x->npts ? x->worst : NAN));
    json_object_set_new(o, "worst_at_tokens", x->npts ? json_integer(x->at) : json_null());
    json_object_set_new(o, "breakeven_mean", jnum(x->npts ? x->be_mean : NAN));
    json_object_set_new(o, "breakeven_worst", jnum(x->npts ? x->be_worst : NAN));
    json_object_set_new(o, "breakeven_worst_at_tokens", x->npts ? json_integer(x->be_at) : json_null());
    json_object_set_new(o, "best_tokens", x->npts && isfinite(x->best) ? jnum(x->best) : json_null());
    json_object_set_new(o, "best_mean", jnum(x->npts ? x->best_mean : NAN));
    json_object_set_new(o, "best_worst", jnum(x->npts ? x->best_worst : NAN));
    json_object_set_new(o, "target_met", json_boolean(ex_met(x)));
    json_object_set_new(o, "now_tokens", x->npts && x->now > 0 ? json_integer(x->now) : json_null());
    json_object_set_new(o, "now_mean", jnum(x->npts && x->now >= 0 ? x->now_mean : NAN));
    json_object_set_new(o, "now_worst", jnum(x->npts && x->now >= 0 ? x->now_worst : NAN));
    json_object_set_new(o, "now_target_met", json_boolean(now_met(x)));
    json_array_append_new(a, o);
  }
  return a;
}

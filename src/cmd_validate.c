/* cmd_validate.c: `tpsplit validate --predicted FIT_OR_PREDICTION --measured FILE`, the
 * comparison of a prediction with a measured split table (ours from `bench split`, or the
 * bundled H20 one).  CPU only.
 *
 * Prediction, one of:
 *   - a fit file (`tpsplit fit -o`): on the measured GPU, TP and path it is evaluated
 *     directly (tps_fit_replicated_us / tps_fit_split_us, with their standard errors);
 *     elsewhere it is transferred with predict's model scaling (tps_pred_init_model);
 *   - a split table of predicted times (same columns as a measured one, e.g. written by
 *     `tpsplit predict`), which must hold every measured token count.
 * Per measured token count T:  err = predicted / measured - 1, for replicated and split.
 *
 * Break-even (the same rule for both sides, so they compare): on the measured range
 * [Tmin, Tmax], d(T) = split(T) - replicated(T) (measured: interpolated linearly in log T
 * between the measured rows; fit: the model at every integer T; table: interpolated like
 * the measurement), and tps_crossover_find gives the smallest T0 with d < 0 on all of
 * [T0, Tmax] (-1: the split does not win at Tmax).  Also reported: the first measured row
 * from which the split keeps winning.  Retuned threshold: tps_threshold (next power of two
 * >= the measured break-even, or --round N).
 * Summary: median, maximum and RMS of |err| per series and over both; the verdict passes
 * when the median |err| over both series is <= --tolerance (default 0.25): exit 0, else 1.
 * Units: us; errors are fractions (text output prints percent). */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "jsonout.h"
#include "table.h"
#include "gpus.h"
#include "fitfile.h"
#include "fit.h"
#include "predict.h"
#include "allgather.h"

typedef struct {
  const long *t;
  const double *d; /* split - replicated at t */
  size_t n;
} interp_t;

/* d(T) interpolated linearly in log T between the rows (T inside [t0, t_last]). */
static double interp_diff(long T, void *arg) {
  const interp_t *a = (const interp_t *)arg;
  if (T <= a->t[0]) return a->d[0];
  for (size_t i = 1; i < a->n; i++) {
    if (T <= a->t[i]) {
      const double f = log((double)T / (double)a->t[i - 1]) / log((double)a->t[i] / (double)a->t[i - 1]);
      return a->d[i - 1] + f * (a->d[i] - a->d[i - 1]);
    }
  }
  return a->d[a->n - 1];
}

typedef struct {
  const tps_fit *fit; /* direct */
  const tps_pred *pred; /* transferred */
} model_t;

static double model_rep(const model_t *m, long T, double *se) {
  if (m->fit) return tps_fit_replicated_us(m->fit, T, se);
  if (se) *se = NAN;
  return tps_pred_replicated_us(m->pred, T);
}
static double model_split(const model_t *m, long T, double *se, int *backend) {
  if (m->fit) return tps_fit_split_us(m->fit, T, se, backend);
  if (se) *se = NAN;
  return tps_pred_split_us(m->pred, T, backend);
}
static double model_diff(long T, void *arg) {
  const model_t *m = (const model_t *)arg;
  return model_split(m, T, NULL, NULL) - model_rep(m, T, NULL);
}

typedef struct {
  double median, max, rms;
} errsum;

static errsum summarize(const double *err, size_t n) {
  errsum s = {NAN, NAN, NAN};
  if (!n) return s;
  double *a = (double *)malloc(n * sizeof *a);
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

static json_t *errsum_json(errsum s) {
  json_t *o = json_object();
  tps_json_set_num(o, "median_abs", s.median);
  tps_json_set_num(o, "max_abs", s.max);
  tps_json_set_num(o, "rms", s.rms);
  return o;
}

/* 1 when the file is a fit file (by the header its writer puts first; src/fitfile.c). */
static int is_fit_file(const char *path) { return tps_fitfile_is_fit(path); }

static void usage(FILE *fp) {
  fputs("Usage: tpsplit validate --predicted FIT_OR_PREDICTION --measured FILE [--gpus FILE]\n"
        "                        [--tolerance F] [--round N] [--json]\n"
        "Compare a prediction with a measured split-vs-replicated table: per token count the\n"
        "predicted and measured replicated and split times and their errors (predicted/measured\n"
        "- 1), the predicted and measured break-even, the retuned threshold, and summary errors.\n\n"
        "  --predicted P   a fit file (tpsplit fit -o), evaluated on the measured GPU, TP and path\n"
        "                  (directly when they are the fit's, else transferred with predict's model\n"
        "                  scaling), or a split table of predicted times holding every measured\n"
        "                  token count\n"
        "  --measured F    split table (tokens rows_per_rank replicated_us split_us, '#@' metadata\n"
        "                  gpu, tp, path), e.g. from tpsplit bench split\n"
        "  --gpus FILE     GPU table (default: the bundled gpus.tsv)\n"
        "  --tolerance F   pass when the median |error| over both series is <= F (default 0.25)\n"
        "  --round N       threshold = next multiple of N >= break-even (default: next power of 2)\n"
        "  --json          JSON on stdout (errors as fractions, times in us, NaN as null)\n\n"
        "Break-even: smallest T from which the split wins up to the largest measured T, with\n"
        "split - replicated interpolated linearly in log T between measured rows; -1 (never)\n"
        "when the split does not win there.\n"
        "Exit status: 0 within tolerance, 1 outside it, 2 usage or input error.\n",
        fp);
}

int cmd_validate(int argc, char **argv) {
  static const struct option lo[] = {{"predicted", required_argument, 0, 'p'}, {"measured", required_argument, 0, 'm'},
                                     {"gpus", required_argument, 0, 'g'},      {"tolerance", required_argument, 0, 't'},
                                     {"round", required_argument, 0, 'r'},     {"json", no_argument, 0, 'j'},
                                     {"help", no_argument, 0, 'h'},            {"version", no_argument, 0, 'V'},
                                     {0, 0, 0, 0}};
  const char *pred_path = NULL, *meas_path = NULL, *gpus_path = NULL;
  double tol = 0.25;
  long rounding = 0;
  int json = 0, c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (c) {
    case 'p': pred_path = optarg; break;
    case 'm': meas_path = optarg; break;
    case 'g': gpus_path = optarg; break;
    case 't':
      if (tps_parse_double(optarg, &tol) || !(tol > 0)) { tps_die_msg("validate: --tolerance '%s': a number > 0", optarg); return TPS_EXIT_USAGE; }
      break;
    case 'r':
      if (tps_opt_long("validate", "round", optarg, 1, TPS_TOKENS_MAX, "the longest scan of the model", &rounding)) return TPS_EXIT_USAGE;
      break;
    case 'j': json = 1; break;
    case 'h': usage(stdout); return TPS_EXIT_OK;
    case 'V': return tps_print_version("validate");
    case ':': tps_die_msg("validate: option '%s' needs a value", argv[optind - 1]); return TPS_EXIT_USAGE;
    default: tps_die_msg("validate: bad option '%s'", argv[optind - 1]); return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("validate: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (!pred_path || !meas_path) { tps_die_msg("validate: --predicted and --measured are required"); return TPS_EXIT_USAGE; }

  int rc = TPS_EXIT_USAGE;
  tps_err e;
  tps_err_clear(&e);
  tps_table meas, ptab;
  tps_gpu_table gt;
  tps_fit *fit = NULL;
  tps_pred pred;
  int have_pred = 0, have_ptab = 0, have_gt = 0;
  double *err_rep = NULL, *err_split = NULL, *err_all = NULL, *dmeas = NULL, *dpred = NULL;
  memset(&meas, 0, sizeof meas);
  memset(&ptab, 0, sizeof ptab);
  memset(&pred, 0, sizeof pred);
  json_t *root = NULL;

  if (tps_table_read(meas_path, &meas, &e) != 0) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  do {
    if (meas.kind != TPS_TABLE_SPLIT) {
      tps_err_set(&e, meas_path, 0, "a %s table: validate needs a split table (tokens rows_per_rank replicated_us split_us)",
                  tps_table_kind_names[meas.kind]);
      break;
    }
    if (meas.tp < 1) { tps_err_set(&e, meas_path, 0, "no '#@ tp:' metadata line"); break; }
    if (meas.nrows < 2) { tps_err_set(&e, meas_path, 0, "%zu row: at least 2 token counts are needed", meas.nrows); break; }
    const size_t n = meas.nrows;
    model_t model = {NULL, NULL};
    char desc[512];
    if (is_fit_file(pred_path)) {
      fit = (tps_fit *)calloc(1, sizeof *fit);
      if (!fit) { rc = TPS_EXIT_FAIL; break; }
      if (tps_fitfile_read(pred_path, fit, &e) != 0) break;
      if (fit->shape.k != meas.k || fit->shape.n != meas.n) {
        tps_err_set(&e, pred_path, 0, "fit of K=%ld N=%ld, measured %s is K=%ld N=%ld", fit->shape.k, fit->shape.n,
                    meas_path, meas.k, meas.n);
        break;
      }
      if (tps_gpus_load(gpus_path, &gt, &e) != 0) break;
      have_gt = 1;
      const tps_gpu *fg = tps_gpus_find(&gt, fit->gpu, &e);
      if (!fg) break;
      const tps_gpu *mg = tps_gpus_find(&gt, meas.gpu, &e);
      if (!mg) { tps_err_set(&e, meas_path, 0, "unknown GPU '%s' in '#@ gpu:'", meas.gpu); break; }
      const tps_path *mp = meas.kpath[0] ? tps_path_find(meas.kpath) : fit->gemm.path;
      if (!mp) { tps_err_set(&e, meas_path, 0, "unknown kernel path '%s' in '#@ path:'", meas.kpath); break; }
      if (fg == mg && fit->tp == meas.tp && mp == fit->gemm.path) {
        model.fit = fit;
        snprintf(desc, sizeof desc, "fit %s (%s, TP%d, %s), evaluated directly", pred_path, fit->gpu, fit->tp, mp->name);
      } else {
        tps_pred_opts po;
        tps_pred_opts_default(&po);
        po.backend = !strcmp(meas.gather, "nccl") ? TPS_GATHER_NCCL : !strcmp(meas.gather, "custom") ? TPS_GATHER_CUSTOM : TPS_GATHER_AUTO;
        po.cap_bytes = meas.gather_cap_bytes;
        int st = tps_pred_init_model(&pred, fit, fg, mg, meas.tp, mp, &po);
        have_pred = 1;
        if (st != TPS_PRED_OK) {
          tps_err_set(&e, pred_path, 0, "cannot predict %s TP%d %s from this fit: %s", mg->name, meas.tp, mp->name,
                      pred.why[0] ? pred.why : "invalid input");
          break;
        }
        model.pred = &pred;
        snprintf(desc, sizeof desc, "fit %s (%s, TP%d, %s) transferred to %s TP%d %s (model scaling)", pred_path, fit->gpu,
                 fit->tp, fit->gemm.path ? fit->gemm.path->name : "?", mg->name, meas.tp, mp->name);
      }
    } else {
      if (tps_table_read(pred_path, &ptab, &e) != 0) break;
      have_ptab = 1;
      if (ptab.kind != TPS_TABLE_SPLIT) {
        tps_err_set(&e, pred_path, 0, "neither a fit file nor a split table (a %s table)", tps_table_kind_names[ptab.kind]);
        break;
      }
      if (ptab.tp != meas.tp) { tps_err_set(&e, pred_path, 0, "predicted for TP%d, measured %s is TP%d", ptab.tp, meas_path, meas.tp); break; }
      snprintf(desc, sizeof desc, "table %s (%s, TP%d)", pred_path, ptab.gpu[0] ? ptab.gpu : "?", ptab.tp);
    }

    /* per token count */
    err_rep = (double *)calloc(n, sizeof(double));
    err_split = (double *)calloc(n, sizeof(double));
    err_all = (double *)calloc(2 * n, sizeof(double));
    dmeas = (double *)calloc(n, sizeof(double));
    double *prep = (double *)calloc(n, sizeof(double)), *psplit = (double *)calloc(n, sizeof(double));
    double *se_rep = (double *)calloc(n, sizeof(double)), *se_split = (double *)calloc(n, sizeof(double));
    int *backend = (int *)calloc(n, sizeof(int));
    if (!err_rep || !err_split || !err_all || !dmeas || !prep || !psplit || !se_rep || !se_split || !backend) {
      free(prep); free(psplit); free(se_rep); free(se_split); free(backend);
      rc = TPS_EXIT_FAIL;
      break;
    }
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
      const long T = meas.tokens[i];
      backend[i] = -1;
      if (have_ptab) {
        size_t j;
        for (j = 0; j < ptab.nrows && ptab.tokens[j] != T; j++) {}
        if (j == ptab.nrows) {
          tps_err_set(&e, pred_path, 0, "no prediction for %ld tokens (measured in %s line %ld)", T, meas_path, meas.line[i]);
          bad = 1;
          break;
        }
        prep[i] = ptab.replicated_us[j];
        psplit[i] = ptab.split_us[j];
        se_rep[i] = se_split[i] = NAN;
      } else {
        prep[i] = model_rep(&model, T, &se_rep[i]);
        psplit[i] = model_split(&model, T, &se_split[i], &backend[i]);
        if (!isfinite(prep[i]) || !isfinite(psplit[i])) {
          tps_err_set(&e, pred_path, 0, "the model gives no value at %ld tokens", T);
          bad = 1;
        }
      }
      err_rep[i] = prep[i] / meas.replicated_us[i] - 1;
      err_split[i] = psplit[i] / meas.split_us[i] - 1;
      err_all[2 * i] = err_rep[i];
      err_all[2 * i + 1] = err_split[i];
      dmeas[i] = meas.split_us[i] - meas.replicated_us[i];
    }
    if (bad) { free(prep); free(psplit); free(se_rep); free(se_split); free(backend); break; }

    /* break-even on [Tmin, Tmax] */
    const long tmin = meas.tokens[0], tmax = meas.tokens[n - 1];
    interp_t im = {meas.tokens, dmeas, n};
    tps_crossover cm, cp;
    int st = tps_crossover_find(interp_diff, &im, tmin, tmax, &cm);
    if (st == 0) {
      if (have_ptab) {
        dpred = (double *)calloc(ptab.nrows, sizeof(double));
        if (!dpred) { st = -1; }
        else {
          for (size_t j = 0; j < ptab.nrows; j++) dpred[j] = ptab.split_us[j] - ptab.replicated_us[j];
          interp_t ip = {ptab.tokens, dpred, ptab.nrows};
          st = tps_crossover_find(interp_diff, &ip, tmin, tmax, &cp);
        }
      } else {
        st = tps_crossover_find(model_diff, &model, tmin, tmax, &cp);
      }
    }
    if (st != 0) {
      tps_err_set(&e, pred_path, 0, "break-even: the prediction is not a number somewhere in [%ld, %ld]", tmin, tmax);
      free(prep); free(psplit); free(se_rep); free(se_split); free(backend);
      break;
    }
    long first_row = -1; /* first measured row from which the split keeps winning */
    for (size_t i = n; i-- > 0;) {
      if (dmeas[i] < 0) first_row = meas.tokens[i];
      else break;
    }
    const long be_m = cm.breakeven, be_p = cp.breakeven;
    const long thr_m = be_m > 0 ? tps_threshold(be_m, rounding) : -1, thr_p = be_p > 0 ? tps_threshold(be_p, rounding) : -1;
    const double be_err = be_m > 0 && be_p > 0 ? (double)be_p / (double)be_m - 1 : NAN;
    const errsum s_rep = summarize(err_rep, n), s_split = summarize(err_split, n), s_all = summarize(err_all, 2 * n);
    const int pass = s_all.median <= tol;

    if (json) {
      root = json_object();
      json_object_set_new(root, "predicted", json_string(pred_path));
      json_object_set_new(root, "predicted_kind", json_string(have_ptab ? "table" : model.fit ? "fit" : "fit-transferred"));
      json_object_set_new(root, "measured", json_string(meas_path));
      json_object_set_new(root, "gpu", json_string(meas.gpu));
      json_object_set_new(root, "tp", json_integer(meas.tp));
      json_object_set_new(root, "path", json_string(meas.kpath));
      json_t *rows = json_array();
      for (size_t i = 0; i < n; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "tokens", json_integer(meas.tokens[i]));
        json_object_set_new(r, "rows_per_rank", json_integer(meas.rows_per_rank[i]));
        tps_json_set_num(r, "measured_replicated_us", meas.replicated_us[i]);
        tps_json_set_num(r, "predicted_replicated_us", prep[i]);
        tps_json_set_num(r, "predicted_replicated_se_us", se_rep[i]);
        tps_json_set_num(r, "err_replicated", err_rep[i]);
        tps_json_set_num(r, "measured_split_us", meas.split_us[i]);
        tps_json_set_num(r, "predicted_split_us", psplit[i]);
        tps_json_set_num(r, "predicted_split_se_us", se_split[i]);
        tps_json_set_num(r, "err_split", err_split[i]);
        json_object_set_new(r, "predicted_gather",
                            backend[i] < 0 ? json_null() : json_string(tps_gather_name(backend[i])));
        json_array_append_new(rows, r);
      }
      json_object_set_new(root, "rows", rows);
      json_t *be = json_object();
      json_object_set_new(be, "measured", json_integer(be_m));
      json_object_set_new(be, "predicted", json_integer(be_p));
      tps_json_set_num(be, "err", be_err);
      json_object_set_new(be, "first_winning_measured_row", json_integer(first_row));
      json_object_set_new(be, "tmin", json_integer(tmin));
      json_object_set_new(be, "tmax", json_integer(tmax));
      json_object_set_new(root, "breakeven", be);
      json_t *th = json_object();
      json_object_set_new(th, "measured", json_integer(thr_m));
      json_object_set_new(th, "predicted", json_integer(thr_p));
      json_object_set_new(th, "rounding", json_integer(rounding));
      json_object_set_new(root, "threshold", th);
      json_t *sm = json_object();
      json_object_set_new(sm, "replicated", errsum_json(s_rep));
      json_object_set_new(sm, "split", errsum_json(s_split));
      json_object_set_new(sm, "all", errsum_json(s_all));
      json_object_set_new(root, "summary", sm);
      tps_json_set_num(root, "tolerance", tol);
      json_object_set_new(root, "pass", json_boolean(pass));
      rc = tps_json_print(root) == 0 ? (pass ? TPS_EXIT_OK : TPS_EXIT_FAIL) : TPS_EXIT_FAIL;
      root = NULL;
    } else {
      printf("# predicted: %s\n# measured:  %s (%s, TP%d, %s, gather %s)\n", desc, meas_path, meas.gpu[0] ? meas.gpu : "?",
             meas.tp, meas.kpath[0] ? meas.kpath : "?", meas.gather[0] ? meas.gather : "?");
      printf("# err = predicted / measured - 1; times in us\n");
      printf("%8s %6s %12s %12s %8s %12s %12s %8s %7s\n", "tokens", "rows", "meas_rep", "pred_rep", "err_rep", "meas_split",
             "pred_split", "err_spl", "gather");
      for (size_t i = 0; i < n; i++)
        printf("%8ld %6ld %12.2f %12.2f %+7.1f%% %12.2f %12.2f %+7.1f%% %7s\n", meas.tokens[i], meas.rows_per_rank[i],
               meas.replicated_us[i], prep[i], 100 * err_rep[i], meas.split_us[i], psplit[i], 100 * err_split[i],
               backend[i] < 0 ? "-" : tps_gather_name(backend[i]));
      printf("break-even on [%ld, %ld] tokens (split - replicated interpolated in log T): measured ", tmin, tmax);
      if (be_m > 0) printf("%ld", be_m); else printf("never");
      printf(", predicted ");
      if (be_p > 0) printf("%ld", be_p); else printf("never");
      if (isfinite(be_err)) printf(" (%+.1f%%)", 100 * be_err);
      printf("\n");
      if (first_row > 0) printf("first measured row from which the split keeps winning: %ld tokens\n", first_row);
      else printf("the split does not win at the largest measured row\n");
      char tm[32] = "none", tpd[32] = "none";
      if (thr_m > 0) snprintf(tm, sizeof tm, "%ld", thr_m);
      if (thr_p > 0) snprintf(tpd, sizeof tpd, "%ld", thr_p);
      printf("threshold (%s >= break-even): measured %s, predicted %s%s\n",
             rounding ? "next multiple" : "next power of two", tm, tpd, thr_m == thr_p ? " (agree)" : " (differ)");
      printf("|err| replicated: median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * s_rep.median, 100 * s_rep.max, 100 * s_rep.rms);
      printf("|err| split:      median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * s_split.median, 100 * s_split.max, 100 * s_split.rms);
      printf("|err| both:       median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * s_all.median, 100 * s_all.max, 100 * s_all.rms);
      printf("verdict: %s (median |err| %.1f%% %s tolerance %.1f%%)\n", pass ? "within tolerance" : "OUTSIDE tolerance",
             100 * s_all.median, pass ? "<=" : ">", 100 * tol);
      rc = pass ? TPS_EXIT_OK : TPS_EXIT_FAIL;
    }
    free(prep); free(psplit); free(se_rep); free(se_split); free(backend);
  } while (0);
  if (e.set) tps_err_print(&e);
  if (root) json_decref(root);
  free(err_rep);
  free(err_split);
  free(err_all);
  free(dmeas);
  free(dpred);
  if (have_pred) tps_pred_free(&pred);
  free(fit);
  if (have_ptab) tps_table_free(&ptab);
  if (have_gt) tps_gpus_free(&gt);
  tps_table_free(&meas);
  return rc;
}

/* cmd_validate.c: `tpsplit validate --predicted FIT_OR_PREDICTION --measured FILE`, the
 * comparison of a prediction with a measured split table (ours from `bench split`, or the
 * bundled H20 one).  CPU only.
 *
 * Prediction, one of:
 *   - a fit file (`tpsplit fit -o`): on the measured GPU, TP and path it is evaluated
 *     directly (tps_fit_replicated_us / tps_fit_split_us, with their standard errors);
 *     elsewhere it is transferred with predict's model scaling (tps_pred_init_model);
 *   - a split table of predicted times (same columns as a measured one, e.g. written by
 *     `tpsplit predict -o FILE`), or `tpsplit predict`'s printed text (src/io/predfile.h: space-
 *     aligned, which the TAB-separated table reader cannot take), holding every measured
 *     token count.
 * The comparison (errors, break-evens, thresholds, verdict) is model/predict/validate.h; this file
 * reads the inputs and prints the result.
 *
 * `tpsplit validate --calibration FILE BENCH.tsv...`: a calibrate result (the thresholds
 * file of `tpsplit calibrate -o`, with its calibration section) against full `bench gemm`
 * tables: per part (shape and path) the calibrated GEMM model's median and max |error| over
 * the bench rows outside the sweep, within tolerance when median <= 4% and max <= 10%
 * (--calibration-tolerance); src/io/thresholds.h tps_thr_check, as `calibrate --check`. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/io/table.h"
#include "src/io/gpus.h"
#include "src/io/fitfile.h"
#include "src/io/measure.h"
#include "model/fit/fit.h"
#include "model/predict/predict.h"
#include "model/latency/allgather.h"
#include "model/predict/validate.h"
#include "src/io/predfile.h"
#include "src/io/thresholds.h"
#include "src/cli/thr_excess.h"

static json_t *errsum_json(tps_errsum s) {
  json_t *o = json_object();
  tps_json_set_num(o, "median_abs", s.median);
  tps_json_set_num(o, "max_abs", s.max);
  tps_json_set_num(o, "rms", s.rms);
  return o;
}

/* 1 when the file is a fit file (by the header its writer puts first; src/io/fitfile.c). */
static int is_fit_file(const char *path) { return tps_meas_sniff_spec(path) == TPS_MEAS_FIT; } /* the one sniffer */

/* The prediction to validate and the measurement, as read. */
typedef struct {
  const char *pred_path, *meas_path;
  tps_table meas, ptab;
  int have_ptab, have_gt, have_pred;
  tps_gpu_table gt;
  tps_fit *fit;
  tps_pred pred;
  const tps_fit *direct;        /* the fit, evaluated on its own GPU, TP and path */
  const tps_pred *transferred;  /* the fit transferred to the measured GPU, TP or path */
  char desc[512];               /* what the prediction is, for the header line */
} vinput;

static void vinput_free(vinput *in) {
  if (in->have_pred) tps_pred_free(&in->pred);
  free(in->fit);
  if (in->have_ptab) tps_table_free(&in->ptab);
  if (in->have_gt) tps_gpus_free(&in->gt);
  tps_table_free(&in->meas);
}

/* The prediction is a fit file: evaluated directly or transferred.  0, or -1 with e. */
static int load_fit(vinput *in, const char *gpus_path, tps_err *e) {
  in->fit = (tps_fit *)calloc(1, sizeof *in->fit);
  if (!in->fit) return tps_err_set(e, NULL, 0, "out of memory");
  if (tps_fitfile_read(in->pred_path, in->fit, e) != 0) return -1;
  if (in->fit->shape.k != in->meas.k || in->fit->shape.n != in->meas.n) {
    tps_err_set(e, in->pred_path, 0, "fit of K=%ld N=%ld, measured %s is K=%ld N=%ld", in->fit->shape.k, in->fit->shape.n,
                in->meas_path, in->meas.k, in->meas.n);
    return -1;
  }
  if (tps_gpus_load(gpus_path, &in->gt, e) != 0) return -1;
  in->have_gt = 1;
  const tps_gpu *fg = tps_gpus_find(&in->gt, in->fit->gpu, e);
  if (!fg) return -1;
  const tps_gpu *mg = tps_gpus_find(&in->gt, in->meas.gpu, e);
  if (!mg) { tps_err_set(e, in->meas_path, 0, "unknown GPU '%s' in '#@ gpu:'", in->meas.gpu); return -1; }
  const tps_path *mp = in->meas.kpath[0] ? tps_path_find(in->meas.kpath) : in->fit->gemm.path;
  if (!mp) { tps_err_set(e, in->meas_path, 0, "unknown kernel path '%s' in '#@ path:'", in->meas.kpath); return -1; }
  int mb = in->meas.gather[0] ? tps_gather_parse(in->meas.gather) : -1;
  if (fg == mg && in->fit->tp == in->meas.tp && mp == in->fit->gemm.path && mb >= 0 && mb != in->fit->gather) {
    tps_err_set(e, in->pred_path, 0, "fit of gather backend %s, measured %s is gather backend %s: not the same setup",
                tps_gather_name(in->fit->gather), in->meas_path, tps_gather_name(mb));
    return -1;
  }
  if (fg == mg && in->fit->tp == in->meas.tp && mp == in->fit->gemm.path) {
    in->direct = in->fit;
    snprintf(in->desc, sizeof in->desc, "fit %s (%s, TP%d, %s), evaluated directly", in->pred_path, in->fit->gpu, in->fit->tp, mp->name);
  } else {
    tps_pred_opts po;
    tps_pred_opts_default(&po);
    po.backend = tps_gather_parse(in->meas.gather);
    if (po.backend < 0) po.backend = tps_gather_rule(); /* no '#@ gather' metadata */
    po.cap_bytes = in->meas.gather_cap_bytes;
    int st = tps_pred_init_model(&in->pred, in->fit, fg, mg, in->meas.tp, mp, &po);
    in->have_pred = 1;
    if (st != TPS_OK) {
      tps_err_set(e, in->pred_path, 0, "cannot predict %s TP%d %s from this fit: %s", mg->name, in->meas.tp, mp->name,
                  in->pred.why[0] ? in->pred.why : "invalid input");
      return -1;
    }
    in->transferred = &in->pred;
    snprintf(in->desc, sizeof in->desc, "fit %s (%s, TP%d, %s) transferred to %s TP%d %s (model scaling)", in->pred_path, in->fit->gpu,
             in->fit->tp, in->fit->gemm.path ? in->fit->gemm.path->name : "?", mg->name, in->meas.tp, mp->name);
  }
  return 0;
}

/* A prediction table is compared row by row with the measurement, so both must be of one
 * setup: GPU (names resolved through the GPU table, so aliases agree), kernel path, shape,
 * gather backend and bench harness ('#@ harness:').  What one of them does not say is not
 * compared.  0, or -1 with e naming both files. */
static int same_setup(vinput *in, const char *gpus_path, tps_err *e) {
  const tps_table *p = &in->ptab, *m = &in->meas;
  char pv[96] = "", mv[96] = "";
  const char *what = NULL;
  if (p->gpu[0] && m->gpu[0] && strcasecmp(p->gpu, m->gpu) != 0) {
    if (!in->have_gt && tps_gpus_load(gpus_path, &in->gt, e) != 0) return -1;
    in->have_gt = 1;
    tps_err ignore;
    const tps_gpu *pg = tps_gpus_find(&in->gt, p->gpu, &ignore), *mg = tps_gpus_find(&in->gt, m->gpu, &ignore);
    if (!pg || !mg || pg != mg) { what = "GPU"; snprintf(pv, sizeof pv, "%s", p->gpu); snprintf(mv, sizeof mv, "%s", m->gpu); }
  }
  const tps_path *pp = p->kpath[0] ? tps_path_find(p->kpath) : NULL, *mp = m->kpath[0] ? tps_path_find(m->kpath) : NULL;
  if (!what && p->kpath[0] && m->kpath[0] && (pp != mp || !pp) && strcmp(p->kpath, m->kpath) != 0) {
    what = "kernel path";
    snprintf(pv, sizeof pv, "%s", p->kpath);
    snprintf(mv, sizeof mv, "%s", m->kpath);
  }
  if (!what && p->k > 0 && m->k > 0 && p->n > 0 && m->n > 0 && (p->k != m->k || p->n != m->n)) {
    what = "shape";
    snprintf(pv, sizeof pv, "K=%ld N=%ld", p->k, p->n);
    snprintf(mv, sizeof mv, "K=%ld N=%ld", m->k, m->n);
  }
  int pb = p->gather[0] ? tps_gather_parse(p->gather) : -1, mb = m->gather[0] ? tps_gather_parse(m->gather) : -1;
  if (!what && p->gather[0] && m->gather[0] && (pb != mb || pb < 0) && strcmp(p->gather, m->gather) != 0) {
    what = "gather backend";
    snprintf(pv, sizeof pv, "%s", p->gather);
    snprintf(mv, sizeof mv, "%s", m->gather);
  }
  const char *ph = tps_table_meta(p, "harness"), *mh = tps_table_meta(m, "harness");
  if (!what && ph && mh && strcmp(ph, mh) != 0) {
    what = "harness";
    snprintf(pv, sizeof pv, "%s", ph);
    snprintf(mv, sizeof mv, "%s", mh);
  }
  if (!what) return 0;
  return tps_err_set(e, in->pred_path, 0, "predicted for %s %s, measured %s is %s %s: not the same setup", what, pv,
                     in->meas_path, what, mv);
}

/* The prediction is a split table of predicted times.  0, or -1 with e. */
static int load_table(vinput *in, const char *gpus_path, tps_err *e) {
  if ((tps_predtext_is(in->pred_path) ? tps_predtext_read(in->pred_path, &in->ptab, e) : tps_table_read(in->pred_path, &in->ptab, e)) != 0)
    return -1;
  in->have_ptab = 1;
  if (in->ptab.kind != TPS_TABLE_SPLIT) {
    tps_err_set(e, in->pred_path, 0, "neither a fit file nor a split table (a %s table)", tps_table_kind_names[in->ptab.kind]);
    return -1;
  }
  if (in->ptab.tp != in->meas.tp) { tps_err_set(e, in->pred_path, 0, "predicted for TP%d, measured %s is TP%d", in->ptab.tp, in->meas_path, in->meas.tp); return -1; }
  if (same_setup(in, gpus_path, e)) return -1;
  snprintf(in->desc, sizeof in->desc, "table %s (%s, TP%d)", in->pred_path, in->ptab.gpu[0] ? in->ptab.gpu : "?", in->ptab.tp);
  return 0;
}

static int print_json(const vinput *in, const tps_validation *r, double tol, long rounding) {
  const tps_table *meas = &in->meas;
  json_t *root = json_object();
  json_object_set_new(root, "predicted", json_string(in->pred_path));
  json_object_set_new(root, "predicted_kind", json_string(in->have_ptab ? "table" : in->direct ? "fit" : "fit-transferred"));
  json_object_set_new(root, "measured", json_string(in->meas_path));
  json_object_set_new(root, "gpu", json_string(meas->gpu));
  json_object_set_new(root, "tp", json_integer(meas->tp));
  json_object_set_new(root, "path", json_string(meas->kpath));
  json_t *rows = json_array();
  for (size_t i = 0; i < r->n; i++) {
    json_t *row = json_object();
    json_object_set_new(row, "tokens", json_integer(meas->tokens[i]));
    json_object_set_new(row, "rows_per_rank", json_integer(meas->rows_per_rank[i]));
    tps_json_set_num(row, "measured_replicated_us", meas->replicated_us[i]);
    tps_json_set_num(row, "predicted_replicated_us", r->pred_rep_us[i]);
    tps_json_set_num(row, "predicted_replicated_se_us", r->se_rep_us[i]);
    tps_json_set_num(row, "err_replicated", r->err_rep[i]);
    tps_json_set_num(row, "measured_split_us", meas->split_us[i]);
    tps_json_set_num(row, "predicted_split_us", r->pred_split_us[i]);
    tps_json_set_num(row, "predicted_split_se_us", r->se_split_us[i]);
    tps_json_set_num(row, "err_split", r->err_split[i]);
    json_object_set_new(row, "predicted_gather",
                        r->backend[i] < 0 ? json_null() : json_string(tps_gather_name(r->backend[i])));
    json_array_append_new(rows, row);
  }
  json_object_set_new(root, "rows", rows);
  json_t *be = json_object();
  json_object_set_new(be, "measured", json_integer(r->breakeven_meas));
  json_object_set_new(be, "predicted", json_integer(r->breakeven_pred));
  tps_json_set_num(be, "err", r->breakeven_err);
  json_object_set_new(be, "first_winning_measured_row", json_integer(r->first_winning_row));
  json_object_set_new(be, "tmin", json_integer(r->tmin));
  json_object_set_new(be, "tmax", json_integer(r->tmax));
  json_object_set_new(root, "breakeven", be);
  json_t *th = json_object();
  json_object_set_new(th, "measured", json_integer(r->threshold_meas));
  json_object_set_new(th, "predicted", json_integer(r->threshold_pred));
  json_object_set_new(th, "rounding", json_integer(rounding));
  json_object_set_new(root, "threshold", th);
  json_t *sm = json_object();
  json_object_set_new(sm, "replicated", errsum_json(r->rep));
  json_object_set_new(sm, "split", errsum_json(r->split));
  json_object_set_new(sm, "all", errsum_json(r->all));
  json_object_set_new(root, "summary", sm);
  tps_json_set_num(root, "tolerance", tol);
  json_object_set_new(root, "pass", json_boolean(r->pass));
  return tps_json_print(root) == 0 ? (r->pass ? TPS_EXIT_OK : TPS_EXIT_FAIL) : TPS_EXIT_FAIL;
}

static void print_text(const vinput *in, const tps_validation *r, double tol, long rounding) {
  const tps_table *meas = &in->meas;
  printf("# predicted: %s\n# measured:  %s (%s, TP%d, %s, gather %s)\n", in->desc, in->meas_path, meas->gpu[0] ? meas->gpu : "?",
         meas->tp, meas->kpath[0] ? meas->kpath : "?", meas->gather[0] ? meas->gather : "?");
  printf("# err = predicted / measured - 1; times in us\n");
  printf("%8s %6s %12s %12s %8s %12s %12s %8s %7s\n", "tokens", "rows", "meas_rep", "pred_rep", "err_rep", "meas_split",
         "pred_split", "err_spl", "gather");
  for (size_t i = 0; i < r->n; i++)
    printf("%8ld %6ld %12.2f %12.2f %+7.1f%% %12.2f %12.2f %+7.1f%% %7s\n", meas->tokens[i], meas->rows_per_rank[i],
           meas->replicated_us[i], r->pred_rep_us[i], 100 * r->err_rep[i], meas->split_us[i], r->pred_split_us[i], 100 * r->err_split[i],
           r->backend[i] < 0 ? "-" : tps_gather_name(r->backend[i]));
  /* the rule of each side (model/predict/validate.h): a table's rows interpolated, a model at every T */
  printf("break-even on [%ld, %ld] tokens (measured: split - replicated interpolated in log T between its rows; predicted: %s): "
         "measured ", r->tmin, r->tmax, in->have_ptab ? "the same, between its rows" : "the model at every T");
  if (r->breakeven_meas > 0) printf("%ld", r->breakeven_meas); else printf("never");
  printf(", predicted ");
  if (r->breakeven_pred > 0) printf("%ld", r->breakeven_pred); else printf("never");
  if (isfinite(r->breakeven_err)) printf(" (%+.1f%%)", 100 * r->breakeven_err);
  printf("\n");
  if (r->first_winning_row > 0) printf("first measured row from which the split keeps winning: %ld tokens\n", r->first_winning_row);
  else printf("the split does not win at the largest measured row\n");
  char tm[32] = "never", tpd[32] = "never";
  if (r->threshold_meas > 0) snprintf(tm, sizeof tm, "%ld", r->threshold_meas);
  if (r->threshold_pred > 0) snprintf(tpd, sizeof tpd, "%ld", r->threshold_pred);
  printf("threshold (least excess on each side's times%s): measured %s, predicted %s%s\n",
         rounding ? ", rounded up to a multiple of --round" : "", tm, tpd, r->threshold_meas == r->threshold_pred ? " (agree)" : " (differ)");
  printf("|err| replicated: median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * r->rep.median, 100 * r->rep.max, 100 * r->rep.rms);
  printf("|err| split:      median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * r->split.median, 100 * r->split.max, 100 * r->split.rms);
  printf("|err| both:       median %.1f%%, max %.1f%%, rms %.1f%%\n", 100 * r->all.median, 100 * r->all.max, 100 * r->all.rms);
  printf("verdict: %s (median |err| %.1f%% %s tolerance %.1f%%)\n", r->pass ? "within tolerance" : "OUTSIDE tolerance",
         100 * r->all.median, r->pass ? "<=" : ">", 100 * tol);
}

/* --calibration-tolerance M,X: percent, each in (0, 100]. */
static int parse_caltol(void *dst, const char *arg, char *why, size_t whysz) {
  double *t = dst, x[2];
  size_t n = 0;
  if (tps_parse_numbers(arg, x, 2, &n, 0, 100, 0) == 0 && n == 2 && x[0] > 0 && x[1] > 0) {
    t[0] = x[0] / 100;
    t[1] = x[1] / 100;
    return 0;
  }
  snprintf(why, whysz, "MEDIAN,MAX in percent, each in (0, 100] (e.g. 4,10)");
  return -1;
}

/* --calibration FILE BENCH.tsv...: exit 0 within tolerance, 1 outside, 2 input error. */
static int validate_calibration(const char *cal, char *const *bench, size_t nbench, const char *device, const double tol[2],
                                const char *gpus_path, int per_row, int json) {
  tps_err e;
  tps_err_clear(&e);
  tps_thr_file f;
  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  if (tps_gpus_load(gpus_path, &gt, &e)) { tps_err_print(&e); return tps_err_exit_code(&e); }
  if (tps_thr_read(cal, &f, &e)) { tps_err_print(&e); tps_gpus_free(&gt); return tps_err_exit_code(&e); }
  tps_thr_check_row *rows = NULL;
  size_t n = 0;
  int rc = TPS_EXIT_USAGE;
  if (tps_thr_check_scored(&f, device, bench, nbench, tol[0], tol[1], &gt, &rows, &n, &e)) {
    tps_err_print(&e);
    rc = tps_err_exit_code(&e);
    goto out;
  }
  const tps_thr_device *d = device ? tps_thr_find_device(&f, device) : &f.dev[0];
  int within = tps_thr_check_within(rows, n);
  if (json) {
    json_t *root = tps_thr_check_json(rows, n, tol[0], tol[1]);
    json_object_set_new(root, "calibration", json_string(cal));
    json_object_set_new(root, "device", json_string(d->key));
    json_object_set_new(root, "calibrated", json_string(f.date));
    json_object_set_new(root, "verdict", json_string(within ? "within tolerance" : "outside tolerance"));
    rc = tps_json_print(root) ? TPS_EXIT_FAIL : within ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  } else {
    printf("# calibration: %s (%s, %s %s)\n", cal, d->key, d->gpus_visible ? "calibrated" : "predicted", f.date);
    tps_thr_check_print(stdout, rows, n, tol[0], tol[1], per_row);
    printf("verdict: %s", within ? "within tolerance" : "OUTSIDE tolerance:");
    for (size_t i = 0, k = 0; i < n; i++) {
      const tps_thr_check_row *r = &rows[i];
      if (r->within) continue;
      printf("%s %ldx%ld %s", k++ ? ";" : "", r->k, r->n, tps_path_name(r->path));
      if (r->med_abs > tol[0]) printf(" median %.2f%% > %.1f%%", 100 * r->med_abs, 100 * tol[0]);
      if (r->max_abs > tol[1]) printf(" max %.2f%% > %.1f%%", 100 * r->max_abs, 100 * tol[1]);
    }
    printf("\n");
    rc = within ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  }
out:
  tps_thr_check_free(rows, n);
  tps_thr_free(&f);
  tps_gpus_free(&gt);
  return rc;
}

/* The options of one mode only: --calibration with bench tables, or --predicted and
 * --measured.  -1 to go on, else the exit code (the message said). */
static int mode_checks(const char *cal_path, const char *pred_path, const char *meas_path, double tol,
                       const tps_cmdopt_values *v, const char *device, int per_row, const double *caltol) {
  if (cal_path) {
    const char *other = pred_path ? "--predicted" : meas_path ? "--measured" : tol >= 0 ? "--tolerance" : v->rounding ? "--round" : NULL;
    if (other) {
      tps_usage_msg("--calibration and %s exclude each other%s", other,
                    strcmp(other, "--tolerance") ? "" : " (--calibration-tolerance M,X for its tolerance)");
      return TPS_EXIT_USAGE;
    }
    if (v->nargs < 1) {
      tps_usage_msg("--calibration needs at least one bench gemm table argument");
      return TPS_EXIT_USAGE;
    }
    if (per_row && v->json) {
      tps_usage_msg("--rows is the text table's; --json has no per-row data: choose one");
      return TPS_EXIT_USAGE;
    }
    return -1;
  }
  if (!pred_path || !meas_path) {
    tps_usage_msg("--%s is required (or --calibration FILE BENCH.tsv...)",
                pred_path ? "measured" : "predicted");
    return TPS_EXIT_USAGE;
  }
  if (v->nargs) {
    tps_usage_msg("unexpected argument '%s' (bench tables go with --calibration)", v->args[0]);
    return TPS_EXIT_USAGE;
  }
  if (device || per_row || caltol[0] != 0.04 || caltol[1] != 0.10) {
    tps_usage_msg("--device, --rows and --calibration-tolerance go with --calibration");
    return TPS_EXIT_USAGE;
  }
  return -1;
}

int cmd_validate(int argc, char **argv) {
  const char *pred_path = NULL, *meas_path = NULL, *gpus_path = NULL, *cal_path = NULL, *device = NULL;
  double tol = -1, caltol[2] = {0.04, 0.10}; /* tol < 0: not given (0.25) */
  int per_row = 0;
  const tps_cmdopt own[] = {
    {.name = "predicted", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "P", .dst = &pred_path,
     .help = "a fit file (tpsplit fit -o), evaluated on the measured GPU, TP and path (directly when they are the "
             "fit's, else transferred with predict's model scaling), or a split table of predicted times holding "
             "every measured token count"},
    {.name = "measured", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "F", .dst = &meas_path,
     .help = "split table (tokens rows_per_rank replicated_us split_us, '#@' metadata gpu, tp, path), e.g. from "
             "tpsplit bench split"},
    {.name = "gpus-file", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "FILE", .dst = &gpus_path,
     .help = "GPU table (default: the bundled gpus.tsv)"},
    {.name = "tolerance", .kind = TPS_ARG_DOUBLE, .metavar = "F", .dst = &tol, .min = 0,
     .help = "pass when the median |error| over both series is <= F (default 0.25)"},
    {.name = "calibration", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "FILE", .dst = &cal_path,
     .help = "instead of --predicted and --measured: a calibrate result (tpsplit calibrate -o FILE) against the "
             "full bench gemm tables given as arguments: per part (shape, path) its calibrated GEMM model's median "
             "and max |error| over the bench rows outside the sweep"},
    {.name = "calibration-tolerance", .kind = TPS_ARG_FN, .metavar = "M,X", .dst = caltol, .parse = parse_caltol,
     .help = "--calibration: within tolerance when the median |error| <= M% and the max <= X% (default 4,10)"},
    {.name = "device", .kind = TPS_ARG_STR, .metavar = "NAME", .dst = &device,
     .help = "--calibration: the file's device, by key or CUDA name (NVIDIA_H200; default: its only device)"},
    {.name = "rows", .kind = TPS_ARG_FLAG, .dst = &per_row,
     .help = "--calibration: then every bench row, calibrated vs measured (sweep rows marked)"},
  };
  const tps_cmdspec spec = {
    .name = "validate",
    .synopsis = "--predicted FIT_OR_PREDICTION --measured FILE\n"
                "         [--gpus-file FILE] [--tolerance F] [--round R] [--json]\n"
                "       tpsplit validate --calibration FILE [--calibration-tolerance M,X]\n"
                "         [--device NAME] [--rows | --json] BENCH.tsv...",
    .about = "Compare a prediction with a measured split-vs-replicated table: per token count\n"
             "the predicted and measured replicated and split times and their errors\n"
             "(predicted / measured - 1), the predicted and measured break-even, the retuned\n"
             "threshold, and summary errors.  With --calibration: a calibrate result against\n"
             "full bench gemm tables, within or outside tolerance per part.",
    .args = "BENCH.tsv...",
    .common = TPS_OPT(TPS_OI_ROUND) | TPS_OPT(TPS_OI_JSON),
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .text = {[TPS_OI_JSON] = "JSON on stdout (errors as fractions, times in us, NaN as null)"},
    .notes = "Break-even: smallest T from which the split wins up to the largest measured T, with\n"
             "split - replicated interpolated linearly in log T between a table's rows (the measured\n"
             "one, or a table of predicted times) and a fit's or prediction's model at every T; -1\n"
             "(never) when the split does not win there.",
    .exit_status = "0 within tolerance, 1 outside it, 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  int mrc = mode_checks(cal_path, pred_path, meas_path, tol, &v, device, per_row, caltol);
  if (mrc >= 0) return mrc;
  if (tol < 0) tol = 0.25;
  if (cal_path) return validate_calibration(cal_path, v.args, (size_t)v.nargs, device, caltol, gpus_path, per_row, v.json);

  tps_err e;
  tps_err_clear(&e);
  vinput in;
  tps_validation r;
  memset(&in, 0, sizeof in);
  memset(&r, 0, sizeof r);
  in.pred_path = pred_path;
  in.meas_path = meas_path;
  int rc = TPS_EXIT_USAGE;
  if (tps_table_read(meas_path, &in.meas, &e) != 0) { tps_err_print(&e); return tps_err_exit_code(&e); }
  const tps_table *meas = &in.meas;
  const size_t n = meas->nrows;
  if (meas->kind != TPS_TABLE_SPLIT)
    tps_err_set(&e, meas_path, 0, "a %s table: validate needs a split table (tokens rows_per_rank replicated_us split_us)",
                tps_table_kind_names[meas->kind]);
  else if (meas->tp < 1) tps_err_set(&e, meas_path, 0, "no '#@ tp:' metadata line");
  else if (n < 2) tps_err_set(&e, meas_path, 0, "%zu row: at least 2 token counts are needed", n);
  if (e.set || (is_fit_file(pred_path) ? load_fit(&in, gpus_path, &e) : load_table(&in, gpus_path, &e)) != 0) goto out;

  tps_split_series ms = {n, meas->tokens, meas->replicated_us, meas->split_us};
  tps_val_prediction vp = {in.direct, in.transferred, {0, NULL, NULL, NULL}};
  if (in.have_ptab) vp.table = (tps_split_series){in.ptab.nrows, in.ptab.tokens, in.ptab.replicated_us, in.ptab.split_us};
  int st = tps_validate(&ms, &vp, v.rounding, tol, &r);
  if (st == TPS_EBADDATA && in.have_ptab) {
    size_t i = 0;
    while (i < n && meas->tokens[i] != r.bad_tokens) i++;
    tps_err_set(&e, pred_path, 0, "no prediction for %ld tokens (measured in %s line %ld)", r.bad_tokens, meas_path,
                i < n ? meas->line[i] : 0L);
  } else if (st == TPS_EBADDATA) {
    tps_err_set(&e, pred_path, 0, "the model gives no value at %ld tokens", r.bad_tokens);
  } else if (st == TPS_ENOMEM) {
    tps_err_oom(&e, "validating %s against %s", pred_path, meas_path);
  } else if (st != TPS_OK) {
    tps_err_set(&e, pred_path, 0, "break-even: the prediction is not a number somewhere in [%ld, %ld]", meas->tokens[0],
                meas->tokens[n - 1]);
  } else if (v.json) {
    rc = print_json(&in, &r, tol, v.rounding);
  } else {
    print_text(&in, &r, tol, v.rounding);
    rc = r.pass ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  }
out:
  if (e.set) {
    tps_err_print(&e);
    if (rc == TPS_EXIT_USAGE) rc = tps_err_exit_code(&e); /* a resource error (memory) is 1 */
  }
  tps_validation_free(&r);
  vinput_free(&in);
  return rc;
}
